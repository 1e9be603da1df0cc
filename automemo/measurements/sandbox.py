"""`automemo bench sandbox`: per backend, the median session open time, the median round trip
of a small retrieve, and the median quick-exam time of seeds/no_memory.py on 5 tasks, printed
next to their targets. The unsafe backend is the reference: what the runner costs without any
isolation."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from automemo.paths import seed_path
from automemo.paths import EXAMPLE_EPISODES_DIR

TARGETS_S = {  # (open, round trip) targets per backend; None = reference only
    "docker": (1.0, 0.010),
    "bwrap": (0.3, 0.010),
    "unsafe": (None, None),
}
SMALL_PROGRAM = """
from automemo.contract import MemoProgram, MemoryPayload
class Memo(MemoProgram):
    def update(self, episode):
        pass
    def retrieve(self, task):
        return MemoryPayload(text="memory for " + task.task_id, metadata={"evidence": ["e1"]})
"""


def add_arguments(parser) -> None:
    parser.add_argument("--backend", action="append", choices=list(TARGETS_S),
                        help="measure only this backend (repeatable); default: all three")
    parser.add_argument("--opens", type=int, default=10, help="sessions opened per backend (10)")
    parser.add_argument("--calls", type=int, default=200, help="retrieve round trips timed (200)")
    parser.add_argument("--exams", type=int, default=3, help="quick exams timed per backend (3)")
    parser.add_argument("--episodes", type=Path, default=EXAMPLE_EPISODES_DIR,
                        help="episode store with episodes/update and episodes/retrieve")


def run(args) -> int:
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from automemo.sandbox import SandboxError, get_sandbox

    console = Console()
    exam_inputs = _exam_inputs(args.episodes)
    if exam_inputs is None:
        console.print(f"[yellow]no quick exam: automemo.exam or episodes in {args.episodes} "
                      "missing[/]")
    rows = []
    names = args.backend or list(TARGETS_S)
    with Progress(console=console, transient=True) as progress:
        for name in names:
            try:
                backend = get_sandbox(name)
            except SandboxError as exc:
                rows.append((name, None, None, None, str(exc)))
                continue
            task = progress.add_task(f"{name}", total=args.opens + args.calls + args.exams)
            opened = _time_opens(backend, args.opens, lambda: progress.advance(task))
            trip = _time_round_trips(backend, args.calls, lambda: progress.advance(task))
            exam = (_time_exams(backend, exam_inputs, args.exams, lambda: progress.advance(task))
                    if exam_inputs else None)
            rows.append((name, opened, trip, exam, ""))

    table = Table(title="sandbox backends (medians)")
    for col in ("backend", "open", "target", "retrieve round trip", "target",
                "quick exam (no_memory, 5 tasks)", "note"):
        table.add_column(col)
    for name, opened, trip, exam, note in rows:
        open_target, trip_target = TARGETS_S[name]
        table.add_row(name, _fmt(opened, open_target), _target(open_target),
                      _fmt(trip, trip_target), _target(trip_target), _fmt(exam, None), note)
    console.print(table)
    return 0


def _time_opens(backend, n: int, tick) -> float:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        session = backend.open(SMALL_PROGRAM)
        times.append(time.perf_counter() - started)
        session.close()
        tick()
    return statistics.median(times)


def _time_round_trips(backend, n: int, tick) -> float:
    from automemo.contract import PartialRecorder

    task = {"task": PartialRecorder(task_id="t", benchmark="b", instruction="i").to_dict()}
    times = []
    with backend.open(SMALL_PROGRAM) as session:
        session.call("retrieve", task)  # the first call pays for lazy imports
        for _ in range(n):
            started = time.perf_counter()
            session.call("retrieve", task)
            times.append(time.perf_counter() - started)
            tick()
    return statistics.median(times)


def _exam_inputs(episodes_dir: Path):
    try:
        from automemo.exam import quick_exam  # noqa: F401 - only checking it exists
    except ImportError:
        return None
    from automemo.contract import PartialRecorder
    from automemo.episode_store import EpisodeStore

    if not (episodes_dir / "episodes" / "update").is_dir():
        return None
    store = EpisodeStore(episodes_dir)
    episodes = store.episodes("update")[:5]
    partials = [PartialRecorder.from_json(p.read_text())
                for p in sorted((episodes_dir / "episodes" / "retrieve").glob("*.json"))][:5]
    return store, episodes, partials


def _time_exams(backend, inputs, n: int, tick) -> float:
    from automemo.exam import quick_exam

    store, episodes, partials = inputs
    source = seed_path("no_memory").read_text()
    times = []
    for _ in range(n):
        started = time.perf_counter()
        report = quick_exam(source, backend, episodes, partials, store_root=store.root)
        times.append(time.perf_counter() - started)
        if not report.passed:
            raise RuntimeError(f"no_memory failed its quick exam: {report.for_prompt()}")
        tick()
    return statistics.median(times)


def _fmt(seconds: float | None, target: float | None) -> str:
    if seconds is None:
        return "-"
    text = f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"
    if target is None:
        return text
    return f"[green]{text}[/]" if seconds <= target else f"[red]{text}[/]"


def _target(seconds: float | None) -> str:
    if seconds is None:
        return "(reference)"
    return f"≤ {seconds * 1000:.0f} ms" if seconds < 1 else f"≤ {seconds:.1f} s"
