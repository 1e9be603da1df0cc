"""What `automemo bench serve` runs and drives: a server process of this package on a free
loopback port (`Server`, `automemo.measurements.serving.worker`), keep-alive recall clients at a
concurrency level (`recall_level`), and a state folder holding a memory of 8 users (`write_log`).
Shared by the single-process bench (`measurements.serving.command`) and the Ray Serve one (`measurements.serving.on_ray`)."""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

from automemo.cli import UserError



class Server:
    def __init__(self, export: Path, state: Path, sandbox: str, *options: str, timeout: float = 120) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log = tempfile.TemporaryFile("w+")  # a pipe nobody reads would stall a chatty server
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "automemo.measurements.serving.worker", str(export), str(state), str(self.port), sandbox,
             *options], stderr=self.log, text=True)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise UserError(f"the bench server failed to start: {self.log.read()[-2000:]}")
            try:
                get(self.port, "/healthz")
                return
            except OSError:
                time.sleep(0.05)
        self.kill()
        raise UserError(f"the bench server did not answer within {timeout:g} s")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()


def post(conn: http.client.HTTPConnection, path: str, body: dict) -> dict:
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    answer = conn.getresponse()
    data = json.loads(answer.read())
    if answer.status != 200:
        raise RuntimeError(data.get("error"))
    return data


def get(port: int, path: str) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path)
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


_QUESTIONS = ["What did I say about my {}?", "Buy a {} on shop.example.com", "Find a {} near me"]
_TOPICS = "umbrella boots lamp sofa kettle bicycle camera jacket tent printer".split()


def recall_level(port: int, clients: int, requests: int, seconds: float) -> dict[str, float]:
    samples: list[tuple[float, float, float]] = []
    lock, counter = threading.Lock(), iter(range(requests))

    def client(k: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        rng = random.Random(k)
        while time.perf_counter() < deadline:
            with lock:
                if next(counter, None) is None:
                    break
            body = {"instruction": rng.choice(_QUESTIONS).format(rng.choice(_TOPICS)), "scope": f"U{rng.randrange(8)}"}
            started = time.perf_counter()
            answer = post(conn, "/v1/recall", body)
            latency = (time.perf_counter() - started) * 1000
            with lock:
                samples.append((latency, answer["retrieve_ms"], answer["queued_ms"]))
        conn.close()

    for k in range(8):  # warm-up: each user's memory opens (from its snapshot) and builds its lazy index
        post(http.client.HTTPConnection("127.0.0.1", port, timeout=60), "/v1/recall",
              {"instruction": f"warm {k}", "scope": f"U{k}"})
    began = time.perf_counter()
    deadline = began + seconds  # the window measured, after the warm-up (opening 8 memories can take longer)
    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    latency = [s[0] for s in samples]
    overhead = [s[0] - s[1] - s[2] for s in samples]
    return {"p50": percentile(latency, 50), "p95": percentile(latency, 95), "rps": len(samples) / elapsed,
            "retrieve_p50": percentile([s[1] for s in samples], 50), "wait_p50": percentile([s[2] for s in samples], 50),
            "over_p50": percentile(overhead, 50), "over_p95": percentile(overhead, 95)}


def percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def write_log(state: Path, export: Path, n: int, rng: random.Random, *, one_user: bool = False) -> None:
    """A state folder whose log holds `n` remembered episodes of 8 users (`one_user`: all of the
    default user), as a server from before users had their own memory would have left it
    (written directly: fsyncing each of 10,000 would only time the disk); the server files each
    under its user on start."""
    from automemo.measurements.seeds import synthetic_episode

    state.mkdir(parents=True, exist_ok=True)
    with open(state / "episodes.jsonl", "w") as fh:
        for i in range(n):
            episode = text_only(synthetic_episode(100 + i, rng))
            if one_user:
                episode = replace(episode, metadata={k: v for k, v in episode.metadata.items() if k != "user"})
            fh.write(json.dumps({"seq": i + 1, "received": 0, "episode": episode.to_dict()}) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def text_only(episode):
    """The bench serves text: screenshots of the synthetic episodes are not written anywhere."""
    return replace(episode, steps=tuple(replace(s, screenshot=None) for s in episode.steps))
