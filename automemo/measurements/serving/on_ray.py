"""`automemo bench serve --engine ray --replicas 1,2`: what Ray Serve replicas buy. In one run,
on the same memory (a seed program holding --memory episodes of 8 users, embeddings from the fast
deterministic encoder), recall p50/p95 and requests/s at each --clients level:

- the single-process server (`automemo serve`, the baseline);
- `automemo serve --engine ray` on a local Ray cluster of this machine's cores, with each replica
  count of --replicas (the same application, redeployed).

Figures are printed with their ratios to the baseline and to the first replica count, measured in
the same run (this machine is shared: absolute figures move with its load, ratios less)."""

from __future__ import annotations

import os
import random
import socket
import tempfile
from pathlib import Path

from automemo.cli import UserError


def run(args) -> int:
    from automemo.measurements.seeds import FastEncoder, synthetic_episode
    from automemo.measurements.serving.load import Server, recall_level, text_only, write_log
    from automemo.measurements.stand_ins.serve_export import write_export
    from automemo.paths import SEEDS_DIR

    try:
        counts = [int(n) for n in args.replicas.split(",")]
        levels = [int(c) for c in args.clients.split(",")]
    except ValueError:
        raise UserError(f"--replicas and --clients are lists of numbers such as 1,2; got {args.replicas!r} and "
                        f"{args.clients!r}") from None
    if min(counts) < 1 or min(levels) < 1:
        raise UserError("--replicas and --clients must be at least 1")
    program = SEEDS_DIR / f"{args.program}.py"
    if not program.is_file():
        raise UserError(f"no seed {args.program!r}; seeds are {', '.join(sorted(p.stem for p in SEEDS_DIR.glob('*.py')))}")
    shipped = [text_only(synthetic_episode(i, random.Random(0))) for i in range(20)]
    rows: dict[str, dict[int, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="automemo-bench-serve-ray-") as tmp:
        root = Path(tmp)
        export = write_export(root / "export", program.read_text(), shipped)
        print(f"serving seed {args.program} ({args.sandbox} sandbox), memory of {args.memory} episodes of 8 users; "
              f"embeddings: fast deterministic encoder; {os.cpu_count()} cores")
        write_log(root / "single", export, args.memory, random.Random(1))
        with Server(export, root / "single", args.sandbox) as server:
            rows["single process"] = {c: recall_level(server.port, c, args.requests, args.seconds) for c in levels}
        write_log(root / "ray", export, args.memory, random.Random(1))  # the same memory
        for count, levels_rows in _ray_levels(export, root / "ray", args, counts, levels, FastEncoder()).items():
            rows[f"ray, {count} replica{'s' if count > 1 else ''}"] = levels_rows
    _print(rows, levels)
    return 0


def _ray_levels(export: Path, state: Path, args, counts: list[int], levels: list[int], encoder) -> dict:
    from automemo.measurements.serving.load import recall_level

    try:
        import ray
        from ray import serve
    except ImportError:
        raise UserError("--engine ray needs Ray Serve: pip install 'automemo[ray]'") from None
    from automemo.serve.access import TokenTable
    from automemo.serve.cluster.engine import APP_NAME, deploy, prepare
    from automemo.serve.http.policy import HttpPolicy
    from automemo.serve.requests import RequestLimits

    prepared = prepare(export, state, sandbox=args.sandbox, unsafe=args.sandbox == "unsafe", services=encoder)
    lock = prepared.lock()
    results = {}
    try:
        ray.init(num_cpus=max(os.cpu_count() or 1, max(counts)), include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}})
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        for count in counts:
            print(f"deploying {count} memory replica{'s' if count > 1 else ''}…", flush=True)
            deploy(prepared, replicas=count, max_open=8, limits=RequestLimits(),
                   policy=HttpPolicy(rate_per_minute=0), tokens=TokenTable())
            try:
                results[count] = {c: recall_level(port, c, args.requests, args.seconds) for c in levels}
            finally:
                serve.delete(APP_NAME)  # its replicas snapshot and let their users go
    finally:
        if ray.is_initialized():
            serve.shutdown()
            ray.shutdown()
        lock.close()
    return results


def _print(rows: dict[str, dict[int, dict[str, float]]], levels: list[int]) -> None:
    baseline = rows["single process"]
    ray_rows = [name for name in rows if name.startswith("ray")]
    first = ray_rows[0] if ray_rows else None
    print(f"{'engine':<18} {'clients':>7} {'p50 ms':>8} {'p95 ms':>8} {'req/s':>7} {'req/s vs single':>15} "
          f"{'p95 vs single':>13} {'req/s vs ' + (first or '-'):>24}")
    for name, by_level in rows.items():
        for c in levels:
            row = by_level[c]
            versus_first = _ratio(row["rps"], rows[first][c]["rps"]) if name != "single process" else float("nan")
            print(f"{name:<18} {c:>7} {row['p50']:>8.2f} {row['p95']:>8.2f} {row['rps']:>7.1f} "
                  f"{_ratio(row['rps'], baseline[c]['rps']):>15.2f} {_ratio(row['p95'], baseline[c]['p95']):>13.2f} "
                  f"{versus_first:>24.2f}")


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")  # a level that got no answer in its --seconds has no rate
