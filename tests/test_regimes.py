"""One object per evaluation regime (automemo.search.regimes): which one a tree is in, chosen
once, and what each says about n, N, the ± and whether a re-evaluation can buy anything."""

from __future__ import annotations

import math

import pytest

from automemo.search.config import SearchConfig
from automemo.search.regimes import Exact, Repeats, Sampled, regime_for
from automemo.search.tree_stats import NodeStats, TreeStats

SCORES = {"a": 1.0, "b": 0.0, "c": 1.0, "d": 1.0}  # mean .75, sd .5, SE .25


def _tree(*, exact=True, sampled=False, questions=4):
    root = NodeStats(0, None, mean=0.0, n=1, m=1, task_scores=dict.fromkeys(SCORES, 0.0), exact=exact,
                     questions=questions)
    child = NodeStats(1, 0, mean=0.75, n=2, m=0, task_scores=SCORES, exact=exact, questions=questions)
    return TreeStats((root, child), 3, **({"sample_size": 2, "validation_questions": 8} if sampled else {}))


def test_the_regime_is_chosen_from_the_tree_and_the_config():
    config = SearchConfig()
    assert isinstance(regime_for(_tree(), config), Exact)
    assert type(regime_for(_tree(exact=False), config)) is Repeats
    assert isinstance(regime_for(_tree(exact=False, sampled=True), config), Sampled)
    assert type(regime_for(_tree(), SearchConfig(uncertainty="repeats"))) is Repeats
    assert isinstance(regime_for(_tree(exact=False), SearchConfig(uncertainty="tasks")), Exact)


def test_each_regime_counts_and_bounds_in_its_own_terms():
    config = SearchConfig(c_e=0.2, z=1.0)
    t = _tree(exact=False)
    child = t.node(1)
    repeats = Repeats(config)
    assert repeats.uncertainty(child, t) == pytest.approx(0.2 * math.sqrt(math.log(3) / 2))
    assert repeats.evaluable(child, t) and repeats.optimism(child, t) == 0.0
    exact = Exact(config)
    assert exact.uncertainty(child, t) == pytest.approx(0.25)
    assert not exact.evaluable(child, t) and exact.optimism(child, t) == pytest.approx(0.25)
    s = _tree(exact=False, sampled=True)
    sampled = Sampled(config)
    assert sampled.count(s.node(1), s) == 2.0 and sampled.total(s) == 4.0  # 4 questions, samples of 2
    assert sampled.evaluable(s.node(1), s)  # 4 of 8 questions asked
    full = _tree(exact=False, sampled=True, questions=8)
    assert not sampled.evaluable(full.node(1), full)
    assert sampled.eval_score(s.node(1), s) == pytest.approx(0.75 + 0.25 * math.sqrt(math.log(4)))
