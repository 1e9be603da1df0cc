"""Hybrid RAG: BM25 and dense (MiniLM) retrieval over conversation turns, fused by reciprocal rank.

Stores: every dialogue round or web step as a unit (`memolib.units`; an episode without steps is
one unit of its instruction), in two indexes over the same rows: BM25 over its words
(`memolib.BM25Index`) and its text embedding (`memolib.DenseIndex` over `toolkit.embed_text`).
With WINDOW > 0 both index a unit with its WINDOW neighbours on either side; it cites only itself.

Retrieves: the question (instruction, image captions) searched in both indexes over the units of
the question's user (`metadata["user"]`; all units when it names none), CANDIDATES deep each;
the two rankings are fused by weighted reciprocal rank (`memolib.rrf`, constant RRF_K), and the
TOP_K best are cited best first and shown in chronological order. Lexical search finds exact
names, places and numbers; dense search finds paraphrases; rank fusion needs no score calibration.

Follows: hybrid lexical + dense retrieval fused by reciprocal rank fusion (Cormack, Clarke &
Buettcher 2009, "Reciprocal Rank Fusion outperforms Condorcet and individual rank learning
methods"), with BM25 (Robertson & Zaragoza 2009) and MiniLM sentence embeddings (Wang et al. 2020).
"""

from __future__ import annotations

from automemo.contract import EpisodeRecorder, MemoProgram, MemoryPayload, PartialRecorder
from automemo.toolkit import memolib

TOP_K = 10  # tunable: int 1..30
RRF_K = 60  # tunable: int 1..100
LEXICAL_WEIGHT = 1.0  # tunable: float 0.0..2.0
DENSE_WEIGHT = 1.0  # tunable: float 0.0..2.0
CANDIDATES = 50  # tunable: int 10..200
WINDOW = 0  # tunable: int 0..3


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.lexical = memolib.BM25Index()
        self.dense = memolib.DenseIndex(toolkit.embed_text, toolkit.embedding_dims()["text"], vector_index=toolkit.vector_index)
        self.store = memolib.UnitStore()  # the units by row, as both indexes number them

    def update(self, episode: EpisodeRecorder) -> None:
        turns = memolib.episode_units(episode)
        indexed = memolib.windows(turns, WINDOW) if WINDOW else turns
        texts = [memolib.indexed_text(episode, u) for u in indexed]
        self.dense.add_many(texts)
        self.lexical.add_many(texts)
        self.store.add_episode(turns)

    def retrieve(self, task: PartialRecorder) -> MemoryPayload:
        budget = memolib.budget_of(task)
        query, allowed = memolib.query_text(task), self.store.allowed_rows(memolib.scope_of(task))
        rankings = [self.lexical.search(query, CANDIDATES, allowed), self.dense.search(query, CANDIDATES, allowed)]
        fused = memolib.rrf(rankings, k=RRF_K, weights=[LEXICAL_WEIGHT, DENSE_WEIGHT])[:TOP_K]
        ranked = self.store.ranked([row for row, _ in fused])
        if not ranked:
            return memolib.make_payload([], budget=budget)
        return memolib.make_payload([memolib.chronological(ranked)], budget=budget,
                                    images=[i for unit, _ in ranked for i in unit.images],
                                    evidence=memolib.citations([unit for unit, _ in ranked]))
