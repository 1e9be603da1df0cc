"""`automemo report RUN [--out DIR] [--open]`: write the static HTML report of a run.

The report (overview, generation tree, progress chart, one page per node with its diff,
diagnosis, exam, scores and sample payloads) opens from disk with no server. Run it again at any
time, also while the search is still going, to refresh it.
"""

from __future__ import annotations

import webbrowser
from pathlib import Path

from automemo.cli import UserError


def register(sub) -> None:
    p = sub.add_parser(
        "report",
        help="write a static HTML report of a run (tree, progress, node pages)",
        description=__doc__.split("\n\n")[1],
    )
    p.add_argument("run", metavar="RUN", type=Path, help="a run directory, e.g. runs/<run_id>")
    p.add_argument("--out", type=Path, metavar="DIR", help="report folder (default RUN/report)")
    p.add_argument("--open", action="store_true", help="open the report in the default browser")
    p.set_defaults(func=run)


def run(args) -> int:
    from automemo.report.build import build_report, report_size
    from automemo.runs import RunDir

    if not args.run.is_dir():
        raise UserError(f"{args.run} is not a folder; pass a run directory such as runs/<run_id>")
    run_dir = RunDir.open(args.run)  # a RunDirError names what is wrong with the folder
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise UserError(f"--out {args.out} is a file; pass a folder for the report")
    index = build_report(run_dir, args.out)
    size_mb = report_size(index.parent) / 1e6
    print(f"report of {run_dir.run_id}: {index} ({size_mb:.1f} MB)")
    if args.open:
        webbrowser.open(index.resolve().as_uri())
    return 0
