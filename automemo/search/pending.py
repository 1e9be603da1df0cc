"""Actions in flight: their record, the ids they reserve, and their virtual visits.

The policy stays pure: it never learns that anything is running. Instead the statistics it reads
are shifted as if every pending evaluation had already been counted: a pending evaluation of v
adds one to n(v) and to N, its mean unchanged, so U_eval(v) shrinks and the next slot does not
re-evaluate the same node for nothing.

A pending generation is deliberately NOT a visit. Counting it in m(v) (as a child with zero gain,
the "virtual loss" reading) halves ĝ(v) and the generate bonus of a node with no children yet, so
the next free slot re-evaluates that node or expands a weaker one instead of drawing another
child from the best node. Measured on the simulated landscape (`measurements/landscape_search.py`,
tree search, 20 steps, 40 landscapes, K = 4, regret against the best of K = 1 and 4), counting pending generations gave a final selection of true
quality 0.518 (regret 0.210) against 0.612 (regret 0.141) without; K = 1 reaches 0.699.
Children of one parent are independent draws, so K generations from the best node are K chances,
not one chance counted K times; a re-evaluation in flight, by contrast, is information already
on its way. With nothing pending (K = 1) the statistics are returned unchanged, so a sequential
search is exactly the policy of `policy.py`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterable, Literal

from automemo.search.policy import TreeStats
from automemo.search.tree import Tree


@dataclass(frozen=True)
class PendingAction:
    """One action chosen at `step` and not committed yet. `child_id` is the id reserved for a
    generation's child, `k` the evaluation index reserved for an evaluation, so that actions in
    flight together never write the same node or evaluation folder. A "transplant" (the seed
sweep) puts the seed program `seed` under the root without asking the meta agent."""

    step: int
    kind: Literal["evaluate", "generate", "transplant", "confirm"]
    node_id: int
    score: float
    via: int | None = None
    child_id: int | None = None
    k: int | None = None
    seed: str | None = None  # a transplant's seed program (search.seed_sweep)
    # With a question budget: the questions an evaluation (or a confirmation) asks, reserved
    # when it was chosen so that two in flight on one node never ask the same question.
    questions: tuple[str, ...] | None = None

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        data["questions"] = list(self.questions) if self.questions is not None else None
        return data

    @classmethod
    def from_dict(cls, data: dict) -> PendingAction:
        questions = data.get("questions")
        return cls(**{**data, "questions": tuple(questions) if questions is not None else None})

    def cost(self, sample_size: int) -> int:
        """Questions this action will ask at most: its own, or a first sample."""
        return len(self.questions) if self.questions is not None else sample_size


def with_pending(stats: TreeStats, pending: Iterable[PendingAction]) -> TreeStats:
    """`stats` with every pending evaluation counted as a virtual visit (generations are not
    counted; see the module's docstring)."""
    evaluations: dict[int, int] = {}
    questions: dict[int, int] = {}
    for action in pending:
        if action.kind in ("evaluate", "confirm"):
            evaluations[action.node_id] = evaluations.get(action.node_id, 0) + 1
            questions[action.node_id] = questions.get(action.node_id, 0) + len(action.questions or ())
    if not evaluations:
        return stats
    nodes = tuple(dataclasses.replace(v, n=v.n + evaluations.get(v.id, 0),
                                      questions=v.questions + questions.get(v.id, 0))
                  for v in stats.nodes)
    return dataclasses.replace(stats, nodes=nodes,
                               total_evaluations=stats.total_evaluations + sum(evaluations.values()))


def reserve_questions(tree: Tree, pending: Iterable[PendingAction], node_id: int,
                      count: int | None = None) -> tuple[str, ...]:
    """The next questions of the run's plan for an evaluation of `node_id`: `count` (a sample
    by default) it was neither asked nor has reserved by an evaluation in flight."""
    taken = set(tree.node(node_id).asked)
    for p in pending:
        if p.node_id == node_id and p.questions:
            taken.update(p.questions)
    return tree.plan.next_questions(taken, count)


def reserve(tree: Tree, pending: Iterable[PendingAction], kind: str,
            node_id: int) -> tuple[int | None, int | None]:
    """(child id, evaluation index) for a new action on the committed `tree` while `pending`
    run: one past the highest id or index committed or reserved, never a count. A count goes
    wrong as soon as commits come out of order or a reserved evaluation fails (its index stays
    unused, so n + pending lands on an index another action already committed)."""
    pending = list(pending)
    if kind in ("generate", "transplant"):
        reserved = [p.child_id for p in pending if p.child_id is not None]
        return max([tree.next_id(), *(c + 1 for c in reserved)]), None
    node = tree.node(node_id)
    committed = node.ks or tuple(range(node.n))  # a tree built without indices
    taken = [*committed, *(p.k for p in pending
                         if p.kind in ("evaluate", "confirm") and p.node_id == node_id and p.k is not None)]
    return None, max(taken, default=-1) + 1
