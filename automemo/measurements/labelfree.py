"""`automemo bench labelfree`: is a search that never reads a labelled question worth running? On
data that has labels, per search seed:

- a labelled search (`--questions benchmark`) and a label-free one (`--questions self`, or `llm`)
  of the same steps on the same split, each timed whole;
- every node the label-free search evaluated, scored on the real validation questions (the train
  split's labelled questions, which the search never read; the program as it would be deployed,
  its fits on all pseudo-questions, `meta.source.fitted.deployable_source`), against its pseudo
  score: the rank correlation (Spearman) says whether the proxy ranks programs as real questions do;
- both selections and every seed scored on the test split: each selection's lead over the best
  seed (the best test score among the hand designs), and their ratio, the share of the labelled
  search's lead that the label-free one keeps.

Scores are cached by program text in the work folder (`scores.json`, as `bench discovery` keeps
them), and the JSON (`--out`) is rewritten after every search, so an interruption keeps what was
measured.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from automemo.cli.flags import add_sandbox_flag, unsafe_confirmed
from automemo.measurements.discovery import Scored, TestScores, _overrides, score_seeds
from automemo.paths import list_seeds


def add_arguments(parser) -> None:
    parser.add_argument("--benchmark", default="memgallery", metavar="NAME",
                        help="a conversation benchmark with labelled questions (default memgallery)")
    parser.add_argument("--option", action="append", metavar="KEY=VALUE",
                        help="benchmark option, e.g. path=DIR (repeatable)")
    parser.add_argument("--questions", choices=("self", "llm"), default="self",
                        help="what the label-free search writes its questions with (default self)")
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="a TOML file of further settings for both searches (e.g. [benchmark.pseudo], "
                             "the LLM roles for --questions llm)")
    parser.add_argument("--search-seeds", type=int, default=1, help="search seeds (default 1)")
    parser.add_argument("--steps", type=int, default=20, help="steps of each search (default 20)")
    add_sandbox_flag(parser, default="auto")
    parser.add_argument("--out", type=Path, default=Path("labelfree.json"), help="JSON results (default labelfree.json)")
    parser.add_argument("--workdir", type=Path, help="keep run directories and stores here (default: a temporary folder)")


@dataclass(frozen=True)
class Search:
    """One search of the bench: what it selected, its test score and its wall-clock."""

    questions: str            # benchmark | self | llm
    search_seed: int
    node_id: int
    summary: str
    validation: float         # the search's own score of its selection (pseudo for a label-free one)
    test: float
    wall_s: float
    kept_hand_design: bool
    # label-free only: per evaluated node, (node id, pseudo μ, real validation μ)
    nodes: list[tuple[int, float, float]] = field(default_factory=list)
    # the selection's score of each test question: paired with the other search's and the root's
    test_scores: dict[str, float] = field(default_factory=dict, repr=False)

    @property
    def spearman(self) -> float | None:
        return spearman([p for _, p, _ in self.nodes], [r for _, _, r in self.nodes]) if len(self.nodes) > 2 else None


def _ranks(values: list[float]) -> list[float]:
    """Average ranks (ties share their mean rank), as Spearman's coefficient takes them."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(a: list[float], b: list[float]) -> float:
    """Spearman's rank correlation of `a` and `b` (Pearson's of their average ranks); 0 when
    either is constant."""
    ra, rb = _ranks(a), _ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    var = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return cov / var if var else 0.0


def _config(args, questions: str, seed: int):
    from automemo.resolution import load_run_config

    overrides = _overrides(args, seed=seed)
    overrides["benchmark"]["questions"] = questions
    return load_run_config(None, args.config, overrides)


def run_search(args, scores: TestScores, questions: str, seed: int) -> Search:
    from automemo.assembly import build_search
    from automemo.config import run_config_to_dict
    from automemo.meta.source.fitted import deployable_source
    from automemo.runs import RunDir
    from automemo.search.view import RunView

    config = _config(args, questions, seed)
    run_id = f"{questions}-steps{args.steps}-seed{seed}"
    shutil.rmtree(args.workdir / "runs" / run_id, ignore_errors=True)  # a search is timed whole
    run = RunDir.create(args.workdir / "runs", run_config_to_dict(config), run_id)
    started = time.monotonic()
    search = build_search(run, config, quiet=True, unsafe_confirmed=unsafe_confirmed(args))
    try:
        final = search.loop.run_search()
    finally:
        search.close()
    wall = time.monotonic() - started
    view = RunView.load(run)
    nodes = []
    if questions != "benchmark":  # every evaluated node, on the real validation questions
        for node in (n for n in view.nodes if n.evaluated):
            real, _ = scores.score(deployable_source(run.program_source(node.id)), "train")
            nodes.append((node.id, float(node.mean), real))
    per_question = _test_scores(scores, deployable_source(run.program_source(final["node_id"])))
    test = statistics.fmean(per_question.values()) if per_question else 0.0
    kept = (view.confirmation or {}).get("bar") == final["node_id"]
    return Search(questions, seed, final["node_id"], final.get("summary", ""), float(final["mean"]), test, wall,
                  kept, nodes, per_question)


def _test_scores(scores: TestScores, source: str) -> dict[str, float]:
    """A program's score of each test question (what a paired difference needs)."""
    from automemo.search.heldout import task_scores

    return task_scores(scores.evaluator.evaluate(source, split="test"))


def summarize(seeds: list[Scored], searches: list[Search], discovered: dict[str, float] | None = None) -> dict[str, Any]:
    """Each search seed's figures: leads over the best seed on test, and the paired test
    differences (with their SE) of the label-free selection against the labelled one and of each
    selection against the discovered default, the label-free search's root."""
    from automemo.search.heldout import paired_difference

    best = max(seeds, key=lambda s: s.test)
    out: dict[str, Any] = {"best_seed": asdict(best), "per_seed": []}
    if discovered:
        out["discovered_test"] = statistics.fmean(discovered.values())
    for seed in sorted({s.search_seed for s in searches}):
        pair = {s.questions: s for s in searches if s.search_seed == seed}
        labelled = pair.get("benchmark")
        free = next((s for q, s in pair.items() if q != "benchmark"), None)
        row: dict[str, Any] = {"search_seed": seed}
        if labelled is not None:
            row["labelled_lead"] = labelled.test - best.test
        if free is not None:
            row.update(label_free_lead=free.test - best.test, spearman=free.spearman, nodes=len(free.nodes))
        if labelled is not None and free is not None:
            row["lead_ratio"] = row["label_free_lead"] / row["labelled_lead"] if row["labelled_lead"] > 0 else None
            row["cost_ratio"] = free.wall_s / labelled.wall_s if labelled.wall_s else None
            if free.test_scores and labelled.test_scores:
                row["label_free_minus_labelled"] = paired_difference(free.test_scores, labelled.test_scores)
        for name, search in (("label_free", free), ("labelled", labelled)):
            if discovered and search is not None and search.test_scores:
                row[f"{name}_minus_discovered"] = paired_difference(search.test_scores, discovered)
        out["per_seed"].append(row)
    return out


def run(args) -> int:
    from rich.console import Console

    from automemo.assembly import AssemblyError, build_evaluation, require_questions
    from automemo.cli import UserError
    from automemo.configtools import ConfigError

    if args.search_seeds < 1 or args.steps < 1:
        raise UserError("--search-seeds and --steps must each be at least 1")
    console = Console() if sys.stdout.isatty() else Console(width=140)
    with tempfile.TemporaryDirectory(prefix="automemo-labelfree-") as tmp:
        args.workdir = (args.workdir or Path(tmp)).resolve()
        args.workdir.mkdir(parents=True, exist_ok=True)
        try:
            config = _config(args, "benchmark", 0)
            setup = build_evaluation(config, store_root=args.workdir / "seed-store", quiet=True,
                                     unsafe_confirmed=unsafe_confirmed(args))
        except (ConfigError, AssemblyError) as exc:
            raise UserError(f"cannot start the label-free bench: {exc}") from None
        searches: list[Search] = []
        with setup:
            try:  # the proxy is measured against labels: the data must have them on both splits
                require_questions(setup, "train")
                require_questions(setup, "test")
            except AssemblyError as exc:
                raise UserError(f"bench labelfree needs labelled questions to measure against: {exc}") from None
            scores = TestScores(setup.evaluator, args.workdir / "scores.json",
                                {"benchmark": config.benchmark, "budget": config.budget})
            console.print(f"scoring the {len(list_seeds())} seeds on validation and test …")
            seeds = score_seeds(scores, lambda: None)
            discovered = _discovered_scores(scores)
            args.discovered = discovered
            _write(args, seeds, searches)
            for seed in range(args.search_seeds):
                for questions in ("benchmark", args.questions):
                    console.print(f"search seed {seed}: {args.steps} steps, questions = {questions} …")
                    result = run_search(args, scores, questions, seed)
                    searches.append(result)
                    _write(args, seeds, searches)
                    extra = f", Spearman {result.spearman:+.3f} over {len(result.nodes)} nodes" if result.nodes else ""
                    console.print(f"  selected #{result.node_id} ({result.summary[:60]}): test {result.test:.3f} "
                                  f"in {result.wall_s:.0f} s{extra}")
        render(console, seeds, searches, summarize(seeds, searches, discovered))
        console.print(f"written: {args.out}")
    return 0


def _discovered_scores(scores: TestScores) -> dict[str, float]:
    """The discovered default (the label-free search's root) on each test question; {} when this
    installation has none."""
    from automemo.programs import DISCOVERED, ProgramNotFound, resolve_program

    try:
        return _test_scores(scores, resolve_program(DISCOVERED).source)
    except ProgramNotFound:
        return {}


def render(console, seeds: list[Scored], searches: list[Search], summary: dict[str, Any]) -> None:
    from rich.table import Table

    best = summary["best_seed"]
    table = Table(title=f"label-free against labelled search (best seed on test: {best['name']} {best['test']:.3f})")
    for col in ("search seed", "questions", "selection", "test", "− best seed", "Spearman (pseudo vs real)",
                "wall-clock"):
        table.add_column(col, justify="right")
    for s in searches:
        table.add_row(str(s.search_seed), s.questions, f"#{s.node_id}" + (" (hand design)" if s.kept_hand_design else ""),
                      f"{s.test:.3f}", f"{s.test - best['test']:+.3f}",
                      "—" if s.spearman is None else f"{s.spearman:+.3f} ({len(s.nodes)} nodes)", f"{s.wall_s:.0f} s")
    console.print(table)
    for row in summary["per_seed"]:
        if "lead_ratio" in row:
            ratio = "—" if row["lead_ratio"] is None else f"{row['lead_ratio']:.2f}"
            console.print(f"search seed {row['search_seed']}: label-free lead {row['label_free_lead']:+.3f}, labelled "
                          f"{row['labelled_lead']:+.3f} (ratio {ratio}); cost {row['cost_ratio']:.2f}× the labelled "
                          f"search's wall-clock")
        for key, words in (("label_free_minus_labelled", "label-free − labelled selection"),
                           ("label_free_minus_discovered", "label-free selection − its root, the discovered default"),
                           ("labelled_minus_discovered", "labelled selection − the discovered default")):
            if key in row:
                d = row[key]
                console.print(f"search seed {row['search_seed']}: {words} on test: {d['difference']:+.3f} ± "
                              f"{d['se']:.3f} (paired SE over {d['tasks']} questions)")
    if "discovered_test" in summary:
        console.print(f"the discovered default on test: {summary['discovered_test']:.3f}")


def _write(args, seeds: list[Scored], searches: list[Search]) -> None:
    command = args.command_line
    document = {"command": command, "benchmark": args.benchmark, "steps": args.steps, "questions": args.questions,
                "seeds": [asdict(s) for s in seeds],
                "searches": [{**{k: v for k, v in asdict(s).items() if k != "test_scores"}, "spearman": s.spearman}
                             for s in searches],
                "summary": summarize(seeds, searches, getattr(args, "discovered", None)) if seeds else {}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2))
