"""`automemo export RUN [--node ID] --out DIR`: write the selected (or a chosen) node of a run as a
self-contained folder that `automemo.deploy.load_memory(DIR)` loads in an application.
`automemo export discovered --out DIR` (or a seed name, or a program file) writes a named program
the same way, with no run behind it: the discovered default for a user who has no data yet."""

from __future__ import annotations

import json
from pathlib import Path



def register(sub) -> None:
    p = sub.add_parser("export", help="export a run's selected memo program for deployment",
                       description=__doc__)
    p.add_argument("run", type=Path, metavar="RUN",
                   help="the run directory, e.g. runs/20261122-103000-1a2b; or a program: discovered (the "
                        "discovered default), a seed name, or a program file")
    p.add_argument("--node", type=int, metavar="ID", help="node to export (default: the one final.json selected)")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder to write (created; an earlier export there is replaced)")
    p.set_defaults(func=run)


def run(args) -> int:
    from automemo import terminal

    from automemo.export import export_node, export_program

    if not args.run.is_dir() and args.node is None:  # a program's name or file: no run behind it
        out = export_program(str(args.run), args.out)
        manifest = json.loads((out / "manifest.json").read_text())
        terminal.console().print(f"exported {manifest['node']['summary']} to [bold]{out}[/bold] (no shipped "
                                 f"experience); serve it with: automemo serve {out}")
        return 0
    out = export_node(args.run, args.node, args.out)  # an ExportError says why not and what to do
    manifest = json.loads((out / "manifest.json").read_text())
    scores = manifest["scores"]
    terminal.console().print(
        f"exported node {manifest['node']['id']} of run {manifest['run']['run_id']} to [bold]{out}[/bold]: "
        f"mean {scores['mean']:.4f} over {scores['n']} evaluation(s), LCB {scores['lcb']:.4f}, "
        f"{len(manifest['experience']['episodes'])} update episodes\n"
        f"load it with: from automemo.deploy import load_memory; memory = load_memory({str(out)!r})"
    )
    return 0
