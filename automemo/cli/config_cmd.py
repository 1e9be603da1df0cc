"""`automemo config show`: every setting a search would run with, and where each came from.

Takes the flags of `automemo search` (and its --preset and --config) and prints each resolved
value with its source: default, benchmark NAME (the benchmark's own search defaults), preset
NAME, file PATH or flag --x. Key by key, flag > file > preset > benchmark > default, the one
precedence of every command. Nothing runs and nothing is written.
"""

from __future__ import annotations

import argparse
import json

from automemo.cli import UserError
from automemo.cli.flags import add_config_flags, add_sandbox_flag, add_source_flags, flag_layer
from automemo.cli.search_cmd import SEARCH_FLAGS


def register(sub) -> None:
    p = sub.add_parser("config", help="show the resolved configuration and where each value comes from",
                       description=__doc__.split("\n\n")[1])
    actions = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print every resolved setting and its source",
                              description=__doc__.split("\n\n")[1])
    add_source_flags(show)
    add_config_flags(show, SEARCH_FLAGS)
    add_sandbox_flag(show)
    show.add_argument("--json", action="store_true", help="print [{key, value, source}, ...] as JSON")
    show.add_argument("--changed", action="store_true", help="only the settings that are not defaults")
    show.set_defaults(func=run)
    defaults = actions.add_parser(
        "defaults", help="print presets/default.toml as the configuration dataclasses generate it",
        description="Print the commented default configuration, generated from the configuration "
                    "dataclasses (their defaults and comments are its one source).")
    defaults.add_argument("--write", action="store_true",
                          help="rewrite the package's presets/default.toml instead of printing it "
                               "(after changing a default or its comment)")
    defaults.set_defaults(func=run_defaults)


def run_defaults(args: argparse.Namespace) -> int:
    from automemo.defaults_toml import DEFAULT_TOML, default_toml, write_default_toml

    if not args.write:
        print(default_toml(), end="")
        return 0
    print(f"{DEFAULT_TOML}: {'rewritten' if write_default_toml() else 'already current'}")
    return 0


def run(args: argparse.Namespace) -> int:
    from automemo.configtools import ConfigError
    from automemo.resolution import DEFAULT, file_layer, preset_layer, resolve

    try:
        resolution = resolve([preset_layer(args.preset), file_layer(args.config), flag_layer(args)])
    except ConfigError as exc:
        raise UserError(f"bad configuration: {exc}") from None
    settings = [s for s in (*resolution.settings, *serve_settings()) if not args.changed or s.source != DEFAULT]
    if args.json:
        print(json.dumps([{"key": s.key, "value": s.value, "source": s.source} for s in settings],
                         indent=2, default=str))
        return 0
    rows = [(s.key, _shown(s.value), s.source) for s in settings]
    key_width = max((len(r[0]) for r in rows), default=3)
    value_width = min(max((len(r[1]) for r in rows), default=5), 40)
    print(f"{'key':<{key_width}}  {'value':<{value_width}}  source")
    for key, value, source in rows:
        print(f"{key:<{key_width}}  {value:<{value_width}}  {source}")
    return 0


def serve_settings() -> list:
    """`automemo serve`'s defaults (automemo/serve/defaults.py, their one place), as settings
    `serve.<name>`: a search does not read them, `automemo serve` does (its flags override them)."""
    from automemo.resolution import DEFAULT, Setting
    from automemo.serve import defaults

    return [Setting(f"serve.{name.lower()}", value, DEFAULT) for name, value in vars(defaults).items()
            if name.isupper() and isinstance(value, (bool, int, float, str))]


def _shown(value) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "(unset)"
    return json.dumps(value, default=str)
