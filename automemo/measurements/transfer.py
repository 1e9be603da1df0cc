"""`automemo bench transfer`: does a program found on one benchmark hold on another?

    automemo bench transfer --from RUN --benchmark B [--option KEY=VALUE ...] [--sandbox ...]

The run's selection (final.json's node) and that run's best hand design (the seed the selection
was held to: the confirmation's bar when the run was confirmed, else its best evaluated hand
design by validation mean) are both scored on benchmark B's test split, with the run's budget
and embeddings; the paired difference (selection − hand design) over the questions both were
scored on, with its paired standard error, is the same computation as the search's held-out
comparison (`automemo.search.heldout`). A user learns whether what the search found is a better
memory or a better fit to the data it was found on. Prints a table, writes a JSON file (`--out`).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from automemo.cli.flags import add_sandbox_flag, sandbox_choice, unsafe_confirmed


def add_arguments(parser) -> None:
    parser.add_argument("--from", dest="run", type=Path, required=True, metavar="RUN",
                        help="a finished run directory (runs/<id>) whose selection is carried over")
    parser.add_argument("--benchmark", required=True, metavar="NAME", help="the benchmark to score both programs on")
    parser.add_argument("--option", action="append", metavar="KEY=VALUE",
                        help="option of that benchmark, e.g. path=FILE (repeatable)")
    add_sandbox_flag(parser, default="auto")
    parser.add_argument("--out", type=Path, default=Path("transfer.json"), help="JSON results (default transfer.json)")
    parser.add_argument("--workdir", type=Path,
                        help="keep the episode store and embedding cache here (default: a temporary folder)")


def run_programs(run_path: Path) -> dict[str, dict[str, Any]]:
    """The run's selection and its best hand design: {role: {node_id, summary, validation, source}}."""
    from automemo.cli import UserError
    from automemo.runs import RunDir
    from automemo.search import policy
    from automemo.search.tree import Tree
    from automemo.search.view import RunView

    run = RunDir.open(run_path)
    final = run.final()
    if not final or final.get("node_id") is None:
        raise UserError(f"{run_path}: the run has no selection yet (no final.json); finish or resume it first")
    view = RunView.load(run)
    confirmation = final.get("confirmation") or view.confirmation or {}
    try:
        bar = confirmation.get("bar")
        bar = bar if bar is not None else policy.reference(Tree.from_rundir(run).stats()).id
    except ValueError:
        raise UserError(f"{run_path}: the run evaluated no hand design (root or seed) to compare with") from None
    chosen = int(final["node_id"])
    roles = {"selection": chosen, "hand_design": int(bar)}
    if chosen == bar and confirmation.get("candidates"):
        # The run kept its hand design: its best generated candidate is carried over beside it,
        # as the held-out comparison does, so the lines say what choosing it would have given.
        roles["best_candidate"] = int(confirmation["candidates"][0]["node_id"])
    out = {role: {"node_id": node_id, "summary": view.node(node_id).summary, "validation": view.node(node_id).mean,
                  "source": run.program_source(node_id)}
           for role, node_id in roles.items()}
    # The discovered default beside them, carried unchanged: what a user who runs no search gets.
    from automemo.programs import DISCOVERED, ProgramNotFound, resolve_program

    try:
        out["discovered"] = {"node_id": None, "summary": "discovered default", "validation": None,
                             "source": resolve_program(DISCOVERED).source}
    except ProgramNotFound:
        pass
    return out


def transfer_overrides(args, run_config: dict[str, Any]) -> dict[str, Any]:
    """Benchmark B with the run's budget and embedding model, the command's sandbox and cache."""
    from automemo.cli.flags import benchmark_options

    evaluation = run_config.get("evaluation") or {}
    embeddings = {k: v for k, v in (run_config.get("embeddings") or {}).items() if k != "cache_path"}
    return {"benchmark": {"name": args.benchmark, "options": benchmark_options(args.option or [])},
            "sandbox": {"backend": sandbox_choice(args)},
            "embeddings": {**embeddings, "cache_path": str(args.workdir / "embeddings.sqlite")},
            **({"evaluation": {"budget": evaluation["budget"]}} if "budget" in evaluation else {})}


def score_both(evaluator: Any, programs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Both programs on the test split, and selection − hand design paired over shared questions."""
    from automemo.search.heldout import paired_difference, task_scores

    by_node: dict[Any, tuple[dict[str, float], float]] = {}

    def key(role: str) -> Any:  # a run's node by its id (a kept hand design is scored once), else the role
        return programs[role]["node_id"] if programs[role]["node_id"] is not None else role

    for role, program in programs.items():
        if key(role) not in by_node:
            result = evaluator.evaluate(program["source"], split="test")
            by_node[key(role)] = (task_scores(result), float(result.mean))
    scores = {role: by_node[key(role)][0] for role in programs}
    out: dict[str, Any] = {
        "kept_hand_design": programs["selection"]["node_id"] == programs["hand_design"]["node_id"],
        "programs": {role: {k: v for k, v in p.items() if k != "source"} | {"test": by_node[key(role)][1]}
                     for role, p in programs.items()},
        "selection_vs_hand_design": paired_difference(scores["selection"], scores["hand_design"])}
    for role in ("best_candidate", "discovered"):
        if role in programs:
            out[f"{role}_vs_hand_design"] = paired_difference(scores[role], scores["hand_design"])
    if "discovered" in programs:
        out["selection_vs_discovered"] = paired_difference(scores["selection"], scores["discovered"])
    return out


def run(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from automemo.assembly import AssemblyError, build_evaluation, require_questions
    from automemo.cli import UserError
    from automemo.configtools import ConfigError
    from automemo.resolution import load_run_config
    from automemo.runs import RunDir

    programs = run_programs(args.run)
    with tempfile.TemporaryDirectory(prefix="automemo-transfer-") as tmp:
        args.workdir = (args.workdir or Path(tmp)).resolve()
        args.workdir.mkdir(parents=True, exist_ok=True)
        try:
            config = load_run_config(None, None, transfer_overrides(args, RunDir.open(args.run).config()))
            setup = build_evaluation(config, store_root=args.workdir / "store", quiet=True,
                                     unsafe_confirmed=unsafe_confirmed(args))
        except (ConfigError, AssemblyError) as exc:
            raise UserError(f"cannot score on {args.benchmark}: {exc}") from None
        with setup:
            try:
                require_questions(setup, "test")
            except AssemblyError as exc:
                raise UserError(str(exc)) from None
            doc = score_both(setup.evaluator, programs)
    doc = {"run": str(args.run.resolve()), "benchmark": args.benchmark,
           "options": config.benchmark.options, **doc}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2))
    console = Console() if Console().is_terminal else Console(width=140)
    table = Table(title=f"{args.run.name} carried to {args.benchmark} (test split)")
    for col in ("program", "node", "validation (its run)", f"test ({args.benchmark})"):
        table.add_column(col, justify="left" if col == "program" else "right")
    for role, p in doc["programs"].items():
        validation = "—" if p["validation"] is None else f"{p['validation']:.3f}"
        node = "—" if p["node_id"] is None else f"#{p['node_id']}"
        table.add_row(role.replace("_", " "), node, validation, f"{p['test']:.3f}")
    console.print(table)
    for name, key in (("selection", "selection_vs_hand_design"), ("best candidate", "best_candidate_vs_hand_design"),
                      ("discovered default", "discovered_vs_hand_design")):
        if key not in doc or (key == "selection_vs_hand_design" and doc["kept_hand_design"]):
            continue
        d = doc[key]
        console.print(f"{name} − hand design on {args.benchmark}: {d['difference']:+.3f} ± {d['se']:.3f} "
                      f"(paired SE over {d['tasks']} questions)")
    if doc["kept_hand_design"]:
        console.print("the run kept its best hand design: its selection is that seed")
    console.print(f"written: {args.out}")
    return 0
