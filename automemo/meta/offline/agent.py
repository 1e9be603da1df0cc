"""The offline meta agent: no LLM, yet a whole search runs and improves on the root.

Each child comes from one operator of one table, drawn with the configured rates
(`[meta.offline]`, `OPERATORS`) among the operators that apply to its parent:
- perturb: one or two of the parent's declared tunables within their ranges (only those that
  code reachable from the memo class reads, so that a child can differ in behaviour);
- transplant: a seed in place of the parent, the ones the tree has not tried first and, once
  all were tried, the one strongest on the question types the parent is weak on;
- crossover: the parent run side by side with the evaluated program that leads it most on its
  weak question types, their retrievals fused, except in the question types where the two
  programs' scores task by task say one of them is better (there that one answers alone); two
  recipes cross stage by stage instead (meta/offline/generator.py);
- compose: a non-recipe parent gets a recipe while starters the tree lacks remain;
- route, rank, recombine, tune / add / swap / remove a stage: the structural moves of a recipe parent
  (meta/offline/generator.py).
Every choice derives from (seed, node_id) so that a resumed search redoes a step exactly. The
diagnosis is a rule-based summary of the evidence in the same JSON shape as the LLM analysis.
"""

from __future__ import annotations

import functools
import random
from pathlib import Path
from typing import Any, Callable, Sequence

from automemo.meta.base import MetaAgent, MetaError, Proposal
from automemo.meta.config import MetaConfig
from automemo.meta.context import GenerationContext, ParsedSource, RepairContext, ScoredProgram
from automemo.meta.offline.crossover import (Routes, best_partner, complement, cross_fitted_routes, crossover_source,
                                             routable, routes)
from automemo.meta.rule_diagnosis import rule_based_diagnosis
from automemo.meta.offline.generator import (CompositionalGenerator, RankerFit, RouterFit, StructuralMove,
                                             TrainQuestions)
from automemo.meta.offline.moves import cheapen
from automemo.meta.source.recipe import Recipe, render_recipe
from automemo.meta.source.tunables import apply, can_move, perturb_value
from automemo.paths import SEEDS_DIR, list_seeds
from automemo.toolkit.memolib import QuestionRouter


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


class OfflineMetaAgent(MetaAgent):
    def __init__(self, config: MetaConfig = MetaConfig(), *, seeds_dir: str | Path = SEEDS_DIR,
                 root: str = "no_memory", train: TrainQuestions | None = None,
                 fit_router: RouterFit | None = None, fit_ranker: RankerFit | None = None) -> None:
        self.config = config
        self.root = root  # never transplanted: it is the root already (search.root)
        self.seeds = self._load_seeds(Path(seeds_dir))
        self._seed_skeletons = {name: ParsedSource.of(src).skeleton for name, src in self.seeds.items()}
        self.generator = CompositionalGenerator(config, train=train, fit_router=fit_router, fit_ranker=fit_ranker)

    def _load_seeds(self, folder: Path) -> dict[str, str]:
        if not folder.is_dir():
            raise MetaError(f"the seeds folder {folder} does not exist; the offline meta agent transplants from it")
        seeds = {p.stem: p.read_text() for p in list_seeds(folder) if p.stem != self.root}
        if not seeds:
            raise MetaError(
                f"no seed programs in {folder} besides {self.root!r}; the offline "
                f"meta agent needs at least one to transplant"
            )
        return seeds

    # --- MetaAgent --------------------------------------------------------------------------

    def propose(self, context: GenerationContext) -> Proposal:
        rng = random.Random(f"mutate:{context.seed}:{context.node_id}")
        # Its own stream, so that which operator is drawn does not depend on what the operators
        # drew before (and the reverse).
        draw = random.Random(f"operator:{context.seed}:{context.node_id}")
        options = {name: op for name, op in self.operators(context, rng).items()
                   if self.config.offline.operator_rate(name) > 0}
        # A parent over a cost bound gets a cheaper stage first (its score is what it is; the
        # selection cannot take it): the draw below only when nothing is left to make cheaper.
        made = self._cheaper(context, rng) if context.over_bounds else None
        while options and made is None:
            names = sorted(options)
            name = draw.choices(names, weights=[self.config.offline.operator_rate(n) for n in names])[0]
            made = options.pop(name)()
        if made is None:  # nothing applies, or every operator made nothing new
            made = self._last_resort(context, rng)
        source, mutation = made
        diagnosis = rule_based_diagnosis(context.parent, mutation, seed=context.seed, config=self.config,
                                         budget=context.budget)
        return Proposal(source, mutation["summary"], diagnosis=diagnosis, usage={}, author="offline")

    def operators(self, context: GenerationContext, rng: random.Random) -> dict[str, Operator]:
        """The operators that apply to the context's parent, by name. Each makes a child
        (source, mutation record), or None when it has nothing new to make."""
        parsed, scored = context.parsed, context.scored_parent
        recipe = parsed.recipe
        movable = [t for t in parsed.live_tunables if can_move(t)]
        ops: dict[str, Operator] = {}
        if movable:
            ops["perturb"] = lambda: self._perturb(parsed, rng, context)
        if self._untried(context) or not movable:
            why = (f"the parent has {len(parsed.tunables)} tunable constant(s), but the operator draw "
                   f"(transplant_rate {self.config.offline.transplant_rate}) picked a seed not yet in the tree"
                   if parsed.tunables else NO_TUNABLES)
            ops["transplant"] = lambda: self._transplant(rng, context, why, scored)
        partner = best_partner(scored, context.scored) if scored is not None else None
        if partner is not None:
            ops["crossover"] = lambda: self._crossover(context, partner, rng)
        if recipe is None and self.generator.can_compose(context.tree_recipes):
            ops["compose"] = lambda: self._compose(context, rng)
        if recipe is not None:
            moves = self.generator.structural_moves(recipe, scored, context.scored, rng, weak=context.weak)
            for name, move in moves.items():
                ops[name] = functools.partial(self._structural, move, recipe, context.tree_recipes)
        return ops

    def tune(self, context: GenerationContext) -> Proposal:
        """A perturbation of the parent's declared tunables, whoever wrote it (mixed mode)."""
        rng = random.Random(f"mutate:{context.seed}:{context.node_id}")
        source, mutation = self._perturb(context.parsed, rng, context)
        diagnosis = rule_based_diagnosis(context.parent, mutation, seed=context.seed, config=self.config,
                                         budget=context.budget)
        return Proposal(source, mutation["summary"], diagnosis=diagnosis, usage={}, author="offline")

    def repair(self, context: RepairContext) -> Proposal:
        """Re-perturb the passing parent this program came from (other values) on the first
        attempt; from the second on, or with nothing to perturb, revert to that parent (the
        search allows 3 attempts by default, so a revert always gets its exam). A program of
        unknown origin is re-perturbed itself, or replaced by a transplant."""
        attempt = context.attempt
        rng = random.Random(f"repair:{context.seed}:{context.node_id}:{attempt}")
        check = context.exam_report.get("failed_check") or "the exam"
        parent = context.original
        base = parent if parent is not None else ParsedSource.of(context.source)
        if parent is not None and (attempt >= 2 or not base.tunables):
            fixed, mutation = parent.source, {"kind": "revert",
                                              "summary": f"revert to the last passing variant after {check} failed"}
        elif base.tunables:
            fixed, mutation = self._perturb(base, rng, context.generation)
            mutation["summary"] = f"re-perturb after {check} failed: {mutation['summary']}"
        else:
            fixed, mutation = self._transplant(rng, context.generation, NO_TUNABLES)
        diagnosis = {"repair_of": check, "attempt": attempt, "mutation": mutation}
        return Proposal(fixed, mutation["summary"], diagnosis=diagnosis, usage={}, author="offline")

    def initialize(self, task_description: str, *, node_id: int, seed: int) -> Proposal:
        source, mutation = self._transplant(
            random.Random(f"initialize:{seed}:{node_id}"), None, "a first program is drawn from the seeds"
        )
        return Proposal(source, mutation["summary"], diagnosis={"mutation": mutation}, usage={}, author="offline")

    # --- the moves ----------------------------------------------------------------------------

    def _last_resort(self, context: GenerationContext, rng: random.Random) -> Made:
        """A recipe gets a bold tuning of its retrieve stages; any other parent a seed."""
        recipe = context.parsed.recipe
        if recipe is None:
            return self._transplant(rng, context, NO_OPERATOR, context.scored_parent)
        child, move = self.generator.bold_tune(recipe, rng)
        return render_recipe(child), move.record()

    @staticmethod
    def _structural(move: StructuralMove, recipe: Recipe, known: Sequence[Recipe]) -> Made | None:
        made = move()
        if made is None or made[0] == recipe or made[0] in known:
            return None  # nothing new: the draw goes on among the other operators
        return render_recipe(made[0]), made[1].record()

    def _cheaper(self, context: GenerationContext, rng: random.Random) -> Made | None:
        """The parent's recipe with its most expensive stage made cheaper (moves.cheapen); a
        parent that is no recipe is composed into a starter first, made cheaper too. None when
        nothing new comes of it."""
        recipe, over = context.parsed.recipe, context.over_bounds
        composed = None
        if recipe is None:
            if not self.generator.can_compose(context.tree_recipes):
                return None
            recipe, composed = self.generator.compose(rng, context.tree_recipes)
        made, steps = cheapen(recipe, over), []
        while made is not None and made[0] in context.tree_recipes:  # cheaper still: the tree has that one
            steps.append(made[1])
            made = cheapen(made[0], over)
        if made is None:
            return (render_recipe(recipe), composed.record()) if composed is not None else None
        child, move = made
        record = move.record()
        if steps:  # every stage the child changed, not only the last
            record["summary"] = "; ".join(m.summary.split(", the parent")[0] for m in steps) + f"; {move.summary}"
            record["changes"] = {k: v for m in [*steps, move] for k, v in m.changes.items()}
        if composed is not None:
            record["summary"] = f"{composed.summary}; {record['summary']}"
        return render_recipe(child), record

    def _compose(self, context: GenerationContext, rng: random.Random) -> tuple[str, dict[str, Any]]:
        recipe, move = self.generator.compose(rng, context.tree_recipes)
        return render_recipe(recipe), move.record()

    def _perturb(self, program: ParsedSource, rng: random.Random,
                 context: GenerationContext | None) -> tuple[str, dict[str, Any]]:
        # A constant nothing reachable reads cannot change the score: turning it wastes a step.
        movable = [t for t in program.live_tunables if can_move(t)]
        if not movable:
            return self._transplant(
                rng, context, "none of the parent's tunable constants can move, so a seed is transplanted"
            )
        k = rng.randint(1, min(self.config.offline.max_perturbed, len(movable)))
        chosen = sorted(rng.sample(movable, k), key=lambda t: t.line)
        changes = {t.name: perturb_value(t, rng, self.config.offline.step_fraction) for t in chosen}
        child = apply(program.source, changes, tunables=program.tunables, tree=program.tree)
        old = {t.name: t.value for t in chosen}
        summary = "perturb " + ", ".join(f"{n} {_show(old[n])}→{_show(v)}" for n, v in changes.items())
        return child, {
            "kind": "perturb",
            "summary": summary,
            "changes": {n: {"from": old[n], "to": v} for n, v in changes.items()},
        }

    def _untried(self, context: GenerationContext | None) -> list[str]:
        tried = context.tried_skeletons if context is not None else frozenset()
        return [n for n in sorted(self.seeds) if self._seed_skeletons[n] not in tried]

    def _crossover(self, context: GenerationContext, partner: ScoredProgram, rng: random.Random) -> Made:
        recipe = context.parsed.recipe
        if recipe is not None:
            # Two recipes cross stage by stage: the child is a recipe again, which structural
            # moves continue from, where an output fusion would only have a weight to turn.
            recombined = self.generator.recombine_with(recipe, partner, rng, context.tree_recipes)
            if recombined is not None:
                return render_recipe(recombined[0]), recombined[1].record()
        parent = context.scored_parent
        weak = [c for c in context.weak if partner.per_category.get(c, 0.0) > parent.per_category.get(c, 0.0)]
        # The better program leads the fusion, by a little: a weight much past 0.6 lets the lead's
        # citations fill the scored top-k again (see FUSION_K). The weight is drawn so that
        # crossovers of the same pair still differ.
        lead = 0.5 + (0.05 if parent.mean >= partner.mean else -0.05) + rng.uniform(-0.05, 0.05)
        # Categories the evidence decides go to the parent that wins them; the rest are fused.
        # The child predicts a question's type with the run's one router: fitted on every train
        # question, cross-fitted by conversation; none where the conversations are unknown. The
        # routes are cross-fitted the same way (crossover.Routes): a train conversation's question
        # is routed by what the other conversations' questions decided.
        params = self.generator.router()
        router = QuestionRouter.from_params(params) if params else None
        significance = self.config.offline.route_significance
        decided = (cross_fitted_routes(parent, partner, significance, self.generator.task_scopes())
                   if self.config.offline.cross_fit_routes else Routes(routes(parent, partner, significance)))
        routed = routable(decided, router, (parent, partner))
        source = crossover_source(parent.source, partner.source, name_a=f"node {parent.node_id}",
                                  name_b=f"node {partner.node_id}", weight_a=min(0.9, max(0.1, lead)),
                                  routes=routed, router=router)
        summary = f"crossover with #{partner.node_id}, which leads on {', '.join(weak[:3])}"
        to_partner = [c for c, w in routed.fitted.items() if w == 0.0]
        to_parent = [c for c, w in routed.fitted.items() if w == 1.0]
        if to_partner:
            summary += f"; {', '.join(to_partner)} answered by #{partner.node_id} alone"
        if to_parent:
            summary += f"; {', '.join(to_parent)} by #{parent.node_id} alone"
        if routed.folds and any(f != routed.fitted for f in routed.folds):
            summary += f" (routes held out by conversation: {sum(f == routed.fitted for f in routed.folds)} " \
                       f"of {len(routed.folds)} folds agree)"
        return source, {
            "kind": "crossover",
            "partner": partner.node_id,
            "summary": summary,
            "complement": round(complement(parent, partner), 4),
            "routes": dict(routed.fitted),
            "fold_routes": [dict(f) for f in routed.folds],
        }

    def _transplant(self, rng: random.Random, context: GenerationContext | None, why: str,
                    parent: ScoredProgram | None = None) -> tuple[str, dict[str, Any]]:
        """A seed's source in place of the parent; `why` (recorded in the mutation) says what
        made this a transplant rather than a perturbation, for the diagnosis."""
        names = sorted(self.seeds)
        untried = self._untried(context)
        guided = (None if untried or parent is None or context is None
                  else self._strongest_seed(parent, context))
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


    def _strongest_seed(self, parent: ScoredProgram, context: GenerationContext) -> str | None:
        """The seed whose evaluated transplant complements `parent` most, if any leads it."""
        by_skeleton = {sk: name for name, sk in self._seed_skeletons.items()}
        skeletons = {p.node_id: context.read(p.source).skeleton for p in context.scored}
        evaluated = [p for p in context.scored if skeletons[p.node_id] in by_skeleton]
        partner = best_partner(parent, evaluated)
        return by_skeleton[skeletons[partner.node_id]] if partner is not None else None


NO_TUNABLES = "the parent declares no tunable constants, so a seed is transplanted"
NO_OPERATOR = "no operator could make a new child of the parent, so a seed is transplanted"

Made = tuple[str, dict[str, Any]]
"""A child's source and the record of the operator that made it."""
Operator = Callable[[], "Made | None"]
