"""`automemo exam PROGRAM --episodes DIR`: quick-examine one memo program in the sandbox.

Runs the six checks of the quick exam on the episodes in DIR: a run directory (its episode store is
used), or an episode store with update episodes as EpisodeRecorder JSON in DIR/episodes/<group>/
(default: update/, or the store's one update-* group, as a search run writes), retrieve tasks as
PartialRecorder JSON in DIR/episodes/retrieve/ (when missing, the update episodes' own partials
are used), images under DIR/images/. PROGRAM is a file, a seed name or an exported folder, as for
`automemo eval`. Exit code 0 when every check passes, 1 when one fails, 2 on bad input.
"""

from __future__ import annotations

import json
from pathlib import Path

from automemo.cli import UserError

SANDBOXES = ("auto", "docker", "bwrap")


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
    p.add_argument("--max-inputs", type=int, default=5, metavar="N",
                   help="examine on the first N update episodes and N retrieve tasks (default 5)")
    p.add_argument("--max-chars", type=int, default=50_000, help="payload budget in characters")
    p.add_argument("--max-images", type=int, default=2, help="payload budget in images")
    p.add_argument("--sandbox", default="auto", choices=SANDBOXES)
    p.add_argument("--unsafe-no-sandbox", action="store_true",
                   help="run the program as a plain local process: only for programs you trust")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def store_root(folder: Path) -> Path:
    """The episode store to examine: a run directory's own store, or the folder itself."""
    from automemo.runs.rundir import CONFIG_FILE, DB_FILE

    if (folder / DB_FILE).exists() and (folder / CONFIG_FILE).exists():
        return folder / "episodes"
    return folder


def run_embeddings(folder: Path) -> dict:
    """The `embeddings` table of the run `folder` is, or {} (the defaults) for a bare store."""
    from automemo.runs.rundir import CONFIG_FILE

    if store_root(folder) == folder:
        return {}
    return json.loads((folder / CONFIG_FILE).read_text()).get("embeddings") or {}


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
                "see the package's example store automemo/testing/episodes/ for the layout, or pass a run directory)")
    )


def load_inputs(root: Path, update_group: str, retrieve_group: str, limit: int):
    """(episodes, partials) from an episode store folder, with errors naming the file."""
    from automemo.contract import ContractError, EpisodeRecorder, PartialRecorder

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
            f"DIR/episodes/{update_group}/ (see the package's example store automemo/testing/episodes/ for the layout)"
        )
    episodes = [read(p, EpisodeRecorder) for p in files[:limit]]
    retrieve_files = sorted((root / "episodes" / retrieve_group).glob("*.json"))
    if retrieve_files:
        partials = [read(p, PartialRecorder) for p in retrieve_files[:limit]]
    else:
        partials = [e.partial() for e in episodes]
    return episodes, partials


def run(args) -> int:
    from automemo.cli.eval_cmd import read_program

    program = args.program
    if not args.episodes.is_dir():
        raise UserError(f"--episodes {args.episodes} is not a directory (pass a run directory or an episode store folder)")
    if args.max_inputs < 1 or args.max_chars < 0 or args.max_images < 0:
        raise UserError("--max-inputs must be >= 1; --max-chars and --max-images must be >= 0")
    try:
        source = read_program(program).source
    except UnicodeDecodeError:
        raise UserError(f"{program} is not UTF-8 text") from None
    root = store_root(args.episodes.resolve())
    group = update_group(root, args.update_group)
    episodes, partials = load_inputs(root, group, args.retrieve_group, args.max_inputs)

    from automemo.assembly import AssemblyError, memo_services, open_sandbox
    from automemo.contract import Budget
    from automemo.exam import quick_exam

    try:
        sandbox = open_sandbox("unsafe" if args.unsafe_no_sandbox else args.sandbox,
                               unsafe_confirmed=args.unsafe_no_sandbox)
        # A run's episodes are examined with the run's own embedding settings.
        services = memo_services(run_embeddings(args.episodes.resolve()), root, persistent=False)
    except AssemblyError as exc:
        raise UserError(str(exc)) from None
    budget = Budget(max_chars=args.max_chars, max_images=args.max_images)
    report = quick_exam(source, sandbox, episodes, partials, budget=budget, services=services, store_root=root)
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
