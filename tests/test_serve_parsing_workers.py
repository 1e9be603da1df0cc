"""A request carrying images is parsed off the event loop, in an image worker process running as
background work (lowest priority, a scheduling group of its own); a light one in place. A refusal crosses back whole; a dead worker fails its request
with a clear 503 and is replaced; a killed server leaves no worker behind."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from functools import partial

import pytest

from automemo.serve.defaults import IMAGE_WORKER_NICE
from automemo.serve.parsing_workers import ParsingWorkers, WorkerLost
from automemo.serve.requests import BadRequest


def where(body):
    return os.getpid(), os.getpriority(os.PRIO_PROCESS, 0), body


def scheduling(body):
    """This process's session and its session's scheduling-group niceness (None without autogroup)."""
    try:
        with open("/proc/self/autogroup") as fh:  # "/autogroup-123 nice 19"
            group_nice = int(fh.read().split()[-1])
    except OSError:
        group_nice = None
    return os.getsid(0), os.getpriority(os.PRIO_PROCESS, 0), group_nice


def refuse(body):
    raise BadRequest("too large", 413)


def die(body):
    os.kill(os.getpid(), signal.SIGKILL)


def _run(parsing, raw, parse):
    async def go():
        return await parsing.parse(raw, parse)
    return asyncio.run(go())


@pytest.fixture
def parsing():
    made = ParsingWorkers()
    yield made
    made.close()


HEAVY = json.dumps({"images": ["data:image/png;base64,AAAA"]}).encode()


def test_a_request_with_images_is_parsed_in_a_niced_worker_and_a_light_one_in_place(parsing):
    pid, nice, body = _run(parsing, HEAVY, where)
    assert pid != os.getpid() and nice >= os.getpriority(os.PRIO_PROCESS, 0) + 1
    assert body == {"images": ["data:image/png;base64,AAAA"]}
    light = json.dumps({"query": "where is my bike"}).encode()
    assert _run(parsing, light, where)[0] == os.getpid()
    with pytest.raises(BadRequest, match="not valid JSON"):
        _run(parsing, b"{not json", where)


def test_the_worker_is_background_work_in_a_scheduling_group_of_its_own(parsing):
    # niceness alone counts only inside a session's group where the kernel groups by session:
    # a niced worker in the server's session spent the server's share (docs/serve.md)
    session, nice, group_nice = _run(parsing, HEAVY, scheduling)
    assert session != os.getsid(0)
    assert nice == max(IMAGE_WORKER_NICE, os.getpriority(os.PRIO_PROCESS, 0))
    if os.path.exists("/proc/self/autogroup"):
        assert group_nice == IMAGE_WORKER_NICE


def test_a_refusal_in_the_worker_keeps_its_message_and_status(parsing):
    with pytest.raises(BadRequest, match="too large") as refused:
        _run(parsing, HEAVY, refuse)
    assert refused.value.status == 413


def test_a_dead_worker_fails_its_request_with_a_503_and_is_replaced(parsing):
    with pytest.raises(WorkerLost, match="send the request again") as lost:
        _run(parsing, HEAVY, die)
    assert lost.value.status == 503
    assert _run(parsing, HEAVY, where)[2]["images"]  # a new worker serves the next one


def test_a_killed_server_leaves_no_worker_behind(tmp_path):
    script = tmp_path / "server.py"
    script.write_text(
        "import asyncio, json, os, sys, time\n"
        "from automemo.serve.parsing_workers import ParsingWorkers\n"
        "async def main():\n"
        "    print(await ParsingWorkers().parse(json.dumps({'images': ['data:image']}).encode(), "
        "partial_pid), flush=True)\n"
        "    time.sleep(60)\n"
        "def partial_pid(body):\n"
        "    return os.getpid()\n"
        "if __name__ == '__main__':\n"
        "    asyncio.run(main())\n")
    server = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=tmp_path,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    worker = int(server.stdout.readline())
    server.kill()
    server.wait()
    deadline = time.time() + 10
    while time.time() < deadline and os.path.exists(f"/proc/{worker}") and _state(worker) != "Z":
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{worker}") or _state(worker) == "Z", "the worker outlived the server"


def _state(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
