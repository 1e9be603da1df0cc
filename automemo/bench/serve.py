"""`automemo bench serve`: `automemo serve`'s HTTP face over loopback, serving a seed program
(`--program`, trajectory_retrieval by default) in its sandbox:

- recall p50/p95 and requests/s at 1, 8 and 32 concurrent clients (keep-alive connections), and
  the server's overhead over the program: a request's latency minus its retrieve time and minus
  its wait for earlier calls to the one program process (those calls run one at a time by
  design; the wait is reported on its own). Target: overhead <= 10 ms p50 and <= 50 ms p95 at 8.
- durability: clients remember while the server is killed with SIGKILL, then it restarts;
  every acknowledged remember must be back (target: 0 lost).
- restart time with 1,000 and 10,000 logged episodes, after a first start that replayed them and
  snapshotted (targets: <= 5 s at 10,000; 10,000 / 1,000 <= 2).

Embeddings come from the fast deterministic encoder of `bench seeds` (the figures are the
server's and the program's, not MiniLM's). Every phase is bounded by --requests and --seconds.
`--tenants`, `--ingest` and `--first-start` run the load phases of `bench.serve_load` instead
(one tenant against another, a client's ingest with MiniLM, the first answer from a shared base)."""

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
from automemo.cli.flags import add_sandbox_flag, sandbox_choice

OVERHEAD_P50_MS, OVERHEAD_P95_MS, RESTART_10K_S, RESTART_GROWTH = 10.0, 50.0, 5.0, 2.0


def add_arguments(parser) -> None:
    parser.add_argument("--program", default="trajectory_retrieval", metavar="SEED",
                        help="the seed program to serve (default trajectory_retrieval; --ingest: hybrid_rag, "
                             "which embeds every turn)")
    parser.add_argument("--tenants", action="store_true",
                        help="only: user A's recall p95 alone and while user B floods 4-megapixel images")
    parser.add_argument("--ingest", action="store_true",
                        help="only: 500 turns remembered at a client's speed, with MiniLM")
    parser.add_argument("--first-start", action="store_true",
                        help="only: the first answer of a new process over a snapshotted shared base")
    parser.add_argument("--faults", action="store_true",
                        help="only: --users users' --ops mixed calls with --kills kill -9 at random points; "
                             "leaks, forgotten episodes shown, acknowledged remembers lost, orphan files")
    parser.add_argument("--users", type=int, default=16, help="--faults: users (default 16)")
    parser.add_argument("--ops", type=int, default=5000, help="--faults: calls in all (default 5000)")
    parser.add_argument("--memory", type=int, default=1000, help="episodes the served memory holds (default 1000)")
    parser.add_argument("--clients", default="1,8,32", help="concurrency levels (default 1,8,32)")
    parser.add_argument("--requests", type=int, default=400, help="recalls per level (default 400)")
    parser.add_argument("--seconds", type=float, default=30.0, help="time cap per level (default 30)")
    parser.add_argument("--restart", default="1000,10000", help="logged episodes to restart with (default 1000,10000)")
    parser.add_argument("--kills", type=int, default=3, help="kill -9 rounds (default 3)")
    add_sandbox_flag(parser, default="auto")


def run(args) -> int:
    from automemo.bench.seeds import synthetic_episode
    from automemo.testing.serve_export import write_export
    from automemo.paths import SEEDS_DIR

    args.sandbox = sandbox_choice(args)  # the old spelling folded in
    name = "hybrid_rag" if args.ingest and args.program == "trajectory_retrieval" else args.program
    program = SEEDS_DIR / f"{name}.py"
    if not program.is_file():
        raise UserError(f"no seed {name!r}; seeds are {', '.join(sorted(p.stem for p in SEEDS_DIR.glob('*.py')))}")
    rng = random.Random(0)
    shipped = [_text_only(synthetic_episode(i, rng)) for i in range(2000 if args.first_start else 20)]
    ok = True
    with tempfile.TemporaryDirectory(prefix="automemo-bench-serve-") as tmp:
        root = Path(tmp)
        export = write_export(root / "export", program.read_text(), shipped)
        if args.tenants or args.ingest or args.first_start or args.faults:
            from automemo.bench import serve_load

            print(f"serving seed {name} ({args.sandbox} sandbox)")
            if args.tenants:
                ok &= serve_load.tenants(export, root / "tenants", args.sandbox, args.requests)
            if args.ingest:
                ok &= serve_load.ingest(export, root / "ingest", args.sandbox)
            if args.first_start:
                ok &= serve_load.first_start(export, root / "first", args.sandbox)
            if args.faults:
                from automemo.bench.serve_faults import faults

                ok &= faults(export, root / "faults", args.sandbox, users=args.users, ops=args.ops,
                             kills=args.kills, seed=0)
            return 0 if ok else 1
        print(f"serving seed {name} ({args.sandbox} sandbox), memory of {args.memory} episodes; "
              f"embeddings: fast deterministic encoder")
        state = root / "latency"
        _write_log(state, export, args.memory, rng)
        with _Server(export, state, args.sandbox) as server:
            print(f"{'clients':>7} {'p50 ms':>8} {'p95 ms':>8} {'req/s':>7} {'retrieve p50':>12} "
                  f"{'wait p50':>9} {'overhead p50':>12} {'overhead p95':>12}")
            for clients in [int(c) for c in args.clients.split(",")]:
                row = _recall_level(server.port, clients, args.requests, args.seconds)
                print(f"{clients:>7} {row['p50']:>8.2f} {row['p95']:>8.2f} {row['rps']:>7.1f} "
                      f"{row['retrieve_p50']:>12.2f} {row['wait_p50']:>9.2f} {row['over_p50']:>12.2f} "
                      f"{row['over_p95']:>12.2f}")
                if clients == 8:
                    met = row["over_p50"] <= OVERHEAD_P50_MS and row["over_p95"] <= OVERHEAD_P95_MS
                    ok &= met
                    print(f"        target at 8 clients: overhead <= {OVERHEAD_P50_MS:g} ms p50 and <= "
                          f"{OVERHEAD_P95_MS:g} ms p95: {'met' if met else 'MISSED'}")
        lost = _kill_rounds(export, root / "durable", args.sandbox, args.kills, rng)
        ok &= lost == 0
        print(f"kill -9 during remember, {args.kills} rounds: {lost} acknowledged remember calls lost "
              f"(target 0: {'met' if lost == 0 else 'MISSED'})")
        restarts = {}
        for n in [int(c) for c in args.restart.split(",")]:
            state = root / f"restart-{n}"
            _write_log(state, export, n, rng, one_user=True)
            started = time.perf_counter()
            with _Server(export, state, args.sandbox, timeout=1800) as server:
                first = time.perf_counter() - started  # serving once the memory replayed and snapshotted
                server.kill()  # no goodbye snapshot: the restart loads the one made after the replay
            started = time.perf_counter()
            with _Server(export, state, args.sandbox, timeout=600) as server:
                _post(http.client.HTTPConnection("127.0.0.1", server.port, timeout=60), "/v1/recall",
                      {"instruction": "what did I say about my umbrella"})
                restarts[n] = time.perf_counter() - started
            line = (f"restart of one user's memory of {n} logged episodes: {restarts[n]:.1f} s to the first recall "
                    f"answered, from its snapshot (the first start replayed them all in {first:.1f} s)")
            if n == 10_000:
                met = restarts[n] <= RESTART_10K_S
                ok &= met
                line += f"; target <= {RESTART_10K_S:g} s: {'met' if met else 'MISSED'}"
            print(line)
        if {1_000, 10_000} <= set(restarts):
            ratio = restarts[10_000] / restarts[1_000]
            ok &= ratio <= RESTART_GROWTH
            print(f"restart time at 10,000 / at 1,000 logged episodes: {ratio:.2f} (target <= {RESTART_GROWTH:g}: "
                  f"{'met' if ratio <= RESTART_GROWTH else 'MISSED'})")
    return 0 if ok else 1


# --- the server and its clients ----------------------------------------------------------------


class _Server:
    def __init__(self, export: Path, state: Path, sandbox: str, *options: str, timeout: float = 120) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log = tempfile.TemporaryFile("w+")  # a pipe nobody reads would stall a chatty server
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "automemo.bench.serve_worker", str(export), str(state), str(self.port), sandbox,
             *options], stderr=self.log, text=True)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise UserError(f"the bench server failed to start: {self.log.read()[-2000:]}")
            try:
                _get(self.port, "/healthz")
                return
            except OSError:
                time.sleep(0.05)
        self.kill()
        raise UserError(f"the bench server did not answer within {timeout:g} s")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def __enter__(self) -> _Server:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()


def _post(conn: http.client.HTTPConnection, path: str, body: dict) -> dict:
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    answer = conn.getresponse()
    data = json.loads(answer.read())
    if answer.status != 200:
        raise RuntimeError(data.get("error"))
    return data


def _get(port: int, path: str) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path)
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


_QUESTIONS = ["What did I say about my {}?", "Buy a {} on shop.example.com", "Find a {} near me"]
_TOPICS = "umbrella boots lamp sofa kettle bicycle camera jacket tent printer".split()


def _recall_level(port: int, clients: int, requests: int, seconds: float) -> dict[str, float]:
    samples: list[tuple[float, float, float]] = []
    lock, counter = threading.Lock(), iter(range(requests))
    deadline = time.perf_counter() + seconds

    def client(k: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        rng = random.Random(k)
        while time.perf_counter() < deadline:
            with lock:
                if next(counter, None) is None:
                    break
            body = {"instruction": rng.choice(_QUESTIONS).format(rng.choice(_TOPICS)), "scope": f"U{rng.randrange(8)}"}
            started = time.perf_counter()
            answer = _post(conn, "/v1/recall", body)
            latency = (time.perf_counter() - started) * 1000
            with lock:
                samples.append((latency, answer["retrieve_ms"], answer["queued_ms"]))
        conn.close()

    for k in range(8):  # warm-up: each user's memory opens (from its snapshot) and builds its lazy index
        _post(http.client.HTTPConnection("127.0.0.1", port, timeout=60), "/v1/recall",
              {"instruction": f"warm {k}", "scope": f"U{k}"})
    began = time.perf_counter()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    latency = [s[0] for s in samples]
    overhead = [s[0] - s[1] - s[2] for s in samples]
    return {"p50": _pct(latency, 50), "p95": _pct(latency, 95), "rps": len(samples) / elapsed,
            "retrieve_p50": _pct([s[1] for s in samples], 50), "wait_p50": _pct([s[2] for s in samples], 50),
            "over_p50": _pct(overhead, 50), "over_p95": _pct(overhead, 95)}


def _pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _kill_rounds(export: Path, state: Path, sandbox: str, rounds: int, rng: random.Random) -> int:
    """Clients remember while the server is killed; after a restart every acknowledged episode must
    be in the log and replayed. Returns the number lost."""
    acked: list[str] = []
    lost = 0
    for r in range(rounds):
        server = _Server(export, state, sandbox)
        stop = threading.Event()

        ready = threading.Barrier(9)

        def client(k: int) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            try:  # the user's memory opens before the clock of the kill starts
                _post(conn, "/v1/recall", {"instruction": "warm", "user": f"U{k}"})
            finally:
                ready.wait()
            i = 0
            while not stop.is_set():
                episode = {"messages": [{"role": "user", "content": f"round {r} client {k} note {i}"}],
                           "user": f"U{k}", "task_id": f"r{r}-c{k}-{i}"}
                try:
                    ack = _post(conn, "/v1/remember", episode)
                except (OSError, http.client.HTTPException, ValueError):
                    return  # the server died under this call: it was not acknowledged
                acked.append(ack["task_id"])
                i += 1

        threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        ready.wait()
        time.sleep(0.5 + rng.random())
        server.kill()
        stop.set()
        for t in threads:
            t.join()
    from automemo.serve.episode_log import EpisodeLog
    from automemo.serve.state_folder import LOG, StateFolder

    with _Server(export, state, sandbox) as server:  # a start after the kills adopts and opens every log
        folder = StateFolder(state)
        logged = {e.task_id for user in folder.users() for e in EpisodeLog(folder.user_dir(user) / LOG).read()}
        answered = sum(_post(http.client.HTTPConnection("127.0.0.1", server.port, timeout=60), "/v1/recall",
                             {"instruction": "note", "user": f"U{k}"}).get("text") is not None for k in range(8))
    lost = len(set(acked) - logged)
    print(f"  {len(acked)} acknowledged, {len(logged)} in the logs; {answered} of 8 users recalled after restart")
    return lost + (8 - answered)


def _write_log(state: Path, export: Path, n: int, rng: random.Random, *, one_user: bool = False) -> None:
    """A state folder whose log holds `n` remembered episodes of 8 users (`one_user`: all of the
    default user), as a server from before users had their own memory would have left it
    (written directly: fsyncing each of 10,000 would only time the disk); the server files each
    under its user on start."""
    from automemo.bench.seeds import synthetic_episode

    state.mkdir(parents=True, exist_ok=True)
    with open(state / "episodes.jsonl", "w") as fh:
        for i in range(n):
            episode = _text_only(synthetic_episode(100 + i, rng))
            if one_user:
                episode = replace(episode, metadata={k: v for k, v in episode.metadata.items() if k != "user"})
            fh.write(json.dumps({"seq": i + 1, "received": 0, "episode": episode.to_dict()}) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _text_only(episode):
    """The bench serves text: screenshots of the synthetic episodes are not written anywhere."""
    return replace(episode, steps=tuple(replace(s, screenshot=None) for s in episode.steps))
