"""Structural moves on recipes: add, remove or swap a stage, tune one stage's parameters,
recombine the stages of two recipes, and route question types to their own retrieve stages.

Each move is a pure function of its inputs and a seeded `random.Random`, and returns the new
recipe with a `Move`: what changed, in the words the tree shows and the diagnosis records.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from automemo.meta.source.recipe import (KNOB_BY_FIELD, KNOBS, PIPELINE_FIELDS, STAGES, Knob, Pipeline, Recipe,
                                  value_of, with_values)
from automemo.meta.source.tunables import Tunable, perturb_value


@dataclass(frozen=True)
class Move:
    kind: str                       # add_stage | remove_stage | swap_stage | tune_stage | recombine | route | rank | compose
    summary: str
    changes: Mapping[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        return {"kind": self.kind, "summary": self.summary, "changes": dict(self.changes)}


# A stage is "on" when these parameters hold other values than their off state.
_ON = {
    "expand": lambda p: p.window > 0,
    "diversify": lambda p: p.mmr,
    "recency": lambda p: p.recency > 0,
    "images": lambda p: p.images,
    "late": lambda p: p.late,
    "entities": lambda p: p.entities,
    "hierarchy": lambda p: p.sessions > 0,
    "feedback": lambda p: p.feedback,
    "temporal": lambda p: p.temporal,
    "speakers": lambda p: p.speakers,
    "rank": lambda p: p.rank,
    "latest": lambda p: p.latest != "off",
    "coverage": lambda p: p.coverage != "off",
    "listing": lambda p: p.listing != "off",
    "passages": lambda p: p.passages != "off",
    "session_fusion": lambda p: p.session_weight > 0,
    "session_diversity": lambda p: p.session_spread > 0,
}
_TURN_ON = {"expand": {"window": 1}, "diversify": {"mmr": True}, "recency": {"recency": 0.3},
            "images": {"images": True}, "late": {"late": True}, "entities": {"entities": True},
            "hierarchy": {"sessions": 2}, "feedback": {"feedback": True}, "temporal": {"temporal": True},
            "speakers": {"speakers": True}, "latest": {"latest": "text"}, "coverage": {"coverage": "text"},
            "listing": {"listing": "text"}, "passages": {"passages": "window"},
            "session_fusion": {"session_weight": 0.5}, "session_diversity": {"session_spread": 2}}
# The session-level values above were chosen on the dev data's validation split (docs/memolib.md,
# "Session-level components"): window passages reached the most sessions in the first five
# citations without losing turn recall; a session weight of 0.5 kept most of 0.7's turn-recall gain
# for half its session-hit loss; a spread of 2 is the least that changes an order (1 is the order).
# The fitted ranker is switched on by the generator's `rank` move, which brings its weights
# (fitted on the train split); a plain add would leave RANK without RANKER.
_TURN_OFF = {"expand": {"window": 0}, "diversify": {"mmr": False}, "recency": {"recency": 0.0},
             "images": {"images": False}, "late": {"late": False}, "entities": {"entities": False},
             "hierarchy": {"sessions": 0}, "feedback": {"feedback": False}, "temporal": {"temporal": False},
             "speakers": {"speakers": False}, "rank": {"rank": False}, "latest": {"latest": "off"},
             "coverage": {"coverage": "off"}, "listing": {"listing": "off"}, "passages": {"passages": "off"},
             "session_fusion": {"session_weight": 0.0}, "session_diversity": {"session_spread": 0}}


def pipeline_additions(p: Pipeline) -> list[tuple[str, dict[str, Any]]]:
    """Retrieve stages `p` lacks, each with the parameter changes that add it."""
    out = [(s, dict(v)) for s, v in _TURN_ON.items() if not _ON[s](p)]
    if p.indexes != "both":
        out.append(("index", {"indexes": "both"}))
    return out


def pipeline_removals(p: Pipeline) -> list[tuple[str, dict[str, Any]]]:
    out = [(s, dict(v)) for s, v in _TURN_OFF.items() if _ON[s](p)]
    if p.indexes == "both":
        out += [("index", {"indexes": "bm25"}), ("index", {"indexes": "dense"})]
    return out


# memolib's further rankings (late interaction, entities, sessions-then-turns, RM3, temporal,
# speakers, passages): a swap trades one the recipe has for one it lacks.
RANKING_STAGES = ("late", "entities", "hierarchy", "feedback", "temporal", "speakers", "passages")
# The reorderings by session: a swap trades one for the other.
SESSION_ORDERS = ("session_fusion", "session_diversity")


def pipeline_swaps(p: Pipeline) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    if p.indexes == "both":
        out.append(("fusion", {"fusion": "weighted" if p.fusion == "rrf" else "rrf"}))
    else:
        out.append(("index", {"indexes": "dense" if p.indexes == "bm25" else "bm25"}))
    for family in (RANKING_STAGES, SESSION_ORDERS):
        on = [s for s in family if _ON[s](p)]
        off = [s for s in family if not _ON[s](p)]
        out += [(f"{a}→{b}", {**_TURN_OFF[a], **_TURN_ON[b]}) for a in on for b in off]
    if p.passages != "off":  # another kind of passage: a session, a window, a summary
        out += [(f"passages {kind}", {"passages": kind}) for kind in KNOB_BY_FIELD["passages"].options()
                if kind not in ("off", p.passages)]
    return out


def _changed(recipe: Recipe, changes: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: {"from": value_of(recipe, KNOB_BY_FIELD[k]), "to": v} for k, v in changes.items()}


def _say(changes: Mapping[str, Any]) -> str:
    return ", ".join(f"{KNOB_BY_FIELD[k].constant} {v}" for k, v in changes.items())


def _stage_move(kind: str, recipe: Recipe, options: Sequence[tuple[str, dict[str, Any]]],
                rng: random.Random) -> tuple[Recipe, Move] | None:
    """One of `options` (stage, parameter changes) applied to `recipe`, or None when there is none."""
    if not options:
        return None
    stage, changes = rng.choice(list(options))
    verb = kind.split("_")[0]
    return with_values(recipe, changes), Move(kind, f"{verb} stage {stage} ({_say(changes)})",
                                              _changed(recipe, changes))


def add_stage(recipe: Recipe, rng: random.Random) -> tuple[Recipe, Move] | None:
    return _stage_move("add_stage", recipe, pipeline_additions(recipe.pipeline), rng)


def remove_stage(recipe: Recipe, rng: random.Random) -> tuple[Recipe, Move] | None:
    return _stage_move("remove_stage", recipe, pipeline_removals(recipe.pipeline), rng)


def swap_stage(recipe: Recipe, rng: random.Random) -> tuple[Recipe, Move]:
    """Swap one stage for another of its kind: the unit granularity, the fusion, an index, or
    the memory scope."""
    options = pipeline_swaps(recipe.pipeline)
    options.append(("encode", {"unit": rng.choice([u for u in KNOB_BY_FIELD["unit"].options() if u != recipe.unit])}))
    options.append(("store", {"scope": "all" if recipe.scope == "user" else "user"}))
    return _stage_move("swap_stage", recipe, options, rng)


def tune_stage(recipe: Recipe, rng: random.Random, step_fraction: float,
               stage: str | None = None) -> tuple[Recipe, Move]:
    """Perturb the numeric parameters of one stage (drawn among those that have any)."""
    numeric = [k for k in KNOBS if k.spec.split()[0] in ("int", "float")]
    stages = sorted({k.stage for k in numeric})
    stage = stage if stage in stages else rng.choice(stages)
    changes = {k.field: perturb_value(_as_tunable(k, value_of(recipe, k)), rng, step_fraction)
               for k in numeric if k.stage == stage}
    return with_values(recipe, changes), Move("tune_stage", f"tune stage {stage} ({_say(changes)})",
                                              _changed(recipe, changes))


def _as_tunable(knob: Knob, value: Any) -> Tunable:
    kind, _, rest = knob.spec.partition(" ")
    if kind in ("int", "float"):
        low, high = rest.split("..")
        cast = int if kind == "int" else float
        return Tunable(knob.constant, kind, value, 0, low=cast(low), high=cast(high))
    if kind == "choice":
        return Tunable(knob.constant, kind, value, 0, choices=knob.options())
    return Tunable(knob.constant, kind, value, 0)


def recombine(a: Recipe, b: Recipe, rng: random.Random, *, name_b: str = "B") -> tuple[Recipe, Move] | None:
    """A child with some stages of `a` and the others of `b` (a proper, non-empty subset of the
    stages where they differ is taken from `b`): stage-level crossover. None when the two
    recipes differ in fewer than two stages (the child would be one of them)."""
    sa, sb = a.stages(), b.stages()
    differing = [s for s in (*STAGES, "route") if sa[s] != sb[s]]
    if len(differing) < 2:
        return None
    take = sorted(rng.sample(differing, rng.randint(1, len(differing) - 1)), key=differing.index)
    values = {f: v for s in take if s != "route" for f, v in sb[s].items()}
    child = with_values(a, values)
    if "route" in take:
        child = dataclasses.replace(child, routes=dict(b.routes), router=b.router)
    if child.ranks() and not child.ranker:  # the partner's ranking stage comes with its weights
        child = dataclasses.replace(child, ranker=b.ranker)
    kept = [s for s in differing if s not in take]
    summary = f"recombine: stages {', '.join(take)} from {name_b}, {', '.join(kept)} kept"
    return child, Move("recombine", summary, {"from_partner": take, "kept": kept,
                                              **_changed(a, values)})


def route(recipe: Recipe, router: Mapping[str, Any], routes: Mapping[str, Mapping[str, Any]],
          why: Mapping[str, str]) -> tuple[Recipe, Move]:
    """`recipe` with a fitted router and per-type retrieve variants (`routes`: question type ->
    pipeline parameter changes); `why` says, per type, where its variant came from."""
    merged = {t: dict(c) for t, c in recipe.routes.items()}
    for qtype, changes in routes.items():
        kept = {k: v for k, v in {**merged.get(qtype, {}), **changes}.items()
                if k in PIPELINE_FIELDS and getattr(recipe.pipeline, k) != v}
        if kept:
            merged[qtype] = kept
        else:
            merged.pop(qtype, None)
    child = dataclasses.replace(recipe, router=dict(router), routes=merged)
    summary = "route " + "; ".join(f"{t} → {_say(routes[t]) or 'default'} ({why.get(t, '')})"
                                   for t in sorted(routes))
    return child, Move("route", summary, {t: dict(c) for t, c in sorted(routes.items())})


def rank(recipe: Recipe, ranker: Mapping[str, Any], router: Mapping[str, Any] | None) -> tuple[Recipe, Move]:
    """`recipe` with the fitted ranking stage on: RANK and the ranker's weights (`ranker`,
    fitted on the train split), and the run's router when the recipe has none (the ranker's
    per-type weights read the routed type)."""
    child = dataclasses.replace(with_values(recipe, {"rank": True}), ranker=dict(ranker),
                                router=recipe.router or (dict(router) if router else None))
    if ranker.get("model") == "trees":
        what = f"LambdaMART, {len(ranker.get('trees') or ())} trees"
    elif ranker.get("model") == "blend":
        what = (f"a pairwise linear ranker and LambdaMART's {len(ranker['trees'].get('trees') or ())} trees, "
                f"fused by reciprocal rank,")
    else:
        what = f"a pairwise linear ranker, {len(ranker.get('weights') or {})} weights"
    return child, Move("rank", f"add stage rank (RANK True: {what} fitted "
                               f"on the train split, cross-fitted by conversation)",
                       _changed(recipe, {"rank": True}))


def variant_for(pipeline: Pipeline, rng: random.Random) -> dict[str, Any]:
    """Changes that make one retrieve stage of `pipeline` different: a variant to try on one
    question type (EvolveMem-style: edit the retrieval configuration where questions fail)."""
    options = pipeline_additions(pipeline) + pipeline_removals(pipeline) + pipeline_swaps(pipeline)
    options.append(("index", {"depth": min(100, pipeline.depth * 2)}))
    return dict(rng.choice(options)[1])


def pipeline_diff(base: Pipeline, other: Pipeline) -> dict[str, Any]:
    return {f: getattr(other, f) for f in sorted(PIPELINE_FIELDS) if getattr(other, f) != getattr(base, f)}


STARTERS: tuple[Recipe, ...] = (
    Recipe(unit="multi"),                                               # BM25 + dense over two views, RRF
    Recipe(unit="window"),                                              # ... turns read with their neighbours
    Recipe(pipeline=Pipeline(fusion="weighted", dense_weight=0.6, mmr=True)),
    Recipe(unit="window", pipeline=Pipeline(indexes="bm25", window=1)),
    Recipe(),                                                           # BM25 + dense over turns, RRF
)
"""First recipes a composing move draws from (untried ones first): the hybrid lexical + dense
retrieval the literature uses as a strong baseline, in four variants and as it is. The plain
hybrid over turns comes last because the hybrid_rag seed is that program already (the seed sweep
puts it in the tree); the richest variant (each turn indexed alone and with its neighbours,
four rankings fused) comes first, since removing a stage from it is one move away."""


def untried_starters(tried: Sequence[Recipe]) -> list[Recipe]:
    return [r for r in STARTERS if r not in tried]


def pick_starter(rng: random.Random, tried: Sequence[Recipe]) -> Recipe:
    untried = untried_starters(tried)
    return untried[0] if untried else rng.choice(STARTERS)


# What makes remembering or recalling expensive, cheapest change first: a dense index embeds
# every unit at update (lazy embeds only BM25's candidates, at recall, and with no dense index
# left the fitted ranker's dense signals go lazy too: its pool only), a second view or a
# window unit embeds every turn again or longer, late interaction embeds token matrices, passages
# embed every passage, image units embed every picture's text, the ranker's signals embed every
# unit, MMR needs every unit's vector (docs/cost.md).
CHEAPER = (
    ("lazy dense", lambda r: r.pipeline.indexes in ("both", "dense"), {"indexes": "lazy"}),
    ("turn units", lambda r: r.unit in ("multi", "window"), {"unit": "turn"}),
    ("no late interaction", lambda r: r.pipeline.late, {"late": False}),
    ("no passages", lambda r: r.pipeline.passages != "off", {"passages": "off"}),
    ("no MMR", lambda r: r.pipeline.mmr, {"mmr": False}),
    ("no image units", lambda r: r.pipeline.images, {"images": False}),
    ("no ranker", lambda r: r.pipeline.rank, {"rank": False}),
)


def cheapen(recipe: Recipe, over: str) -> tuple[Recipe, Move] | None:
    """The recipe with its most expensive stage replaced by a cheaper one (`CHEAPER`, in order),
    every route's copy of that stage too; None when nothing is left to make cheaper. `over`
    says which bound the parent is over (the move's summary names it)."""
    for name, applies, changes in CHEAPER:
        routed = {t: {k: v for k, v in c.items() if k not in changes} for t, c in recipe.routes.items()}
        if applies(recipe) or routed != dict(recipe.routes):
            child = dataclasses.replace(with_values(recipe, changes) if applies(recipe) else recipe, routes=routed)
            if child == recipe:
                continue
            return child, Move("cheapen", f"cheapen: {name} ({_say(changes)}), the parent is over a cost bound "
                                          f"({over})", _changed(recipe, changes))
    return None
