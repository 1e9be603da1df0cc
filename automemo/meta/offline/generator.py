"""The compositional generator: which structural move a recipe parent gets, chosen from its
evidence, and the recipe a non-recipe parent is composed into.

The parent's per-type scores say where it fails (EvolveMem edits a structured retrieval
configuration from per-question failures; here the configuration is the recipe, and a failing
question type gets its own retrieve stages behind a learned router). Moves, by the evidence
they need:
- recombine: another evaluated recipe leads the parent on its weak types -> take some of its
  stages (stage-level crossover);
- route: a router can be fitted on the train split's questions and the parent is weak on some
  types -> each weak type gets the retrieve stages of the recipe that beats the parent on it
  task by task (a sign test), or else a variant of its own to try;
- rank: a ranker can be fitted on the train split's questions and their evidence and the parent
  has no ranking stage -> the fitted ranking stage (learning to rank, memolib.ranker); a compose
  move gives its starter the stage at once while the tree has no ranked recipe, when the fit's
  held-out check shows a gain;
- add / remove / swap / tune a stage: always possible.
A route's variant for a weak type follows the type's questions: when most of its train
questions show a cue one of the question-aware stages answers (a state, count or list
question, memolib's `is_*_question`), that stage is switched on for the type ("always").
Which move a child gets is drawn by the offline agent's operator table (meta/offline/agent.py), with
the other operators. Every draw comes from the `random.Random` the caller seeds with (run seed,
node id).
"""

from __future__ import annotations

import dataclasses
import logging
import random
import threading
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from automemo.meta.base import ScoredProgram
from automemo.meta.config import MetaConfig
from automemo.meta.context import weak_types
from automemo.meta.offline.crossover import Routes, best_partner, cross_fitted_routes, routes as decided_routes
from automemo.meta.offline.moves import (Move, add_stage, pick_starter, pipeline_diff, rank, recombine, remove_stage,
                                         route, swap_stage, tune_stage, untried_starters, variant_for)
from automemo.meta.offline.ranking import ExampleRouting
from automemo.meta.source.recipe import Recipe, describe, parse_recipe
from automemo.toolkit import memolib

log = logging.getLogger("automemo.meta")

STRUCTURAL_MOVES = ("route", "rank", "recombine", "tune_stage", "add_stage", "swap_stage", "remove_stage")
"""The moves a recipe parent allows; how often each is drawn is the offline agent's operator
table (`[meta.offline]` rates)."""

StructuralMove = Callable[[], "tuple[Recipe, Move] | None"]

ROUTED_TYPES = 2
"""Weak question types a route move changes at once (the weakest first)."""

CUE_SHARE = 0.5
"""A weak type whose train questions show a cue at least this often gets the stage that answers
it (state -> LATEST, count -> COVERAGE, list -> LISTING) in a route move."""

CUE_STAGES = (("state", memolib.is_state_question, "latest"), ("count", memolib.is_count_question, "coverage"),
              ("list", memolib.is_list_question, "listing"))


@dataclass(frozen=True)
class TrainQuestions:
    """The train split's retrieve questions with their labels: what a router is fitted on, on
    the host, at search time (the labels never reach `retrieve`)."""

    questions: tuple[str, ...]
    labels: tuple[str, ...]
    # Each question's conversation ("" unknown) and task id: the router is cross-fitted by
    # conversation (memolib.QuestionRouter.cross_fit), so no question is routed, when the search
    # scores it, by a router fitted on its own conversation; with any conversation unknown,
    # nothing is routed.
    scopes: tuple[str, ...] = ()
    task_ids: tuple[str, ...] = ()


RouterFit = Callable[[Sequence[str], Sequence[str], Sequence[str]], Mapping[str, Any]]
"""Fits a question router: (questions, labels, scopes) -> the params baked into the child,
cross-fitted by scope; raises ValueError (routing off for the run) when a scope is unknown."""


RankerFit = Callable[["ExampleRouting | None"], Mapping[str, Any]]
"""Fits the ranking stage on the train split, given the run's router and the labelled questions
it was fitted on (None: no routing), which each fold of the fit refits without its own
conversations: the params baked into the child (automemo.meta.offline.ranking)."""


class CompositionalGenerator:
    def __init__(self, config: MetaConfig, *, train: TrainQuestions | None = None,
                 fit_router: RouterFit | None = None, fit_ranker: RankerFit | None = None) -> None:
        self.config = config
        self.train = train if train and len(set(train.labels)) >= 2 else None
        self.fit_router = fit_router
        self.fit_ranker = fit_ranker
        self._router: Mapping[str, Any] | None = None
        self._ranker: Mapping[str, Any] | None = None
        self._ranker_off = False  # the fit failed: the stage is off for the run
        self._fitting = threading.Lock()  # parallel workers fit the router once between them
        self._ranking = threading.Lock()  # ... and the ranker

    def ranker(self) -> Mapping[str, Any] | None:
        """The fitted ranking stage's params, fitted once on first use (it replays the train
        split on the host); None, for the rest of the run, when nothing can be fitted."""
        router = self.router()
        routing = None if router is None or self.train is None else ExampleRouting(
            router, self.train.questions, self.train.labels, self.train.scopes)
        with self._ranking:
            if self.fit_ranker is None or self._ranker_off:
                return None
            if self._ranker is None:
                try:
                    self._ranker = dict(self.fit_ranker(routing))
                except (ValueError, ImportError) as exc:  # no evidence, one conversation, no scikit-learn
                    # Remembered as off, but the rank move stays in the table: which moves a step
                    # may draw must not depend on whether this process tried the fit before (a
                    # run resumed after a kill has not), or a resumed run draws other moves.
                    log.warning("the ranking stage is off for this run: %s", exc)
                    self._ranker_off = True
                    return None
            return self._ranker

    def router(self) -> Mapping[str, Any] | None:
        """The fitted router params (fitted once: the train questions do not change)."""
        with self._fitting:
            if self.train is None or self.fit_router is None:
                return None
            if self._router is None:
                try:
                    self._router = dict(self.fit_router(self.train.questions, self.train.labels,
                                                        self.train.scopes or ("",) * len(self.train.questions)))
                except ValueError:  # nothing a router can learn from: routing is off for the run
                    self.train = None
                    return None
            return self._router

    def task_scopes(self) -> dict[str, str]:
        """Each train question's conversation by task id ({} when the tasks name none): what a
        crossover's routes are cross-fitted by (meta/offline/crossover.py)."""
        if self.train is None or len(self.train.task_ids) != len(self.train.scopes):
            return {}
        return {t: s for t, s in zip(self.train.task_ids, self.train.scopes) if t and s}

    def can_compose(self, known: Sequence[Recipe]) -> bool:
        """Whether a starter recipe is left that the tree (`known`: its recipes) lacks."""
        return bool(untried_starters(list(known)))

    def recombine_with(self, recipe: Recipe, partner: ScoredProgram, rng: random.Random,
                       known: Sequence[Recipe] = ()) -> tuple[Recipe, Move] | None:
        """Stage-level crossover of `recipe` with a recipe partner; None when the partner is no
        recipe or no new child comes of it (the caller falls back to output fusion)."""
        other = parse_recipe(partner.source)
        if other is None or other == recipe:
            return None
        made = recombine(recipe, other, rng, name_b=f"#{partner.node_id}")
        return made if made is not None and made[0] not in known else None

    def compose(self, rng: random.Random, known: Sequence[Recipe]) -> tuple[Recipe, Move]:
        """A first recipe for a parent that is not one (starters the tree lacks first). While the
        tree holds no ranked recipe, a starter gets the fitted ranking stage when the fit's
        held-out check says it orders unseen conversations' questions better than the fused
        first stage does (`held_out_gain` > 0)."""
        starter = pick_starter(rng, list(known))
        ranker = self.ranker() if self.fit_ranker is not None and not any(r.ranks() for r in known) else None
        if ranker is not None and ranker.get("held_out_gain", 0.0) > 0 and starter.unit != "session":
            child, _ = rank(starter, ranker, self.router())
            return child, Move("compose", f"compose a recipe: {describe(child)} (the ranker's held-out "
                                          f"recall@10 gain over fusion: {ranker['held_out_gain']:+.3f})")
        return starter, Move("compose", f"compose a recipe: {describe(starter)}")

    def structural_moves(self, recipe: Recipe, parent: ScoredProgram | None, scored: Sequence[ScoredProgram],
                         rng: random.Random, weak: Sequence[str] | None = None) -> dict[str, StructuralMove]:
        """The structural moves `recipe` (the parent) allows, by name, given its evidence: the
        stage edits always, recombine when another evaluated recipe exists, route when a router
        can be fitted and the parent is weak (`weak`, derived from `parent` when not given) on a
        type it knows. Each move answers None when it has nothing to change."""
        others = [(p, r) for p in scored
                  if parent is None or p.node_id != parent.node_id
                  for r in [parse_recipe(p.source)] if r is not None and r != recipe]
        options: dict[str, StructuralMove] = {
            "tune_stage": lambda: tune_stage(recipe, rng, self.config.offline.step_fraction),
            "add_stage": lambda: add_stage(recipe, rng),
            "remove_stage": lambda: remove_stage(recipe, rng),
            "swap_stage": lambda: swap_stage(recipe, rng),
        }
        if others:
            options["recombine"] = lambda: self._recombine(recipe, parent, others, rng)
        if self.fit_ranker is not None and not recipe.pipeline.rank and recipe.unit != "session":
            options["rank"] = lambda: self._rank(recipe)
        if weak is None:
            weak = weak_types(parent.per_category, parent.mean) if parent is not None else []
        router = self.router()
        labels = set(self.train.labels) if self.train else set()
        if router is not None and parent is not None and any(t in labels for t in weak):
            options["route"] = lambda: self._route(recipe, parent, others, router,
                                                   [t for t in weak if t in labels], rng)
        return options

    def bold_tune(self, recipe: Recipe, rng: random.Random) -> tuple[Recipe, Move]:
        """What a recipe gets when every move gave nothing new: a bold tuning of its retrieve stages."""
        return tune_stage(recipe, rng, min(1.0, 2 * self.config.offline.step_fraction), stage="index")

    def _recombine(self, recipe: Recipe, parent: ScoredProgram | None,
                   others: Sequence[tuple[ScoredProgram, Recipe]], rng: random.Random):
        by_node = {p.node_id: (p, r) for p, r in others}
        partner = best_partner(parent, [p for p, _ in others]) if parent is not None else None
        if partner is None:  # none leads on a weak type: the best other recipe
            partner = max((p for p, _ in others), key=lambda p: (p.mean, -p.node_id))
        _, partner_recipe = by_node[partner.node_id]
        return recombine(recipe, partner_recipe, rng, name_b=f"#{partner.node_id}")

    def _rank(self, recipe: Recipe):
        ranker = self.ranker()
        return rank(recipe, ranker, self.router()) if ranker is not None else None

    def _cue_stage(self, qtype: str, pipeline) -> dict[str, Any]:
        """The question-aware stage most of `qtype`'s train questions ask for, switched on for
        every question routed to it; {} when none does (or it is on already)."""
        asked = [q for q, label in zip(self.train.questions, self.train.labels) if label == qtype] if self.train else []
        best: tuple[float, str] | None = None
        for _, test, stage in CUE_STAGES:
            share = sum(map(test, asked)) / len(asked) if asked else 0.0
            if share >= CUE_SHARE and getattr(pipeline, stage) != "always" and (best is None or share > best[0]):
                best = (share, stage)
        return {best[1]: "always"} if best else {}

    def _route(self, recipe: Recipe, parent: ScoredProgram, others: Sequence[tuple[ScoredProgram, Recipe]],
               router: Mapping[str, Any], weak: Sequence[str], rng: random.Random):
        changes: dict[str, dict[str, Any]] = {}
        why: dict[str, str] = {}
        rankers: list[Mapping[str, Any]] = []  # the donors' fitted rankers, for a route that switches RANK on
        # A donor takes a type when the sign test on every train question sends it there and the
        # leave-one-conversation-out estimate of that rule gains (`Routes.held_out_gain`): the
        # recipe carries one route table, so the validation score it gets is the rule's chosen on
        # those very questions; the held-out estimate is what it is taken by.
        # (`cross_fit_routes`; off: the sign test on every train question alone decides).
        scopes, significance = self.task_scopes(), self.config.offline.route_significance
        crossfit = self.config.offline.cross_fit_routes
        decided = {p.node_id: cross_fitted_routes(parent, p, significance, scopes) if crossfit
                   else Routes(decided_routes(parent, p, significance)) for p, _ in others}
        gains = {p.node_id: decided[p.node_id].held_out_gain(parent, p, scopes) for p, _ in others}
        for qtype in weak[:ROUTED_TYPES]:
            mine = recipe.pipeline_for(qtype)
            donors = [(p, r) for p, r in others if decided[p.node_id].fitted.get(qtype) == 0.0
                      and (not crossfit or gains[p.node_id].get(qtype, 0.0) > 0.0)]
            donors.sort(key=lambda pr: (-pr[0].per_category.get(qtype, 0.0), pr[0].node_id))
            if donors and pipeline_diff(mine, donors[0][1].pipeline_for(qtype)):
                donor, donor_recipe = donors[0]
                changes[qtype] = pipeline_diff(recipe.pipeline, donor_recipe.pipeline_for(qtype))
                why[qtype] = f"#{donor.node_id} beats the parent on it task by task" + (
                    f" (held out by conversation: {gains[donor.node_id][qtype]:+.3f} per question)" if crossfit else "")
                rankers += [donor_recipe.ranker] if donor_recipe.ranker else []
            elif cue := self._cue_stage(qtype, mine):
                changes[qtype] = {**pipeline_diff(recipe.pipeline, mine), **cue}
                why[qtype] = f"most of its train questions ask for what {next(iter(cue)).upper()} does"
            else:
                current = pipeline_diff(recipe.pipeline, mine)
                changes[qtype] = {**current, **variant_for(mine, rng)}
                why[qtype] = "a variant to try where the parent is weak"
        child, move = route(recipe, router, changes, why)
        if child.ranks() and not child.ranker:
            # a donor's route switched the ranking stage on: its fitted constants come with it (as
            # a recombination brings its partner's), else the run's; none: the route leaves RANK off
            ranker = rankers[0] if rankers else self.ranker()
            if ranker is not None:
                child = dataclasses.replace(child, ranker=dict(ranker))
            else:
                child, move = route(recipe, router, {t: {k: v for k, v in c.items() if k != "rank"}
                                                     for t, c in changes.items()}, why)
        return child, move
