"""Actions in flight as virtual visits (parallel search): the statistics the pure policy reads
are shifted by pending evaluations (n(v) and N), not by pending generations; caps count the
actions in flight at the mean spend of a committed action.

Expected values worked out by hand: ln 5 = 1.609438, ln 4 = 1.386294."""

import pytest

from automemo.search.config import SearchConfig
from automemo.search.pending import PendingAction, with_pending
from automemo.search.policy import NodeStats, TreeStats, choose_action, eval_score, gen_score

from policytools import small_tree

CFG = SearchConfig()


def test_a_pending_evaluation_counts_in_n_and_N_but_not_in_the_mean():
    t = with_pending(small_tree(), [PendingAction(3, "evaluate", 1, 0.7, k=1)])
    assert t.total_evaluations == 5 and t.node(1).n == 2 and t.node(1).mean == 0.5
    # U_eval(1) = .5 + .2 sqrt(ln 5 / 2) = .5 + .2 * .897061
    assert eval_score(t.node(1), t, CFG) == pytest.approx(0.679412, abs=1e-6)


def test_a_pending_generation_is_not_a_visit():
    """Another child of the same parent is an independent draw: the next free slot may take it."""
    t = small_tree()
    shifted = with_pending(t, [PendingAction(3, "generate", 0, 0.5, child_id=3)])
    assert shifted is t
    mixed = with_pending(t, [PendingAction(3, "generate", 0, 0.5, child_id=3),
                             PendingAction(4, "evaluate", 1, 0.7, k=1)])
    assert mixed.node(0).m == 2 and mixed.total_evaluations == 5 and mixed.node(1).n == 2


def test_no_pending_action_leaves_the_statistics_as_they_are():
    t = small_tree()
    assert with_pending(t, []) is t


def test_pending_evaluations_spread_the_slots_and_pending_generations_pile_on_the_best_node():
    """Choosing K actions one after another, each seeing the earlier ones as pending: a pending
    re-evaluation pushes the next choice elsewhere; generations from the best node repeat (each
    child is a new draw). The first choice is always the sequential policy's."""
    flat = TreeStats(nodes=(
        NodeStats(id=0, parent=None, mean=0.3, n=1, m=2, first_score=0.3),
        NodeStats(id=1, parent=0, mean=0.29, n=1, m=0, first_score=0.29, parent_snapshot=0.3),
        NodeStats(id=2, parent=0, mean=0.28, n=1, m=0, first_score=0.28, parent_snapshot=0.3),
    ), total_evaluations=3)
    for tree, expected in ((flat, "spread"), (small_tree(), "pile")):
        pending: list[PendingAction] = []
        for step in range(1, 4):
            a = choose_action(with_pending(tree, pending), CFG)
            pending.append(PendingAction(step, a.kind, a.node_id, a.score))
        first = choose_action(tree, CFG)
        assert (pending[0].kind, pending[0].node_id) == (first.kind, first.node_id)
        chosen = [(p.kind, p.node_id) for p in pending]
        if expected == "spread":
            # U_eval(0) = .3 + .2 sqrt(ln 3) = .5096 wins alone; with it pending, n(0) = 2, N = 4
            assert chosen[0] == ("evaluate", 0) and chosen[1] != ("evaluate", 0)
        else:
            assert chosen == [("generate", 1)] * 3


def test_pending_actions_round_trip_through_their_record():
    p = PendingAction(4, "generate", 2, 0.61, via=5, child_id=7)
    assert PendingAction.from_dict(p.to_dict()) == p


class _Run:
    def __init__(self, committed: int) -> None:
        self._actions = [{"step": s} for s in range(committed)]

    def actions(self):
        return self._actions


class _LLM:
    def __init__(self, guard) -> None:
        self.guard = guard


def test_caps_count_the_actions_in_flight_at_the_mean_committed_spend():
    from automemo.llm.budget import Spend, SpendGuard
    from automemo.search.scheduler import estimated_overrun as _estimated_overrun

    llm = _LLM(SpendGuard(max_total_tokens=1000, already=Spend(600, 0.0)))
    run = _Run(committed=3)  # 200 tokens per committed action
    assert _estimated_overrun(llm, run, in_flight=1) is None          # 600 + 200 < 1000
    reason = _estimated_overrun(llm, run, in_flight=2)                # 600 + 400 reaches it
    assert reason and "token cap" in reason and "2 actions in flight" in reason
    dollars = _LLM(SpendGuard(max_usd=1.0, already=Spend(0, 0.5)))
    assert "USD cap" in _estimated_overrun(dollars, _Run(committed=1), in_flight=1)
    assert _estimated_overrun(dollars, _Run(committed=0), in_flight=3) is None  # no estimate yet
