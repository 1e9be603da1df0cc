"""`automemo eval PROGRAM`: score one memo program, update then retrieve.

Evaluates on the held-out test split by default, `--repeats` times (each with a fresh sandbox
session), prints the results table (mean ± std over repeats) and writes it as JSON. Evidence of
every repeat lands in the work directory (default evals/, apart from search runs); update
episodes are kept in a shared episode store so that later evaluations with the same benchmark
and agent reuse them. Exits 1 when the program never loaded or failed on every task.

An exported folder (`automemo export`) is scored with the settings of the run that produced it
(benchmark and its options, retrieval budget, sandbox limits, LLM roles, embeddings); a preset,
`--config` and flags override them (flag > file > preset > export > benchmark > default, as for
every command), and the command prints which settings it used.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from automemo.cli import UserError, check_folder_place
from automemo.cli.flags import (add_config_flags, add_sandbox_flag, add_source_flags, flag_layer,
                                unsafe_confirmed)
from automemo.programs import ProgramKind

# The config flags of an evaluation, all from the one flag table (automemo.cli.flags).
EVAL_FLAGS = ("--benchmark", "--option", "--concurrency", "--executor", "--ray-address",
              "--agent-model", "--agent-base-url", "--agent-api-key-env",
              "--judge-model", "--judge-base-url", "--judge-api-key-env",
              "--max-chars", "--max-images")
# Sections of a run's config that an evaluation uses; search and meta settings do not apply.
EVALUATION_SECTIONS = ("benchmark", "llm", "sandbox", "budget", "evaluation", "embeddings")
# Default --repeats. Where the benchmark scores deterministically (Benchmark.
# scoring_is_deterministic: a fixed function of the payload, no agent, judge or live site) a
# second repeat only re-measures the same number; an LLM agent's or a judge's runs vary.
DETERMINISTIC_REPEATS = 1
AGENT_REPEATS = 3
EVALS_DIR = Path("evals")  # default home of eval work folders: not runs/, where searches live


def register(sub) -> None:
    p = sub.add_parser(
        "eval",
        help="score a memo program on a benchmark (update then retrieve)",
        description=__doc__.split("\n\n")[1],
    )
    p.add_argument(
        "program",
        metavar="PROGRAM",
        help="a memo program file, a seed name (e.g. murag), discovered (the discovered default), or an exported folder with program.py",
    )
    add_source_flags(p)
    add_config_flags(p, EVAL_FLAGS, help={
        "--benchmark": "e.g. minigallery, miniwob, memgallery / locomo (with --option path=...), your own "
                       "as path/to/file.py:ClassName (default: an exported folder's own benchmark)"})
    add_sandbox_flag(p)
    p.add_argument("--split", default="test", choices=("train", "test"))
    p.add_argument(
        "--repeats",
        type=int,
        help=f"evaluations to average (default {DETERMINISTIC_REPEATS} where the benchmark scores "
        f"deterministically, e.g. retrieval mode, so repeats agree; else {AGENT_REPEATS})",
    )
    p.add_argument("--out", type=Path, help="results JSON (default WORKDIR/results.json)")
    p.add_argument("--workdir", type=Path, help=f"evidence folder (default {EVALS_DIR}/<time>-<program>)")
    p.add_argument(
        "--store",
        type=Path,
        help="episode store (default: a shared cache, so update episodes are collected once)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def run(args) -> int:
    program = read_program(args.program)
    _check_flags(args)
    _check_places(args)
    config, used = resolve_config(args, program.export)
    for line in used:
        print(line)

    from automemo.assembly import build_evaluation
    from automemo.evaluation.evidence import result_to_dict
    from automemo.evaluation.table import build_table, render
    from automemo.paths import CACHE_DIR

    workdir = args.workdir or EVALS_DIR / f"{time.strftime('%Y%m%d-%H%M%S')}-{program.name}"
    out = args.out or workdir / "results.json"
    # An AssemblyError says what to change (a usage error; a data error when the benchmark's data is missing).
    setup = build_evaluation(config, store_root=args.store or CACHE_DIR / "eval-store",
                             unsafe_confirmed=unsafe_confirmed(args))
    notice = setup.benchmark.describe().get("notice")
    if notice:  # e.g. a tool-using benchmark without a search provider: say so before it runs
        print(f"automemo: note: {notice}", file=sys.stderr)
    repeats = args.repeats or (DETERMINISTIC_REPEATS if setup.benchmark.scoring_is_deterministic()
                               else AGENT_REPEATS)
    results, evidence_dirs = [], []
    with setup:
        for i in range(repeats):
            evidence_dir = workdir / f"repeat-{i + 1}"
            results.append(setup.evaluator.evaluate(program.source, split=args.split,
                                                    evidence_dir=evidence_dir))
            evidence_dirs.append(evidence_dir)
    benchmark = setup.benchmark
    table = build_table(results, program=program.name, benchmark=benchmark.name, split=args.split)
    render(table)
    for kind, example in first_failures(results).items():
        print(f"first {kind} failure: {example}")
    document = {
        "program": str(args.program),
        "program_kind": program.kind.value if program.kind is not None else None,
        "program_sha256": results[-1].info.get("program_sha256"),
        "benchmark": benchmark.describe(),
        "budget": config.budget.to_dict(),
        "sandbox": setup.sandbox.name,
        "split": args.split,
        "table": table.to_dict(),
        "evaluations": [
            {**_without_tasks(result_to_dict(r)), "evidence_dir": str(d)}
            for r, d in zip(results, evidence_dirs)
        ],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=2, sort_keys=True, default=str))
    print(f"results written to {out}; evidence in {workdir}")
    failure = overall_failure(results)
    if failure:
        print(f"automemo: error: {failure}", file=sys.stderr)
        return 1
    return 0


def first_failures(results) -> dict[str, str]:
    """Per failure kind, the first failed task and what was wrong ("bad-result: retrieve() result
    must be …"): the table only counts them."""
    from automemo.evaluation.aggregate import error_kind

    examples: dict[str, str] = {}
    for result in results:
        for task in result.tasks:
            if task.error:
                examples.setdefault(error_kind(task.error), f"{task.task_id}: {task.error}")
    return examples


def overall_failure(results) -> str | None:
    """Why the evaluation measured nothing about the program, or None: it never loaded, or it
    failed on every task (then every score is 0 because of the program, not the memory)."""
    fatal = results[-1].info.get("fatal")
    if fatal:
        return f"the program never loaded, so every task scored 0: {fatal}"
    tasks = [t for r in results for t in r.tasks if not t.excluded]
    if tasks and all(t.error for t in tasks):
        first = next(iter(first_failures(results).values()))
        return (
            f"the program failed on all {len(tasks)} tasks, so every score is 0; the first "
            f"failure was {first}"
        )
    return None


def resolve_config(args, export: dict[str, Any] | None):
    """The evaluation's RunConfig, resolved as every command's (flag > --config > preset > an
    export's run settings > benchmark > default), and the lines that tell the user which settings came from
    where."""
    from automemo.configtools import ConfigError
    from automemo.resolution import Layer, data_layer, file_layer, preset_layer, resolve

    used: list[str] = []
    exported = export_settings(export) if export is not None else {}
    if exported:
        used.append(f"settings of the export: {describe_settings(exported)}")
    try:
        given = [preset_layer(args.preset), file_layer(args.config), flag_layer(args)]
    except ConfigError as exc:
        raise UserError(str(exc)) from None
    flags = given[-1]
    named = next((layer.data["benchmark"]["name"] for layer in reversed(given)
                  if layer is not None and layer.sets("benchmark.name")), None)
    if named and named != (exported.get("benchmark") or {}).get("name"):
        # Options belong to a benchmark: another benchmark starts from its own defaults.
        exported = {k: v for k, v in exported.items() if k != "benchmark"}
    upper = [data_layer("the export", exported), *given]
    if not any(layer is not None and layer.sets("benchmark.name") for layer in upper):
        raise UserError("which benchmark? pass --benchmark NAME (e.g. minigallery, miniwob); "
                        "an exported folder names its own")
    # An evaluation scores every task of the split, whatever sample the search scored.
    scored = Layer("eval (scores every task)", {"evaluation": {"retrieve_fraction": 1.0, "quiet": bool(args.quiet)}})
    if flags.data and export is not None:
        used.append(f"overridden by flags: {describe_settings(flags.data)}")
    try:
        return resolve([*upper, scored]).config, used
    except ConfigError as exc:
        raise UserError(f"bad configuration: {exc}") from None


def export_settings(manifest: dict[str, Any]) -> dict[str, Any]:
    """The evaluation-relevant part of the run config an export was made with. Exports made
    before the config was shipped carry budget, limits, benchmark and embeddings apart."""
    from automemo.config import DERIVED_KEYS

    config = manifest.get("config")
    if not isinstance(config, dict):
        config = {"benchmark": manifest.get("benchmark") or {}, "budget": manifest.get("budget") or {},
                  "sandbox": {"limits": manifest.get("limits") or {}},
                  "embeddings": manifest.get("embeddings") or {}}
    data = {k: v for k, v in config.items() if k in EVALUATION_SECTIONS}
    # The sandbox backend is this machine's choice, the meta role is the search's: neither is
    # part of what the program was selected under.
    data["sandbox"] = {"limits": (data.get("sandbox") or {}).get("limits", {})}
    data["llm"] = {k: v for k, v in (data.get("llm") or {}).items() if k != "meta"}
    data["embeddings"] = {k: v for k, v in (data.get("embeddings") or {}).items() if k != "cache_path"}
    evaluation = dict(data.get("evaluation") or {})
    for key in DERIVED_KEYS:  # set once, in their own sections
        evaluation.pop(key.split(".", 1)[1], None)
    data["evaluation"] = evaluation
    return data


def describe_settings(data: dict[str, Any]) -> str:
    parts = []
    bench = data.get("benchmark") or {}
    if bench.get("name"):
        options = json.dumps(bench.get("options") or {}, sort_keys=True)
        parts.append(f"benchmark {bench['name']} {options}")
    elif bench.get("options"):
        parts.append(f"benchmark options {json.dumps(bench['options'], sort_keys=True)}")
    budget = data.get("budget") or {}
    if budget:
        parts.append("budget " + ", ".join(f"{k}={v}" for k, v in sorted(budget.items())))
    limits = (data.get("sandbox") or {}).get("limits") or {}
    if limits:
        parts.append("limits " + ", ".join(f"{k}={v}" for k, v in sorted(limits.items())))
    for role, role_config in sorted((data.get("llm") or {}).items()):
        if isinstance(role_config, dict) and role_config.get("model"):
            where = f" at {role_config['base_url']}" if role_config.get("base_url") else ""
            parts.append(f"{role} model {role_config['model']}{where}")
    if (data.get("evaluation") or {}).get("concurrency"):
        parts.append(f"concurrency {data['evaluation']['concurrency']}")
    return "; ".join(parts) or "defaults"


@dataclass(frozen=True)
class ProgramToScore:
    source: str
    name: str                           # short name for the work directory and the table
    export: dict[str, Any] | None = None  # the manifest, when the program is an exported folder
    kind: ProgramKind | None = None     # what the program is: a seed, the discovered default, a file, an export


def read_program(spec: str) -> ProgramToScore:
    """The program `spec` names (`automemo.programs`: a file, an exported folder checked against
    its manifest, a seed, or `discovered`)."""
    from automemo.programs import ProgramNotFound, resolve_program

    try:
        program = resolve_program(spec)
    except ProgramNotFound as exc:
        raise UserError(str(exc)) from None
    if program.kind is ProgramKind.EXPORT:
        from automemo.deploy import DeployError, read_manifest

        try:
            manifest = read_manifest(program.path.parent)
        except DeployError as exc:
            raise UserError(str(exc)) from None
        return ProgramToScore(program.source, program.name, manifest, program.kind)
    return ProgramToScore(program.source, program.name, None, program.kind)


def _check_places(args) -> None:
    """--out and --workdir, checked before anything runs or is created."""
    if args.out is not None and args.out.is_dir():
        raise UserError(f"--out {args.out} is a folder; pass the results file to write, e.g. {args.out / 'results.json'}")
    if args.out is not None:
        check_folder_place("--out", args.out, args.out.parent)
    if args.workdir is not None:
        check_folder_place("--workdir", args.workdir, args.workdir)


def _check_flags(args) -> None:
    if args.repeats is not None and args.repeats < 1:
        raise UserError(f"--repeats must be at least 1, got {args.repeats}")
    if args.concurrency is not None and args.concurrency < 1:
        raise UserError(f"--concurrency must be at least 1, got {args.concurrency}")


def _without_tasks(data: dict[str, Any]) -> dict[str, Any]:
    # Per-task detail lives in the evidence folders; the results file stays readable.
    return {k: v for k, v in data.items() if k != "tasks"}
