"""The `automemo` command. Each subcommand lives in its own module under `automemo.cli`, which
exposes `register(subparsers)`; heavy imports happen inside the command, not at start-up, so that
`automemo --help` is instant."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

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


class UserError(Exception):
    """A mistake the user can fix; printed without a traceback, exit code 2."""


def check_folder_place(flag: str, given: Path, folder: Path) -> None:
    """Refuse a `folder` to be written (for `flag`'s value `given`) when it, or the nearest of its
    parents that exists, is a file: checked before a command creates anything."""
    from automemo.paths import file_in_the_way

    blocker = file_in_the_way(folder)
    if blocker is not None:
        raise UserError(f"{flag} {given}: {blocker} is a file, not a folder; pass a folder path")


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
    # Before any command imports a model library: their progress bars are noise in a log and
    # break into ours in a terminal (our own bars show the progress that matters).
    from automemo.terminal import silence_third_party_progress

    silence_third_party_progress()
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"automemo: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        # A run directory a command cannot use (e.g. a damaged tree.db): its message says what
        # to do. Imported here, not at start-up, to keep `automemo --help` instant.
        from automemo.failures import InfrastructureFailure
        from automemo.runs.rundir import RunDirError

        if isinstance(exc, InfrastructureFailure):  # the host failed, not the user's input
            print(f"automemo: error: {exc}", file=sys.stderr)
            return 1
        if isinstance(exc, RunDirError):
            print(f"automemo: error: {exc}", file=sys.stderr)
            return 2
        raise
    except KeyboardInterrupt:
        # A command that can be continued sets `args.resume_command` once there is something to
        # continue (search: after its run directory exists).
        resume = getattr(args, "resume_command", None)
        print("automemo: interrupted; everything committed so far is kept."
              + (f" Continue with: {resume}" if resume else ""), file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
