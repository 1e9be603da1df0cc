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
`--tenants`, `--ingest` and `--first-start` run the load phases of `measurements.serving.phases` instead
(one tenant against another, a client's ingest with MiniLM, the first answer from a shared base),
`--faults` the kill -9 run of `measurements.serving.faults`."""

from __future__ import annotations

import http.client
import random
import tempfile
import threading
import time
from pathlib import Path

from automemo.cli import UserError
from automemo.cli.flags import add_sandbox_flag, sandbox_choice
from automemo.measurements.serving.load import Server, post, recall_level, text_only, write_log

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
    parser.add_argument("--engine", choices=("single", "ray"), default="single",
                        help="ray: recall at each --clients level on Ray Serve with each --replicas count, against "
                             "the single-process server in the same run (no kill or restart rounds)")
    parser.add_argument("--replicas", default="1,2", help="--engine ray: memory replica counts (default 1,2)")
    add_sandbox_flag(parser, default="auto")


def run(args) -> int:
    from automemo.measurements.seeds import synthetic_episode
    from automemo.measurements.stand_ins.serve_export import write_export
    from automemo.paths import SEEDS_DIR

    args.sandbox = sandbox_choice(args)  # the old spelling folded in
    if args.engine == "ray":
        from automemo.measurements.serving.on_ray import run as run_on_ray

        return run_on_ray(args)
    name = "hybrid_rag" if args.ingest and args.program == "trajectory_retrieval" else args.program
    program = SEEDS_DIR / f"{name}.py"
    if not program.is_file():
        raise UserError(f"no seed {name!r}; seeds are {', '.join(sorted(p.stem for p in SEEDS_DIR.glob('*.py')))}")
    rng = random.Random(0)
    shipped = [text_only(synthetic_episode(i, rng)) for i in range(2000 if args.first_start else 20)]
    ok = True
    with tempfile.TemporaryDirectory(prefix="automemo-bench-serve-") as tmp:
        root = Path(tmp)
        export = write_export(root / "export", program.read_text(), shipped)
        if args.tenants or args.ingest or args.first_start or args.faults:
            from automemo.measurements.serving import phases as serve_phases

            print(f"serving seed {name} ({args.sandbox} sandbox)")
            if args.tenants:
                ok &= serve_phases.tenants(export, root / "tenants", args.sandbox, args.requests)
            if args.ingest:
                ok &= serve_phases.ingest(export, root / "ingest", args.sandbox)
            if args.first_start:
                ok &= serve_phases.first_start(export, root / "first", args.sandbox)
            if args.faults:
                from automemo.measurements.serving.faults import faults

                ok &= faults(export, root / "faults", args.sandbox, users=args.users, ops=args.ops,
                             kills=args.kills, seed=0)
            return 0 if ok else 1
        print(f"serving seed {name} ({args.sandbox} sandbox), memory of {args.memory} episodes; "
              f"embeddings: fast deterministic encoder")
        state = root / "latency"
        write_log(state, export, args.memory, rng)
        with Server(export, state, args.sandbox) as server:
            print(f"{'clients':>7} {'p50 ms':>8} {'p95 ms':>8} {'req/s':>7} {'retrieve p50':>12} "
                  f"{'wait p50':>9} {'overhead p50':>12} {'overhead p95':>12}")
            for clients in [int(c) for c in args.clients.split(",")]:
                row = recall_level(server.port, clients, args.requests, args.seconds)
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
            write_log(state, export, n, rng, one_user=True)
            started = time.perf_counter()
            with Server(export, state, args.sandbox, timeout=1800) as server:
                first = time.perf_counter() - started  # serving once the memory replayed and snapshotted
                server.kill()  # no goodbye snapshot: the restart loads the one made after the replay
            started = time.perf_counter()
            with Server(export, state, args.sandbox, timeout=600) as server:
                post(http.client.HTTPConnection("127.0.0.1", server.port, timeout=60), "/v1/recall",
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


def _kill_rounds(export: Path, state: Path, sandbox: str, rounds: int, rng: random.Random) -> int:
    """Clients remember while the server is killed; after a restart every acknowledged episode must
    be in the log and replayed. Returns the number lost."""
    acked: list[str] = []
    lost = 0
    for r in range(rounds):
        server = Server(export, state, sandbox)
        stop = threading.Event()

        ready = threading.Barrier(9)

        def client(k: int) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            try:  # the user's memory opens before the clock of the kill starts
                post(conn, "/v1/recall", {"instruction": "warm", "user": f"U{k}"})
            finally:
                ready.wait()
            i = 0
            while not stop.is_set():
                episode = {"messages": [{"role": "user", "content": f"round {r} client {k} note {i}"}],
                           "user": f"U{k}", "task_id": f"r{r}-c{k}-{i}"}
                try:
                    ack = post(conn, "/v1/remember", episode)
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
    from automemo.serve.storage.episode_log import EpisodeLog
    from automemo.serve.storage.state_folder import LOG, StateFolder

    with Server(export, state, sandbox) as server:  # a start after the kills adopts and opens every log
        folder = StateFolder(state)
        logged = {e.task_id for user in folder.users() for e in EpisodeLog(folder.user_dir(user) / LOG).read()}
        answered = sum(post(http.client.HTTPConnection("127.0.0.1", server.port, timeout=60), "/v1/recall",
                             {"instruction": "note", "user": f"U{k}"}).get("text") is not None for k in range(8))
    lost = len(set(acked) - logged)
    print(f"  {len(acked)} acknowledged, {len(logged)} in the logs; {answered} of 8 users recalled after restart")
    return lost + (8 - answered)


