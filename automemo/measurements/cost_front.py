"""`automemo bench cost-front`: what each program costs to run beside what it scores, the figures
every evaluation records (docs/cost.md), on one benchmark, with the command that produced them.

    automemo bench cost-front [PROGRAM ...] [--benchmark memgallery] [--option path=DATA]
                              [--split test] [--sandbox bwrap] [--out FILE]

For each program (default: the seeds no_memory, bm25_rag and hybrid_rag, and `lazy_recipe`, the
offline generator's default recipe with its dense stage made lazy) it scores the split and
prints: the score, CPU per remembered turn counted cold (host encoding and guest), mean CPU per
recall counted cold, the recall wall-clock p95 as it ran, and index bytes per 1,000 turns; then
the encoder's measured cold rate, and the command line. All programs share one embedding cache,
as a search's do: the figures are cold whatever ran first (the order of programs does not change
them). `--out` writes the figures as JSON.
"""

from __future__ import annotations

import json
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

from automemo.cli.flags import add_sandbox_flag, sandbox_choice, unsafe_confirmed

LAZY = "lazy_recipe"
DEFAULT_PROGRAMS = ("no_memory", "bm25_rag", "hybrid_rag", LAZY)
SAMPLE = "@mem-gallery-sample"  # memgallery's default data: the sample the package embeds


def add_arguments(parser) -> None:
    parser.add_argument("programs", nargs="*", default=list(DEFAULT_PROGRAMS), metavar="PROGRAM",
                        help=f"seed names, program files, or {LAZY} (default: {' '.join(DEFAULT_PROGRAMS)})")
    parser.add_argument("--benchmark", default="memgallery", help="benchmark (default memgallery)")
    parser.add_argument("--option", action="append", metavar="KEY=VALUE",
                        help=f"benchmark option, e.g. path=DATA (memgallery's default: path={SAMPLE}, the embedded sample)")
    parser.add_argument("--split", default="test", choices=("train", "test"), help="split scored (default test)")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    add_sandbox_flag(parser)


def program_source(name: str) -> str:
    if name == LAZY:
        from automemo.meta.source.recipe import Pipeline, Recipe, render_recipe

        return render_recipe(Recipe(pipeline=Pipeline(indexes="lazy")))
    from automemo.cli.eval_cmd import read_program

    return read_program(name).source


def run(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from automemo.assembly import AssemblyError, build_evaluation
    from automemo.cli import UserError
    from automemo.cli.flags import benchmark_options
    from automemo.configtools import ConfigError
    from automemo.evaluation.cost import ProgramCost
    from automemo.resolution import load_run_config
    from automemo.toolkit.encode_cost import DEFAULT_RATES

    command = "automemo bench cost-front " + " ".join(shlex.quote(a) for a in sys.argv[3:])
    sources = {name: program_source(name) for name in args.programs}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="automemo-cost-front-") as tmp:
        options = benchmark_options(args.option or []) or {}
        if args.benchmark == "memgallery":
            options.setdefault("path", SAMPLE)
        overrides = {"benchmark": {"name": args.benchmark, "options": options},
                     "sandbox": {"backend": sandbox_choice(args)},
                     "embeddings": {"cache_path": str(Path(tmp) / "embeddings.sqlite")}}
        try:
            config = load_run_config(None, None, overrides)
            setup = build_evaluation(config, store_root=Path(tmp) / "store", quiet=True,
                                     unsafe_confirmed=unsafe_confirmed(args))
        except (ConfigError, AssemblyError) as exc:
            raise UserError(f"cannot start the cost-front bench: {exc}") from None
        with setup:
            for name, source in sources.items():
                result = setup.evaluator.evaluate(source, split=args.split)
                rows.append({"program": name, "score": result.mean, "cost": dict(result.cost)})
    console = Console() if Console().is_terminal else Console(width=140)
    table = Table(title=f"cost and quality on {args.benchmark} ({args.split} split), counted cold")
    for col in ("program", "score", "ingest ms/turn", "recall ms CPU", "recall p95 ms", "index KiB/1k turns"):
        table.add_column(col, justify="left" if col == "program" else "right")
    for row in rows:
        c = ProgramCost.from_dict(row["cost"])
        index = "—" if c is None or c.index_bytes_per_1k_turns is None else f"{c.index_bytes_per_1k_turns / 1024:,.0f}"
        table.add_row(row["program"], f"{row['score']:.3f}",
                      *(("—",) * 3 if c is None else (f"{c.ingest_cpu_ms_per_turn:.2f}", f"{c.recall_cpu_ms:.1f}",
                                                      f"{c.recall_p95_ms:.1f}")), index)
    console.print(table)
    rates = [r.to_dict() for r in DEFAULT_RATES.measured()]
    for r in rates:
        console.print(f"cold rate of {r['encoder']}: {r['ms_per_unit']:.3f} ms CPU per {r['unit']} "
                      f"(measured on {r['measured_units']:,} units, {r['measured_ms']:.0f} ms)")
    console.print(f"command: {command}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"command": command, "benchmark": args.benchmark, "split": args.split,
                                        "programs": rows, "encode_rates": rates}, indent=2))
    return 0
