"""BM25 RAG: lexical retrieval over conversation turns (or web steps), ranked by Okapi BM25.

Stores: every dialogue round or web step as a unit (`memolib.units`; an episode without steps is
one unit of its instruction), indexed by its words in a BM25 index (`memolib.BM25Index`, K1 and B).
With WINDOW > 0 a unit is indexed with the words of its WINDOW neighbours on either side (a round
is often answered by the one before it) but still cites only itself.

Retrieves: the question's words (instruction, image captions) scored by BM25 over the units of
the question's user (`metadata["user"]`; all units when it names none); the TOP_K best are cited
best first and shown in chronological order with their session, time and ids. Exact word matches
(names, places, numbers, rare words) are what dense embeddings blur; no model is called.

Follows: Okapi BM25 (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and
Beyond"), the lexical retriever that long-term conversational memory benchmarks report as a
baseline (LoCoMo, Maharana et al. 2024; LongMemEval, Wu et al. 2025).
"""

from __future__ import annotations

from automemo.contract import EpisodeRecorder, MemoProgram, MemoryPayload, PartialRecorder
from automemo.toolkit import memolib

TOP_K = 10  # tunable: int 1..30
K1 = 1.2  # tunable: float 0.1..3.0
B = 0.75  # tunable: float 0.0..1.0
WINDOW = 0  # tunable: int 0..3


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.index = memolib.BM25Index(k1=K1, b=B)
        self.store = memolib.UnitStore()  # the units by row, as the index numbers them

    def update(self, episode: EpisodeRecorder) -> None:
        turns = memolib.episode_units(episode)
        indexed = memolib.windows(turns, WINDOW) if WINDOW else turns
        self.index.add_many([memolib.indexed_text(episode, u) for u in indexed])
        self.store.add_episode(turns)

    def retrieve(self, task: PartialRecorder) -> MemoryPayload:
        budget = memolib.budget_of(task)
        hits = self.index.search(memolib.query_text(task), TOP_K, self.store.allowed_rows(memolib.scope_of(task)))
        ranked = self.store.ranked([row for row, _ in hits])
        if not ranked:
            return memolib.make_payload([], budget=budget)
        return memolib.make_payload([memolib.chronological(ranked)], budget=budget,
                                    images=[i for unit, _ in ranked for i in unit.images],
                                    evidence=memolib.citations([unit for unit, _ in ranked]))
