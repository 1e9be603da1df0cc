"""`automemo bench strategies`: the search strategies at equal budget (same steps).

Two measurements per strategy (`tree`, `alma`, `greedy`, `random`):
- simulated landscapes (`automemo.measurements.stand_ins.landscape`), `--seeds` of them per noise level: the true
  quality of the final selection, its regret (the best true quality any strategy found on that
  landscape minus the selection's), the selection's own regret (best true quality in its own
  tree minus the selection's), and the meta agent's calls and tokens. The whole search runs for
  real (loop, run directory, LLM meta agent over HTTP, ledger) against the fake
  OpenAI-compatible server, which draws each child from the landscape;
- Mini-Gallery (`--gallery-seeds`, 0 to skip): `automemo search --preset minigallery` with the
  offline mutator, then the selection scored on the test split by `automemo eval`.

Prints one table; `--out DIR` also writes results.json and strategies.svg (a chart of the
landscape figures).
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

from automemo.search.config import STRATEGIES


def add_arguments(parser) -> None:
    parser.add_argument("--steps", type=int, default=20, help="search steps per run (default 20)")
    parser.add_argument("--seeds", type=int, default=30, help="landscapes per noise level (default 30)")
    parser.add_argument("--noise", default="0.02,0.1",
                        help="evaluation noise levels (standard deviation), comma-separated (default 0.02,0.1)")
    parser.add_argument("--spread", type=float, default=0.1, help="spread of a child's quality step (default 0.1)")
    parser.add_argument("--gain", type=float, default=0.0, help="mean of a child's quality step (default 0)")
    parser.add_argument("--failure-rate", type=float, default=0.2,
                        help="share of generations that fail (default 0.2)")
    parser.add_argument("--gallery-seeds", type=int, default=3,
                        help="Mini-Gallery searches per strategy, scored on the test split (default 3; 0 skips)")
    parser.add_argument("--strategies", default=",".join(STRATEGIES), help="comma-separated (default all)")
    parser.add_argument("--out", type=Path, help="folder for results.json and strategies.svg")


def _mean_se(values: Sequence[float]) -> tuple[float, float]:
    if not values:
        return float("nan"), float("nan")
    mean = statistics.fmean(values)
    se = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return mean, se


def landscape_rows(strategies: Sequence[str], seeds: int, steps: int, noise: float, *,
                   spread: float, gain: float, failure_rate: float, progress=None) -> list[dict[str, Any]]:
    from automemo.measurements.landscape_search import regrets, run_landscape_search
    from automemo.measurements.stand_ins.fakellm import FakeLLM

    outcomes = []
    with FakeLLM() as fake:
        for seed in range(seeds):
            for name in strategies:
                outcomes.append(run_landscape_search(
                    name, seed, steps=steps, noise=noise, gain=gain, spread=spread,
                    failure_rate=failure_rate, fake=fake))
                if progress:
                    progress()
    scored = list(zip(outcomes, regrets(outcomes)))
    rows = []
    for name in strategies:
        own = [o for o, _ in scored if o.strategy == name]
        rows.append({
            "strategy": name, "noise": noise, "runs": len(own),
            "quality": _mean_se([o.selected_quality for o in own]),
            "regret": _mean_se([r for o, r in scored if o.strategy == name]),
            "selection_regret": _mean_se([o.regret for o in own]),
            "meta_calls": statistics.fmean(o.meta_calls for o in own),
            "meta_tokens": statistics.fmean(o.meta_tokens for o in own),
            "evaluations": statistics.fmean(o.evaluations for o in own),
        })
    return rows


def _automemo(*args: str, timeout: float = 3600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "automemo", *args], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ))


def gallery_score(strategy: str, seed: int, steps: int, workdir: Path) -> dict[str, Any]:
    """One offline Mini-Gallery search, its selection scored once on the test split."""
    run_id = f"{strategy}-{seed}"
    searched = _automemo("search", "--preset", "minigallery", "--strategy", strategy, "--seed", str(seed),
                         "--steps", str(steps), "--quiet", "--runs-dir", str(workdir), "--run-id", run_id)
    if searched.returncode != 0:
        raise RuntimeError(f"search {run_id} failed: {searched.stderr[-2000:]}")
    run = workdir / run_id
    final = json.loads((run / "final.json").read_text())
    out = workdir / f"{run_id}-test.json"
    scored = _automemo("eval", str(run / final["program_path"]), "--benchmark", "minigallery",
                       "--option", "mode=retrieval", "--repeats", "1", "--quiet",
                       "--workdir", str(workdir / f"{run_id}-test"), "--out", str(out))
    if scored.returncode != 0:
        raise RuntimeError(f"test evaluation of {run_id} failed: {scored.stderr[-2000:]}")
    evaluation = json.loads(out.read_text())["evaluations"][0]
    return {"strategy": strategy, "seed": seed, "node_id": final["node_id"],
            "summary": final.get("summary", ""), "train_mean": final["mean"],
            "test_mean": evaluation["mean"], "test_metrics": evaluation.get("metrics", {})}


def gallery_rows(strategies: Sequence[str], seeds: int, steps: int, workdir: Path) -> list[dict[str, Any]]:
    runs = [gallery_score(name, seed, steps, workdir) for name in strategies for seed in range(seeds)]
    return runs


def _fmt(pair: tuple[float, float]) -> str:
    mean, se = pair
    return f"{mean:.3f} ± {se:.3f}"


def render_table(landscape: list[dict[str, Any]], gallery: list[dict[str, Any]]) -> str:
    lines = ["| strategy | noise | true quality of selection | regret | selection regret | "
             "meta calls | meta tokens | full evaluations |",
             "|---|---|---|---|---|---|---|---|"] if landscape else []
    for r in landscape:
        lines.append(f"| {r['strategy']} | {r['noise']} | {_fmt(r['quality'])} | {_fmt(r['regret'])} | "
                     f"{_fmt(r['selection_regret'])} | {r['meta_calls']:.1f} | {r['meta_tokens']:,.0f} | "
                     f"{r['evaluations']:.1f} |")
    if gallery:
        lines += [""] if lines else []
        lines += ["| strategy | Mini-Gallery searches | test mean of selection | test Recall@10 |",
                  "|---|---|---|---|"]
        for name in dict.fromkeys(g["strategy"] for g in gallery):
            own = [g for g in gallery if g["strategy"] == name]
            recall = [g["test_metrics"].get("recall@10") for g in own]
            recall_text = _fmt(_mean_se([r for r in recall if r is not None])) if all(
                r is not None for r in recall) else "-"
            lines.append(f"| {name} | {len(own)} | {_fmt(_mean_se([g['test_mean'] for g in own]))} | "
                         f"{recall_text} |")
    return "\n".join(lines)


def render_svg(landscape: list[dict[str, Any]]) -> str:
    """Grouped bars: true quality of the selection per strategy, one group per noise level,
    with ± one standard error."""
    noises = list(dict.fromkeys(r["noise"] for r in landscape))
    names = list(dict.fromkeys(r["strategy"] for r in landscape))
    colours = ["#4c78a8", "#f58518", "#54a24b", "#b279a2", "#9d755d"]
    width, height, left, bottom, top = 560, 300, 50, 40, 30
    plot_h = height - bottom - top
    group_w = (width - left - 20) / max(1, len(noises))
    bar_w = group_w * 0.8 / max(1, len(names))
    hi = max(1e-9, max(r["quality"][0] + r["quality"][1] for r in landscape))
    scale = plot_h / hi
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="11">',
             f'<text x="{left}" y="16">true quality of the final selection (mean ± s.e.)</text>',
             f'<line x1="{left}" y1="{height - bottom}" x2="{width - 10}" y2="{height - bottom}" stroke="#333"/>']
    for i in range(6):
        value = hi * i / 5
        y = height - bottom - value * scale
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{value:.2f}</text>')
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}" stroke="#ddd"/>')
    for g, noise in enumerate(noises):
        x0 = left + g * group_w + group_w * 0.1
        parts.append(f'<text x="{x0 + group_w * 0.4:.1f}" y="{height - bottom + 16}" '
                     f'text-anchor="middle">noise {noise}</text>')
        for b, name in enumerate(names):
            row = next(r for r in landscape if r["noise"] == noise and r["strategy"] == name)
            mean, se = row["quality"]
            x = x0 + b * bar_w
            y = height - bottom - mean * scale
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w * 0.9:.1f}" '
                         f'height="{mean * scale:.1f}" fill="{colours[b % len(colours)]}"/>')
            cx = x + bar_w * 0.45
            parts.append(f'<line x1="{cx:.1f}" y1="{y - se * scale:.1f}" x2="{cx:.1f}" '
                         f'y2="{y + se * scale:.1f}" stroke="#000"/>')
    for b, name in enumerate(names):
        x = left + 10 + b * 90
        parts.append(f'<rect x="{x}" y="{height - 14}" width="10" height="10" fill="{colours[b % len(colours)]}"/>')
        parts.append(f'<text x="{x + 14}" y="{height - 5}">{name}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def run(args) -> int:
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        print(f"automemo bench strategies: unknown strategy {', '.join(unknown)}; "
              f"strategies are {', '.join(STRATEGIES)}", file=sys.stderr)
        return 2
    try:
        noises = [float(n) for n in args.noise.split(",") if n.strip()]
    except ValueError:
        print(f"automemo bench strategies: --noise must be numbers separated by commas, got {args.noise!r}",
              file=sys.stderr)
        return 2
    from automemo.evaluation.progress import track

    landscape: list[dict[str, Any]] = []
    total = len(noises) * args.seeds * len(strategies)
    with track("landscape searches", total, quiet=not sys.stderr.isatty()) as bar:
        for noise in noises if args.seeds > 0 else ():
            landscape += landscape_rows(strategies, args.seeds, args.steps, noise, spread=args.spread,
                                        gain=args.gain, failure_rate=args.failure_rate,
                                        progress=lambda: bar.advance(1))
    gallery: list[dict[str, Any]] = []
    if args.gallery_seeds > 0:
        with tempfile.TemporaryDirectory() as tmp:
            gallery = gallery_rows(strategies, args.gallery_seeds, args.steps, Path(args.out or tmp))
    print(f"{args.steps} steps per search; landscapes: {args.seeds} per noise level, spread "
          f"{args.spread}, gain {args.gain}, failure rate {args.failure_rate}")
    print(render_table(landscape, gallery))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "results.json").write_text(json.dumps(
            {"args": {k: str(v) for k, v in vars(args).items() if k != "func"},
             "landscape": landscape, "gallery": gallery}, indent=2))
        written = [args.out / "results.json"]
        if landscape:
            (args.out / "strategies.svg").write_text(render_svg(landscape))
            written.append(args.out / "strategies.svg")
        print("written: " + ", ".join(map(str, written)))
    return 0
