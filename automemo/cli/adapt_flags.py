"""The adaptation settings two commands take (`automemo serve --adapt ...`, `automemo memory
adapt`), made into one `AdaptConfig` by its own constructor, which owns every check: a value is
refused the same way whichever command was given it, said as that command's flag."""

from __future__ import annotations

import argparse
from typing import Any, Mapping

from automemo.cli import UserError

# Each command's flag for an `AdaptConfig` setting.
SERVE_FLAGS = {"steps": "--adapt-steps", "cpu_seconds": "--adapt-cpu-seconds", "max_parallel": "--adapt-parallel",
               "run_config": "--adapt-run-config"}
MEMORY_ADAPT_FLAGS = {"steps": "--steps", "cpu_seconds": "--cpu-seconds", "run_config": "--config"}


def adapt_config(args: argparse.Namespace, flags: Mapping[str, str]) -> Any:
    """The `AdaptConfig` of the flags given (the rest at their defaults); a refused value is a
    `UserError` naming the flag."""
    from automemo.adapt.config import AdaptConfig, AdaptConfigRefused

    given = {setting: getattr(args, _dest(flag)) for setting, flag in flags.items()}
    try:
        return AdaptConfig(**{k: v for k, v in given.items() if v is not None})
    except AdaptConfigRefused as exc:
        raise UserError(f"{flags.get(exc.setting, exc.setting)} {exc.reason}") from None


def given_adapt_flags(args: argparse.Namespace, flags: Mapping[str, str]) -> list[str]:
    return [flag for flag in flags.values() if getattr(args, _dest(flag)) is not None]


class Renamed(argparse.Action):
    """A flag that was renamed: refused with what to type instead (kept out of --help)."""

    def __init__(self, option_strings: list[str], dest: str, *, now: str, why: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)
        self.now, self.why = now, why

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        raise argparse.ArgumentError(self, f"is now {self.now} ({self.why}): type {self.now} {values}")


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")
