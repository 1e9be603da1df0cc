"""The meta agents' settings, every default in one place: `[meta]` holds what both agents read
(the evidence of a parent, duplicate handling, mixed mode), `[meta.llm]` the LLM meta agent's
own settings and `[meta.offline]` the offline agent's."""

from __future__ import annotations

from dataclasses import dataclass, field

EDIT_MODES = ("diff", "rewrite")
PROMPT_PROFILES = ("auto", "full", "compact")
OPERATORS = ("perturb", "transplant", "crossover", "compose", "route", "rank", "recombine", "tune_stage",
             "add_stage", "swap_stage", "remove_stage")
"""The offline meta agent's operators, each with its `<name>_rate`."""


@dataclass(frozen=True)
class LLMMetaConfig:
    # --- earlier parent→child gains shown as examples ----------------------------------------
    max_improvements: int = 3             # the largest gains; more would crowd out the evidence
    improvement_diff_chars: int = 6_000   # each example's diff is cut to this

    # --- LLM calls (role "meta") ----------------------------------------------------------------
    analysis_max_tokens: int = 4_096      # the JSON feedback is short; this bounds a rambling model
    generate_max_tokens: int = 16_384     # a complete program plus its summary line
    # Unset: the meta role's configured temperature ([llm.meta] temperature).
    temperature: float | None = field(default=None, metadata={"example": 0.0})
    source_chars: int = 60_000            # a parent program longer than this is cut in prompts
    format_retries: int = 1               # re-asks after invalid JSON / no code block, then MetaError

    # --- generate: how a child is written (role "meta") -----------------------------------------
    # "diff": SEARCH/REPLACE edits of the parent (a diff that does not apply gets one request for
    # the whole program); "rewrite": the whole program every time.
    edit_mode: str = "diff"
    # "full": analysis, then generate in the same conversation, with the whole contract, evidence
    # and inspirations; "compact": one short generate call asking for one small edit (about 2,000
    # prompt tokens, for small models and contexts); "auto": compact when the meta role declares
    # a context below 16,384 tokens.
    prompt_profile: str = "auto"
    # Generate samples: K children of one parent must differ. Analysis and repair keep the
    # role's temperature (or `temperature` above).
    generate_temperature: float | None = 0.8
    max_continuations: int = 1            # an answer cut at the completion cap is continued this often
    inspirations: int = 2                 # other programs shown to generate (best, and strong where the parent is weak)
    inspiration_chars: int = 6_000        # each inspiration's source is cut to this
    max_siblings: int = 6                 # the parent's earlier children (what was tried, what it scored)
    sample_chars: int = 2_500             # excerpt of one update episode and one retrieve task

    def __post_init__(self) -> None:
        if self.edit_mode not in EDIT_MODES:
            from automemo.configtools import ConfigError

            raise ConfigError(f"meta.llm.edit_mode must be one of {', '.join(EDIT_MODES)}, got {self.edit_mode!r}")
        if self.prompt_profile not in PROMPT_PROFILES:
            from automemo.configtools import ConfigError

            raise ConfigError(f"meta.llm.prompt_profile must be one of {', '.join(PROMPT_PROFILES)}, "
                              f"got {self.prompt_profile!r}")


@dataclass(frozen=True)
class OfflineMetaConfig:
    max_perturbed: int = 2                # a child changes one or two tunables
    step_fraction: float = 0.25           # typical numeric step, as a fraction of the range
    # Its operators, in one table. A child comes from one operator, drawn among the operators that
    # apply to its parent with these rates renormalised over those: an applicable operator's
    # probability is its rate divided by the sum of the applicable operators' rates (the rates
    # sum to 1 over all operators; 0 turns one off). An operator that makes nothing new (a stage
    # move whose child the tree holds) is dropped and the draw repeated among the others.
    # perturb: turn one or two of the parent's live declared tunables (it has some that can move).
    perturb_rate: float = 0.20
    # transplant: a seed in place of the parent; applies while a seed the tree lacks remains (the
    # policy seldom widens the root, so transplants from the root alone would try only W
    # designs), and always to a parent with nothing to turn (then the seed strongest where the
    # parent is weak, once all were tried).
    transplant_rate: float = 0.10
    # crossover: the parent with the evaluated program that leads it most on the question types
    # it is weak on (applies when one does): both run side by side and their retrievals are fused
    # by weighted reciprocal rank; two recipes cross stage by stage instead.
    crossover_rate: float = 0.20
    # compose: a parent that is not a recipe (the root, a seed, an LLM-written program) gets a
    # starter recipe over memolib components (applies while starters the tree lacks remain).
    compose_rate: float = 0.15
    # The structural moves of a recipe parent: route its weak question types to their own
    # retrieve stages behind a router fitted on the train split's questions (applies when such a
    # router can be fitted and the parent is weak on a type it knows); recombine stages with
    # another evaluated recipe (applies when there is one); tune, add, swap or remove a stage.
    route_rate: float = 0.10
    # rank: switch on the ranking stage fitted on the train split's questions and evidence
    # (learning to rank; applies to a recipe parent without it when a ranker can be fitted).
    # Its rate comes out of the stage edits' (tune, swap, remove) and recombine's.
    rank_rate: float = 0.07
    # The fitted ranking stage's model: "linear" (a pairwise logistic model, one weight per
    # signal and context), "trees" (LambdaMART: gradient-boosted trees, LightGBM's lambdarank),
    # "blend" (both, their orders fused by reciprocal rank; the linear model alone without
    # LightGBM) or "auto" (all three fitted on the same examples and folds; the largest
    # cross-fitted held-out gain is kept).
    ranker_model: str = "blend"
    recombine_rate: float = 0.04
    tune_stage_rate: float = 0.05
    add_stage_rate: float = 0.05
    swap_stage_rate: float = 0.02
    remove_stage_rate: float = 0.02
    # A crossover answers a task category with one parent alone when, question by question on
    # the parent's latest evaluation, that parent beats the other on significantly more of the
    # category's tasks than it loses (one-sided sign test at this level); elsewhere it fuses.
    route_significance: float = 0.05
    # Decide those routes, and a recipe route's donor, cross-fitted by conversation as the router
    # and the ranker are (meta/offline/crossover.py, `Routes`): a crossover carries per-fold route
    # tables, a train conversation's question routed by the table decided without it; a route
    # move takes a donor only where the leave-one-conversation-out estimate of the route gains.
    # Off: one table decided on every scored question, which the child is then scored on. Measured
    # on the dev data (docs/discovery.md, 2026-11-27): no selection changed, the mean test score
    # −0.0003, so off by default.
    cross_fit_routes: bool = False

    def operator_rate(self, operator: str) -> float:
        """The configured rate of an offline operator (`perturb`, `route`, ...)."""
        return getattr(self, f"{operator}_rate")

    def __post_init__(self) -> None:
        negative = [f"meta.offline.{o}_rate" for o in OPERATORS if self.operator_rate(o) < 0]
        if negative:
            from automemo.configtools import ConfigError

            raise ConfigError(f"{', '.join(negative)} must be >= 0")


@dataclass(frozen=True)
class MetaConfig:
    # --- evidence shown to the analysis prompt (the paper's Table 7 protocol) ---------------
    n_successes: int = 2                  # successful retrieve-time trajectories per analysis
    n_failures: int = 2                   # failed ones
    observation_chars: int = 50_000       # observation summary cap per episode
    observation_images: int = 4           # observation images per episode
    payload_chars: int = 20_000           # retrieved-memory summary cap per episode
    payload_images: int = 2               # retrieved-memory images per episode

    # --- both agents ---------------------------------------------------------------------------
    duplicate_retries: int = 2            # a child identical to a node of the tree is re-proposed this often
    # With the LLM meta agent (mixed mode): chance that a child of a parent with live declared
    # tunables is written by the offline mutator instead (it turns the tunables, LLM-written
    # children included); 0 keeps every step the LLM's.
    mixed_tune_rate: float = 0.0

    # The LLM meta agent (when [llm.meta] names a model).
    llm: LLMMetaConfig = field(default_factory=LLMMetaConfig)
    # The offline meta agent (no LLM).
    offline: OfflineMetaConfig = field(default_factory=OfflineMetaConfig)
