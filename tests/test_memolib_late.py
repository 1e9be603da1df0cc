"""memolib late interaction: MaxSim over token embeddings finds a unit whose pooled vector is
diluted by everything else it says."""

from __future__ import annotations

import numpy as np

from automemo.toolkit.memolib import DenseIndex, TokenIndex, maxsim


class OneHotWords:
    """Each distinct word its own axis: a token matrix is one one-hot row per word, a pooled
    vector their mean. Enough to tell a token-level match from a pooled one."""

    def __init__(self):
        self.axes = {}

    def _row(self, word):
        v = np.zeros(64, np.float32)
        v[self.axes.setdefault(word, len(self.axes))] = 1.0
        return v

    def tokens(self, texts):
        return [np.stack([self._row(w) for w in t.split()]).astype(np.float16) for t in texts]

    def pooled(self, texts):
        return [np.mean(m.astype(np.float32), axis=0).tolist() for m in self.tokens(texts)]


def test_maxsim_sums_each_query_tokens_best_match():
    q = np.eye(3, dtype=np.float32)[:2]
    d = np.array([[1, 0, 0], [0.6, 0.8, 0]], np.float32)
    assert np.isclose(maxsim(q, d), 1.0 + 0.8)
    assert maxsim(q, np.zeros((0, 3), np.float32)) == 0.0


def test_maxsim_ranks_the_planted_unit_first_where_pooled_vectors_do_not():
    words = OneHotWords()
    texts = [
        "recipe",                                                     # distractor: one query word, nothing else
        "sourdough starter a b c d e f g h i j",                      # planted: two query words among many
        "k l m n",
    ]
    query = "sourdough starter recipe"
    dense = DenseIndex(words.pooled)
    dense.add_many(texts)
    assert dense.search(query, 3)[0][0] == 0  # the pooled vector prefers the short distractor
    late = TokenIndex(words.tokens)
    assert late.add_many(texts) == [0, 1, 2] and late.size == 3
    assert late.search(query, 3)[0][0] == 1
    reranked = late.rerank(query, [(0, 0.9), (1, 0.5), (2, 0.1)], k=2)
    assert [r for r, _ in reranked] == [1, 0] and reranked[0][1] > reranked[1][1]
    assert late.rerank(query, []) == [] and late.search(query, 3, allowed=[0, 2])[0][0] == 0
