"""`automemo bench longmemeval-m`: an evaluation on a LongMemEval file of the M split's shape, with
what it cost and how much of it sharing saved.

    automemo bench longmemeval-m [--questions 50] [--sessions-per-question 480] [--pool 2000]
        [--program hybrid_rag] [--split test] [--sandbox bwrap] [--workdir DIR]

Writes a synthetic M-shaped file (`measurements/stand_ins/longmemeval_file.py`: ~480 sessions a
question, the fillers drawn from a pool shared between haystacks, nothing real in it) one
question at a time, then evaluates PROGRAM on it with `--preset longmemeval`, cold (a fresh
episode store and embedding cache), in this process, and prints:

- wall-clock, and host CPU (this process: the reader, the collection, the encoder streams);
- the host's peak RSS (this process's `ru_maxrss`: the file is written first, in far less) and
  the largest guest's (its `VmRSS`, read every second from `/proc` for this process's
  descendants: a forked child's `ru_maxrss` counts the pages it shared with the host before it
  ran the guest);
- haystack sessions: references over the file's questions against distinct ones, each parsed
  once; and in the evaluated split: the sessions and turns fed to the program (one memory per
  question) against the distinct turn texts, and the texts the encoder computed (each distinct
  text once, whichever haystacks hold it);
- the `automemo eval` command that repeats the evaluation, for `/usr/bin/time -v`.

The figures are for the machine it runs on and the load at the time: it prints the load average
beside them. A 249-question file is the M-sized target (~1.8 GB, `--questions 249`).
"""

from __future__ import annotations

import dataclasses
import os
import resource
import shlex
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from automemo.measurements.stand_ins.longmemeval_file import M_SHAPE, SyntheticShape, write_synthetic_longmemeval


@dataclass(frozen=True)
class Figures:
    """What one measured evaluation came to."""

    wall_s: float
    host_cpu_s: float
    host_peak_rss_mb: float
    guest_peak_rss_mb: float
    file_references: int      # haystack sessions over every question of the file
    file_distinct: int        # of them, distinct (id, content): each parsed once
    split_sessions_fed: int   # update episodes the program was given (one memory per question)
    split_turns_fed: int      # their turns
    split_distinct_texts: int  # distinct turn texts among them
    encoded_texts: int        # texts the encoder computed (turns and questions)
    sandbox_sessions: int
    value: float              # the preset's ranking metric (Recall@10 of the turns cited)
    recall_any_at_5: float    # LongMemEval's official session recall_any@5


def add_arguments(parser) -> None:
    parser.add_argument("--questions", type=int, default=50, help="questions in the file (default 50; "
                        f"the M-sized target: {M_SHAPE.questions})")
    parser.add_argument("--sessions-per-question", type=int, default=M_SHAPE.sessions,
                        help=f"haystack sessions a question (default {M_SHAPE.sessions})")
    parser.add_argument("--pool", type=int, default=M_SHAPE.pool,
                        help=f"filler sessions shared between haystacks (default {M_SHAPE.pool})")
    parser.add_argument("--turns", type=int, default=M_SHAPE.turns, help=f"turns a session (default {M_SHAPE.turns})")
    parser.add_argument("--program", default="hybrid_rag", help="a seed name or a program file (default hybrid_rag)")
    parser.add_argument("--split", default="test", choices=("train", "test"))
    parser.add_argument("--sandbox", default="bwrap", help="sandbox backend (default bwrap)")
    parser.add_argument("--workdir", type=Path, help="keep the file, store and cache here (default: a temporary "
                        "folder, removed)")


def run(args) -> int:
    shape = dataclasses.replace(M_SHAPE, questions=args.questions, sessions=args.sessions_per_question,
                                turns=args.turns, pool=args.pool)
    if args.workdir is not None:
        return _run(args, shape, args.workdir)
    with tempfile.TemporaryDirectory(prefix="lme-m-") as tmp:
        return _run(args, shape, Path(tmp))


def _run(args, shape: SyntheticShape, workdir: Path) -> int:
    path = workdir / f"synthetic_m_{shape.questions}x{shape.sessions}.json"
    written = write_synthetic_longmemeval(path, shape)
    print(f"{path}: {written.questions} questions, {written.session_references:,} haystack sessions "
          f"({written.distinct_sessions:,} distinct ids), {written.turn_references:,} turns, "
          f"{written.bytes / 1e6:,.0f} MB")
    store = workdir / f"store-{time.strftime('%Y%m%d-%H%M%S')}"
    program = _program(args.program)
    print("command (the same evaluation, e.g. under /usr/bin/time -v):")
    print("  " + shlex.join(["python3", "-m", "automemo", "eval", str(program), "--preset", "longmemeval",
                             "--option", f"path={path}", "--split", args.split, "--sandbox", args.sandbox,
                             "--store", str(store), "--workdir", str(workdir / "eval")]))
    load = os.getloadavg()[0]
    figures = measure(path, program, args.split, args.sandbox, store)
    _print(figures, load, os.getloadavg()[0])
    return 0


def _program(name: str) -> Path:
    from automemo.paths import list_seeds

    given = Path(name)
    if given.suffix == ".py":
        return given
    return next(p for p in list_seeds() if p.stem == name)


def measure(path: Path, program: Path, split: str, sandbox: str, store: Path) -> Figures:
    """One cold evaluation of `program` on `path` in this process (module docstring)."""
    from automemo.assembly import build_evaluation
    from automemo.resolution import load_run_config

    config = load_run_config("longmemeval", None, {
        "benchmark": {"options": {"path": str(path)}},
        "sandbox": {"backend": sandbox},
        "embeddings": {"cache_path": str(store / "embeddings.sqlite")}})
    started, cpu = time.monotonic(), time.process_time()
    setup = build_evaluation(config, store_root=store, quiet=True, unsafe_confirmed=sandbox == "unsafe")
    encoded = _count_encoded(setup.encoders.text)
    guests = GuestPeak()
    with setup, guests:
        result = setup.evaluator.evaluate(program.read_text(), split=split)
    wall, host_cpu = time.monotonic() - started, time.process_time() - cpu
    bench = setup.benchmark
    scopes = {q.scope for q in bench.data.questions if q.question_id in {t.task_id for t in result.tasks}}
    fed = [s for s in bench.data.sessions if s.scope in scopes]
    return Figures(
        wall_s=wall, host_cpu_s=host_cpu,
        host_peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        guest_peak_rss_mb=guests.peak_kb / 1024,
        file_references=bench.session_references, file_distinct=bench.distinct_sessions,
        split_sessions_fed=len(fed), split_turns_fed=sum(len(s.turns) for s in fed),
        split_distinct_texts=len({t.text for s in fed for t in s.turns}),
        encoded_texts=encoded[0], sandbox_sessions=int(result.info.get("sessions", 0)), value=result.mean,
        recall_any_at_5=float(result.metrics.get("session_recall_any@5", float("nan"))))


class GuestPeak:
    """The largest RSS any descendant process of this one reaches while the block runs (the
    sandbox guests and their launchers), sampled every `every` seconds from `/proc`."""

    def __init__(self, every: float = 1.0) -> None:
        self.every, self.peak_kb = every, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="guest-rss", daemon=True)

    def __enter__(self) -> "GuestPeak":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while True:
            self.peak_kb = max([self.peak_kb, *_descendant_rss_kb(os.getpid())])
            if self._stop.wait(self.every):
                return


def _descendant_rss_kb(root: int) -> list[int]:
    parents, rss = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = dict(line.split(":", 1) for line in (entry / "status").read_text().splitlines() if ":" in line)
        except OSError:  # ended meanwhile
            continue
        pid = int(entry.name)
        parents[pid] = int(fields.get("PPid", "0"))
        rss[pid] = int(fields.get("VmRSS", "0 kB").split()[0])
    out = []
    for pid in rss:
        up = parents.get(pid)
        while up and up != root:
            up = parents.get(up)
        if up == root:
            out.append(rss[pid])
    return out


def _count_encoded(cached: Any) -> list[int]:
    """A tally of the texts the encoder behind the cache computes (a one-item list, filled as it
    runs)."""
    inner, tally = cached.encoder, [0]

    class Counting:
        def __getattr__(self, name: str) -> Any:
            return getattr(inner, name)

        def encode(self, texts, *args, **kwargs):
            tally[0] += len(texts)
            return inner.encode(texts, *args, **kwargs)

    cached.encoder = Counting()
    return tally


def _print(f: Figures, load_before: float, load_after: float) -> None:
    print()
    print("| figure | value |")
    print("|---|---|")
    rows = [
        ("wall-clock", f"{f.wall_s / 60:.0f} min {f.wall_s % 60:02.0f} s (load {load_before:.1f} before, "
                       f"{load_after:.1f} after)"),
        ("host CPU (user + sys)", f"{f.host_cpu_s:,.0f} s"),
        ("host peak RSS", f"{f.host_peak_rss_mb:,.0f} MB"),
        ("largest guest's peak RSS", f"{f.guest_peak_rss_mb:,.0f} MB ({f.sandbox_sessions} sandbox sessions)"),
        ("file: haystack sessions read / distinct, each parsed once",
         f"{f.file_references:,} / {f.file_distinct:,}"),
        ("split: sessions fed to the program (one memory per question)", f"{f.split_sessions_fed:,}"),
        ("split: turns fed / distinct turn texts", f"{f.split_turns_fed:,} / {f.split_distinct_texts:,}"),
        ("texts the encoder computed (turns and questions)", f"{f.encoded_texts:,}"),
        ("Recall@10 / official session recall_any@5", f"{f.value:.3f} / {f.recall_any_at_5:.3f}"),
    ]
    for name, value in rows:
        print(f"| {name} | {value} |")
