"""A cheap exported folder for the serve tests and `automemo bench serve`: a word-overlap memo
program (no model) and a few shipped update episodes, written in the export format with the
manifest's hashes, as `automemo export` would write them; and a real `automemo serve` process
with a plain HTTP client for the tests to drive it."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from automemo.contract import EpisodeRecorder, Step
from automemo.measurements.stand_ins.serve_export import write_export

ROOT = Path(__file__).resolve().parents[1]

WORD_MEMORY = '''
from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.items = []
        self.pictures = {}

    def update(self, episode):
        if episode.instruction == "poison":
            raise ValueError("this program refuses poison")
        text = " ".join([episode.instruction] + [s.observation for s in episode.steps]
                        + [episode.final_answer or ""])
        refs = [s.ref or f"{episode.task_id}#{s.index}" for s in episode.steps]
        self.items.append((episode.task_id, str(episode.metadata.get("user") or ""), text, refs))
        self.pictures[episode.task_id] = [s.screenshot for s in episode.steps if s.screenshot]

    def retrieve(self, task):
        words = set(task.instruction.lower().split())
        scope = str(task.metadata.get("user") or "")
        scored = sorted(((len(words & set(t.lower().split())), i) for i, (_, user, t, _) in enumerate(self.items)
                         if not scope or user == scope), reverse=True)
        top = [self.items[i] for score, i in scored[:3] if score > 0]
        return MemoryPayload(
            text="\\n".join(f"[{tid}] {t}" for tid, _, t, _ in top),
            images=tuple(task.task_images[:1]) or tuple(p for item in top for p in self.pictures[item[0]])[:1],
            metadata={"evidence": [r for item in top for r in item[3]], "n_memories": len(self.items)},
        )
'''


def shipped_episode(i: int) -> EpisodeRecorder:
    return EpisodeRecorder(
        task_id=f"shipped-{i}", benchmark="minigallery", instruction=f"shipped fact number {i}",
        steps=(Step(index=0, observation=f"the shipped colour {i} is teal", action="note", ref=f"s{i}"),),
        final_answer="teal", reward=1.0, success=True,
    )


def make_export(out: Path, program: str = WORD_MEMORY, n_shipped: int = 3) -> Path:
    return write_export(out, program, [shipped_episode(i) for i in range(n_shipped)], node_id=3, extra={
        "run": {"run_id": "test", "path": "/secret/server/path/runs/test"},
        "config": {"runs_dir": "/secret/server/path/runs"},
    })


PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, export: Path, state: Path, *extra: str, env: dict | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", "automemo", "serve", str(export), "--port", str(self.port),
               "--state", str(state), "--sandbox", "bwrap", *extra]
        # this checkout's package, whatever the editable install points at
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
                                     stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while time.time() < deadline:
            assert self.proc.poll() is None, self.proc.stderr.read()
            try:
                if call(self.url + "/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("the server did not come up")

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(20)


def call(url: str, body: object = None, *, raw: bytes | None = None, token: str | None = None,
         content_type: str = "application/json") -> tuple[int, dict]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    if data is not None:
        request.add_header("Content-Type", content_type)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def data_url(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()
