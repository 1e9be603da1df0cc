"""The fitted ranking stage's models compared inside their candidate pool (docs/memolib.md):
the pool's recall ceiling, and clue Recall@10 of the pool ordered by fusion, by the linear
ranker, by the LambdaMART trees and by their blend, on the train conversations (each scored by
the fold fitted without it, as a search's validation is) and on the test conversations (the
models fitted on all train questions). Turn units only (the stage's pool); the figures of a
whole program (its pictures too) come from `automemo eval` of scripts/component_programs.py.

    PYTHONPATH=. python3 scripts/ranker_models.py DATA_PATH [EMBEDDING_CACHE] [POOL ...] [--tree-signals all]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np


def pools(path: str, cache: str | None, sizes: list[int]) -> tuple[dict, list[str]]:
    """Per (split, pool size) one record per question with clues: its scope, type, candidates'
    values and design features, which hold a clue, and the clues each cites."""
    from automemo.assembly import build_evaluation, services_factory
    from automemo.host_fitting import train_questions
    from automemo.config import build_run_config
    from automemo.meta import fit_question_router
    from automemo.meta.offline import ranking
    from automemo.toolkit import memolib
    from automemo.toolkit.guest import Toolkit
    from automemo.toolkit.memolib.ranker import CUES, SIGNALS, column, contexts_of, design

    config = build_run_config({"benchmark": {"name": "memgallery", "options": {"path": path}},
                               "embeddings": {"cache_path": cache} if cache else {}})
    out: dict = {}
    with tempfile.TemporaryDirectory() as scratch:
        setup = build_evaluation(config, store_root=Path(scratch) / "store", quiet=True)
        with setup:
            rows = train_questions(setup.evaluator)
            routed = memolib.QuestionRouter.from_params(
                fit_question_router([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]))
            columns = [column(c, s) for c in ["", *CUES, *(f"type:{t}" for t in routed.labels)] for s in SIGNALS]
            (Path(scratch) / "ranking").mkdir()
            toolkit = Toolkit(Path(scratch) / "ranking", setup.store.root,
                              services_factory(setup.encoders, setup.store.root, None)().handle)
            ev = setup.evaluator
            for split in ("train", "test"):
                partials = ev.partials(split)
                qs = [(ranking.RankingQuestion(p.instruction, memolib.query_text(p), memolib.scope_of(p),
                                               frozenset(map(str, t.data.get("clues") or ())), p.metadata.get("time")),
                       t.category) for t in ev.split(split).retrieve for p in [partials[t.task_id]]]
                toolkit.embed_text([q.query for q, _ in qs])
                store, signals = memolib.UnitStore(), memolib.RankingSignals(toolkit.embed_text,
                                                                             toolkit.embedding_dims()["text"])
                for episode in ev.update_episodes(split):
                    turns = memolib.episode_units(episode)
                    signals.add(episode, turns, len(turns), store.add_episode(turns))
                for size in sizes:
                    recs = []
                    for q, category in qs:
                        if not q.clues:
                            continue
                        pool = signals.candidates(q.question, q.query, store.allowed_rows(q.scope, without="image"),
                                                  store, scope=q.scope, now=q.now, pool=size)
                        cites = [set(store.units[r].evidence) & q.clues for r in pool.rows]
                        contexts = contexts_of(q.question, routed.predict(q.question, q.scope))
                        recs.append(dict(scope=q.scope, category=category, clues=q.clues, cites=cites,
                                         values=pool.values, contexts=contexts,
                                         features=design(pool.values, contexts, columns),
                                         relevant=np.array([bool(c) for c in cites], dtype=bool)))
                    out[(split, size)] = recs
    return out, columns


def recall(scores: np.ndarray, rec: dict, k: int = 10) -> float:
    top = np.argsort(-scores, kind="stable")[:k]
    return len(set().union(set(), *(rec["cites"][i] for i in top))) / len(rec["clues"])


def main(args: list[str]) -> None:
    from automemo.meta.offline import ranking
    from automemo.toolkit import memolib
    from automemo.toolkit.memolib.ranker import SIGNALS, _forest_scores, _reciprocal_ranks, tree_features, tree_matrix

    if "--tree-signals" in args:
        i = args.index("--tree-signals")
        if args[i + 1] == "all":
            ranking.TREE_SIGNALS = SIGNALS
        del args[i:i + 2]
    path, rest = args[0], args[1:]
    cache = rest.pop(0) if rest and not rest[0].isdigit() else None
    sizes = [int(s) for s in rest] or [30]
    data, columns = pools(path, cache, sizes)
    features = tree_features(ranking.contexts_in(columns), ranking.TREE_SIGNALS)
    print("| pool | split | questions | clues in the pool | fusion | linear | trees | blend |")
    print("|---|---|---|---|---|---|---|---|")
    for size in sizes:
        examples = {split: [ranking.Example(r["scope"], r["features"], r["relevant"],
                                            tree_matrix(r["values"], r["contexts"], features))
                            for r in data[(split, size)]] for split in ("train", "test")}
        fit_on = [e for e in examples["train"] if e.relevant.any() and not e.relevant.all()]
        models = {m: memolib.ranker_from_params(ranking.cross_fit(fit_on, columns, model=m)) for m in ("linear", "trees")}

        def scored(model: str, ex: ranking.Example, held: bool) -> np.ndarray:
            if model == "blend":
                return _reciprocal_ranks(scored("linear", ex, held)) + _reciprocal_ranks(scored("trees", ex, held))
            if model == "fusion":
                return ranking.fused_first_stage(ex.features, columns)
            ex = ex if held else ranking.Example("", ex.features, ex.relevant, ex.tree)  # "": fitted on all
            if model == "trees":
                return _forest_scores(ex.tree, models["trees"].forest_for(ex.scope))
            weights = models["linear"].weights_for(ex.scope)
            return ex.features @ np.array([weights.get(c, 0.0) for c in columns])

        for split in ("train", "test"):
            recs = data[(split, size)]
            ceiling = np.mean([len(set().union(set(), *r["cites"])) / len(r["clues"]) for r in recs])
            cells = [np.mean([recall(scored(m, e, split == "train"), r) for e, r in zip(examples[split], recs)])
                     for m in ("fusion", "linear", "trees", "blend")]
            print(f"| {size} | {split} | {len(recs)} | {ceiling:.3f} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
