"""The offline meta agent: no LLM, yet a whole search runs and improves on the root.

`propose` perturbs one or two of the parent's declared tunables within their ranges (only those
that code reachable from the memo class reads, so that a child can differ in behaviour); a parent
with nothing to tune (the no-memory root, or an LLM-written program without markers) gets a seed
transplanted instead, preferring seeds the tree has not tried yet and, once all were tried, the
one strongest on the question types the parent is weak on. Now and then (`crossover_rate`) the
child is a crossover instead: the parent run side by side with the evaluated program that leads
it most on its weak question types, their retrievals fused, except in the question types where
the two programs' scores task by task say one of them is better (there that one answers
alone); two recipes cross stage by stage instead (meta/generator.py). A non-recipe parent gets a
recipe composed now and then (`compose_rate`) while starters the tree lacks remain. Every choice derives from (seed, node_id) so that a resumed search redoes a step
exactly. The diagnosis is a rule-based summary of the evidence in the same JSON shape as the
LLM analysis.
"""

from __future__ import annotations

import hashlib
import random
import threading
from pathlib import Path
from typing import Any, Mapping, Sequence

from automemo.contract import Budget
from automemo.meta.base import (Improvement, MetaAgent, MetaError, ParentView, Proposal, ScoredProgram,
                                scored_tasks)
from automemo.meta.config import MetaConfig
from automemo.meta.crossover import (best_partner, complement, crossover_source, fit_router, routable, routes,
                                     weak_categories)
from automemo.meta.diagnosis import rule_based_diagnosis
from automemo.meta.generator import CompositionalGenerator, RouterFit, TrainQuestions
from automemo.meta.liveness import live_tunables
from automemo.meta.recipe import parse_recipe, render_recipe
from automemo.meta.tunables import (Tunable, TunableError, apply, can_move, parse_tunables, perturb_value,
                                    skeleton)
from automemo.paths import SEEDS_DIR


def _sha(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


class ParameterMutator(MetaAgent):
    def __init__(self, config: MetaConfig = MetaConfig(), *, seeds_dir: str | Path = SEEDS_DIR,
                 root: str = "no_memory", train: TrainQuestions | None = None,
                 fit_router: RouterFit | None = None, budget: Budget = Budget()) -> None:
        self.config = config
        self.budget = budget  # the run's retrieval budget, which the diagnosis measures payloads by
        self.root = root  # never transplanted: it is the root already (search.root)
        self.seeds = self._load_seeds(Path(seeds_dir))
        self.generator = CompositionalGenerator(config, train=train, fit_router=fit_router)
        # Each train question's conversation, by task id: the crossover's router is cross-fitted.
        self._scope_of_task = train.scope_of_task() if train is not None else {}
        # What the search observed before a propose is kept per thread: a parallel search
        # observes and proposes in each worker thread, and one worker's tree must not leak into
        # another's choice. The origins of proposed programs are shared (repair reads them).
        self._observed = threading.local()
        self._origins_lock = threading.Lock()
        self._origin: dict[str, str] = {}       # sha of a proposed program -> its passing parent

    @property
    def _tried(self) -> set[str]:               # skeletons of programs the tree holds
        return getattr(self._observed, "tried", set())

    @property
    def _sources(self) -> list[str]:            # the sources of programs the tree holds
        return getattr(self._observed, "sources", [])

    @property
    def _scored(self) -> list[ScoredProgram]:   # the tree's evaluated programs
        return getattr(self._observed, "scored", [])

    def _load_seeds(self, folder: Path) -> dict[str, str]:
        if not folder.is_dir():
            raise MetaError(f"the seeds folder {folder} does not exist; the offline mutator transplants from it")
        seeds = {
            p.stem: p.read_text()
            for p in sorted(folder.glob("*.py"))
            if not p.name.startswith("_") and p.stem != self.root
        }
        if not seeds:
            raise MetaError(
                f"no seed programs in {folder} besides {self.root!r}; the offline "
                f"mutator needs at least one to transplant"
            )
        return seeds

    # --- MetaAgent --------------------------------------------------------------------------

    def observe_tree(self, sources: Sequence[str]) -> None:
        self._observed.sources = list(sources)
        self._observed.tried = {_skeleton(s) for s in sources}

    def observe_scores(self, programs: Sequence[ScoredProgram]) -> None:
        self._observed.scored = list(programs)

    def _remember(self, child: str, parent: str) -> None:
        with self._origins_lock:
            self._origin[_sha(child)] = parent

    def _origin_of(self, source: str) -> str | None:
        with self._origins_lock:
            return self._origin.get(_sha(source))

    def propose(
        self, parent: ParentView, improvements: Sequence[Improvement], *, node_id: int, seed: int
    ) -> Proposal:
        rng = random.Random(f"mutate:{seed}:{node_id}")
        tunables = declared_tunables(parent.source)
        # Its own stream, so that the perturbation drawn for a node does not depend on this coin.
        explore = random.Random(f"transplant:{seed}:{node_id}").random() < self.config.transplant_rate
        cross = random.Random(f"crossover:{seed}:{node_id}").random() < self.config.crossover_rate
        scored = _scored_parent(parent)
        recipe = parse_recipe(parent.source)
        structural = random.Random(f"structure:{seed}:{node_id}").random()
        partner = best_partner(scored, self._scored) if cross and scored is not None else None
        transplants = not tunables or (explore and bool(self._untried()))
        evolves = recipe is not None and structural < self.config.structure_rate
        recombined = (self.generator.recombine_with(recipe, partner, rng, self._sources)
                      if not evolves and recipe is not None and partner is not None else None)
        if evolves:
            source, mutation = self._evolve(recipe, scored, rng)
        elif recombined is not None:
            # Two recipes cross stage by stage: the child is a recipe again, which structural
            # moves continue from, where an output fusion would only have a weight to turn.
            source, mutation = render_recipe(recombined[0]), recombined[1].record()
        elif partner is not None:
            source, mutation = self._crossover(scored, partner, rng)
        elif (recipe is None and structural < self.config.compose_rate
              and (transplants or self.generator.can_compose(self._sources))):
            # A non-recipe parent (the root, a seed) gets a recipe composed now and then, while
            # starters the tree lacks remain: where the hand designs end, the components begin.
            source, mutation = self._compose(rng)
        elif not transplants:
            source, mutation = self._perturb(parent.source, tunables, rng)
        elif tunables:
            source, mutation = self._transplant(
                rng,
                f"the parent has {len(tunables)} tunable constant(s), but the exploration draw "
                f"(transplant_rate {self.config.transplant_rate}) picked a seed not yet in the tree",
                scored,
            )
        else:
            source, mutation = self._transplant(rng, NO_TUNABLES, scored)
        self._remember(source, parent.source)
        diagnosis = rule_based_diagnosis(parent, mutation, seed=seed, config=self.config,
                                         budget=self.budget)
        return Proposal(source, mutation["summary"], diagnosis=diagnosis, usage={})

    def tune(self, parent: ParentView, *, node_id: int, seed: int) -> Proposal:
        """A perturbation of `parent`'s declared tunables, whoever wrote it (mixed mode)."""
        rng = random.Random(f"mutate:{seed}:{node_id}")
        source, mutation = self._perturb(parent.source, declared_tunables(parent.source), rng)
        self._remember(source, parent.source)
        diagnosis = rule_based_diagnosis(parent, mutation, seed=seed, config=self.config,
                                         budget=self.budget)
        return Proposal(source, mutation["summary"], diagnosis=diagnosis, usage={})

    def proposed(self, source: str) -> bool:
        """Whether `source` is a child this mutator proposed (its repair is this mutator's)."""
        return self._origin_of(source) is not None

    def repair(
        self, source: str, exam_report: Mapping[str, Any], attempt: int, *, node_id: int, seed: int
    ) -> Proposal:
        """Re-perturb the passing parent this program came from (other values) on the first
        attempt; from the second on, or with nothing to perturb, revert to that parent (the
        search allows 3 attempts by default, so a revert always gets its exam). A program of unknown origin
        is re-perturbed itself, or replaced by a transplant."""
        rng = random.Random(f"repair:{seed}:{node_id}:{attempt}")
        check = exam_report.get("failed_check") or "the exam"
        parent = self._origin_of(source)
        base = parent if parent is not None else source
        tunables = declared_tunables(base)
        if parent is not None and (attempt >= 2 or not tunables):
            fixed, mutation = parent, {"kind": "revert", "summary": f"revert to the last passing variant after {check} failed"}
        elif tunables:
            fixed, mutation = self._perturb(base, tunables, rng)
            mutation["summary"] = f"re-perturb after {check} failed: {mutation['summary']}"
        else:
            fixed, mutation = self._transplant(rng, NO_TUNABLES)
        if parent is not None:
            self._remember(fixed, parent)
        diagnosis = {"repair_of": check, "attempt": attempt, "mutation": mutation}
        return Proposal(fixed, mutation["summary"], diagnosis=diagnosis, usage={})

    def initialize(self, task_description: str, *, node_id: int, seed: int) -> Proposal:
        source, mutation = self._transplant(
            random.Random(f"initialize:{seed}:{node_id}"), "a first program is drawn from the seeds"
        )
        return Proposal(source, mutation["summary"], diagnosis={"mutation": mutation}, usage={})

    # --- the moves ----------------------------------------------------------------------------

    def _evolve(self, recipe, scored: ScoredProgram | None, rng: random.Random) -> tuple[str, dict[str, Any]]:
        child, move = self.generator.evolve(recipe, scored, self._scored, rng, self._sources)
        return render_recipe(child), move.record()

    def _compose(self, rng: random.Random) -> tuple[str, dict[str, Any]]:
        recipe, move = self.generator.compose(rng, self._sources)
        return render_recipe(recipe), move.record()

    def _perturb(
        self, source: str, tunables: list[Tunable], rng: random.Random
    ) -> tuple[str, dict[str, Any]]:
        # A constant nothing reachable reads cannot change the score: turning it wastes a step.
        movable = [t for t in live_tunables(source, tunables) if can_move(t)]
        if not movable:
            return self._transplant(
                rng, "none of the parent's tunable constants can move, so a seed is transplanted"
            )
        k = rng.randint(1, min(self.config.max_perturbed, len(movable)))
        chosen = sorted(rng.sample(movable, k), key=lambda t: t.line)
        changes = {t.name: perturb_value(t, rng, self.config.step_fraction) for t in chosen}
        child = apply(source, changes)
        old = {t.name: t.value for t in chosen}
        summary = "perturb " + ", ".join(f"{n} {_show(old[n])}→{_show(v)}" for n, v in changes.items())
        return child, {
            "kind": "perturb",
            "summary": summary,
            "changes": {n: {"from": old[n], "to": v} for n, v in changes.items()},
        }

    def _untried(self) -> list[str]:
        return [n for n in sorted(self.seeds) if _skeleton(self.seeds[n]) not in self._tried]

    def _crossover(self, parent: ScoredProgram, partner: ScoredProgram,
                   rng: random.Random) -> tuple[str, dict[str, Any]]:
        weak = [c for c in weak_categories(parent.per_category, parent.mean)
                if partner.per_category.get(c, 0.0) > parent.per_category.get(c, 0.0)]
        # The better program leads the fusion, by a little: a weight much past 0.6 lets the lead's
        # citations fill the scored top-k again (see FUSION_K). The weight is drawn so that
        # crossovers of the same pair still differ.
        lead = 0.5 + (0.05 if parent.mean >= partner.mean else -0.05) + rng.uniform(-0.05, 0.05)
        # Categories the evidence decides go to the parent that wins them; the rest are fused.
        # The child predicts a question's type with a router fitted on the scored train questions.
        router = fit_router(parent, partner, scopes=self._scope_of_task)
        routed = routable(routes(parent, partner, self.config.route_significance), router, (parent, partner))
        source = crossover_source(parent.source, partner.source, name_a=f"node {parent.node_id}",
                                  name_b=f"node {partner.node_id}", weight_a=min(0.9, max(0.1, lead)),
                                  routes=routed, router=router)
        summary = f"crossover with #{partner.node_id}, which leads on {', '.join(weak[:3])}"
        to_partner = [c for c, w in routed.items() if w == 0.0]
        to_parent = [c for c, w in routed.items() if w == 1.0]
        if to_partner:
            summary += f"; {', '.join(to_partner)} answered by #{partner.node_id} alone"
        if to_parent:
            summary += f"; {', '.join(to_parent)} by #{parent.node_id} alone"
        return source, {
            "kind": "crossover",
            "partner": partner.node_id,
            "summary": summary,
            "complement": round(complement(parent, partner), 4),
            "routes": routed,
        }

    def _transplant(self, rng: random.Random, why: str,
                    parent: ScoredProgram | None = None) -> tuple[str, dict[str, Any]]:
        """A seed's source in place of the parent; `why` (recorded in the mutation) says what
        made this a transplant rather than a perturbation, for the diagnosis."""
        names = sorted(self.seeds)
        untried = self._untried()
        guided = None if untried or parent is None else self._strongest_seed(parent)
        if guided is not None:
            name, note = guided, "the tried seed strongest where the parent is weak"
        else:
            name = rng.choice(untried or names)
            note = "not yet tried" if untried else "every seed was tried already"
        return self.seeds[name], {
            "kind": "transplant",
            "seed": name,
            "why": why,
            "summary": f"transplant seed {name} ({note})",
        }


    def _strongest_seed(self, parent: ScoredProgram) -> str | None:
        """The seed whose evaluated transplant complements `parent` most, if any leads it."""
        by_skeleton = {_skeleton(src): name for name, src in self.seeds.items()}
        evaluated = [p for p in self._scored if _skeleton(p.source) in by_skeleton]
        partner = best_partner(parent, evaluated)
        return by_skeleton[_skeleton(partner.source)] if partner is not None else None


NO_TUNABLES = "the parent declares no tunable constants, so a seed is transplanted"


def _scored_parent(parent: ParentView) -> ScoredProgram | None:
    if parent.evaluation is None:
        return None
    return ScoredProgram(node_id=parent.node_id, source=parent.source, mean=parent.score,
                         n=parent.n_evals, per_category=dict(parent.evaluation.per_category),
                         tasks=scored_tasks(parent.evaluation))


def declared_tunables(source: str) -> list[Tunable]:
    # A program whose markers are malformed has nothing the mutator may safely turn.
    try:
        return parse_tunables(source)
    except TunableError:
        return []


def _skeleton(source: str) -> str:
    try:
        return skeleton(source)
    except TunableError:
        return source
