"""`automemo bench memory PROGRAM|EXPORT`: a memory at the size of a life. The program (a seed
name, a .py file, or an exported folder) runs in its sandbox and is fed synthetic conversation
sessions (`measurements.life`: 20 turns each, several users) up to 10^3, 10^4 and 10^5 units (turns);
at each size it prints:

- update throughput (units/s while filling up to that size);
- retrieve p50/p95 with a one-turn update before every retrieve, as a served memory sees them
  (the first retrieve after the fill is shown on its own: some programs build an index then),
  as wall time and as the guest's CPU time (what the program costs, whatever else runs);
- the guest's resident memory (RSS now and at its peak);
- snapshot size and time (`save_state` plus the state dir, read out of the sandbox), restart
  time (a fresh session opened and the snapshot loaded into it), and whether the restored
  memory answers a question exactly as the original does;

then the growth ratios: retrieve p50 at 10^5 over 10^4 (target <= 3, with p95 <= 50 ms at
10^5) and restart time at 10^4 over 10^3. Embeddings come from the fast deterministic encoder of
`bench seeds` (word vectors cached), so the figures are the program's own cost, not MiniLM's.
Times are host-side round trips through the sandbox channel."""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from automemo.cli import UserError
from automemo.cli.flags import add_sandbox_flag, sandbox_choice

P95_TARGET_MS, P50_RATIO_TARGET = 50.0, 3.0


def add_arguments(parser) -> None:
    parser.add_argument("program", metavar="PROGRAM|EXPORT",
                        help="a seed name (e.g. hybrid_rag), a memo program .py file, or an exported folder")
    parser.add_argument("--sizes", default="1000,10000,100000", help="units (turns) to measure at, ascending "
                        "(default 1000,10000,100000)")
    parser.add_argument("--queries", type=int, default=100, help="update+retrieve rounds timed per size (100)")
    add_sandbox_flag(parser, default="auto")
    parser.add_argument("--memory-mb", type=int, default=4096,
                        help="the guest's memory limit (default 4096: a life does not fit the evaluation's 1024)")
    parser.add_argument("--no-snapshot", action="store_true", help="skip snapshot and restart figures")
    parser.add_argument("--out", type=Path, help="also write the figures to this JSON file")


def program_source(spec: str) -> tuple[str, str]:
    """(name, source) of a seed name, a .py file or an exported folder."""
    from automemo.deploy import DeployError, read_manifest
    from automemo.export import PROGRAM
    from automemo.paths import SEEDS_DIR, list_seeds

    path = Path(spec)
    if path.is_dir():
        try:
            read_manifest(path)
        except DeployError as exc:
            raise UserError(str(exc)) from None
        return path.name, (path / PROGRAM).read_text()
    if path.suffix == ".py" and path.is_file():
        return path.stem, path.read_text()
    seed = SEEDS_DIR / f"{spec}.py"
    if seed.is_file():
        return spec, seed.read_text()
    seeds = ", ".join(p.stem for p in list_seeds())
    raise UserError(f"{spec!r} is neither a seed ({seeds}), a .py file nor an exported folder")


def run(args) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from automemo.measurements.life import Life
    from automemo.measurements.seeds import FastEncoder
    from automemo.sandbox import SandboxError, get_sandbox
    from automemo.sandbox.base import Limits

    try:
        sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    except ValueError:
        raise UserError(f"--sizes takes comma-separated integers, got {args.sizes!r}") from None
    name, source = program_source(args.program)
    try:
        sandbox = get_sandbox(sandbox_choice(args))
    except SandboxError as exc:
        raise UserError(str(exc)) from None
    limits = Limits(memory_mb=args.memory_mb, update_timeout_s=600, retrieve_timeout_s=600, snapshot_timeout_s=1200)
    console = Console(width=max(Console().width, 120))  # eleven columns: no wrapping in a log
    console.print(f"bench memory: {name} in the {sandbox.name} sandbox, sizes {', '.join(f'{s:,}' for s in sizes)} units; "
                  "embeddings from the fast deterministic encoder")
    encoder, life, rows = FastEncoder(), Life(seed=0), []
    with tempfile.TemporaryDirectory(prefix="automemo-bench-memory-") as tmp, \
            Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                     console=console, transient=True) as progress:
        store = Path(tmp)
        job = progress.add_task("units remembered", total=sizes[-1])
        session = sandbox.open(source, limits, services=encoder, store_root=store)
        try:
            units = 0
            for size in sizes:
                started, filled = time.perf_counter(), units
                while units < size:
                    episode = life.session()
                    session.call("update", {"episode": episode.to_dict()}, limits.timeout("update"))
                    units += len(episode.steps)
                    progress.update(job, completed=min(units, sizes[-1]))
                row = {"units": units, "update_units_per_s": (units - filled) / (time.perf_counter() - started)}
                row.update(_retrieves(session, life, args.queries, limits, progress))
                units += args.queries
                row.update({k: v / 1024 for k, v in session.call("describe", {}).items() if k.endswith("rss_kb")})
                if not args.no_snapshot:
                    progress.update(job, description=f"snapshot and restart at {units:,}")
                    row.update(_snapshot_restart(session, sandbox, source, limits, encoder, store, life))
                progress.update(job, description="units remembered")
                rows.append(row)
        finally:
            session.close()
    _print(console, name, sandbox.name, rows)
    figures = {"program": name, "sandbox": sandbox.name, "queries": args.queries, "sizes": rows, **_ratios(rows)}
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n")
        console.print(f"figures written to {args.out}")
    return 0


def _retrieves(session, life, queries: int, limits, progress) -> dict[str, float]:
    """The first retrieve after the fill, then `queries` rounds of update + timed retrieve."""
    started = time.perf_counter()
    session.call("retrieve", {"task": life.question(0).to_dict()}, limits.timeout("retrieve"))
    first = (time.perf_counter() - started) * 1000
    timings, cpu = [], []
    task = progress.add_task("update + retrieve", total=queries)
    for j in range(1, queries + 1):
        session.call("update", {"episode": life.remember().to_dict()}, limits.timeout("update"))
        question = life.question(j).to_dict()
        cpu_before = session.call("describe", {}).get("cpu_s")
        started = time.perf_counter()
        session.call("retrieve", {"task": question}, limits.timeout("retrieve"))
        timings.append((time.perf_counter() - started) * 1000)
        cpu_after = session.call("describe", {}).get("cpu_s")
        if cpu_before is not None and cpu_after is not None:
            cpu.append((cpu_after - cpu_before) * 1000)
        progress.advance(task)
    progress.remove_task(task)
    out = {"first_retrieve_ms": first, "retrieve_p50_ms": _percentile(timings, 50),
           "retrieve_p95_ms": _percentile(timings, 95)}
    if cpu:  # includes one describe call's own CPU (well under a millisecond)
        out.update({"retrieve_cpu_p50_ms": _percentile(cpu, 50), "retrieve_cpu_p95_ms": _percentile(cpu, 95)})
    return out


def _snapshot_restart(session, sandbox, source, limits, encoder, store, life) -> dict[str, float]:
    """Snapshot the live memory, load it into a fresh session, and check both answer alike."""
    from automemo.sandbox import snapshot

    started = time.perf_counter()
    data = snapshot.save_state(session, limits)
    saved = time.perf_counter() - started
    started = time.perf_counter()
    restarted = sandbox.open(source, limits, services=encoder, store_root=store)
    try:
        snapshot.load_state(restarted, data, limits)
        restart = time.perf_counter() - started
        question = {"task": life.question(1).to_dict()}
        same = restarted.call("retrieve", question, limits.timeout("retrieve")) == \
            session.call("retrieve", question, limits.timeout("retrieve"))
    finally:
        restarted.close()
    return {"snapshot_mb": len(data) / 2 ** 20, "snapshot_s": saved, "restart_s": restart, "restored_equal": same}


def _percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _ratios(rows: list[dict]) -> dict[str, float | None]:
    """p50 growth from 10^4 to 10^5 units and restart growth from 10^3 to 10^4, where measured
    (the sizes closest to those, by units)."""
    def at(units: int) -> dict | None:
        close = [r for r in rows if 0.9 * units <= r["units"] <= 1.2 * units]
        return close[0] if close else None

    out: dict[str, float | None] = {"p50_ratio_1e5_1e4": None, "restart_ratio_1e4_1e3": None}
    if at(100_000) and at(10_000):
        out["p50_ratio_1e5_1e4"] = at(100_000)["retrieve_p50_ms"] / at(10_000)["retrieve_p50_ms"]
    if at(10_000) and at(1_000) and "restart_s" in at(1_000):
        out["restart_ratio_1e4_1e3"] = at(10_000)["restart_s"] / at(1_000)["restart_s"]
    return out


def _print(console, name: str, backend: str, rows: list[dict]) -> None:
    from rich.table import Table

    table = Table(title=f"{name}: memory at the size of a life ({backend} sandbox); 1st = first retrieve "
                        "after the fill, same = restored memory answers as the original")
    columns = [("units", "{:,}", "units"), ("update u/s", "{:,.0f}", "update_units_per_s"),
               ("1st ms", "{:,.1f}", "first_retrieve_ms"), ("p50 ms", "{:.1f}", "retrieve_p50_ms"),
               ("p95 ms", "{:.1f}", "retrieve_p95_ms"), ("CPU p50/p95", "{}", "cpu"), ("RSS MB", "{:,.0f}", "rss_kb"),
               ("peak MB", "{:,.0f}", "peak_rss_kb"), ("snap MB", "{:,.1f}", "snapshot_mb"),
               ("snap s", "{:.2f}", "snapshot_s"), ("restart s", "{:.2f}", "restart_s"),
               ("same", "{}", "restored_equal")]
    for title, _, _ in columns:
        table.add_column(title, justify="right")
    for row in rows:
        if "retrieve_cpu_p50_ms" in row:
            row = {**row, "cpu": f"{row['retrieve_cpu_p50_ms']:.1f}/{row['retrieve_cpu_p95_ms']:.1f}"}
        table.add_row(*(fmt.format(row[key]) if key in row else "-" for _, fmt, key in columns))
    console.print(table)
    ratios = _ratios(rows)
    last = rows[-1] if rows else {}
    if ratios["p50_ratio_1e5_1e4"] is not None:
        met = ratios["p50_ratio_1e5_1e4"] <= P50_RATIO_TARGET and last["retrieve_p95_ms"] <= P95_TARGET_MS
        console.print(f"retrieve p50 ratio 10^5/10^4: {ratios['p50_ratio_1e5_1e4']:.2f} (target <= {P50_RATIO_TARGET:g}); "
                      f"p95 at {last['units']:,}: {last['retrieve_p95_ms']:.1f} ms (target <= {P95_TARGET_MS:g}): "
                      f"{'met' if met else 'MISSED'}")
    if ratios["restart_ratio_1e4_1e3"] is not None:
        console.print(f"restart ratio 10^4/10^3: {ratios['restart_ratio_1e4_1e3']:.2f}")
