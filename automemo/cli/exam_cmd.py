"""`automemo exam PROGRAM --episodes DIR`: quick-examine one memo program in the sandbox.

Runs the six checks of the quick exam on the episodes in DIR: a run directory (its episode store is
used), or an episode store with update episodes as EpisodeRecorder JSON in DIR/episodes/<group>/
(default: update/, or the store's one update-* group, as a search run writes), retrieve tasks as
PartialRecorder JSON in DIR/episodes/retrieve/ (when missing, the update episodes' own partials
are used), images under DIR/images/. PROGRAM is a file, a seed name or an exported folder, as for
`automemo eval`. A run directory's own retrieval budget, sandbox limits, exam size and
embedding settings apply (flag > --config > the run's > default, as for every command). Exit code
0 when every check passes, 1 when one fails, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from automemo.cli import UserError
from automemo.cli.flags import (add_config_flags, add_sandbox_flag, add_source_flags, flag_layer,
                                unsafe_confirmed)

# What of a run's config an exam of its episodes uses: the backend is this machine's choice.
# The benchmark's name says which question-time keys its retrieve tasks may carry.
RUN_SETTINGS = ("budget", "sandbox.limits", "search.exam_tasks", "embeddings", "benchmark.name")


def register(sub) -> None:
    p = sub.add_parser("exam", help="quick-examine a memo program in the sandbox",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("program", metavar="PROGRAM",
                   help="a memo program file, a seed name (e.g. murag), or an exported folder with program.py")
    p.add_argument("--episodes", required=True, type=Path, metavar="DIR",
                   help="a run directory, or an episode store, to examine on")
    p.add_argument("--update-group", metavar="NAME",
                   help="folder under DIR/episodes with the update episodes (default: update, or the one update-* group)")
    p.add_argument("--retrieve-group", default="retrieve", metavar="NAME",
                   help="folder under DIR/episodes with the retrieve tasks (default: retrieve)")
    add_source_flags(p, preset=False)
    add_config_flags(p, ("--exam-tasks", "--max-chars", "--max-images"), help={
        "--exam-tasks": "examine on the first N update episodes and N retrieve tasks"})
    p.add_argument("--max-inputs", dest="exam_tasks", type=int, help=argparse.SUPPRESS)  # the old name
    add_sandbox_flag(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def store_root(folder: Path) -> Path:
    """The episode store to examine: a run directory's own store, or the folder itself."""
    from automemo.runs.rundir import CONFIG_FILE, DB_FILE

    if (folder / DB_FILE).exists() and (folder / CONFIG_FILE).exists():
        return folder / "episodes"
    return folder


def run_settings(folder: Path) -> dict[str, Any]:
    """What an exam uses of the config of the run `folder` is ({} for a bare episode store):
    its budget, sandbox limits, exam size and embedding settings."""
    from automemo.config import moved_keys
    from automemo.runs.rundir import CONFIG_FILE

    if store_root(folder) == folder:
        return {}
    config = moved_keys(json.loads((folder / CONFIG_FILE).read_text()))
    out: dict[str, Any] = {}
    for key in RUN_SETTINGS:
        section, _, leaf = key.partition(".")
        value = (config.get(section) or {}).get(leaf) if leaf else config.get(section)
        if value is not None:
            out.setdefault(section, {}).update({leaf: value} if leaf else value)
    # The run's cache file belongs to its store; the exam keeps its vectors in memory.
    out.get("embeddings", {}).pop("cache_path", None)
    return out


def resolve_config(args):
    """The exam's settings: flag > --config > the run's > default."""
    from automemo.configtools import ConfigError
    from automemo.resolution import data_layer, file_layer, resolve

    folder = args.episodes.resolve()
    try:
        layers = [data_layer(f"run {folder}", run_settings(folder)), file_layer(args.config), flag_layer(args)]
        return resolve(layers, benchmark_defaults=False).config
    except ConfigError as exc:
        raise UserError(f"bad configuration: {exc}") from None


def update_group(root: Path, given: str | None) -> str:
    """The group named by --update-group, else `update`, else the store's only update-* group
    (a search run names it update-<split>-<hash>); an error lists the groups there are."""
    groups = sorted(p.name for p in (root / "episodes").glob("*") if p.is_dir())
    if given is not None and given in groups:
        return given
    if given is None:
        if "update" in groups:
            return "update"
        updates = [g for g in groups if g.startswith("update-")]
        if len(updates) == 1:
            return updates[0]
    wanted = f"--update-group {given}" if given else "no --update-group"
    raise UserError(
        f"{wanted}: the update episodes to examine on are not clear in {root / 'episodes'}; "
        + (f"its groups are: {', '.join(groups)}; pass one with --update-group NAME" if groups
           else "it has no episode groups (expected EpisodeRecorder JSON files in DIR/episodes/<group>/; "
                "see the package's example store automemo/data/example-episodes/ for the layout, or pass a run directory)")
    )


def load_inputs(root: Path, update_group: str, retrieve_group: str, limit: int,
                question_time_keys: frozenset[str] = frozenset(), budget: dict[str, Any] | None = None):
    """(episodes, partials) from an episode store folder, with errors naming the file. The
    partials are what an evaluation hands `retrieve` (`contract.question_time_task`): only what
    the contract lets a retrieve task carry, plus the benchmark's `question_time_keys` and the
    run's `budget`: a folder of one's own may hold labels."""
    from automemo.contract import ContractError, EpisodeRecorder, PartialRecorder, question_time_task

    def read(path: Path, cls):
        try:
            return cls.from_json(path.read_text(encoding="utf-8"))
        except (ContractError, UnicodeDecodeError) as exc:
            raise UserError(f"{path}: not a valid {cls.__name__}: {exc}") from None

    update_dir = root / "episodes" / update_group
    files = sorted(update_dir.glob("*.json"))
    if not files:
        raise UserError(
            f"no update episodes in {update_dir}: expected EpisodeRecorder JSON files in "
            f"DIR/episodes/{update_group}/ (see the package's example store automemo/data/example-episodes/ for the layout)"
        )
    episodes = [read(p, EpisodeRecorder) for p in files[:limit]]
    retrieve_files = sorted((root / "episodes" / retrieve_group).glob("*.json"))
    if retrieve_files:
        partials = [read(p, PartialRecorder) for p in retrieve_files[:limit]]
    else:
        partials = [e.partial() for e in episodes]
    dropped: set[str] = set()
    allowed = []
    for partial in partials:
        shown, unknown = question_time_task(partial, question_time_keys, budget)
        dropped.update(unknown)
        allowed.append(shown)
    if dropped:
        print(f"note: retrieve metadata keys {', '.join(sorted(dropped))} are not what a retrieve task may "
              f"carry; dropped before retrieve, as an evaluation does", file=sys.stderr)
    return episodes, allowed


def run(args) -> int:
    from automemo.benchmarks import question_time_keys
    from automemo.cli.eval_cmd import read_program

    program = args.program
    if not args.episodes.is_dir():
        raise UserError(f"--episodes {args.episodes} is not a directory (pass a run directory or an episode store folder)")
    too_few = args.exam_tasks is not None and args.exam_tasks < 1
    if too_few or min(args.max_chars or 0, args.max_images or 0) < 0:
        raise UserError("--exam-tasks must be >= 1; --max-chars and --max-images must be >= 0")
    config = resolve_config(args)
    try:
        source = read_program(program).source
    except UnicodeDecodeError:
        raise UserError(f"{program} is not UTF-8 text") from None
    root = store_root(args.episodes.resolve())
    group = update_group(root, args.update_group)
    episodes, partials = load_inputs(root, group, args.retrieve_group, config.search.exam_tasks,
                                     question_time_keys(config.benchmark.name), config.budget.to_dict())

    from automemo.assembly import AssemblyError, memo_services, open_sandbox
    from automemo.exam import quick_exam

    try:
        sandbox = open_sandbox(config.sandbox.backend, unsafe_confirmed=unsafe_confirmed(args))
        services = memo_services(config.embeddings, root, persistent=False)
    except AssemblyError as exc:
        raise UserError(str(exc)) from None
    report = quick_exam(source, sandbox, episodes, partials, budget=config.budget,
                        limits=config.sandbox.limits, services=services, store_root=root)
    if args.json:
        print(json.dumps({**report.to_dict(), "program": str(program), "sandbox": sandbox.name}, indent=2))
    else:
        _print_report(report, program, sandbox.name)
    return 0 if report.passed else 1


def _print_report(report, program: str, sandbox_name: str) -> None:
    from automemo import terminal
    from rich.table import Table

    from automemo.exam import CHECKS

    console = terminal.console()
    table = Table(title=f"quick exam of {program} ({sandbox_name} sandbox)")
    table.add_column("check")
    table.add_column("result")
    table.add_column("seconds", justify="right")
    for check, description in CHECKS.items():
        if check in report.passed_checks:
            result = "[green]passed[/green]"
        elif check == report.failed_check:
            result = "[red]FAILED[/red]"
        else:
            result = "[dim]not reached[/dim]"
        seconds = report.timings.get(check)
        table.add_row(f"{check}: {description}", result, f"{seconds:.3f}" if seconds is not None else "")
    console.print(table)
    console.print(report.for_prompt(), markup=False, highlight=False, soft_wrap=True)
