"""`automemo bench discovery`: does the search find memory better than every hand-designed seed?

On one benchmark (its search defaults applied, as `automemo search` applies them):
- every program in seeds/ scored once on the validation questions (the train split's retrieve
  tasks, what a search scores with) and once on the test split: the best seed is the best test
  score, best-of-seeds the seed with the best validation score (a "search" that only evaluates
  the seeds), scored on test;
- per search seed, searches of `--steps` steps with the same generator under each strategy
  (`tree`, `random`, `greedy`), each selection scored on test, with its wall-clock;
- `--parallel K` against 1 at equal wall-clock: a tree search with K actions in flight that
  stops starting new actions once the sequential tree search's wall-clock has passed;
- per search, the oracle (the best test score among the programs it evaluated, bounded by
  `--oracle-limit`; automemo.measurements.oracle) and the selection regret, oracle − selection;
- `--question-fraction FRACTION`: after each exhaustive search, the same search with a question
  budget of FRACTION × the questions it scored, compared with it (automemo.measurements.question_budget);
- beside the score (the metric the search ranks by: the benchmark's option `metric`, e.g.
  `--option metric=session_hit@10`, else its default), every other metric the benchmark scores,
  among them the figures published benchmarks quote (session-level hit@k, LoCoMo's evidence
  recall, LongMemEval's official turn, turn-to-session and session-granularity figures), over all
  questions and all but the adversarial ones, of every seed and every selection
  (docs/benchmarks.md).

Scores are cached by program text in the work folder (`--workdir`, scores.json), so a seed
selected unchanged is not scored again, and a second run over the same folder scores no seed. All
runs share one embedding cache: every update episode is embedded once. The retrieve time per
question of each test evaluation is read from the evaluation itself (`info.retrieve_s_mean`).
Prints tables, writes a JSON file (`--out`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from automemo.benchmarks import ranking_metric
from automemo.measurements.oracle import evaluated_candidates, search_oracle
from automemo.measurements.question_budget import (check_fraction, compare, fraction_label, question_budget,
                                            render_comparison, run_questions_scored)
from automemo.cli.flags import add_sandbox_flag, sandbox_choice, unsafe_confirmed
from automemo.measurements.seeds import TARGET_MS
from automemo.measurements.strategies import _mean_se
from automemo.paths import list_seeds

SEARCH_TARGET_S = 300.0  # a 20-step search on the dev data, sandbox included
STRATEGIES = ("tree", "random", "greedy")


def add_arguments(parser) -> None:
    parser.add_argument("--benchmark", default="minigallery", metavar="NAME",
                        help="benchmark (default minigallery); its search defaults apply")
    parser.add_argument("--option", action="append", metavar="KEY=VALUE",
                        help="benchmark option, e.g. path=DIR (repeatable)")
    parser.add_argument("--search-seeds", type=int, default=3, help="search seeds per strategy (default 3)")
    parser.add_argument("--steps", type=int, default=20, help="search steps (default 20)")
    parser.add_argument("--strategies", default=",".join(STRATEGIES),
                        help=f"comma-separated, tree first (default {','.join(STRATEGIES)})")
    parser.add_argument("--parallel", type=int, default=4,
                        help="K of the parallel tree search at the sequential one's wall-clock (default 4; 1 skips)")
    add_sandbox_flag(parser, default="auto")
    parser.add_argument("--out", type=Path, default=Path("discovery.json"),
                        help="JSON results (default discovery.json)")
    parser.add_argument("--workdir", type=Path,
                        help="keep the run directories and stores here (default: a temporary folder)")
    parser.add_argument("--oracle-limit", type=int, default=60, metavar="N",
                        help="test evaluations per search for its oracle, best validation first (default 60; "
                             "0: the selection only); cached by program text")
    # Not --question-budget: `search --question-budget N` is a count of questions, this a share.
    parser.add_argument("--question-fraction", type=float, metavar="FRACTION",
                        help="also run every sequential search with a question budget of FRACTION (0 < FRACTION "
                             "<= 1) of the validation questions its exhaustive search scored, and compare")


@dataclass(frozen=True)
class Scored:
    """One program scored on the validation questions and/or the test split."""

    name: str
    validation: float | None
    test: float
    retrieve_ms: float          # mean retrieve time per test question
    figures: dict = field(default_factory=dict)  # published figures on test (TestScores.figures)


@dataclass(frozen=True)
class SearchResult:
    search_seed: int
    strategy: str
    parallel: int
    steps_done: int
    stop_reason: str
    wall_s: float
    node_id: int
    summary: str
    validation: float
    test: float
    retrieve_ms: float
    oracle: float | None = None       # best test score among the programs the search evaluated
    oracle_node: int | None = None
    oracle_scored: int = 0            # distinct programs scored on test for the oracle
    oracle_evaluated: int = 0         # distinct programs the search evaluated (> scored: a lower bound)
    figures: dict = field(default_factory=dict)  # the selection's published figures on test
    questions_scored: int | None = None   # validation questions the whole search scored
    question_budget: int | None = None    # search.question_budget; None: exhaustive
    budget_fraction: float | None = None  # --question-fraction, the fraction it is of the exhaustive count

    @property
    def regret(self) -> float | None:
        """Selection regret: oracle − selection (≥ 0; the selection is among the programs scored)."""
        return None if self.oracle is None else self.oracle - self.test


class WallClockCap:
    """The run's LLM client with one more cap: past `deadline` (time.monotonic), no new action
    starts. The loop asks `exhausted()` before each action; everything else is the client's."""

    def __init__(self, llm: Any, deadline: float) -> None:
        self._llm, self._deadline = llm, deadline

    def exhausted(self) -> str | None:
        if time.monotonic() >= self._deadline:
            return "the sequential search's wall-clock has passed"
        return self._llm.exhausted() if self._llm is not None else None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)


def _overrides(args, **search: Any) -> dict[str, Any]:
    from automemo.cli.flags import benchmark_options

    return {"benchmark": {"name": args.benchmark, "options": benchmark_options(args.option or []) or {}},
            "sandbox": {"backend": sandbox_choice(args)},
            "embeddings": {"cache_path": str(args.workdir / "embeddings.sqlite")},
            "search": {"steps": args.steps, **search}}


class TestScores:
    """Test (and validation) scores from one evaluator, cached by program text and benchmark
    configuration in `cache_file` (the work folder's scores.json), so that a second run over the
    same work folder (more search seeds, another strategy) scores no seed again."""

    def __init__(self, evaluator: Any, cache_file: Path, benchmark: Any) -> None:
        self.evaluator, self.cache_file = evaluator, cache_file
        self._scope = hashlib.sha256(json.dumps(benchmark, sort_keys=True, default=str).encode()).hexdigest()[:16]
        self._cache: dict[str, list[float]] = (
            json.loads(cache_file.read_text()) if cache_file.exists() else {})

    def score(self, source: str, split: str) -> tuple[float, float]:
        """(mean, retrieve ms per question) of `source` on `split`."""
        mean, ms, _ = self._entry(source, split)
        return mean, ms

    def cached(self, source: str, split: str) -> bool:
        """True when `source` on `split` is scored already (with its figures): free to ask."""
        return len(self._cache.get(self._key(source, split), ())) >= 3

    def _key(self, source: str, split: str) -> str:
        return f"{self._scope}:{hashlib.sha256(source.encode()).hexdigest()}:{split}"

    def figures(self, source: str, split: str) -> dict[str, dict[str, float]]:
        """The published figures of `source` on `split`: `published_figures` of its evaluation."""
        return self._entry(source, split)[2]

    def _entry(self, source: str, split: str) -> list:
        key = self._key(source, split)
        # An entry cached before the figures were kept ([mean, ms]) is scored again, once.
        if len(self._cache.get(key, ())) < 3:
            result = self.evaluator.evaluate(source, split=split)
            self._cache[key] = [result.mean, 1000.0 * float(result.info.get("retrieve_s_mean", 0.0)),
                                published_figures(result)]
            self.cache_file.write_text(json.dumps(self._cache, indent=1))
        return self._cache[key]


def published_figures(result: Any) -> dict[str, dict[str, float]]:
    """Every metric of an evaluation (the one the search ranked by and the others, the figures
    published benchmarks quote among them) over all questions and all but the adversarial
    ones ({row: {metric: mean}}; empty where the benchmark scores none)."""
    from automemo.evaluation.breakdown import ALL, NON_ADVERSARIAL, metric_breakdown

    rows = {r.name: dict(r.metrics) for r in metric_breakdown(result).rows}
    return {row: rows[row] for row in (ALL, NON_ADVERSARIAL) if rows.get(row)}


def score_seeds(scores: TestScores, advance: Callable[[], None]) -> list[Scored]:
    out = []
    for path in list_seeds():
        source = path.read_text()
        validation, _ = scores.score(source, "train")
        advance()
        test, ms = scores.score(source, "test")
        advance()
        out.append(Scored(path.stem, validation, test, ms, scores.figures(source, "test")))
    return out


def run_search(args, scores: TestScores, search_seed: int, strategy: str, parallel: int = 1,
               steps: int | None = None, deadline_s: float | None = None,
               budget: tuple[int, float] | None = None) -> SearchResult:
    """One search in its own run directory, its selection scored on test; `budget`: (question
    budget, the fraction it is of the exhaustive search's count), None for an exhaustive search."""
    from automemo.assembly import build_search
    from automemo.config import run_config_to_dict
    from automemo.resolution import load_run_config
    from automemo.runs import RunDir

    config = load_run_config(None, None, _overrides(
        args, seed=search_seed, strategy=strategy, parallel=parallel,
        **({"steps": steps} if steps is not None else {}),
        **({"question_budget": budget[0]} if budget else {})))
    run_id = f"{strategy}-k{parallel}-steps{config.search.steps}-seed{search_seed}"
    run_id += f"-{fraction_label(budget[1])}" if budget else ""
    shutil.rmtree(args.workdir / "runs" / run_id, ignore_errors=True)  # a search is timed whole
    run = RunDir.create(args.workdir / "runs", run_config_to_dict(config), run_id)
    started = time.monotonic()
    search = build_search(run, config, quiet=True, unsafe_confirmed=unsafe_confirmed(args))
    try:
        if deadline_s is not None:
            search.loop.parts.llm = WallClockCap(search.loop.parts.llm, started + deadline_s)
        final = search.loop.run_search()
    finally:
        search.close()
    wall = time.monotonic() - started
    source = run.program_source(final["node_id"])
    test, ms = scores.score(source, "test")
    oracle = search_oracle(evaluated_candidates(run), lambda program: scores.score(program, "test")[0],
                           limit=args.oracle_limit, selected=source,
                           cached=lambda program: scores.cached(program, "test"))
    return SearchResult(search_seed, strategy, parallel, int(final.get("steps_done") or 0),
                        final["stop_reason"], wall, final["node_id"], final.get("summary", ""),
                        final["mean"], test, ms, oracle.test, oracle.node_id, oracle.scored, oracle.evaluated,
                        scores.figures(source, "test"), run_questions_scored(run),
                        *(budget or (None, None)))


def summarize(seeds: list[Scored], searches: list[SearchResult]) -> dict[str, Any]:
    best_seed = max(seeds, key=lambda s: s.test)
    best_of_seeds = max(seeds, key=lambda s: (s.validation, -seeds.index(s)))
    out: dict[str, Any] = {
        "best_seed": asdict(best_seed), "best_of_seeds": asdict(best_of_seeds),
        # Best-of-seeds selects among the seeds, whose oracle is the best seed.
        "best_of_seeds_regret": best_seed.test - best_of_seeds.test,
        "slowest_seed_retrieve_ms": max(s.retrieve_ms for s in seeds),
        "slowest_program_retrieve_ms": max([s.retrieve_ms for s in seeds] + [r.retrieve_ms for r in searches]),
        "strategies": {},
    }
    for key in dict.fromkeys(_group(r) for r in searches):
        own = [r for r in searches if _group(r) == key]
        gaps = [r.test - best_seed.test for r in own]
        with_oracle = [r for r in own if r.oracle is not None]
        scored = [r.questions_scored for r in own if r.questions_scored is not None]
        out["strategies"][key] = {
            "searches": len(own), "test": _mean_se([r.test for r in own]),
            "minus_best_seed": _mean_se(gaps), "min_minus_best_seed": min(gaps),
            # oracle: the best test score among the programs each search evaluated; regret =
            # oracle − selection. A lower bound where --oracle-limit left programs out.
            "oracle": _mean_se([r.oracle for r in with_oracle]),
            "regret": _mean_se([r.regret for r in with_oracle]),
            "oracle_complete": all(r.oracle_scored == r.oracle_evaluated for r in with_oracle),
            "figures": _mean_figures([r.figures for r in own]),
            "wall_s": statistics.fmean(r.wall_s for r in own),
            "steps_done": statistics.fmean(r.steps_done for r in own),
            "questions_scored": statistics.fmean(scored) if scored else None,
        }
    # The budgeted searches against the exhaustive ones, per strategy ({} without --question-fraction).
    out["question_budget"] = compare(searches, best_seed.test)
    return out


def _group(r: SearchResult) -> str:
    """A search's summary row: strategy/kK, a budgeted one's with its fraction (tree/k1/q25)."""
    name = f"{r.strategy}/k{r.parallel}"
    return name if r.budget_fraction is None else f"{name}/{fraction_label(r.budget_fraction)}"


def _mean_figures(figures: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, tuple[float, float]]]:
    """Mean ± s.e. over searches of each published figure, row by row."""
    rows = dict.fromkeys(row for f in figures for row in f)
    return {row: {m: _mean_se([f[row][m] for f in figures if m in f.get(row, {})])
                  for m in dict.fromkeys(m for f in figures for m in f.get(row, {}))} for row in rows}


def render(console, seeds: list[Scored], searches: list[SearchResult], summary: dict[str, Any],
           title: str) -> None:
    from rich.table import Table

    table = Table(title=f"{title}: seed programs (validation = the search's questions)")
    for col in ("seed", "validation", "test", "retrieve ms/question"):
        table.add_column(col, justify="left" if col == "seed" else "right")
    for s in seeds:
        table.add_row(s.name, f"{s.validation:.3f}", f"{s.test:.3f}", f"{s.retrieve_ms:.1f}")
    console.print(table)
    table = Table(title=f"{title}: searches, selection scored on test")
    for col in ("search seed", "strategy", "K", "steps", "questions", "wall-clock", "node", "validation", "test",
                "− best seed", "oracle", "regret"):
        table.add_column(col, justify="right")
    best = summary["best_seed"]["test"]
    for r in searches:
        strategy = r.strategy if r.budget_fraction is None else f"{r.strategy} {fraction_label(r.budget_fraction)}"
        questions = "—" if r.questions_scored is None else f"{r.questions_scored:,}"
        table.add_row(str(r.search_seed), strategy, str(r.parallel), str(r.steps_done), questions, f"{r.wall_s:.0f} s",
                      f"#{r.node_id}", f"{r.validation:.3f}", f"{r.test:.3f}", f"{r.test - best:+.3f}",
                      *_oracle_cells(r))
    console.print(table)
    table = Table(title=f"{title}: summary (mean ± s.e. over search seeds)")
    for col in ("", "test", "− best seed", "worst seed's gap", "oracle", "regret", "wall-clock", "steps"):
        table.add_column(col, justify="right")
    bos = summary["best_of_seeds"]
    table.add_row(f"best seed ({summary['best_seed']['name']})", f"{best:.3f}", "+0.000", "", "", "", "", "")
    table.add_row(f"best-of-seeds ({bos['name']}, by validation)", f"{bos['test']:.3f}",
                  f"{bos['test'] - best:+.3f}", "", f"{best:.3f}", f"{summary['best_of_seeds_regret']:+.3f}", "", "")
    for name, row in summary["strategies"].items():
        test, gap, oracle, regret = row["test"], row["minus_best_seed"], row["oracle"], row["regret"]
        bound = "" if row["oracle_complete"] else "≥ "
        table.add_row(name, f"{test[0]:.3f} ± {test[1]:.3f}", f"{gap[0]:+.3f} ± {gap[1]:.3f}",
                      f"{row['min_minus_best_seed']:+.3f}", f"{bound}{_pm(oracle)}", f"{bound}{_pm(regret)}",
                      f"{row['wall_s']:.0f} s", f"{row['steps_done']:.1f}")
    console.print(table)
    render_comparison(console, summary["question_budget"], title)
    render_figures(console, seeds, searches, summary, title)
    slowest = summary["slowest_program_retrieve_ms"]
    console.print(f"slowest retrieve per question: {summary['slowest_seed_retrieve_ms']:.1f} ms among seeds, "
                  f"{slowest:.1f} ms among all programs scored (target ≤ {TARGET_MS:.0f} ms)")


def _pm(stat: tuple[float, float]) -> str:
    return "—" if stat[0] != stat[0] else f"{stat[0]:.3f} ± {stat[1]:.3f}"  # nan: no oracle


def _oracle_cells(r: SearchResult) -> tuple[str, str]:
    if r.oracle is None:
        return "—", "—"
    bound = "" if r.oracle_scored == r.oracle_evaluated else "≥ "  # --oracle-limit left programs out
    return f"{bound}{r.oracle:.3f} (#{r.oracle_node})", f"{bound}{r.regret:+.3f}"


def render_figures(console, seeds: list[Scored], searches: list[SearchResult], summary: dict[str, Any],
                   title: str) -> None:
    """The published figures (docs/benchmarks.md) of every seed and every selection, on test."""
    from rich.table import Table

    from automemo.evaluation.breakdown import ALL, NON_ADVERSARIAL

    figures = [s.figures for s in seeds] + [r.figures for r in searches]
    columns = list(dict.fromkeys((row, m) for f in figures for row in (NON_ADVERSARIAL, ALL) for m in f.get(row, {})))
    if not columns:
        return
    table = Table(title=f"{title}: every metric on test, the published figures among them "
                        f"(all but adversarial / all questions)")
    table.add_column("program")
    for row, m in columns:
        table.add_column(f"{m} ({'no adv.' if row == NON_ADVERSARIAL else 'all'})", justify="right")
    for s in seeds:
        table.add_row(f"seed {s.name}", *[f"{s.figures[row][m]:.3f}" if m in s.figures.get(row, {}) else "—"
                                          for row, m in columns])
    for name, row_summary in summary["strategies"].items():
        means = row_summary.get("figures", {})
        table.add_row(f"{name} selection (mean ± s.e.)",
                      *[_pm(means[row][m]) if m in means.get(row, {}) else "—" for row, m in columns])
    console.print(table)


def run(args) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from automemo.assembly import AssemblyError, build_evaluation, require_questions
    from automemo.cli import UserError
    from automemo.configtools import ConfigError
    from automemo.resolution import load_run_config

    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = sorted(set(strategies) - set(STRATEGIES))
    if unknown or not strategies:
        raise UserError(f"--strategies: unknown {', '.join(unknown) or '(none given)'}; choose from "
                        f"{', '.join(STRATEGIES)}")
    if args.search_seeds < 1 or args.steps < 1 or args.parallel < 1:
        raise UserError("--search-seeds, --steps and --parallel must each be at least 1")
    if args.oracle_limit < 0:
        raise UserError("--oracle-limit must be at least 0")
    if args.parallel > 1 and "tree" not in strategies:
        raise UserError("--parallel compares against the sequential tree search: keep tree in --strategies")
    fraction = check_fraction(getattr(args, "question_fraction", None))
    console = Console()
    if not console.is_terminal:  # a log or a pipe: wide enough that the tables do not wrap
        console = Console(width=140)
    with tempfile.TemporaryDirectory(prefix="automemo-discovery-") as tmp:
        args.workdir = (args.workdir or Path(tmp)).resolve()
        args.workdir.mkdir(parents=True, exist_ok=True)
        try:
            config = load_run_config(None, None, _overrides(args))
            setup = build_evaluation(config, store_root=args.workdir / "seed-store", quiet=True,
                                     unsafe_confirmed=unsafe_confirmed(args))
        except (ConfigError, AssemblyError) as exc:
            raise UserError(f"cannot start the discovery bench: {exc}") from None
        n_seeds = len(list_seeds())
        runs = args.search_seeds * ((2 if fraction else 1) * len(strategies) + (1 if args.parallel > 1 else 0))
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        searches: list[SearchResult] = []
        with setup, Progress(*columns, console=console, transient=True) as progress:
            try:
                require_questions(setup, "train")
                require_questions(setup, "test")
            except AssemblyError as exc:
                raise UserError(str(exc)) from None
            scores = TestScores(setup.evaluator, args.workdir / "scores.json",
                                {"benchmark": config.benchmark, "budget": config.budget})
            job = progress.add_task("seed programs on validation and test", total=2 * n_seeds + runs)
            seeds = score_seeds(scores, lambda: progress.advance(job))
            _write(args, seeds, searches)

            def search(seed: int, strategy: str, **how: Any) -> SearchResult:
                result = run_search(args, scores, seed, strategy, **how)
                searches.append(result)
                _write(args, seeds, searches)  # what is done survives an interruption
                budgeted = f" {fraction_label(fraction)} ({result.question_budget} questions)" if "budget" in how else ""
                progress.console.print(
                    f"search seed {seed} {strategy}{budgeted} K={result.parallel}: {result.steps_done} steps in "
                    f"{result.wall_s:.0f} s, selected #{result.node_id} validation {result.validation:.3f} "
                    f"test {result.test:.3f}; oracle {result.oracle:.3f} (#{result.oracle_node}, "
                    f"{result.oracle_scored} of {result.oracle_evaluated} programs), regret {result.regret:+.3f}")
                progress.advance(job)
                return result

            for seed in range(args.search_seeds):
                sequential = None
                for strategy in strategies:
                    progress.update(job, description=f"search seed {seed}: {strategy}, {args.steps} steps")
                    result = search(seed, strategy)
                    sequential = result if strategy == "tree" else sequential
                    if fraction:
                        budget = question_budget(fraction, result.questions_scored or 0)
                        progress.update(job, description=f"search seed {seed}: {strategy}, {args.steps} steps, "
                                                         f"{budget} questions")
                        search(seed, strategy, budget=(budget, fraction))
                if args.parallel > 1:
                    progress.update(job, description=f"search seed {seed}: tree, K={args.parallel}, "
                                                     f"{sequential.wall_s:.0f} s")
                    search(seed, "tree", parallel=args.parallel, steps=args.parallel * args.steps,
                           deadline_s=sequential.wall_s)
        metric = ranking_metric(args.benchmark, _overrides(args)["benchmark"]["options"])
        render(console, seeds, searches, summarize(seeds, searches),
               f"{args.benchmark}, {args.steps} steps, ranked by {metric}")
        console.print(f"written: {args.out}")
    return 0


def _write(args, seeds: list[Scored], searches: list[SearchResult]) -> None:
    command = args.command_line
    options = _overrides(args)["benchmark"]["options"]
    document = {"command": command, "benchmark": args.benchmark, "options": options,
                # what "validation" and "test" are the mean of; the others are in the figures
                "metric": ranking_metric(args.benchmark, options), "steps": args.steps,
                "search_seeds": args.search_seeds, "parallel": args.parallel,
                "oracle_limit": getattr(args, "oracle_limit", None),
                "question_budget_fraction": getattr(args, "question_fraction", None),
                "seeds": [asdict(s) for s in seeds], "searches": [{**asdict(r), "regret": r.regret} for r in searches],
                "summary": summarize(seeds, searches)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2))
