"""The small hand-computed tree that the policy tests and the pending-action tests both read."""

from automemo.search.policy import NodeStats, TreeStats


def small_tree() -> TreeStats:
    """root 0 (μ .3, n 2) with children 1 (s .5) and 2 (s .2), both generated at s_par .3."""
    return TreeStats(
        nodes=(
            NodeStats(id=0, parent=None, mean=0.3, n=2, m=2, first_score=0.3),
            NodeStats(id=1, parent=0, mean=0.5, n=1, m=0, first_score=0.5, parent_snapshot=0.3),
            NodeStats(id=2, parent=0, mean=0.2, n=1, m=0, first_score=0.2, parent_snapshot=0.3),
        ),
        total_evaluations=4,
    )
