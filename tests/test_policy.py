"""The search policy pinned on hand-computed trees.

Expected values were worked out by hand from the formulas (ln 4 = 1.386294, ln 3 = 1.098612,
ln 8 = 2.079442), not by calling the code under test."""

import pytest

from automemo.search.config import SearchConfig
from automemo.search.policy import (
    Action,
    NodeStats,
    TreeStats,
    choose_action,
    eval_score,
    gen_score,
    is_expandable,
    lcb,
    potential,
    prior,
    final_by_bound,
)
from automemo.search.tree import Node, Tree

from policytools import small_tree

CFG = SearchConfig()


def test_eval_score_matches_hand_computation():
    t = small_tree()
    assert eval_score(t.node(0), t, CFG) == pytest.approx(0.466511, abs=1e-6)
    assert eval_score(t.node(1), t, CFG) == pytest.approx(0.735482, abs=1e-6)
    assert eval_score(t.node(2), t, CFG) == pytest.approx(0.435482, abs=1e-6)


def test_prior_is_lead_over_root_times_kappa():
    t = small_tree()
    assert prior(t.node(0), t, CFG) == 0.0
    assert prior(t.node(1), t, CFG) == pytest.approx(0.1)
    assert prior(t.node(2), t, CFG) == 0.0  # worse than the root: no negative prior


def test_potential_sums_only_positive_improvements():
    t = small_tree()
    # G(root) = max(0, .5-.3) + max(0, .2-.3) = .2 ; ĝ = (.2 + 1·0) / (2 + 1)
    assert potential(t.node(0), t, CFG) == pytest.approx(0.2 / 3)
    # a leaf: ĝ = (0 + 1·.1) / (0 + 1)
    assert potential(t.node(1), t, CFG) == pytest.approx(0.1)


def test_gen_score_matches_hand_computation():
    t = small_tree()
    assert gen_score(t.node(0), t, CFG) == pytest.approx(0.502622, abs=1e-6)
    assert gen_score(t.node(1), t, CFG) == pytest.approx(0.835482, abs=1e-6)


def test_choose_best_action_over_evaluate_and_generate():
    assert choose_action(small_tree(), CFG) == Action("generate", 1, pytest.approx(0.835482, abs=1e-6))


LITERAL = SearchConfig(widen_blocked=False)  # the policy without the widening addition


def test_minimum_width_blocks_expanding_a_child_of_a_narrow_parent():
    t = small_tree()
    wide = SearchConfig(min_width=3, widen_blocked=False)
    assert is_expandable(t.node(0), t, wide)  # the root always is
    assert not is_expandable(t.node(1), t, wide)
    assert is_expandable(t.node(1), t, CFG)
    # node 1 cannot be expanded, so its re-evaluation (.735) wins over the root's U_gen (.503)
    assert choose_action(t, wide) == Action("evaluate", 1, pytest.approx(0.735482, abs=1e-6))
    # with widening, node 1's U_gen (.835) widens its parent, the root, instead
    widen = SearchConfig(min_width=3)
    assert choose_action(t, widen) == Action("generate", 0, pytest.approx(0.835482, abs=1e-6), via=1)


def test_widening_breaks_the_strong_first_child_deadlock():
    # root μ 0, its only child μ .79 (N = 2). Literally, U_eval(1) = .79 + .2·√ln2 = .956511 beats
    # U_gen(0) = 0 + .79/2 + .2·√(ln2/2) = .512741, and keeps beating it at every N: the tree
    # would never grow. Node 1's U_gen = .79 + .5·.79 + .2·√ln2 = 1.351511 widens the root.
    t = TreeStats(
        nodes=(NodeStats(0, None, 0.0, 1, 1, first_score=0.0),
               NodeStats(1, 0, 0.79, 1, 0, first_score=0.79, parent_snapshot=0.0)),
        total_evaluations=2,
    )
    assert gen_score(t.node(0), t, CFG) == pytest.approx(0.512741, abs=1e-6)
    assert choose_action(t, LITERAL) == Action("evaluate", 1, pytest.approx(0.956511, abs=1e-6))
    assert choose_action(t, CFG) == Action("generate", 0, pytest.approx(1.351511, abs=1e-6), via=1)


def test_first_step_after_root_generates_from_root():
    # N = 1: ln N = 0, so U_eval(r) = U_gen(r) = μ(r); the tie goes to generate
    t = TreeStats(nodes=(NodeStats(0, None, 0.25, 1, 0),), total_evaluations=1)
    assert eval_score(t.root, t, CFG) == 0.25
    assert gen_score(t.root, t, CFG) == 0.25
    assert choose_action(t, CFG) == Action("generate", 0, 0.25)


def test_ties_go_to_generate_then_to_the_older_node():
    # Children 1 and 2 are identical and were no improvement: U_eval(c) = U_gen(c) = .4 + .2·√ln3
    t = TreeStats(
        nodes=(
            NodeStats(0, None, 0.4, 1, 2),
            NodeStats(1, 0, 0.4, 1, 0, first_score=0.4, parent_snapshot=0.4),
            NodeStats(2, 0, 0.4, 1, 0, first_score=0.4, parent_snapshot=0.4),
        ),
        total_evaluations=3,
    )
    assert choose_action(t, CFG) == Action("generate", 1, pytest.approx(0.609629, abs=1e-6))
    # with the children not expandable, three evaluate actions tie: the oldest node wins
    narrow = SearchConfig(min_width=5, widen_blocked=False)
    assert choose_action(t, narrow) == Action("evaluate", 0, pytest.approx(0.609629, abs=1e-6))
    # ... unless widening is on: the children's U_gen ties too, and generate wins the tie, on
    # the root, via the older child
    assert choose_action(t, SearchConfig(min_width=5)) == Action(
        "generate", 0, pytest.approx(0.609629, abs=1e-6), via=1
    )


def test_unevaluated_node_is_never_a_candidate():
    t = TreeStats(
        nodes=(NodeStats(0, None, 0.3, 1, 0), NodeStats(1, 0, 0.0, 0, 0)),
        total_evaluations=1,
    )
    with pytest.raises(ValueError, match="no evaluation"):
        eval_score(t.node(1), t, CFG)
    assert not is_expandable(t.node(1), t, CFG)
    assert choose_action(t, CFG).node_id == 0


def test_policy_needs_an_evaluated_root():
    t = TreeStats(nodes=(NodeStats(0, None, 0.0, 0, 0),), total_evaluations=0)
    with pytest.raises(ValueError, match="evaluate the root first"):
        choose_action(t, CFG)


def test_inconsistent_statistics_are_rejected():
    with pytest.raises(ValueError, match="evaluated children"):
        TreeStats(nodes=(NodeStats(0, None, .3, 1, 2),), total_evaluations=1)
    with pytest.raises(ValueError, match="N = 5"):
        TreeStats(nodes=(NodeStats(0, None, .3, 1, 0),), total_evaluations=5)


def test_final_selection_prefers_well_verified_over_lucky_one_shot():
    t = TreeStats(
        nodes=(
            NodeStats(0, None, 0.1, 1, 2),
            NodeStats(1, 0, 0.9, 1, 0, first_score=0.9, parent_snapshot=0.1),   # lucky once
            NodeStats(2, 0, 0.8, 6, 0, first_score=0.7, parent_snapshot=0.1),   # verified 6×
        ),
        total_evaluations=8,
    )
    assert lcb(t.node(1), t, CFG) == pytest.approx(0.611595, abs=1e-6)
    assert lcb(t.node(2), t, CFG) == pytest.approx(0.682259, abs=1e-6)
    assert final_by_bound(t, CFG).id == 2
    # without the confidence penalty the lucky one would have won
    assert final_by_bound(t, SearchConfig(c_e=0.0)).id == 1


def test_failed_generation_is_invisible_to_the_policy():
    base = [
        Node(0, None, "nodes/0/program.py", "root", scores=(0.3, 0.3), action="root"),
        Node(1, 0, "nodes/1/program.py", "a", scores=(0.5,), parent_snapshot=0.3),
        Node(2, 0, "nodes/2/program.py", "b", scores=(0.2,), parent_snapshot=0.3),
    ]
    failed = Node(3, 1, "nodes/3/program.py", "broken", status="failed", parent_snapshot=0.5)
    with_failed = Tree(base + [failed])
    assert with_failed.total_evaluations == 4
    stats = with_failed.stats()
    assert [v.id for v in stats.nodes] == [0, 1, 2]
    assert stats == Tree(base).stats() == small_tree()
    assert with_failed.next_id() == 4  # the failed one still used its id


def test_config_rejects_nonsense():
    with pytest.raises(ValueError, match="alpha"):
        SearchConfig(alpha=0)
