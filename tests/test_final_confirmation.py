"""The final confirmation (policy.confirm_final): the best few nodes by μ, hand designs aside,
each paired with the best hand design on every search question; a child is chosen only when its
paired lead clears z paired standard errors, and the hand design is kept otherwise. Expected
values by hand."""

from __future__ import annotations

import pytest

from automemo.search.config import SearchConfig
from automemo.search.policy import NodeStats, TreeStats, confirm_final, final_by_bound

TASKS = [f"q{i}" for i in range(8)]
BAR = [1, 0, 1, 0, 1, 0, 1, 0]   # the seed (μ .5)


def _tree(children: dict[int, list[float]], bar=BAR) -> TreeStats:
    def node(i, parent, values, **kw):
        mean = sum(values) / len(values)
        return NodeStats(id=i, parent=parent, mean=mean, n=1, m=0, first_score=mean, parent_snapshot=0.0,
                         task_scores=dict(zip(TASKS, values)), exact=True, **kw)

    nodes = [NodeStats(id=0, parent=None, mean=0.0, n=1, m=1, task_scores=dict.fromkeys(TASKS, 0.0), exact=True),
             node(1, 0, bar, reference=True)]
    m1 = 0
    for i, values in children.items():
        nodes.append(node(i, 1, values))
        m1 += 1
    nodes[1] = NodeStats(**{**nodes[1].__dict__, "m": m1})
    return TreeStats(tuple(nodes), total_evaluations=len(nodes))


def test_a_child_whose_paired_lead_clears_the_bound_is_chosen():
    # Child 2 wins 3 questions the seed lost and loses none: d = 3/8 = .375, diffs (0,1,0,1,0,1,0,0)
    # sd = sqrt(.375·.625·8/7) = .5175, SE = .1830; bound .5 + .375 − .1830 = .692 > .5.
    t = _tree({2: [1, 1, 1, 1, 1, 1, 1, 0]})
    c = confirm_final(t, SearchConfig(kappa=0.0))
    assert c.bar == 1 and c.tasks == 8 and c.chosen == 2
    (only,) = c.candidates
    assert only.difference == pytest.approx(0.375) and only.se == pytest.approx(0.18298, abs=1e-4)
    assert only.bound == pytest.approx(0.5 + 0.375 - 0.18298, abs=1e-4) and only.clears and only.complete
    assert final_by_bound(t, SearchConfig(kappa=0.0)).id == 2


def test_a_lead_under_one_paired_se_keeps_the_hand_design():
    # One question won, none lost: d = .125, SE = .125, bound = .5: it does not clear the bar.
    t = _tree({2: [1, 1, 1, 0, 1, 0, 1, 0]})
    c = confirm_final(t, SearchConfig(kappa=0.0))
    assert c.chosen == 1 and not c.candidates[0].clears
    assert c.candidates[0].bound == pytest.approx(0.5)
    assert final_by_bound(t, SearchConfig(kappa=0.0)).id == 1
    # With z = 0.5 the same lead clears.
    assert confirm_final(t, SearchConfig(kappa=0.0, z=0.5)).chosen == 2


def test_only_the_best_few_by_mean_are_held_to_the_bar():
    # Children 2 and 3 (μ .875) win 4 questions and lose 1: d = .375, SE = .2631, at z = 1.5 the
    # bound .5 + .375 − .3947 = .480 does not clear. Child 4 (μ .75) wins 2 and loses none:
    # d = .25, SE = .1637, bound .5045 clears, but with confirm_top = 2 it is not a candidate.
    t = _tree({2: [0, 1, 1, 1, 1, 1, 1, 1], 3: [1, 1, 0, 1, 1, 1, 1, 1], 4: [1, 1, 1, 0, 1, 1, 1, 0]})
    two = confirm_final(t, SearchConfig(kappa=0.0, z=1.5, confirm_top=2))
    assert [c.node_id for c in two.candidates] == [2, 3]
    assert two.candidates[0].bound == pytest.approx(0.4803, abs=1e-3) and two.chosen == 1
    three = confirm_final(t, SearchConfig(kappa=0.0, z=1.5, confirm_top=3))
    assert three.candidates[2].bound == pytest.approx(0.5045, abs=1e-3) and three.chosen == 4


def test_a_child_not_scored_on_every_search_question_is_not_confirmed():
    t = _tree({2: [1, 1, 1, 1, 1, 1, 1, 0]})
    partial = NodeStats(**{**t.node(2).__dict__, "task_scores": dict(zip(TASKS[:6], [1] * 6))})
    t = TreeStats(tuple(partial if v.id == 2 else v for v in t.nodes), t.total_evaluations)
    c = confirm_final(t, SearchConfig(kappa=0.0))
    assert not c.candidates[0].complete and not c.candidates[0].clears and c.chosen == 1


def test_confirm_top_must_be_positive():
    with pytest.raises(ValueError, match="confirm_top"):
        SearchConfig(confirm_top=0)


def _lineage(tables: dict[int, tuple[int, list[float]]], tasks: list[str]) -> TreeStats:
    """Root #0, the hand design #1, then each node (parent, per-task scores)."""
    nodes = [NodeStats(id=0, parent=None, mean=0.0, n=1, m=sum(p == 0 for p, _ in tables.values()),
                       task_scores=dict.fromkeys(tasks, 0.0), exact=True)]
    for i, (parent, values) in tables.items():
        mean = sum(values) / len(values)
        nodes.append(NodeStats(id=i, parent=parent, mean=mean, n=1, m=sum(p == i for p, _ in tables.values()),
                               first_score=mean, parent_snapshot=0.0, task_scores=dict(zip(tasks, values)),
                               exact=True, reference=i == 1))
    return TreeStats(tuple(nodes), total_evaluations=len(nodes))


def test_the_one_se_rule_takes_the_shallowest_node_within_one_paired_se_of_the_choice():
    """#2 (a child of the hand design) clears the bar by far; #4, two generations below it, leads
    it by one question of 40 (two won, one lost: d = .025, SE = .044, within one paired SE) and
    has the highest bound: the rule takes #2. #3 (a seed's depth) and #5 (#2's) are shallow
    but trail #4 by more than one paired SE: neither is taken."""
    tasks = [f"q{i}" for i in range(40)]
    bar = [float(i % 2) for i in range(40)]                       # μ .5
    good = [1.0] * 30 + [float(i % 2) for i in range(10)]          # μ .875
    deep = list(good)
    deep[30], deep[32], deep[0] = 1.0, 1.0, 0.0                    # μ .9: two won, one lost
    weak = list(bar)
    weak[0] = 1.0                                                  # μ .525: d(bar) .025 ± .025
    far = [1.0] * 20 + [float(i % 2) for i in range(20)]           # μ .75: #4 leads it by .15
    t = _lineage({1: (0, bar), 2: (1, good), 3: (0, weak), 6: (2, good), 4: (6, deep), 5: (1, far)}, tasks)
    plain = confirm_final(t, SearchConfig(kappa=0.0, select_shallowest=False))
    assert plain.chosen == 4 and plain.leader is None
    c = confirm_final(t, SearchConfig(kappa=0.0))
    assert c.chosen == 2 and c.leader == 4 and final_by_bound(t, SearchConfig(kappa=0.0)).id == 2
    assert any(x.node_id == 2 and x.clears for x in c.candidates)
    assert "fewest generations" in c.rule


def test_the_one_se_rule_keeps_the_choice_when_no_shallower_node_is_within_one_se():
    tasks = [f"q{i}" for i in range(40)]
    bar = [float(i % 2) for i in range(40)]
    far = [1.0] * 20 + [float(i % 2) for i in range(20)]           # μ .75
    best = [1.0] * 36 + [0.0] * 4                                  # μ .9: leads #2 by .15
    t = _lineage({1: (0, bar), 2: (1, far), 3: (2, best)}, tasks)
    c = confirm_final(t, SearchConfig(kappa=0.0))
    assert c.chosen == 3 and c.leader is None
