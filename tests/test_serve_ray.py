"""`automemo serve --engine ray` on a real local Ray cluster started here (one for the module):
2 memory replicas, each user's memory in a real bubblewrap guest, over the real HTTP proxy.

- the same answers as the single-process server, byte for byte but for the timings, on every
  face (REST, MCP at /mcp, /openapi.json, the guard's refusals with a token bound to one user);
  a call that names no user lands in the namespace "default", a recall's picture leaves the store;
- 8 users' memories isolated while spread over both replicas;
- a call whose user's lease is held elsewhere is refused by every replica, nothing written, and
  sent again by the ingress until the lease is free;
- forgetting is durable, across the kill of the replica that held the memory;
- a replica killed with kill -9 while 8 users remember: 0 acknowledged remembers lost, 0
  cross-user recalls, 0 appends beside the lease (every log's sequence numbers run 1, 2, 3, ...,
  which two writers could not keep), and the killed replica's users reopen elsewhere."""

from __future__ import annotations

import http.client
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from servetools import PNG, ROOT, data_url, free_port, make_export

ray = pytest.importorskip("ray", reason="Ray is installed by the test command (automemo[ray])")
serve = pytest.importorskip("ray.serve", reason="Ray Serve is installed by the test command (automemo[ray])")

from automemo.serve.access import token_table  # noqa: E402
from automemo.serve.cluster.engine import APP_NAME, deploy, prepare  # noqa: E402
from automemo.serve.cluster.lease import NamespaceLease  # noqa: E402
from automemo.serve.http.policy import HttpPolicy  # noqa: E402
from automemo.serve.requests import RequestLimits  # noqa: E402
from automemo.serve.storage.episode_log import EpisodeLog, live_episodes  # noqa: E402
from automemo.serve.storage.state_folder import LOG, StateFolder  # noqa: E402

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]

TOKENS = {"ALL_TOKEN": "all-secret-token", "ANA_TOKEN": "ana-secret-token"}
TOKEN_FLAGS = ["--token-env", "ALL_TOKEN", "--token-env", "ANA_TOKEN=ana", "--rate-limit", "0"]
ALL = TOKENS["ALL_TOKEN"]


class Client:
    def __init__(self, port: int) -> None:
        self.port = port

    def request(self, method: str, path: str, body: object = None, *, token: str | None = ALL,
                raw: bytes | None = None, content_type: str = "application/json") -> tuple[int, bytes]:
        headers = {"Host": f"127.0.0.1:{self.port}", "Accept": "application/json, text/event-stream"}
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        if data is not None:
            headers["Content-Type"] = content_type
        if token:
            headers["Authorization"] = f"Bearer {token}"
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(method, path, body=data, headers=headers)
            answer = connection.getresponse()
            return answer.status, answer.read()
        finally:
            connection.close()

    def json(self, method: str, path: str, body: object = None, **kw) -> tuple[int, dict]:
        status, raw = self.request(method, path, body, **kw)
        return status, json.loads(raw)


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    return make_export(tmp_path_factory.mktemp("export") / "export")


@pytest.fixture(scope="module")
def ray_app(export, tmp_path_factory):
    """The engine as `serve_on_ray` runs it: the state folder prepared and held by the driver,
    a local cluster, the proxy, 2 memory replicas of at most 4 open users; /healthz reports a
    `--adapt` of the driver's."""
    os.environ.update(TOKENS)
    state = tmp_path_factory.mktemp("ray") / "state"
    # snapshots every 3 remembers: a reopened namespace loads a snapshot and replays a tail
    prepared = prepare(export, state, sandbox="bwrap", unsafe=False, max_open=4, snapshot_every=3)
    lock = prepared.lock()
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
    port = free_port()
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    tokens = token_table(TOKEN_FLAGS[1:4:2], None)
    deploy(prepared, replicas=2, max_open=4, limits=RequestLimits(), policy=HttpPolicy(rate_per_minute=0),
           tokens=tokens, replica_cpus=0.5, adapting=True)
    yield Client(port), prepared.state_root
    serve.delete(APP_NAME)
    serve.shutdown()
    if started_here:
        ray.shutdown()
    lock.close()


@pytest.fixture(scope="module")
def single(export, tmp_path_factory):
    """The single-process server on the same export, with the same flags."""
    folder = tmp_path_factory.mktemp("single")
    port = free_port()
    with open(folder / "serve.log", "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "automemo", "serve", str(export), "--port", str(port),
                                 "--state", str(folder / "state"), "--sandbox", "bwrap", *TOKEN_FLAGS],
                                cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **TOKENS},
                                stderr=log, stdout=subprocess.DEVNULL)
    client = Client(port)
    deadline = time.time() + 60
    while True:
        assert proc.poll() is None, (folder / "serve.log").read_text()
        try:
            if client.request("GET", "/healthz")[0] == 200:
                break
        except OSError:
            assert time.time() < deadline, "the single-process server did not come up"
            time.sleep(0.1)
    yield client
    proc.terminate()
    proc.wait(20)


def _mcp(name: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def _png(colour: str) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), colour).save(buffer, format="PNG")
    return buffer.getvalue()


QUESTION_PNG = _png("green")  # a recall's picture, unlike any remembered one
SCRIPT = [  # (method, path, body, token); every face, refusals included
    ("POST", "/v1/remember", {"messages": [{"role": "user", "content": "My cat is called Miso",
                                            "images": [data_url(PNG)]}], "user": "ana", "task_id": "a1",
                              "time": "2026-11-24"}, ALL),
    ("POST", "/v1/remember", {"content": "I live in Porto", "user": "bob", "task_id": "b1"}, ALL),
    ("POST", "/v1/remember", {"task_id": "a2", "instruction": "Order a blue umbrella",
                              "steps": [{"observation": "search results for umbrella", "action": "click"}],
                              "final_answer": "ordered", "reward": 1.0, "metadata": {"user": "ana"}}, ALL),
    ("POST", "/v1/remember", {"task_id": "p1", "instruction": "poison", "steps": [], "metadata": {"user": "ana"}},
     ALL),
    ("POST", "/v1/remember", {"content": "the spare key is under the blue pot", "task_id": "d1"}, ALL),  # default
    ("POST", "/v1/recall", {"query": "what is my cat called", "user": "ana"}, ALL),
    ("POST", "/v1/recall", {"query": "where is the spare key"}, ALL),  # the default user's, nobody else's
    ("POST", "/v1/recall", {"instruction": "where do I live", "user_id": "bob"}, ALL),
    ("POST", "/v1/recall", {"instruction": "umbrella", "images": [data_url(QUESTION_PNG)]}, TOKENS["ANA_TOKEN"]),
    ("POST", "/v1/recall", {"instruction": "where do I live", "user": "bob"}, TOKENS["ANA_TOKEN"]),  # 403
    ("POST", "/v1/recall", {"user": "ana"}, ALL),  # 400: no instruction
    ("POST", "/v1/recall", {"instruction": "x", "colour": "red"}, ALL),  # 400: unknown field
    ("POST", "/v1/recall", {"instruction": "x"}, None),  # 401
    ("POST", "/v1/forget", {"user": "ana", "task_id": "a2"}, ALL),
    ("POST", "/v1/recall", {"query": "blue umbrella", "user": "ana"}, ALL),
    ("GET", "/v1/export?user=ana", None, ALL),
    ("POST", "/mcp", _mcp("recall", {"query": "cat called", "user": "ana"}), ALL),
    ("POST", "/mcp", _mcp("recall", {"query": "spare key"}), ALL),
    ("POST", "/mcp", _mcp("remember", {"content": "my dog is Rex", "user": "carol", "task_id": "c1"}), ALL),
    ("POST", "/mcp", _mcp("forget", {"user": "bob"}), ALL),  # refused: neither task_id nor all
    ("POST", "/v1/forget", {"user": "bob"}, ALL),  # 400, likewise
    ("POST", "/mcp", _mcp("forget", {"user": "bob", "all": True}), ALL),
    ("POST", "/v1/recall", {"instruction": "where do I live", "user": "bob"}, ALL),
    ("GET", "/v1/manifest", None, ALL),
    ("GET", "/openapi.json", None, ALL),
]
# what differs between two servers' answers by nature: timings, the id each recall is given, and
# in an export, each logged recall's id and time
TIMINGS = re.compile(rb'"(retrieve_ms|queued_ms)": ?[0-9.]+|\\"(retrieve_ms|queued_ms)\\": ?[0-9.]+'
                     rb'|"recall(_id)?": ?"[0-9a-f]+"|\\"recall_id\\": ?\\"[0-9a-f]+\\"|"at": ?[0-9.]+')


def test_the_same_answers_as_the_single_process_server(ray_app, single):
    client, state = ray_app
    for method, path, body, token in SCRIPT:
        ray_status, ray_raw = client.request(method, path, body, token=token)
        single_status, single_raw = single.request(method, path, body, token=token)
        assert (ray_status, TIMINGS.sub(b"T", ray_raw)) == (single_status, TIMINGS.sub(b"T", single_raw)), \
            (method, path, body)
    # a call that names no user acted on the namespace "default" (never "")
    logged = live_episodes(EpisodeLog(state / "users" / StateFolder(state).key("default") / LOG).read())
    assert [(e.task_id, e.episode["metadata"]["user"]) for e in logged] == [("d1", "default")]
    assert not (state / "users" / StateFolder(state).key("")).exists()
    # the recall images left with their answers: ana's store holds her one remembered picture
    assert len([p for p in (state / "users" / StateFolder(state).key("ana") / "store" / "images").rglob("*") if p.is_file()]) == 1
    # an import (NDJSON) of one user's export into another
    exported = single.request("GET", "/v1/export?user=ana")[1]
    imported = [server.json("POST", "/v1/import?user=dave", raw=exported, content_type="application/x-ndjson")
                for server in (client, single)]
    assert imported[0] == imported[1]
    assert imported[0][0] == 200 and imported[0][1]["imported"] == 2 and imported[0][1]["applied"] == 1
    assert imported[0][1]["recalls"] > 0  # ana's recalls came with her export, on either engine
    recalled = [TIMINGS.sub(b"T", server.request("POST", "/v1/recall", {"query": "cat", "user": "dave"})[1])
                for server in (client, single)]
    assert recalled[0] == recalled[1]


def _recall_text(client: Client, user: str, query: str) -> str:
    status, answer = client.json("POST", "/v1/recall", {"query": query, "user": user})
    assert status == 200, answer
    return answer["text"]


def _holder_pid(state: Path, user: str) -> int:
    record = NamespaceLease(state, StateFolder(state).key(user), "test").read()
    return int(re.search(r"pid (\d+)", record.holder).group(1))


def _in_parallel(fn, items) -> list:
    results = [None] * len(items)
    threads = [threading.Thread(target=lambda i=i, item=item: results.__setitem__(i, fn(item)))
               for i, item in enumerate(items)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return results


def test_eight_users_are_isolated_across_both_replicas(ray_app):
    client, state = ray_app
    users = [f"iso{i}" for i in range(8)]

    def remember(user: str) -> int:
        return client.request("POST", "/v1/remember", {"content": f"the vault code is {user}code",
                                                      "user": user, "task_id": f"{user}-vault"})[0]
    assert _in_parallel(remember, users) == [200] * 8
    texts = _in_parallel(lambda user: _recall_text(client, user, "what is the vault code"), users)
    for user, text in zip(users, texts):
        assert f"{user}code" in text
        assert [u for u in users if u != user and f"{u}code" in text] == []
    assert len({_holder_pid(state, user) for user in users}) == 2  # both replicas hold users


def test_a_call_whose_lease_another_holds_waits_and_writes_only_once_it_is_let_go(ray_app):
    """The test takes a user's lease itself, as a replica holding that memory would: every replica
    refuses the remember (nothing is written) and the ingress sends it again until the lease is
    let go; then one replica takes it, with a larger token, and appends."""
    client, state = ray_app
    lease = NamespaceLease(state, StateFolder(state).key("zed"), "the test")
    held = lease.acquire()
    answers = []
    sender = threading.Thread(target=lambda: answers.append(client.json(
        "POST", "/v1/remember", {"content": "the lighthouse is white", "user": "zed", "task_id": "z1"})))
    started = time.monotonic()
    sender.start()
    time.sleep(1.5)
    assert answers == [] and not (state / "users" / StateFolder(state).key("zed") / LOG).exists()
    lease.release()
    sender.join(60)
    assert answers == [(200, {"ok": True, "user": "zed", "seq": 1, "task_id": "z1", "applied": True, "version": 0})]
    assert time.monotonic() - started >= 1.5
    assert lease.read().token == held + 1 and "replica" in lease.read().holder


def test_forgetting_is_durable_across_the_kill_of_the_replica_that_held_it(ray_app):
    client, state = ray_app
    for task, words in (("keep", "the garden gnome is green"), ("gone", "the secret password is swordfish")):
        assert client.request("POST", "/v1/remember", {"content": words, "user": "fay", "task_id": task})[0] == 200
    assert client.json("POST", "/v1/forget", {"user": "fay", "task_id": "gone"}) == \
        (200, {"ok": True, "user": "fay", "task_id": "gone", "forgotten": 1})
    assert "swordfish" not in _recall_text(client, "fay", "secret password swordfish")
    assert b"swordfish" not in (state / "users" / StateFolder(state).key("fay") / LOG).read_bytes()
    holder = _holder_pid(state, "fay")
    os.kill(holder, signal.SIGKILL)
    text = _recall_text(client, "fay", "secret password swordfish garden gnome")  # retried until reopened
    assert "swordfish" not in text and "garden gnome" in text
    assert _holder_pid(state, "fay") != holder


def test_a_replica_killed_mid_traffic_loses_no_acknowledged_remember(ray_app):
    client, state = ray_app
    users = [f"k{i}" for i in range(8)]
    acknowledged: dict[str, list[str]] = {u: [] for u in users}
    answered_at: dict[str, list[float]] = {u: [] for u in users}
    refused: list[int] = []
    stop = threading.Event()

    def traffic(user: str) -> None:
        i = 0
        while not stop.is_set():
            task = f"{user}-t{i}"
            status, raw = client.request("POST", "/v1/remember", {"content": f"note {i} of {user}marker",
                                                                 "user": user, "task_id": task})
            if status == 200:
                assert json.loads(raw)["task_id"] == task
                acknowledged[user].append(task)
                answered_at[user].append(time.time())
            else:
                assert status == 503, raw  # a call the dying replica had: said, never silently lost
                refused.append(status)
            i += 1

    workers = [threading.Thread(target=traffic, args=(u,)) for u in users]
    for w in workers:
        w.start()
    time.sleep(2.0)
    victim = _holder_pid(state, "k0")
    os.kill(victim, signal.SIGKILL)
    killed_at = time.time()
    time.sleep(6.0)
    stop.set()
    for w in workers:
        w.join(120)

    lost = {}
    for user in users:
        entries = EpisodeLog(state / "users" / StateFolder(state).key(user) / LOG).read()
        assert [e.seq for e in entries] == list(range(1, len(entries) + 1)), user  # one writer at a time
        logged = {e.task_id for e in live_episodes(entries)}
        lost[user] = [t for t in acknowledged[user] if t not in logged]
    assert lost == {u: [] for u in users}
    # the killed replica's user was served again, by another replica
    assert max(answered_at["k0"]) > killed_at and _holder_pid(state, "k0") != victim
    texts = _in_parallel(lambda user: _recall_text(client, user, "note of marker"), users)
    for user, text in zip(users, texts):
        assert f"{user}marker" in text and [u for u in users if u != user and f"{u}marker" in text] == []
    print(f"acknowledged {sum(map(len, acknowledged.values()))}, answered 503 {len(refused)}")


def test_a_replica_follows_a_users_version_swap_and_rollback(ray_app, export):
    """What `serve --engine ray --adapt` relies on: a version installed on disk (as an adaptation
    round installs it) answers the user's next call on whichever replica holds the memory,
    rebuilt from the log, and a rollback moves it back; /healthz shows both, and the driver's
    adaptation."""
    from automemo.adapt.supervisor import Adapter
    from automemo.adapt.version_build import write_program
    from automemo.serve.storage.state_folder import StateFolder
    from automemo.serve.storage.versions import NamespaceVersions, VersionRecord, now
    from servetools import WORD_MEMORY

    client, state = ray_app
    assert client.request("POST", "/v1/remember", {"content": "the locker code is 4471", "user": "ver",
                                                   "task_id": "ver-1"})[0] == 200
    status, before = client.json("POST", "/v1/recall", {"query": "locker code", "user": "ver"})
    assert status == 200 and before["version"] == 0 and "adapted" not in before["metadata"]

    folder = StateFolder(state).user_dir("ver")
    versions = NamespaceVersions(folder)
    staged = versions.stage()
    adapted = WORD_MEMORY.replace('"n_memories": len(self.items)', '"n_memories": len(self.items), "adapted": True')
    sha = write_program(export, adapted, staged, {"summary": "a test's version", "source": "per-user"})
    with versions.locked():
        versions.install(staged, VersionRecord(version=1, created=now(), program_sha256=sha, source="per-user",
                                               parent=0), {})
    status, after = client.json("POST", "/v1/recall", {"query": "locker code", "user": "ver"})
    assert status == 200 and after["version"] == 1 and after["metadata"]["adapted"] is True
    assert "4471" in after["text"]  # the new program was rebuilt from the user's log

    adapter = Adapter(state, export, "per-user", sandbox="bwrap").start()  # as the driver runs it: nothing due here
    try:
        status, health = client.json("GET", "/healthz", token=None)
    finally:
        adapter.stop()
    # counts only: /healthz answers without a token, so it names no namespace, not even by a digest
    assert status == 200 and health["versions"].get("1", 0) >= 1 and folder.name not in json.dumps(health)
    assert health["adapt"] == {"mode": "per-user", "running": 0, "rounds_started": 0}

    with versions.locked():
        versions.set_current(0)
    status, back = client.json("POST", "/v1/recall", {"query": "locker code", "user": "ver"})
    assert status == 200 and back["version"] == 0 and "4471" in back["text"]
    assert "1" not in client.json("GET", "/healthz", token=None)[1]["versions"]
