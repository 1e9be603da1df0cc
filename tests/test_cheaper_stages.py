"""Cheaper stages for a parent over the search's cost bounds: memolib's lazy dense stage (BM25's
candidates embedded at recall, each once), the offline generator's `cheapen` move, and what the
LLM's generate prompt says of the bounds."""

from __future__ import annotations

import dataclasses

import numpy as np

from automemo.evaluation.cost_bounds import CostBounds
from automemo.evaluation.result import EvaluationResult
from automemo.meta.base import ParentView
from automemo.meta.context import GenerationContext
from automemo.meta.llm.prompts import contract_context, cost_context, render_meta
from automemo.meta.offline.agent import OfflineMetaAgent
from automemo.meta.offline.moves import cheapen
from automemo.meta.source.recipe import Pipeline, Recipe, parse_recipe, render_recipe
from automemo.paths import SEEDS_DIR
from automemo.toolkit.memolib import LazyDense

EXPENSIVE = {"ingest_cpu_ms_per_turn": 64.0, "recall_cpu_ms": 20.0, "recall_p95_ms": 9.0,
             "index_bytes_per_1k_turns": 2.9e6}


class CountingEmbed:
    def __init__(self):
        self.asked: list[str] = []

    def __call__(self, texts):
        self.asked += texts
        return [[1.0, float(len(t) % 5), float(t.count("cat"))] for t in texts]


def test_lazy_dense_embeds_only_candidates_and_each_once():
    embed = CountingEmbed()
    lazy = LazyDense(embed)
    assert lazy.add_many(["a cat", "a dog", "cat cat cat", "a bird"]) == [0, 1, 2, 3]
    assert embed.asked == [] and lazy.embedded == 0  # remembering embeds nothing
    ranked = lazy.rerank("cat cat", [0, 2])
    assert [row for row, _ in ranked] == [2, 0] and lazy.embedded == 2
    assert embed.asked == ["a cat", "cat cat cat", "cat cat"]
    lazy.rerank("cat", [2, 3, 9])  # row 9 does not exist; row 2 is embedded already
    assert embed.asked[3:] == ["a bird", "cat"] and lazy.embedded == 3


def test_cheapen_replaces_the_most_expensive_stage_first_and_routes_follow():
    recipe = Recipe(unit="multi", pipeline=Pipeline(indexes="both", late=True),
                    routes={"TR": {"indexes": "dense", "recency": 0.3}})
    child, move = cheapen(recipe, "ingest 64.00 ms/turn > 21")
    assert child.pipeline.indexes == "lazy" and child.routes == {"TR": {"recency": 0.3}}
    assert move.kind == "cheapen" and "lazy dense" in move.summary and "ingest 64.00" in move.summary
    assert parse_recipe(render_recipe(child)) == child  # still a recipe the generator can read back
    child, _ = cheapen(child, "")
    assert child.unit == "turn"
    child, _ = cheapen(child, "")
    assert not child.pipeline.late
    assert cheapen(Recipe(pipeline=Pipeline(indexes="bm25")), "") is None  # nothing left to make cheaper


def _context(source: str, cost, bounds: CostBounds) -> GenerationContext:
    evaluation = EvaluationResult(mean=0.8, n_scored=10, per_category={"TR": 0.5, "FR": 0.9}, metrics={}, tasks=(),
                                  cost=cost)
    return GenerationContext.build(ParentView(4, source, 0.8, 1, evaluation), node_id=12, seed=0, bounds=bounds)


def test_the_offline_agent_gives_a_parent_over_a_bound_a_cheaper_stage():
    agent = OfflineMetaAgent(seeds_dir=SEEDS_DIR)
    bounds = CostBounds(max_ingest_ms_per_turn=21.0)
    recipe = Recipe()
    made = agent.propose(_context(render_recipe(recipe), EXPENSIVE, bounds))
    assert parse_recipe(made.source).pipeline.indexes == "lazy" and made.summary.startswith("cheapen")
    # a hand design that is no recipe is composed into a starter, made cheaper too
    seed = (SEEDS_DIR / "hybrid_rag.py").read_text()
    made = agent.propose(_context(seed, EXPENSIVE, bounds))
    composed = parse_recipe(made.source)
    assert composed is not None and "cheapen" in made.summary and composed.pipeline.indexes in ("lazy", "bm25")
    # within the bounds, or without them, the operators are drawn as before
    within = _context(render_recipe(recipe), {**EXPENSIVE, "ingest_cpu_ms_per_turn": 5.0}, bounds)
    unbounded = _context(render_recipe(recipe), EXPENSIVE, CostBounds())
    assert not within.over_bounds and not unbounded.over_bounds
    assert agent.propose(within).summary == agent.propose(unbounded).summary


def test_the_generate_prompt_says_the_bounds_and_what_is_cheaper():
    bounds = CostBounds(max_ingest_ms_per_turn=21.0)
    ctx = contract_context()
    parent = {"node_id": 4, "score": 0.8, "n_evals": 1, "source": "class Memo: ..."}
    over = render_meta("meta_generate_compact", ctx, task_description="", parent=parent, tunables=[], weak=[],
                       siblings=[], example=None, edit_mode="rewrite",
                       cost=cost_context(_context("x = 1", EXPENSIVE, bounds)))
    assert "over the search's cost bound" in over and "ingest 64.00 ms/turn > 21" in over and "LazyDense" in over
    fits = render_meta("meta_generate_compact", ctx, task_description="", parent=parent, tunables=[], weak=[],
                       siblings=[], example=None, edit_mode="rewrite",
                       cost=cost_context(_context("x = 1", {**EXPENSIVE, "ingest_cpu_ms_per_turn": 3.0}, bounds)))
    assert "the parent fits" in fits and "LazyDense" not in fits
    none = render_meta("meta_generate_compact", ctx, task_description="", parent=parent, tunables=[], weak=[],
                       siblings=[], example=None, edit_mode="rewrite",
                       cost=cost_context(_context("x = 1", EXPENSIVE, CostBounds())))
    assert "cost bound" not in none


def test_a_recipe_with_lazy_dense_runs(tmp_path):
    """The rendered program imports and answers through memolib (no sandbox: the toolkit is faked)."""
    source = render_recipe(dataclasses.replace(Recipe(), pipeline=Pipeline(indexes="lazy")))
    namespace: dict = {}
    exec(compile(source, "recipe.py", "exec"), namespace)

    class Toolkit:
        def embedding_dims(self):
            return {"text": 3}

        def embed_text(self, texts):
            return np.asarray([[1.0, len(t) % 3, 0.5] for t in texts], dtype=np.float32)

        embed_tokens = vector_index = None

    from automemo.contract import EpisodeRecorder, PartialRecorder

    memo = namespace["Memo"](Toolkit())
    for i, text in enumerate(["I adopted a cat named Tom", "we went hiking in the hills"]):
        memo.update(EpisodeRecorder(task_id=f"e{i}", benchmark="b", instruction=text))
    payload = memo.retrieve(PartialRecorder(task_id="q", benchmark="b", instruction="what is my cat called?"))
    assert "Tom" in payload.text


def test_lazy_ranking_signals_embed_only_the_pool():
    """With `lazy`, the ranker's dense signals embed a unit only when a question's BM25 pool first
    holds it, and order the pool alone; remembering embeds nothing."""
    from automemo.contract import EpisodeRecorder
    from automemo.toolkit import memolib

    embed = CountingEmbed()
    store, signals = memolib.UnitStore(), memolib.RankingSignals(embed, 3, lazy=True)
    texts = ["my cat is called Tom", "we went hiking", "the cat likes fish", "a rainy day", "cooking pasta"]
    for i, text in enumerate(texts):
        episode = EpisodeRecorder(task_id=f"e{i}", benchmark="b", instruction=text)
        turns = memolib.episode_units(episode)
        signals.add(episode, turns, len(turns), store.add_episode(turns))
    assert embed.asked == []
    pool = signals.candidates("what is my cat called?", "what is my cat called", None, store, pool=3)
    assert set(pool.rows) == {0, 2}  # BM25's candidates: the two rounds that mention the cat
    assert len(embed.asked) == 2 * 2 + 2  # each pool unit in both views, and the query for each view
    dense_rank = memolib.ranker.SIGNALS.index("dense_rank")
    assert sorted(pool.values[:, dense_rank]) == [0.5, 1.0]  # the dense ranking orders the pool alone
    signals.candidates("the cat?", "the cat", None, store, pool=3)
    assert len(embed.asked) == 6 + 2  # the pool's units are embedded already: only the queries


def test_a_lazy_recipe_s_ranker_reads_lazy_signals():
    ranker = {"model": "linear", "pool": 30, "late": False, "weights": {"bm25_rank": 1.0}}
    lazy = Recipe(pipeline=Pipeline(indexes="lazy", rank=True), ranker=ranker)
    both = dataclasses.replace(lazy, pipeline=dataclasses.replace(lazy.pipeline, indexes="both"))
    for recipe, expected in ((lazy, True), (both, False)):
        namespace: dict = {}
        exec(compile(render_recipe(recipe), "recipe.py", "exec"), namespace)
        assert namespace["LAZY_SIGNALS"] is expected
