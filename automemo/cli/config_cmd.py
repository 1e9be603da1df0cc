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


def run(args: argparse.Namespace) -> int:
    from automemo.configtools import ConfigError
    from automemo.resolution import DEFAULT, file_layer, preset_layer, resolve

    try:
        resolution = resolve([preset_layer(args.preset), file_layer(args.config), flag_layer(args)])
    except ConfigError as exc:
        raise UserError(f"bad configuration: {exc}") from None
    settings = [s for s in resolution.settings if not args.changed or s.source != DEFAULT]
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


def _shown(value) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "(unset)"
    return json.dumps(value, default=str)
