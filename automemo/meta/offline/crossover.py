"""Crossover for the offline mutator: a child program that runs two parents side by side and
fuses their retrievals (weighted reciprocal rank over the cited evidence, both payloads'
text and images within the budget), routing a question type to one parent alone where the
evidence decides it; and the choice of a partner from the evidence: the program that scores
best, relative to the parent, on the question types the parent is weak on.

The child never reads a question's type (`retrieve` sees no label): it carries the run's
`memolib.QuestionRouter` (fitted on the host on the train split's questions and their types,
cross-fitted by conversation: `meta/offline/router_fitting.py`) as data and routes by the type it
predicts from the question.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from automemo.meta.context import ScoredProgram, weak_types
from automemo.prompting import render
from automemo.toolkit import memolib
from automemo.toolkit.memolib import QuestionRouter, held_out_recall

MAX_SOURCE_CHARS = 1_000_000
"""A crossover of crossovers nests its parents' sources; past this size it is not proposed. A
recipe with the fitted ranking stage carries its fitted constants (the linear ranker's weights,
about 110 000 characters on the dev data; with the blend's trees, about 480 000): its crossover
with a seed, which is how the best programs of a search came about, stays below the limit, and
so does one of two ranked recipes; a crossover of those does not."""

FUSION_K = 5
"""The reciprocal-rank constant of a new crossover. With the usual 60, unequal weights let the
lead parent's first ~30 citations outrank the other's first (0.6/(60+r) > 0.4/61 for r < 30), so
the fused top-10 that Recall@10 scores was the lead parent's own and every crossover scored
exactly like it; at 5 the other parent's best citations enter the top few (0.6/(5+r) > 0.4/6
only for r < 4). Measured on the Mini-Gallery training split: murag fused with acgm at weight
0.55 scores 0.773 at k=60 (murag's own score) and 0.786 at k=5."""


ROUTE_MIN_RECALL = 0.8
"""A question type is routed only if a router recognises at least this share of its questions
held out from its fit: a route on a type the router confuses sends that type's questions to the
fused retrieval, or other types' questions to one parent alone."""


def crossover_source(source_a: str, source_b: str, *, name_a: str, name_b: str,
                     weight_a: float = 0.5, rrf_k: int = FUSION_K,
                     routes: "Mapping[str, float] | Routes | None" = None,
                     router: QuestionRouter | None = None) -> str:
    """The child program of parents `source_a` and `source_b`. `routes` gives A's weight for
    the questions `router` assigns to a type, in place of `weight_a` (a plain mapping: one
    table for every question; `Routes`: cross-fitted, a train conversation's questions routed
    by their fold's table); routes need a router."""
    if not 0.1 <= weight_a <= 0.9:
        raise ValueError(f"weight_a must be in 0.1..0.9, got {weight_a}")
    crossfit = routes if isinstance(routes, Routes) else Routes(dict(routes or {}))
    tables = [{str(c): round(float(w), 2) for c, w in sorted(t.items())} for t in crossfit.all()]
    if any(not 0.0 <= w <= 1.0 for t in tables for w in t.values()):
        raise ValueError(f"route weights must be in 0..1, got {tables}")
    routed = any(tables)
    if routed and router is None:
        raise ValueError("routes need a question router (fitted on the train split's questions): "
                         "a retrieve task carries no question type to route by")
    return render("program_crossover", name_a=name_a, name_b=name_b, weight_a=round(weight_a, 2),
                  rrf_k=int(rrf_k), routes=repr(tables[0]),
                  fold_routes=repr(tuple(tables[1:])) if routed else "()",
                  fold_of=repr(dict(sorted(crossfit.fold_of.items()))) if routed and tables[1:] else "{}",
                  source_a=repr(source_a), source_b=repr(source_b),
                  router=repr(router.params()) if routed and router is not None else "")


def routable(decided: "Mapping[str, float] | Routes", router: QuestionRouter | None,
             programs: Sequence[ScoredProgram]) -> "dict[str, float] | Routes":
    """The routes of `decided` (every table of cross-fitted `Routes`) whose type a router
    recognises in at least `ROUTE_MIN_RECALL` of the programs' scored questions of that type it
    was not fitted on (5-fold cross-validation: the training accuracy overstates it); none
    without a router."""
    if router is None:
        return Routes() if isinstance(decided, Routes) else {}
    labelled = {tid: t for p in programs for tid, t in p.tasks.items() if t.question}
    ordered = [labelled[t] for t in sorted(labelled)]
    recall = held_out_recall([t.question for t in ordered], [t.category for t in ordered])
    keep = lambda c: recall.get(c, 0.0) >= ROUTE_MIN_RECALL  # noqa: E731
    if isinstance(decided, Routes):
        return decided.filtered(keep)
    return {c: w for c, w in decided.items() if keep(c)}


def complement(parent: ScoredProgram, other: ScoredProgram) -> float:
    """How much `other` adds where `parent` is weak: its summed lead over the parent on the
    parent's weak categories (0 when it leads on none of them)."""
    return sum(max(0.0, other.per_category.get(c, 0.0) - parent.per_category.get(c, 0.0))
               for c in weak_types(parent.per_category, parent.mean))


def best_partner(parent: ScoredProgram, others: Sequence[ScoredProgram]) -> ScoredProgram | None:
    """The program that complements `parent` most (ties: the higher mean, then the older node),
    or None when none leads it on any weak category."""
    ranked = sorted(
        (o for o in others if o.node_id != parent.node_id and o.source != parent.source),
        key=lambda o: (-complement(parent, o), -o.mean, o.node_id),
    )
    if not ranked or complement(parent, ranked[0]) <= 0.0:
        return None
    if len(parent.source) + len(ranked[0].source) > MAX_SOURCE_CHARS:
        return None
    return ranked[0]


def sign_test(wins: int, losses: int) -> float:
    """One-sided sign test: the chance of at least `wins` of `wins + losses` paired differences
    going one way if either way were equally likely (1.0 with no difference at all)."""
    n = wins + losses
    return sum(math.comb(n, i) for i in range(wins, n + 1)) / 2 ** n


@dataclass(frozen=True)
class Routes:
    """A crossover's routes, cross-fitted by conversation like its router (memolib.crossfit):
    `fitted` decided on every scored train question, what a test or deployed conversation's
    question is routed by; `folds[i]` decided without the questions of the conversations that
    `fold_of` maps to fold i, what those conversations' questions are routed by. The search
    scores the child on the very questions the parents' scores were compared on: a route chosen
    on them would be chosen for them, and the child's validation score would be that of the
    better parent per type, picked after the fact. With the fold's routes, each validation
    question is routed by what the other conversations' questions said, and the child's
    validation score is the leave-one-conversation-out estimate of the routing rule."""

    fitted: Mapping[str, float] = field(default_factory=dict)
    folds: tuple[Mapping[str, float], ...] = ()
    fold_of: Mapping[str, int] = field(default_factory=dict)

    def all(self) -> list[Mapping[str, float]]:
        return [self.fitted, *self.folds]

    def held_out_gain(self, lead: ScoredProgram, partner: ScoredProgram, scope_of: Mapping[str, str]) -> dict[str, float]:
        """Per category, the leave-one-conversation-out estimate of what routing it gains over
        the lead alone, per task of the category both scored: each fold's tasks answered by the
        parent its fold's routes (decided without them) choose, the lead where they route
        nothing (a program that carries one fixed route table, a recipe, has no fused
        alternative). What a fixed route is taken by: only where this is positive."""
        gain: dict[str, float] = {}
        count: dict[str, int] = {}
        for task_id, mine in lead.tasks.items():
            theirs = partner.tasks.get(task_id)
            fold = self.fold_of.get(scope_of.get(task_id, ""))
            if theirs is None or fold is None:
                continue
            count[mine.category] = count.get(mine.category, 0) + 1
            if self.folds[fold].get(mine.category) == 0.0:
                gain[mine.category] = gain.get(mine.category, 0.0) + theirs.score - mine.score
        return {c: gain.get(c, 0.0) / n for c, n in sorted(count.items())}

    def filtered(self, keep: Callable[[str], bool]) -> "Routes":
        return Routes({c: w for c, w in self.fitted.items() if keep(c)},
                      tuple({c: w for c, w in f.items() if keep(c)} for f in self.folds), self.fold_of)


def cross_fitted_routes(lead: ScoredProgram, partner: ScoredProgram, significance: float,
                        scope_of: Mapping[str, str]) -> Routes:
    """`routes` decided on all the tasks both programs scored, and per fold of conversations
    (`memolib.conversation_folds` over `scope_of`: task id -> conversation) on the other folds'
    tasks only. A task whose conversation is unknown cannot be held out: with any such task no
    fold is fitted and nothing is routed (`Routes()`), as the router routes nothing then."""
    shared = [t for t in lead.tasks if t in partner.tasks]
    if not shared or any(not scope_of.get(t) for t in shared):
        return Routes()
    try:
        fold_of = memolib.conversation_folds(scope_of[t] for t in shared)
    except ValueError:
        return Routes()
    k = max(fold_of.values()) + 1
    folds = tuple(routes(lead, partner, significance, {t for t in shared if fold_of[scope_of[t]] != fold})
                  for fold in range(k))
    return Routes(routes(lead, partner, significance), folds, fold_of)


def routes(lead: ScoredProgram, partner: ScoredProgram, significance: float,
           among: "set[str] | None" = None) -> dict[str, float]:
    """The lead parent's weight in the categories the evidence decides: 0.0 (the partner
    alone) where, over the category's tasks both programs scored, the partner scores higher
    on significantly more tasks than lower (`sign_test` at most `significance`), 1.0 (the
    lead alone) in the opposite case. Undecided categories are absent: the child fuses both
    there. Tasks, not category means, are compared because a category holds a handful of
    questions: a lead of one or two of them is as likely noise as not, and a route chosen on
    noise scores well on the split it was chosen on only. `among`: only these task ids
    (`cross_fitted_routes`' folds)."""
    wins: dict[str, int] = {}
    losses: dict[str, int] = {}
    for task_id, mine in lead.tasks.items():
        if among is not None and task_id not in among:
            continue
        theirs = partner.tasks.get(task_id)
        if theirs is None or theirs.score == mine.score:
            continue
        tally = wins if theirs.score > mine.score else losses
        tally[mine.category] = tally.get(mine.category, 0) + 1
    decided: dict[str, float] = {}
    for category in sorted(set(wins) | set(losses)):
        w, l = wins.get(category, 0), losses.get(category, 0)
        if sign_test(w, l) <= significance:
            decided[category] = 0.0
        elif sign_test(l, w) <= significance:
            decided[category] = 1.0
    return decided
