"""The `automemo` command. Each subcommand lives in its own module under `automemo.cli`, which
exposes `register(subparsers)`; heavy imports happen inside the command, not at start-up, so that
`automemo --help` is instant."""

from __future__ import annotations

import argparse
import importlib
import shlex
import sys
from pathlib import Path

from automemo.errors import AutomemoError, BudgetSpent, HostError, UsageError

# Subcommand modules, in the order `automemo --help` lists them.
COMMAND_MODULES = [
    "automemo.cli.sandbox_cmd",  # automemo sandbox build|check
    "automemo.cli.exam_cmd",  # automemo exam PROGRAM --episodes DIR
    "automemo.cli.search_cmd",  # automemo search [--preset NAME] [--resume RUN]
    "automemo.cli.config_cmd",  # automemo config show [--preset NAME] [--config FILE] [flags]
    "automemo.cli.tree_cmd",  # automemo tree RUN
    "automemo.cli.show_cmd",  # automemo show RUN NODE
    "automemo.cli.report_cmd",  # automemo report RUN [--out DIR] [--open]
    "automemo.cli.eval_cmd",  # automemo eval PROGRAM --benchmark NAME
    "automemo.cli.export_cmd",  # automemo export RUN [--node ID] --out DIR
    "automemo.cli.serve_cmd",  # automemo serve DIR [--transport stdio|http]
    "automemo.cli.memory_cmd",  # automemo memory users|export|import|forget STATE
    "automemo.cli.bench_cmd",  # automemo bench sandbox|eval|search|seeds
]


class UserError(UsageError):
    """A mistake on the command line the user can fix; printed without a traceback, exit code 2."""


def check_folder_place(flag: str, given: Path, folder: Path) -> None:
    """Refuse a `folder` to be written (for `flag`'s value `given`) when it, or the nearest of its
    parents that exists, is a file: checked before a command creates anything."""
    from automemo.paths import file_in_the_way

    blocker = file_in_the_way(folder)
    if blocker is not None:
        raise UserError(f"{flag} {given}: {blocker} is a file, not a folder; pass a folder path")


def error_report(exc: AutomemoError, resume_command: str | None = None) -> str:
    """The one line a command that ended on `exc` prints: the message, the sentence of its kind
    (`automemo.errors`), and how to continue a run the host or the budget stopped."""
    line = f"automemo: error: {exc}"
    if exc.advice:
        line += f" {exc.advice}"
    if resume_command and isinstance(exc, (HostError, BudgetSpent)):
        line += f" Continue with: {resume_command}"
    return line


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="automemo",
        description="Search for a multimodal agent's memory mechanism as an executable memo program.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # The command as typed, for what a command records of how it was run (a bench's JSON).
    args.command_line = "automemo " + shlex.join(sys.argv[1:] if argv is None else argv)
    # Before any command imports a model library: their progress bars are noise in a log and
    # break into ours in a terminal (our own bars show the progress that matters).
    from automemo.terminal import silence_third_party_progress

    silence_third_party_progress()
    try:
        return int(args.func(args) or 0)
    except AutomemoError as exc:
        print(error_report(exc, getattr(args, "resume_command", None)), file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        # A command that can be continued sets `args.resume_command` once there is something to
        # continue (search: after its run directory exists).
        resume = getattr(args, "resume_command", None)
        print("automemo: interrupted; everything committed so far is kept."
              + (f" Continue with: {resume}" if resume else ""), file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
