"""Writes the programs of docs/memolib.md's component table: a fixed simple baseline recipe
(BM25 + dense over turns, reciprocal-rank fusion, 10 units: the hybrid_rag seed as a recipe)
and the same recipe with one of memolib's retrieval components switched on.

    PYTHONPATH=. python3 scripts/component_programs.py OUT_DIR   (from the repository root)
    PYTHONPATH=. python3 scripts/component_programs.py OUT_DIR --fit memgallery path=DATA [cache_path=FILE] [model=trees]

Each `OUT_DIR/<name>.py` is a plain rendered recipe (`automemo.meta.source.recipe.render_recipe`).
With `--fit BENCHMARK OPTION=VALUE ...` the ranking stage is fitted on that benchmark's train
split as a search fits it (the question router cross-fitted by conversation, then the ranker on
the train questions' evidence, cross-fitted the same way) and `rank.py` (the baseline with the
fitted ranker) and `multi_rank.py` (the multi-view recipe with it) are written too; `cache_path`
names the embedding cache the evaluations use, so nothing is embedded twice; `model` the
ranker's model (linear, the default here; trees or auto), whose programs are named
`rank_<model>.py` and `multi_rank_<model>.py`.
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import time
from pathlib import Path

from automemo.meta.source.recipe import Recipe, render_recipe, with_values

BASELINE = Recipe()
COMPONENTS = {
    "baseline": {},
    "late": {"late": True},
    "entities": {"entities": True},
    "temporal": {"temporal": True},
    "hierarchy": {"sessions": 2},
    "feedback": {"feedback": True},
    "speakers": {"speakers": True},
    "latest": {"latest": "text"},
    "coverage": {"coverage": "text"},
    "listing": {"listing": "text"},
    # the session-level stages, each with its stage's defaults (PASSAGE_LENGTH 4, PASSAGE_TOP 3,
    # PASSAGE_WEIGHT 0.25) and the value an add-stage move gives it
    "passages_session": {"passages": "session"},
    "passages_window": {"passages": "window"},
    "passages_summary": {"passages": "summary"},
    "session_fusion": {"session_weight": 0.5},
    "session_diversity": {"session_spread": 2},
}


def fitted_ranker(benchmark: str, options: dict[str, str], model: str = "linear") -> tuple[dict, dict]:
    """(router params, ranker params) fitted on `benchmark`'s train split, as a search fits them
    (`model`: linear, trees or auto, automemo.meta.offline.ranking)."""
    from automemo.assembly import build_evaluation, services_factory
    from automemo.host_fitting import ranker_fit, train_questions
    from automemo.config import build_run_config
    from automemo.meta import fit_question_router

    cache = options.pop("cache_path", None)
    config = build_run_config({"benchmark": {"name": benchmark, "options": options},
                               "embeddings": {"cache_path": cache} if cache else {}})
    with tempfile.TemporaryDirectory() as scratch:
        setup = build_evaluation(config, store_root=Path(scratch) / "store", quiet=True)
        with setup:
            rows = train_questions(setup.evaluator)
            router = fit_question_router([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
            started = time.monotonic()
            ranker = ranker_fit(setup, Path(scratch) / "ranking",
                                services_factory(setup.encoders, setup.store.root, None), model=model)(router)
            parts = [ranker[m] for m in ("linear", "trees")] if ranker.get("model") == "blend" else [ranker]
            size = " + ".join(f"{len(p['trees'])} trees" if p.get("model") == "trees" else f"{len(p['weights'])} weights"
                              for p in parts)
            print(f"{ranker.get('model', 'linear')} ranker fitted in {time.monotonic() - started:.0f} s: {size}, "
                  f"{len(parts[0].get('folds', []))} folds, held-out gain {ranker.get('held_out_gain')}", file=sys.stderr)
    return router, ranker


def main(out: Path, fit: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    programs = {name: with_values(BASELINE, changes) for name, changes in COMPONENTS.items()}
    if fit:
        options = dict(option.split("=", 1) for option in fit[1:])
        model = options.pop("model", "linear")
        router, ranker = fitted_ranker(fit[0], options, model)
        suffix = "" if model == "linear" else f"_{model}"
        for name, base in (("rank", BASELINE), ("multi_rank", Recipe(unit="multi"))):
            programs[name + suffix] = dataclasses.replace(with_values(base, {"rank": True}), router=router, ranker=ranker)
    for name, recipe in programs.items():
        (out / f"{name}.py").write_text(render_recipe(recipe))
        print(out / f"{name}.py")


if __name__ == "__main__":
    args = sys.argv[1:]
    fit = args[args.index("--fit") + 1:] if "--fit" in args else []
    main(Path(args[0] if args and args[0] != "--fit" else "components"), fit)
