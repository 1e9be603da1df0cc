"""`automemo bench scale`: what the Ray executor and the parallel search buy.

(a) Episodes per second of an evaluation whose episodes only wait (`--latency`, CPU-cheap;
    `automemo.measurements.latency_benchmark`), on the thread executor and on a local Ray cluster with
    1, 2 and 4 workers. Each executor first runs an untimed warm-up evaluation (update episodes
    collected, Ray workers started); the figure is the retrieve-task phase of a second one.
    Target: 4 Ray workers >= 3.2x the episodes/s of 1.
(b) Wall-clock of a `--steps`-step tree search with K = 1, 2, 4 actions in flight on a
    simulated landscape (`automemo.measurements.landscape_search`: the real loop and LLM meta agent
    against the fake server) whose evaluations wait `--eval-latency` s, and the regret of the
    final selection over `--seeds` landscapes per K at equal steps (evaluations instant there),
    defined as `automemo bench strategies` defines it: the best true quality any K found on that
    landscape minus the selection's true quality. Also its selection regret: the best true
    quality in the search's own tree minus the selection's (did it pick its best?).
    Target: K = 4 >= 3x faster than K = 1, mean regret at most 10% worse.
(c) Wall-clock of a `--meta-steps`-step search with K = 1 and K = 4 whose meta answers wait
    `--llm-latency` s each (a slow model: the fake server sleeps before every answer, and its
    answers are distinct landscape children, so none is rejected as a duplicate), evaluations
    instant; and the most meta requests the server answered at once. The meta agent keeps no
    state between calls, so K generations in flight are K concurrent LLM calls.
    Target: K = 4 takes <= 0.5x the wall-clock of K = 1, with >= 3 meta requests in flight.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path
from automemo.cli.flags import add_sandbox_flag, sandbox_choice

RAY_WIDTHS = (1, 2, 4)
KS = (1, 2, 4)


def add_arguments(parser) -> None:
    parser.add_argument("--episodes", type=int, default=16, help="(a) retrieve tasks (default 16)")
    parser.add_argument("--latency", type=float, default=0.5, help="(a) wait per episode, s (default 0.5)")
    add_sandbox_flag(parser, default="auto")
    parser.add_argument("--steps", type=int, default=20, help="(b) search steps (default 20)")
    parser.add_argument("--eval-latency", type=float, default=2.0,
                        help="(b) wait per full evaluation, s (default 2)")
    parser.add_argument("--seeds", type=int, default=20, help="(b) seeds per K for the regret (default 20)")
    parser.add_argument("--meta-steps", type=int, default=8, help="(c) search steps (default 8)")
    parser.add_argument("--llm-latency", type=float, default=4.0,
                        help="(c) wait per meta answer of the fake server, s (default 4)")
    parser.add_argument("--skip", action="append", choices=("ray", "search", "meta"), default=[],
                        help="leave out part (a), (b) or (c) (repeatable)")


def run(args) -> int:
    from rich.console import Console

    from automemo.cli import UserError

    if (min(args.episodes, args.steps, args.seeds, args.meta_steps) < 1
            or min(args.latency, args.eval_latency, args.llm_latency) < 0):
        raise UserError("--episodes, --steps, --seeds and --meta-steps must be >= 1, latencies >= 0")
    console = Console()
    if "ray" not in args.skip:
        console.print(_executor_table(args, console))
    if "search" not in args.skip:
        console.print(_search_table(args, console))
    if "meta" not in args.skip:
        console.print(_meta_table(args, console))
    return 0


# (a) executors ---------------------------------------------------------------------------------


def _executor_table(args, console):
    from rich.table import Table

    from automemo.cli import UserError
    from automemo.evaluation.executor import ThreadExecutor
    from automemo.evaluation.ray_executor import RayExecutor, RayUnavailable
    from automemo.sandbox import SandboxError, get_sandbox

    try:
        sandbox = get_sandbox(sandbox_choice(args))
    except SandboxError as exc:
        raise UserError(f"sandbox {args.sandbox!r} is not usable: {exc}") from None
    try:
        import ray
    except ImportError:
        raise UserError("part (a) needs Ray: pip install 'automemo[ray]' (or --skip ray)") from None
    rows = []
    with tempfile.TemporaryDirectory(prefix="automemo-bench-scale-") as tmp:
        rows.append(("threads, 4", _episodes_per_s(args, sandbox, ThreadExecutor(4), Path(tmp) / "t")))
        console.print("starting a local Ray cluster…")
        ray.init(num_cpus=max(RAY_WIDTHS), include_dashboard=False, log_to_driver=False)
        try:
            for width in RAY_WIDTHS:
                console.print(f"Ray, {width} worker{'s' if width > 1 else ''}…")
                try:
                    rate = _episodes_per_s(args, sandbox, RayExecutor(width), Path(tmp) / f"r{width}")
                except RayUnavailable as exc:
                    raise UserError(str(exc)) from None
                rows.append((f"Ray, {width}", rate))
        finally:
            ray.shutdown()
    table = Table(title=f"(a) evaluation throughput: {args.episodes} episodes waiting "
                        f"{args.latency:.2f} s, {sandbox.name} sandbox")
    table.add_column("executor, workers")
    table.add_column("episodes/s", justify="right")
    for name, rate in rows:
        table.add_row(name, f"{rate:.2f}")
    ray_rates = dict(zip(RAY_WIDTHS, (r for _, r in rows[1:])))
    ratio = ray_rates[4] / ray_rates[1]
    table.add_row("Ray 4 / Ray 1 (target >= 3.2x)",
                  f"{ratio:.2f}x {'meets' if ratio >= 3.2 else 'MISSES'}")
    return table


def _episodes_per_s(args, sandbox, executor, folder: Path) -> float:
    from automemo.cli import UserError
    from automemo.episode_store import EpisodeStore
    from automemo.evaluation import EvaluationConfig, Evaluator
    from automemo.measurements.latency_benchmark import FACTS_PROGRAM, LatencyBenchmark

    benchmark = LatencyBenchmark(args.episodes, args.latency)
    evaluator = Evaluator(benchmark, sandbox, EpisodeStore(folder),
                          config=EvaluationConfig(concurrency=executor.workers, quiet=True),
                          executor=executor)
    try:
        evaluator.evaluate(FACTS_PROGRAM, split="test")  # warm-up: updates collected, workers up
        result = evaluator.evaluate(FACTS_PROGRAM, split="test")
    finally:
        evaluator.close()
    if result.errors or result.excluded or result.n_scored != args.episodes:
        raise UserError(f"the evaluation itself failed: {dict(result.errors)} {result.excluded}")
    return args.episodes / result.info["retrieve_phase_s"]


# (b) parallel search ---------------------------------------------------------------------------


def _search_table(args, console):
    from rich.table import Table

    from automemo.evaluation.progress import track
    from automemo.measurements.landscape_search import regrets, run_landscape_search
    from automemo.measurements.stand_ins.fakellm import FakeLLM
    from automemo.measurements.stand_ins.landscape import Landscape

    defaults = Landscape()
    walls = {}
    with FakeLLM() as fake, tempfile.TemporaryDirectory(prefix="automemo-bench-scale-") as tmp:
        for k in KS:
            console.print(f"timing a {args.steps}-step search, K = {k}…")
            walls[k] = run_landscape_search("tree", 0, steps=args.steps, parallel=k,
                                            eval_latency_s=args.eval_latency, fake=fake,
                                            workdir=Path(tmp)).wall_s
        outcomes = []
        with track("regret over seeds", args.seeds * len(KS), quiet=False) as bar:
            for seed in range(args.seeds):
                for k in KS:
                    outcomes.append(run_landscape_search("tree", seed, steps=args.steps, parallel=k,
                                                         fake=fake, workdir=Path(tmp)))
                    bar.advance()
    scored = list(zip(outcomes, regrets(outcomes)))
    regret = {k: [r for o, r in scored if o.parallel == k] for k in KS}
    chosen = {k: [o.regret for o in outcomes if o.parallel == k] for k in KS}
    quality = {k: [o.selected_quality for o in outcomes if o.parallel == k] for k in KS}
    table = Table(title=f"(b) parallel search: {args.steps} steps, evaluations {args.eval_latency:.1f} s; "
                        f"regret over {args.seeds} simulated landscapes per K (noise {defaults.noise}, "
                        f"spread {defaults.spread}, failure rate {defaults.failure_rate})")
    for column in ("K", "wall-clock (s)", "speed-up vs K=1", "true quality of selection",
                   "regret, mean", "vs K=1", "selection regret, mean", "vs K=1"):
        table.add_column(column, justify="right")
    for k in KS:
        table.add_row(str(k), f"{walls[k]:.1f}", f"{walls[1] / walls[k]:.2f}x",
                      f"{statistics.mean(quality[k]):.4f}",
                      f"{statistics.mean(regret[k]):.4f}", _relative(regret[k], regret[1]),
                      f"{statistics.mean(chosen[k]):.4f}", _relative(chosen[k], chosen[1]))
    speedup = walls[1] / walls[4]
    table.add_row("target", ">= 3x", "meets" if speedup >= 3 else "MISSES", "",
                  "<= 10% worse", _verdict(regret[4], regret[1]), "", "")
    table.caption = ("regret (as in `automemo bench strategies`): the best true quality any K found "
                     "on that landscape minus the true quality of the final selection; selection "
                     "regret: the best true quality in the search's own tree minus the selection's")
    return table


# (c) concurrent meta calls ----------------------------------------------------------------------

META_KS = (1, 4)


def _meta_table(args, console):
    from rich.table import Table

    from automemo.measurements.landscape_search import run_landscape_search
    from automemo.measurements.stand_ins.fakellm import FakeLLM

    outcomes = {}
    with FakeLLM() as fake, tempfile.TemporaryDirectory(prefix="automemo-bench-scale-") as tmp:
        for k in META_KS:
            console.print(f"timing a {args.meta_steps}-step search with meta answers of "
                          f"{args.llm_latency:.1f} s, K = {k}…")
            outcomes[k] = run_landscape_search("tree", 0, steps=args.meta_steps, parallel=k,
                                               llm_latency_s=args.llm_latency, fake=fake, workdir=Path(tmp))
    table = Table(title=f"(c) concurrent meta calls: {args.meta_steps} steps, every meta answer "
                        f"{args.llm_latency:.1f} s, evaluations instant")
    for column in ("K", "wall-clock (s)", "vs K=1", "generations", "meta calls", "meta requests in flight, max"):
        table.add_column(column, justify="right")
    for k, o in outcomes.items():
        table.add_row(str(k), f"{o.wall_s:.1f}", f"{o.wall_s / outcomes[1].wall_s:.2f}x", str(o.generations),
                      str(o.meta_calls), str(o.max_meta_in_flight))
    ratio = outcomes[4].wall_s / outcomes[1].wall_s
    meets = ratio <= 0.5 and outcomes[4].max_meta_in_flight >= 3
    table.add_row("target", "", "<= 0.5x", "", "", f">= 3: {'meets' if meets else 'MISSES'}")
    return table


def _relative(values: list[float], base: list[float]) -> str:
    mean, reference = statistics.mean(values), statistics.mean(base)
    if reference <= 0:
        return f"{mean - reference:+.4f} abs"
    return f"{(mean - reference) / reference:+.0%}"


def _verdict(values: list[float], base: list[float]) -> str:
    worse = statistics.mean(values) - statistics.mean(base)
    return "meets" if worse <= 0.10 * statistics.mean(base) + 1e-9 else "MISSES"
