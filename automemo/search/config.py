"""Search hyper-parameters. Defaults are the paper's (Table 7), in one place."""

from __future__ import annotations

from dataclasses import dataclass

from automemo.configtools import ConfigError

STRATEGIES = ("tree", "alma", "greedy", "random")
UNCERTAINTIES = ("auto", "tasks", "repeats")
HELD_TO = ("best_hand_design", "root")


@dataclass(frozen=True)
class SearchConfig:
    # Search steps after the root's first evaluation (which is step 0 and not counted): each step
    # is one re-evaluation or one generation attempt (a failed generation still uses its step).
    steps: int = 20
    # Which policy picks each step's action and the final node (automemo.search.strategies):
    # "tree" (re-evaluate or generate by U_eval / U_gen; final by LCB), "alma" (ALMA's softmax
    # parent sampling; final by best mean), "greedy" (expand the best mean), "random".
    strategy: str = "tree"
    # c_e: exploration weight of the evaluate score U_eval and of the final LCB. 0.2 keeps the
    # bonus within the typical spread of scores in [0, 1].
    c_e: float = 0.2
    # c_g: exploration weight of the generate score U_gen over a node's evaluated children.
    c_g: float = 0.2
    # κ: prior strength, how much a node's lead over the root counts as generation potential
    # before its children show any.
    kappa: float = 0.5
    # α: pseudo-count of that prior; it fades as m(v) children get evaluated.
    alpha: float = 1.0
    # W: minimum width; a non-root node may be expanded only once its parent has W evaluated
    # children, so the search does not dive down the first lucky branch.
    min_width: int = 2
    # When the most promising node to expand is blocked by the minimum width (its parent has
    # fewer than W evaluated children), widen that parent instead, with the blocked node's U_gen.
    # The policy read literally (false) deadlocks as soon as a first child is far better than the
    # root: U_eval of that child then beats every allowed generate action forever, so the search
    # only re-evaluates it. Widening first is what the minimum width is for.
    widen_blocked: bool = True
    # Where the tree policy's uncertainty comes from (docs/search.md). "repeats": the paper's
    # c_e · sqrt(ln N / n), for stochastic evaluations (an LLM agent, a live site) that a repeat
    # makes more precise. "tasks": z · SE of the per-task scores and no re-evaluation, for
    # exact ones (a repeat returns the same number). "auto": "tasks" when every evaluation of
    # the run was exact (the benchmark scores deterministically and every validation task was
    # scored: retrieval mode of the conversation benchmarks), otherwise "repeats".
    uncertainty: str = "auto"
    # z: standard errors in the exact bounds μ ± z · SE (1.0: about a 68% interval; the bound
    # orders near-ties, it does not test significance).
    z: float = 1.0
    # With exact evaluation, how many of the best nodes by μ (hand designs aside) the final
    # confirmation pairs with the best hand design on every search question.
    confirm_top: int = 3
    # With exact evaluation, the one-standard-error rule after the confirmation: of the nodes
    # within z paired SEs of its choice that clear the bar too, the one fewest generations from
    # the root (automemo.search.policy.shallowest_within). False: the highest clearing bound.
    select_shallowest: bool = True
    # With a question budget, how many of the best nodes by μ (hand designs and stopped nodes
    # aside) race in the final confirmation's successive halving (automemo.search.halving). More
    # arms give a program its first sample ranked low a chance; each costs questions in the first
    # rounds. 4: two halving rounds and a duel at a quarter budget's reserve.
    race_candidates: int = 4
    # With a question budget, two candidates whose scores differ, on the questions both were
    # asked, on a share whose upper bound (Wilson, z = early_stop_z) is below this are one arm of
    # the race (the one with the higher bound): near-copies (a crossover and its copy, a tuning
    # that changed nothing) would take arms whose difference no round can resolve while a
    # program unlike them is left out (automemo.search.halving.copies). A negative value or 0:
    # every candidate is its own arm (the rule before).
    race_distinct: float = 0.1
    # Question budget: the validation questions the whole search may have scored, every
    # evaluation's questions together (the final confirmation included). 0: no budget, every
    # evaluation scores every question (exhaustive, the paper's protocol). With a budget an
    # evaluation scores a sample (`sample_questions`), a re-evaluation the next questions the node
    # was not asked, hopeless children stop early, and before the search ends the selection and
    # the best hand design are scored on every question (docs/search.md, "Samples that grow").
    # With an LLM agent or judge this is what the search costs: see docs/question-budget.md.
    question_budget: int = 0
    # Questions per sample with a question budget; 0: half the budget spread over the root and
    # every step (at least 10 questions), the other half kept for growing and confirming.
    sample_questions: int = 0
    # Early stopping with a question budget: a child whose first sample, paired with the leader
    # on the same questions, has an upper bound d + early_stop_z·SE(d) below 0 is not scored
    # further. 2.0 stops a child about 2.5% of the time when it is as good as the leader.
    early_stop: bool = True
    early_stop_z: float = 2.0
    # Training tasks the quick exam samples per candidate.
    exam_tasks: int = 5
    # Repair attempts after a failed exam; the child is a failed generation after the last one.
    repair_attempts: int = 3
    # Run seed: every random choice derives from (seed, step), so a resumed run repeats exactly.
    seed: int = 0
    # The root r: a seed name (seeds/), "discovered" (the discovered default the package ships,
    # found by its own search on the labelled questions of the data it embeds; docs/label-free.md),
    # a program file, or a folder written by `automemo export`. A label-free search
    # (benchmark.questions = "self" / "llm") roots at "discovered" unless another root is named.
    root: str = "no_memory"
    # What the final selection is held to with exact evaluation. "best_hand_design": the best of
    # the root and the swept seeds by μ. "root": the root itself, the program a user already has;
    # every other node (swept seeds included) replaces it only when it wins on the scored
    # questions by z paired SEs and loses on no guard by more than z (automemo.search.win_rule).
    # A label-free search is held to its root: its pseudo-questions are a proxy, and a proxy left
    # to pick among hand designs picked one below the root on unseen data.
    held_to: str = "best_hand_design"
    # K: search actions in flight at once (evaluations and generations together). 1 is the
    # sequential search, step after step. Above 1, evaluations still running count as virtual
    # visits in the statistics the policy reads (generations do not; see search/pending.py);
    # each action keeps the step number it was chosen at and commits when it finishes.
    parallel: int = 1
    # Seed sweep: the first steps transplant every seed program (seeds/, but the root and the
    # no-memory seed) under the root, one per step, before the strategy chooses anything. The
    # hand designs are then in the tree as the bar a selection must beat (with exact evaluation
    # the final selection is the best hand design unless a node beats it on the same tasks) and
    # as parents to build on. The sweep's steps count against `steps`.
    seed_sweep: bool = False
    # The sweep also transplants the discovered default (unless it is the root), as a candidate:
    # a labelled search on new data starts from the tool's best known memory. Off only where the
    # default is being found again (`automemo bench discovered-default`).
    sweep_discovered: bool = True
    # After the search, score the selection and the best hand design on the held-out test split
    # and say how they compare (final.json "heldout_test"; two test evaluations, three when the
    # hand design is kept). The embedded sample's preset turns it on.
    heldout_test: bool = False
    # Cost bounds on the final selection (docs/search.md, "Cost bounds"; docs/cost.md): only a node
    # whose latest evaluation's CPU per remembered turn (host encoding counted cold, and the guest)
    # is at most this many milliseconds may be selected, the best hand design the selection is held
    # to included (the best one within the bounds). The meta agents are told the bound and offer a
    # parent over it cheaper stages. 0: no bound.
    max_ingest_ms_per_turn: float = 0.0
    # The same for the mean CPU milliseconds of one recall (retrieve: host encoding cold, and the
    # guest), not its wall-clock p95, which moves with the machine's load. 0: no bound.
    max_recall_ms: float = 0.0

    def __post_init__(self) -> None:
        problems = []
        if self.strategy not in STRATEGIES:
            problems.append(f"search.strategy must be one of {', '.join(STRATEGIES)}, got {self.strategy!r}")
        if self.uncertainty not in UNCERTAINTIES:
            problems.append(f"search.uncertainty must be one of {', '.join(UNCERTAINTIES)}, got {self.uncertainty!r}")
        if self.held_to not in HELD_TO:
            problems.append(f"search.held_to must be one of {', '.join(HELD_TO)}, got {self.held_to!r}")
        if self.confirm_top < 1:
            problems.append(f"search.confirm_top must be >= 1, got {self.confirm_top}")
        if self.race_candidates < 1:
            problems.append(f"search.race_candidates must be >= 1, got {self.race_candidates}")
        if self.race_distinct >= 1:
            problems.append(f"search.race_distinct must be < 1 (a share of questions), got {self.race_distinct}")
        if self.steps < 0:
            problems.append(f"search.steps must be >= 0, got {self.steps}")
        if self.question_budget < 0:
            problems.append(f"search.question_budget must be >= 0 (0: no budget), got {self.question_budget}")
        if self.sample_questions < 0:
            problems.append(f"search.sample_questions must be >= 0 (0: automatic), got {self.sample_questions}")
        for name in ("c_e", "c_g", "kappa", "z", "early_stop_z", "max_ingest_ms_per_turn", "max_recall_ms"):
            if getattr(self, name) < 0:
                problems.append(f"search.{name} must be >= 0, got {getattr(self, name)}")
        if self.alpha <= 0:
            problems.append(f"search.alpha must be > 0 (it is a pseudo-count), got {self.alpha}")
        if self.min_width < 0:
            problems.append(f"search.min_width must be >= 0, got {self.min_width}")
        if self.exam_tasks < 1:
            problems.append(f"search.exam_tasks must be >= 1, got {self.exam_tasks}")
        if self.repair_attempts < 0:
            problems.append(f"search.repair_attempts must be >= 0, got {self.repair_attempts}")
        if self.parallel < 1:
            problems.append(f"search.parallel must be >= 1, got {self.parallel}")
        if problems:
            raise ConfigError("; ".join(problems))
