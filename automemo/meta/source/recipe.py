"""Recipes: the structured form of a composed memo program, and its rendering as plain Python.

A recipe names the stages a program is built from, in MemEvolve's Encode / Store / Retrieve /
Manage terms: how episodes are cut into units (a turn, i.e. a dialogue round or web step; a turn indexed
with the text of its neighbours; a session), which
indexes hold them (BM25, dense, both), how their rankings are fused (reciprocal rank or weighted),
how hits are expanded (a window of neighbouring units) and diversified (MMR), whether recent
memories are favoured, whether each image is searched as a unit of its own, whose memory a question searches (its user's, or all), and how many units
the payload carries; and which further rankings join the fusion (late interaction over token
embeddings, the question's names and phrases, sessions-then-turns, RM3 feedback, temporal
anchoring, named speakers, sessions, windows or session summaries indexed as passages:
memolib's `late`, `entities`, `hierarchy`, `feedback`, `temporal`, `speakers`, `passages`), and how the hits are ordered by session (each hit's score mixed with its
session's; the best turn of each of the best sessions first). A learned question router may send
each predicted question type to its own variant of the retrieve stages (`routes`).

The child's source keeps the recipe as plain module constants: one declared tunable per stage
parameter (the mutator's tunables machinery turns them) and the routes and router params as
literals. `parse_recipe` reads a program back; it answers None for a program whose code is not
exactly the template's rendering of its constants (an LLM edited it): such a child is no
longer a recipe, only a program with tunables (mixed mode).
"""

from __future__ import annotations

import ast
import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from automemo.content_memo import by_content
from automemo.errors import AutomemoError
from automemo.meta.source import syntax
from automemo.prompting import render

TEMPLATE = "program_recipe"


@dataclass(frozen=True)
class Knob:
    """One stage parameter: the constant that holds it in the child and its declared range."""

    field: str
    constant: str
    spec: str                 # a tunables marker spec: "int 1..30", "choice a|b", "bool"
    stage: str                # the stage it belongs to, for move summaries and recombination
    comment: str

    def allows(self, value: Any) -> bool:
        kind, _, rest = self.spec.partition(" ")
        if kind == "bool":
            return isinstance(value, bool)
        if kind == "choice":
            return isinstance(value, str) and value in rest.split("|")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if kind == "int" and not isinstance(value, int):
            return False
        low, high = (float(x) for x in rest.split(".."))
        return low <= value <= high

    def options(self) -> tuple[str, ...]:
        kind, _, rest = self.spec.partition(" ")
        return tuple(rest.split("|")) if kind == "choice" else ()


@dataclass(frozen=True)
class Pipeline:
    """The retrieve stages: what a question goes through between its text and the payload."""

    indexes: str = "both"         # bm25 | dense | both | lazy (BM25's candidates embedded at recall)
    fusion: str = "rrf"           # rrf | weighted (only with both indexes)
    rrf_k: int = 60
    dense_weight: float = 0.5     # weighted fusion: the dense ranking's share
    depth: int = 30               # candidates taken from each index
    window: int = 0               # neighbouring units added around each hit
    mmr: bool = False             # diversify the hits (maximal marginal relevance)
    mmr_lambda: float = 0.7       # relevance vs. novelty in MMR
    recency: float = 0.0          # weight of a boost for later sessions (0: off)
    images: bool = False          # search the image units too (each image a unit, cited by its id)
    late: bool = False            # MaxSim over token embeddings reranks the fused candidates
    late_weight: float = 2.0      # the MaxSim order's weight against the first stage's (RRF)
    entities: bool = False        # the question's names and quoted phrases matched whole (a fused ranking)
    sessions: int = 0             # hierarchical: turns inside the best N sessions (a fused ranking; 0: off)
    feedback: bool = False        # RM3: BM25 again with the first hits' terms (a fused ranking)
    temporal: bool = False        # time questions: units dated near the date asked about move up
    speakers: bool = False        # a question naming a speaker: that speaker's turns move up
    rank: bool = False            # the fitted ranker (RANKER) orders its own pool of candidates
    # The three below apply to a question when "text" and its wording asks for it (memolib's
    # is_state_question / is_count_question / is_list_question), to every question the setting
    # covers when "always" (a route gives one routed type "always"), never when "off".
    latest: str = "off"           # a current or final value: later units of a session move up
    latest_floor: float = 0.5     # share of its session's best score a later hit needs to count as stating the value
    coverage: str = "off"         # counting / series questions: per-session quotas in the payload
    coverage_quota: int = 3       # the most rows one session takes while others have candidates
    listing: str = "off"          # list questions: the best hits widened inside their session
    listing_radius: int = 2       # rounds each way around those hits
    # Session-level stages (memolib's passages, summaries, hierarchy and coverage):
    passages: str = "off"         # off | session | window | summary: documents indexed beside the turns
    passage_length: int = 4       # a window's turns (half overlapping), a summary's sentences
    passage_top: int = 3          # the best passages, each standing for its best turn
    passage_weight: float = 0.25  # that ranking's weight against the turns' fused order (RRF)
    session_weight: float = 0.0   # each hit's score mixed with its session's score at this weight (0: off)
    session_spread: int = 0       # the best turn of each of the best N sessions first, then the rest (0: off)


@dataclass(frozen=True)
class Recipe:
    """A whole composed program: the encode/store/manage stages, the default retrieve stages,
    and (with a fitted router) the per-type variants of the retrieve stages."""

    unit: str = "turn"            # turn | window | multi | session (Encode)
    scope: str = "user"           # user | all (Store: one memory per user, or one for everyone)
    payload_units: int = 10       # units in the payload (Manage)
    pipeline: Pipeline = Pipeline()
    routes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # type -> pipeline changes
    router: Mapping[str, Any] | None = None   # memolib.QuestionRouter params (fitted on train)
    ranker: Mapping[str, Any] | None = None   # memolib.ranker_from_params params (fitted on train)

    def pipeline_for(self, question_type: str) -> Pipeline:
        return dataclasses.replace(self.pipeline, **self.routes.get(question_type, {}))

    def stages(self) -> dict[str, dict[str, Any]]:
        """The recipe's parameters grouped by stage (what recombination swaps as a block)."""
        out: dict[str, dict[str, Any]] = {}
        for knob in KNOBS:
            out.setdefault(knob.stage, {})[knob.field] = value_of(self, knob)
        out["route"] = {"routes": dict(self.routes), "router": self.router}
        return out

    def ranks(self) -> bool:
        """Whether any setting (the defaults or a route) switches the fitted ranker on."""
        return self.pipeline.rank or any(c.get("rank") for c in self.routes.values())


KNOBS: tuple[Knob, ...] = (
    Knob("unit", "UNIT", "choice turn|window|multi|session", "encode",
         "a unit is a turn (round), a turn read with its neighbours, both views fused, or a session"),
    Knob("scope", "SCOPE", "choice user|all", "store", "search only the asking user's memory, or all"),
    Knob("indexes", "INDEXES", "choice bm25|dense|both|lazy", "index",
         "lexical, dense, both, or lazy (BM25's candidates embedded at recall: no encoding at update)"),
    Knob("fusion", "FUSION", "choice rrf|weighted", "fusion", "how two rankings become one"),
    Knob("rrf_k", "RRF_K", "int 1..100", "fusion", "reciprocal-rank constant"),
    Knob("dense_weight", "DENSE_WEIGHT", "float 0.0..1.0", "fusion", "dense share in weighted fusion"),
    Knob("depth", "DEPTH", "int 10..100", "index", "candidates taken from each index"),
    Knob("window", "WINDOW", "int 0..3", "expand", "neighbouring units added around each hit"),
    Knob("mmr", "MMR", "bool", "diversify", "maximal-marginal-relevance reordering"),
    Knob("mmr_lambda", "MMR_LAMBDA", "float 0.3..1.0", "diversify", "relevance vs. novelty in MMR"),
    Knob("recency", "RECENCY", "float 0.0..1.0", "recency", "boost for later sessions (0: off)"),
    Knob("payload_units", "PAYLOAD_UNITS", "int 3..30", "payload", "units in the payload"),
    Knob("images", "IMAGES", "bool", "images", "search image units too: each image a unit, cited by its image id"),
    Knob("late", "LATE", "bool", "late", "late interaction: MaxSim over MiniLM token embeddings reranks the candidates"),
    Knob("late_weight", "LATE_WEIGHT", "float 0.5..4.0", "late", "the MaxSim order's weight against the first stage's"),
    Knob("entities", "ENTITIES", "bool", "entities", "names and quoted phrases of the question, matched whole"),
    Knob("sessions", "SESSIONS", "int 0..5", "hierarchy", "sessions ranked first, then turns inside the best N (0: off)"),
    Knob("feedback", "FEEDBACK", "bool", "feedback", "RM3 pseudo-relevance feedback: BM25 with the first hits' terms"),
    Knob("temporal", "TEMPORAL", "bool", "temporal", "relative dates resolved; time questions prefer units dated near the asked date"),
    Knob("speakers", "SPEAKERS", "bool", "speakers", "a question naming a speaker ranks that speaker's turns up"),
    Knob("rank", "RANK", "bool", "rank", "the ranker fitted on the train split (RANKER) orders the candidates"),
    Knob("latest", "LATEST", "choice off|text|always", "latest",
         "latest state: a question asking for a current or final value prefers later units"),
    Knob("latest_floor", "LATEST_FLOOR", "float 0.1..0.9", "latest", "share of its session's best score a later unit needs to count as stating the value"),
    Knob("coverage", "COVERAGE", "choice off|text|always", "coverage",
         "counting and series questions: no session takes more than COVERAGE_QUOTA payload slots"),
    Knob("coverage_quota", "COVERAGE_QUOTA", "int 1..5", "coverage", "payload slots one session may take"),
    Knob("listing", "LISTING", "choice off|text|always", "listing",
         "list questions: the best hits followed by their session's neighbouring rounds"),
    Knob("listing_radius", "LISTING_RADIUS", "int 1..4", "listing", "rounds each way around the best hits"),
    Knob("passages", "PASSAGES", "choice off|session|window|summary", "passages",
         "a whole session, a window of PASSAGE_LENGTH turns, or a session's extractive summary indexed as a document"),
    Knob("passage_length", "PASSAGE_LENGTH", "int 1..12", "passages",
         "turns of a window passage (half overlapping), sentences of a summary"),
    Knob("passage_top", "PASSAGE_TOP", "int 1..10", "passages", "the best passages, each cited by its best turn"),
    Knob("passage_weight", "PASSAGE_WEIGHT", "float 0.05..2.0", "passages",
         "the passages' turns' weight against the turns' fused order (reciprocal rank)"),
    Knob("session_weight", "SESSION_WEIGHT", "float 0.0..0.9", "session_fusion",
         "each hit's score mixed with its session's (BM25 over the session's text) at this weight (0: off)"),
    Knob("session_spread", "SESSION_SPREAD", "int 0..10", "session_diversity",
         "the best turn of each of the best N sessions first, then the rest (0: off)"),
)
KNOB_BY_FIELD = {k.field: k for k in KNOBS}
PIPELINE_FIELDS = frozenset(f.name for f in dataclasses.fields(Pipeline))
STAGES = tuple(dict.fromkeys(k.stage for k in KNOBS))


class RecipeError(AutomemoError, ValueError):
    """A recipe value outside its stage's declared range."""


def value_of(recipe: Recipe, knob: Knob) -> Any:
    holder = recipe.pipeline if knob.field in PIPELINE_FIELDS else recipe
    return getattr(holder, knob.field)


def with_values(recipe: Recipe, values: Mapping[str, Any]) -> Recipe:
    """`recipe` with the named stage parameters (pipeline or recipe level) replaced, checked."""
    for name, value in values.items():
        knob = KNOB_BY_FIELD.get(name)
        if knob is None:
            raise RecipeError(f"unknown stage parameter {name!r}; known: {', '.join(KNOB_BY_FIELD)}")
        if not knob.allows(value):
            raise RecipeError(f"{name} = {value!r} is outside its range ({knob.spec})")
    top = {k: v for k, v in values.items() if k not in PIPELINE_FIELDS}
    pipe = {k: v for k, v in values.items() if k in PIPELINE_FIELDS}
    return dataclasses.replace(recipe, pipeline=dataclasses.replace(recipe.pipeline, **pipe), **top)


def check_routes(routes: Mapping[str, Mapping[str, Any]]) -> None:
    for qtype, changes in routes.items():
        for name, value in changes.items():
            if name not in PIPELINE_FIELDS:
                raise RecipeError(f"route {qtype!r} changes {name!r}, which is not a retrieve stage "
                                  f"parameter ({', '.join(sorted(PIPELINE_FIELDS))})")
            if not KNOB_BY_FIELD[name].allows(value):
                raise RecipeError(f"route {qtype!r}: {name} = {value!r} is outside its range")


def render_recipe(recipe: Recipe) -> str:
    """The child program of `recipe`: plain Python over memolib components."""
    check_routes(recipe.routes)
    for knob in KNOBS:
        if not knob.allows(value_of(recipe, knob)):
            raise RecipeError(f"{knob.field} = {value_of(recipe, knob)!r} is outside its range ({knob.spec})")
    routes = {t: dict(sorted(c.items())) for t, c in sorted(recipe.routes.items()) if c}
    knobs = [{"constant": k.constant, "value": _literal(value_of(recipe, k)), "spec": k.spec,
              "comment": k.comment} for k in KNOBS]
    if recipe.ranks() and not recipe.ranker:
        raise RecipeError("RANK is on but the recipe carries no fitted ranker (RANKER): fit one on the "
                          "train split (automemo.meta.offline.ranking) or switch RANK off")
    return render(TEMPLATE, knobs=knobs, routes=_literal(routes),
                  router=dict_literal(dict(recipe.router)) if recipe.router else "None",
                  ranker=dict_literal(dict(recipe.ranker)) if recipe.ranker else "None")


@by_content(ignore=("tree",))
def parse_recipe(source: str, *, tree: ast.Module | None = None) -> Recipe | None:
    """The recipe `source` renders, or None when it is not exactly a rendered recipe (`tree`: its
    syntax tree when the caller parsed it already). Read once per text (`automemo.content_memo`):
    the generator reads every evaluated program's recipe at every step."""
    if tree is None:
        try:
            tree = syntax.parse(source)
        except SyntaxError:
            return None
    constants = syntax.literal_constants(tree)
    if any(k.constant not in constants for k in KNOBS) or "ROUTES" not in constants:
        return None
    routes, router, ranker = constants["ROUTES"], constants.get("ROUTER"), constants.get("RANKER")
    if not isinstance(routes, dict) or not all(v is None or isinstance(v, dict) for v in (router, ranker)):
        return None
    try:
        recipe = with_values(Recipe(routes=routes, router=router, ranker=ranker),
                             {k.field: constants[k.constant] for k in KNOBS})
        return recipe if render_recipe(recipe) == source else None
    except (RecipeError, TypeError):
        return None


def _literal(value: Any) -> str:
    """Python text of a plain value, deterministic (re-rendering a parsed recipe must give back
    the same characters)."""
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def dict_literal(value: Mapping[str, Any], indent: str = "") -> str:
    """A dict literal one entry per line (nested dicts too), so a router's few hundred feature
    weights read as a table rather than one endless line."""
    inner = indent + "    "
    lines = [f"{inner}{json.dumps(k)}: {_entry(v, inner)}," for k, v in value.items()]
    return "{\n" + "\n".join(lines) + f"\n{indent}}}" if lines else "{}"


def _entry(value: Any, indent: str) -> str:
    """One value of a `dict_literal`: a dict (or a list of dicts, e.g. a ranker's per-fold weights)
    as blocks, anything else as its literal."""
    if isinstance(value, Mapping):
        return dict_literal(value, indent)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, Mapping) for v in value):
        inner = indent + "    "
        return "[\n" + "\n".join(f"{inner}{dict_literal(v, inner)}," for v in value) + f"\n{indent}]"
    return _literal(value)


def describe(recipe: Recipe) -> str:
    """A one-line account of the recipe, for summaries."""
    p = recipe.pipeline
    parts = [f"{recipe.unit} units", {"both": "BM25+dense", "bm25": "BM25", "dense": "dense", "lazy": "BM25+lazy dense"}[p.indexes]]
    if p.indexes == "both":
        parts.append(f"RRF k={p.rrf_k}" if p.fusion == "rrf" else f"weighted dense {p.dense_weight}")
    if p.window:
        parts.append(f"window ±{p.window}")
    if p.mmr:
        parts.append(f"MMR λ={p.mmr_lambda}")
    if p.recency:
        parts.append(f"recency {p.recency}")
    if p.images:
        parts.append("image units")
    extras = [name for name, on in (("MaxSim", p.late), ("entities", p.entities), ("RM3", p.feedback),
                                    ("temporal", p.temporal), ("speakers", p.speakers), ("fitted ranker", p.rank)) if on]
    extras += [f"{name} ({mode})" for name, mode in (("latest state", p.latest), ("coverage", p.coverage),
                                                     ("session expansion", p.listing)) if mode != "off"]
    if p.sessions:
        extras.append(f"sessions→turns top {p.sessions}")
    if p.passages != "off":
        kind = {"session": "session", "window": f"{p.passage_length}-turn window",
                "summary": f"{p.passage_length}-sentence summary"}[p.passages]
        extras.append(f"best {p.passage_top} {kind} passages")
    if p.session_weight:
        extras.append(f"session fusion {p.session_weight}")
    if p.session_spread:
        extras.append(f"one turn of each of the best {p.session_spread} sessions first")
    parts += extras
    parts.append(f"{recipe.payload_units} units")
    if recipe.router and recipe.routes:
        parts.append("routed: " + ", ".join(sorted(recipe.routes)))
    return ", ".join(parts)
