"""The search policy (docs/search.md), as pure functions of the tree's statistics.

No I/O, no clock, no randomness: given `TreeStats` and a `SearchConfig`, the same action comes
out every time, which is what makes the policy testable on hand-computed trees and a resumed run
identical to an uninterrupted one. The formulas are a reconstruction (the paper's equations did
not survive in its text); they live here and nowhere else, under the names docs/search.md uses:

    U_eval(v) = μ(v) + c_e · sqrt(ln N / n(v))
    π(v)      = κ · max(0, μ(v) − μ(r))
    ĝ(v)      = (G(v) + α · π(v)) / (m(v) + α),    G(v) = Σ_c max(0, s(c) − s_par(c))
    U_gen(v)  = μ(v) + ĝ(v) + c_g · sqrt(ln N / (m(v) + 1))
    LCB(v)    = μ(v) − c_e · sqrt(ln N / n(v))

When evaluation is exact (every evaluated node's evaluations score every validation task with a
deterministic scorer, or `search.uncertainty = "tasks"`), a repeat would return the same number,
so the uncertainty comes from the per-task scores instead of from repeats (`uses_task_uncertainty`):

    SE(v)     = sd of v's per-task scores / sqrt(T)        (T tasks that count)
    U_gen(v)  = μ(v) + z · SE(v) + ĝ(v) + c_g · sqrt(ln N / (m(v) + 1))
    LCB(v)    = μ(v) − z · SE(v)
    no evaluate action: n(v) stays 1

and `paired(v, w)` (the mean paired difference of two nodes on their shared tasks and its
standard error) says whether a lead is real. The final selection with exact evaluation is held
to the best hand design b (the root or a swept seed, by μ; `NodeStats.reference`):

    LCB_b(v)  = μ(b) + d(v, b) − z · SE(d(v, b)),   d = paired difference on shared tasks
    LCB_b(b)  = μ(b)

so a node is chosen over b only if it beats b on the same tasks by more than z paired standard
errors. Picking the best μ of many candidates rewards the luckiest; the paired bound against a
fixed bar does not (per-node SEs are dominated by task difficulty, which pairing cancels).

The final choice is a confirmation (`confirm_final`): the best few nodes by μ that are not hand
designs (`SearchConfig.confirm_top`) are each paired with b on every search question (every
question b was scored on: all of the train split's retrieve questions), and the one with the
highest LCB_b that clears μ(b) is chosen; when none clears it, b is kept. Only the few best are
held to the bar, so a node far down the ranking cannot be chosen on one lucky pairing.

With a question budget (`search.question_budget`; docs/search.md, "Samples that grow") an
evaluation scores a sample of the validation questions, every node in the one order of
`automemo.search.questions`, and a re-evaluation scores the next questions the node has not been
asked. Then counts are in samples, not in evaluations: n(v) = questions v was asked / the sample
size, N = Σ n(v), and μ(v) comes from every question v was scored on, paired with the node
scored on the most (`question_policy.paired_means`, computed where the statistics are built).
The uncertainty is measured, as with exact evaluation: SE(v) of v's per-question scores.

    U_eval(v) = μ(v) + z · SE(v) · sqrt(ln N)          (a step buys the next sample of v)
    U_gen(v)  = μ(v) + z · SE(v) + ĝ(v) + c_g · sqrt(ln N / (m(v) + 1))
    LCB(v)    = μ(v) − z · SE(v)

U_eval has UCB1-Normal's shape (the spread of the question scores over the root of how many
were asked, grown slowly with N): a sample is bought where a node's own questions say its μ is
uncertain. Where a sample already ranks programs well (small SE), steps go to children. A node
asked every question (or stopped early, `question_policy.early_stop`) has no evaluate action, and
the final choice is the same confirmation, among nodes scored on every question the bar was.

One addition (`SearchConfig.widen_blocked`, on by default): a node that may not be expanded yet
because its parent is narrower than W still gets its U_gen, as a generate action on that parent
(`Action.via` names it). Without it, a first child far better than the root wins every step by
re-evaluation and the tree never grows; with it, the parent is widened to W and the promising
child becomes expandable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Mapping

from automemo.search.config import SearchConfig
from automemo.search.questions import Race

TIE_TOLERANCE = 1e-12
"""Scores closer than this are a tie: sums of the same terms in another order differ in the last
bits, and a tie must go to generate / the older node whatever the float rounding did."""


@dataclass(frozen=True)
class NodeStats:
    """One node as the policy sees it. `first_score` s(c) and `parent_snapshot` s_par(c) are None
    for the root and for a node not evaluated yet; `failed` nodes (generations that never passed
    their exam) are ignored by every formula."""

    id: int
    parent: int | None
    mean: float          # μ(v) over its n full evaluations (0.0 while n = 0)
    n: int               # n(v): full evaluations of v
    m: int               # m(v): evaluated (non-failed) children of v
    first_score: float | None = None
    parent_snapshot: float | None = None
    failed: bool = False
    # Per-task scores of the node's latest evaluation, by task id (empty when not recorded), and
    # whether all its evaluations were exact (deterministic scoring of every task).
    task_scores: Mapping[str, float] = field(default_factory=dict)
    exact: bool = False
    # A seed the sweep transplanted (the root is a hand design too, by being the root). With
    # exact evaluation the best hand design is what the final selection must beat.
    reference: bool = False
    # With a question budget: the validation questions v was asked, and why early stopping
    # ended its scoring ("" when it did not).
    questions: int = 0
    stopped: str = ""


@dataclass(frozen=True)
class TreeStats:
    nodes: tuple[NodeStats, ...]
    total_evaluations: int   # evaluations so far, the root's first one included (N, unsampled)
    # With a question budget: questions per sample and the validation questions there are
    # (0: every evaluation scores every question).
    sample_size: int = 0
    validation_questions: int = 0
    # With a question budget: the one order every node is asked its questions in, and the final
    # confirmation's race once it started (`automemo.search.halving`).
    order: tuple[str, ...] = ()
    race: Race | None = None

    @property
    def sampled(self) -> bool:
        """Whether evaluations score samples that grow (a search with a question budget)."""
        return self.sample_size > 0

    def __post_init__(self) -> None:
        roots = [v for v in self.nodes if v.parent is None and not v.failed]
        if len(roots) != 1:
            raise ValueError(f"the tree needs exactly one root, found {len(roots)}")
        ids = {v.id for v in self.nodes}
        if len(ids) != len(self.nodes):
            raise ValueError("node ids must be unique")
        counted = sum(v.n for v in self.nodes if not v.failed)
        if counted != self.total_evaluations:
            raise ValueError(
                f"N = {self.total_evaluations} but the nodes hold {counted} evaluations"
            )
        for v in self.nodes:
            if v.failed:
                continue
            m = len(evaluated_children(self, v.id))
            if m != v.m:
                raise ValueError(f"node {v.id}: m = {v.m} but it has {m} evaluated children")

    @property
    def root(self) -> NodeStats:
        return next(v for v in self.nodes if v.parent is None and not v.failed)

    def node(self, node_id: int) -> NodeStats:
        for v in self.nodes:
            if v.id == node_id:
                return v
        raise KeyError(f"no node {node_id} in the tree")


@dataclass(frozen=True)
class Action:
    kind: Literal["evaluate", "generate"]
    node_id: int          # the node evaluated, or the parent the child is generated from
    score: float          # U_eval or U_gen when the action was chosen
    via: int | None = None  # a widening: the blocked node whose U_gen this is


def evaluated_children(stats: TreeStats, node_id: int) -> list[NodeStats]:
    return [c for c in stats.nodes if c.parent == node_id and not c.failed and c.n > 0]


def _explore(total: int, count: float) -> float:
    """sqrt(ln N / count): zero at N = 1 (one evaluation says nothing about exploring)."""
    if total < 1:
        raise ValueError("N must be >= 1: evaluate the root before asking the policy")
    if count <= 0:
        raise ValueError("the exploration term needs a positive count")
    return math.sqrt(math.log(total) / count)


def count(v: NodeStats, stats: TreeStats) -> float:
    """n(v): v's evaluations, or with samples that grow, the samples' worth of questions it was
    asked (a confirmation of the rest counts as the samples it replaces)."""
    if stats.sampled:
        return max(v.questions, 1) / stats.sample_size
    return v.n


def total(stats: TreeStats) -> float:
    """N = Σ n(v) over live nodes (`count`)."""
    if stats.sampled:
        return sum(max(v.questions, 1) for v in stats.nodes if not v.failed and v.n > 0) / stats.sample_size
    return stats.total_evaluations


def complete(v: NodeStats, stats: TreeStats) -> bool:
    """v was asked every validation question (always so without a question budget)."""
    return not stats.sampled or v.questions >= stats.validation_questions


def uses_task_uncertainty(stats: TreeStats, config: SearchConfig) -> bool:
    """Whether the rules of per-question scores apply: with samples that grow, always; else
    forced by `uncertainty = "tasks"`, or ("auto") every evaluated node's evaluations were exact
    and recorded their task scores."""
    if stats.sampled:
        return True
    if config.uncertainty != "auto":
        return config.uncertainty == "tasks"
    evaluated = [v for v in stats.nodes if not v.failed and v.n > 0]
    return bool(evaluated) and all(v.exact and v.task_scores for v in evaluated)


def standard_error(scores: Mapping[str, float]) -> float:
    """SE of the mean of per-task scores: sd / sqrt(T); 0 with fewer than two tasks."""
    values = list(scores.values())
    if len(values) < 2:
        return 0.0
    mean = sum(values) / len(values)
    var = sum((x - mean) ** 2 for x in values) / (len(values) - 1)
    return math.sqrt(var / len(values))


@dataclass(frozen=True)
class PairedDifference:
    """μ_v − μ_w on the tasks both were scored on, with the standard error of that difference
    (the sd of the per-task differences / sqrt(T)): task difficulty, shared by both, cancels."""

    difference: float
    se: float
    tasks: int


def paired(v: NodeStats, w: NodeStats) -> PairedDifference:
    shared = sorted(set(v.task_scores) & set(w.task_scores))
    if not shared:
        raise ValueError(f"nodes {v.id} and {w.id} share no scored task")
    diffs = {t: v.task_scores[t] - w.task_scores[t] for t in shared}
    return PairedDifference(sum(diffs.values()) / len(diffs), standard_error(diffs), len(diffs))


def uncertainty(v: NodeStats, stats: TreeStats, config: SearchConfig) -> float:
    """The ± term actually used for v: z · SE(v) when evaluation is exact, else the paper's
    c_e · sqrt(ln N / n(v))."""
    if v.n < 1:
        raise ValueError(f"node {v.id} has no evaluation; its uncertainty needs n(v) >= 1")
    if uses_task_uncertainty(stats, config):
        return config.z * standard_error(v.task_scores)
    return config.c_e * _explore(stats.total_evaluations, v.n)


def eval_score(v: NodeStats, stats: TreeStats, config: SearchConfig) -> float:
    """U_eval(v). Only defined for n(v) ≥ 1: an unevaluated node is never re-evaluated. With
    samples that grow, z · SE(v) · sqrt(ln N) (UCB1-Normal's shape: the measured spread of v's
    question scores over the square root of how many it was asked, grown slowly with N): a
    sample is bought where v's questions say its μ is uncertain, not by a fixed c_e."""
    if v.n < 1:
        raise ValueError(f"node {v.id} has no evaluation; U_eval needs n(v) >= 1")
    if stats.sampled:
        return v.mean + uncertainty(v, stats, config) * math.sqrt(math.log(max(total(stats), 1.0)))
    return v.mean + uncertainty(v, stats, config)


def _explore_at_least_one(n_total: float, n: float) -> float:
    """`_explore` for sample counts, which are fractions: ln of a total below one sample is 0."""
    return math.sqrt(math.log(max(n_total, 1.0)) / n)


def prior(v: NodeStats, stats: TreeStats, config: SearchConfig) -> float:
    """π(v): a node that already beats the no-memory root is presumed worth expanding."""
    return config.kappa * max(0.0, v.mean - stats.root.mean)


def improvement(c: NodeStats) -> float:
    """Δ(c) = max(0, s(c) − s_par(c)); zero for the root and unevaluated nodes."""
    if c.first_score is None or c.parent_snapshot is None:
        return 0.0
    return max(0.0, c.first_score - c.parent_snapshot)


def potential(v: NodeStats, stats: TreeStats, config: SearchConfig) -> float:
    """ĝ(v): observed gains of v's children, smoothed towards the prior by α pseudo-counts."""
    gains = sum(improvement(c) for c in evaluated_children(stats, v.id))
    return (gains + config.alpha * prior(v, stats, config)) / (v.m + config.alpha)


def gen_score(v: NodeStats, stats: TreeStats, config: SearchConfig) -> float:
    """U_gen(v); with exact evaluation μ(v) is replaced by its upper bound μ(v) + z · SE(v)."""
    if v.n < 1:
        raise ValueError(f"node {v.id} has no evaluation; U_gen needs μ(v)")
    optimism = uncertainty(v, stats, config) if uses_task_uncertainty(stats, config) else 0.0
    explore = (_explore_at_least_one(total(stats), v.m + 1) if stats.sampled
               else _explore(stats.total_evaluations, v.m + 1))
    return v.mean + optimism + potential(v, stats, config) + config.c_g * explore


def is_expandable(v: NodeStats, stats: TreeStats, config: SearchConfig) -> bool:
    """Minimum width: the root always; another node once its parent has W evaluated children."""
    if v.failed or v.n < 1:
        return False
    if v.parent is None:
        return True
    return stats.node(v.parent).m >= config.min_width


def candidates(stats: TreeStats, config: SearchConfig) -> list[Action]:
    """Every action the policy weighs this step, with its score (recorded for the run's log)."""
    out: list[Action] = []
    if stats.sampled:  # a sample of questions not asked yet, while there are any to ask
        evaluable = lambda v: not complete(v, stats) and not v.stopped  # noqa: E731
    else:  # an exact repeat returns the same number: it is never worth a step
        exact = uses_task_uncertainty(stats, config)
        evaluable = lambda v: not exact  # noqa: E731
    for v in stats.nodes:
        if v.failed or v.n < 1:
            continue
        if evaluable(v):
            out.append(Action("evaluate", v.id, eval_score(v, stats, config)))
        if is_expandable(v, stats, config):
            out.append(Action("generate", v.id, gen_score(v, stats, config)))
        elif config.widen_blocked and v.parent is not None:
            out.append(Action("generate", v.parent, gen_score(v, stats, config), via=v.id))
    return out


def choose_action(stats: TreeStats, config: SearchConfig) -> Action:
    """The best of all evaluate and expandable generate actions (and widenings); ties go to
    generate, then to the older (smaller-id) node, then to a direct generate over a widening."""
    options = candidates(stats, config)
    if not options:
        raise ValueError("no evaluated node in the tree: evaluate the root first")
    best = max(a.score for a in options)
    tied = [a for a in options if best - a.score <= TIE_TOLERANCE]
    return min(tied, key=lambda a: (a.kind != "generate", a.node_id, -1 if a.via is None else a.via))


def lcb(v: NodeStats, stats: TreeStats, config: SearchConfig) -> float:
    """LCB(v) = μ(v) − c_e · sqrt(ln N / n(v)): a score that one lucky evaluation cannot buy;
    with exact evaluation μ(v) − z · SE(v): a score a few lucky tasks cannot buy."""
    if v.n < 1:
        raise ValueError(f"node {v.id} has no evaluation; LCB needs n(v) >= 1")
    return v.mean - uncertainty(v, stats, config)


def is_hand_design(v: NodeStats) -> bool:
    """The root or a seed the sweep transplanted: a design the search did not generate."""
    return v.reference or v.parent is None


def reference(stats: TreeStats) -> NodeStats:
    """The best hand design (root or swept seed) by μ, the older on a tie: the bar. Once the
    final confirmation's race started, the bar it races with (asking it more questions moves
    its μ, and the bar must not change under the race)."""
    if stats.race is not None and any(v.id == stats.race.bar for v in stats.nodes):
        return stats.node(stats.race.bar)
    designs = [v for v in stats.nodes if not v.failed and v.n > 0 and is_hand_design(v)]
    if not designs:
        raise ValueError("no evaluated hand design (root or swept seed) in the tree")
    return max(designs, key=lambda v: (v.mean, -v.id))


def selection_bound(v: NodeStats, stats: TreeStats, config: SearchConfig) -> float:
    """What the final selection maximises: with exact evaluation LCB_b(v), the paired bound
    against the best hand design b; otherwise LCB(v)."""
    if not uses_task_uncertainty(stats, config):
        return lcb(v, stats, config)
    bar = reference(stats)
    if v.id == bar.id:
        return bar.mean
    try:
        d = paired(v, bar)
    except ValueError:  # no shared task: nothing says v beats the bar
        return lcb(v, stats, config)
    return bar.mean + d.difference - config.z * d.se


@dataclass(frozen=True)
class ConfirmedCandidate:
    """One of the best few nodes, paired with the bar b on the search questions."""

    node_id: int
    mean: float
    difference: float   # d(v, b): mean paired difference on the questions both were scored on
    se: float           # its standard error
    tasks: int          # how many questions were paired
    bound: float        # LCB_b(v) = μ(b) + d − z · SE(d)
    complete: bool      # v was scored on every question b was (else it cannot be confirmed)
    clears: bool        # complete and LCB_b(v) > μ(b): a lead bigger than z paired SEs
    # With a question budget (halving.py): the race round it was dropped in (None: not dropped).
    dropped_in: int | None = None


@dataclass(frozen=True)
class Confirmation:
    """The final choice with exact evaluation and its evidence (final.json's "confirmation")."""

    bar: int            # the best hand design b
    bar_mean: float     # μ(b)
    tasks: int          # the search questions: every question b was scored on
    z: float
    candidates: tuple[ConfirmedCandidate, ...]
    chosen: int         # the candidate with the highest clearing bound, else the bar
    # With a question budget: the race's halving rounds (halving.RaceRound); () without.
    rounds: tuple = ()
    raced: bool = False

    @property
    def rule(self) -> str:
        if self.raced:
            return (f"successive halving: the best {len(self.candidates)} non-hand-designed node(s) by μ and "
                    f"the best hand design #{self.bar} asked the same questions in rounds, the worse half "
                    f"dropped each round; the last one is chosen if μ(b) + d − {self.z:g}·SE(d) > μ(b) on "
                    f"the questions it shares with #{self.bar}; else #{self.bar} is kept")
        return (f"the best {len(self.candidates)} non-hand-designed node(s) by μ, each paired with the "
                f"best hand design #{self.bar} on all {self.tasks} search questions; chosen if "
                f"μ(b) + d − {self.z:g}·SE(d) > μ(b), the highest such bound wins; else #{self.bar} is kept")


def confirm_final(stats: TreeStats, config: SearchConfig) -> Confirmation:
    """The confirmation of the final choice (exact evaluation; see the module docstring). With
    samples that grow it is a race instead: `automemo.search.halving.final_confirmation`."""
    if not uses_task_uncertainty(stats, config):
        raise ValueError("the final confirmation needs exact evaluation (per-task scores)")
    if stats.sampled:
        raise ValueError("with a question budget the final confirmation is a race: "
                         "automemo.search.halving.final_confirmation")
    bar = reference(stats)
    ranked = sorted((v for v in stats.nodes if not v.failed and v.n > 0 and not is_hand_design(v)),
                    key=lambda v: (-v.mean, v.id))
    out: list[ConfirmedCandidate] = []
    for v in ranked[:config.confirm_top]:
        try:
            d = paired(v, bar)
        except ValueError:  # no shared question: nothing says v beats the bar
            continue
        bound = bar.mean + d.difference - config.z * d.se
        complete = set(bar.task_scores) <= set(v.task_scores)
        out.append(ConfirmedCandidate(v.id, v.mean, d.difference, d.se, d.tasks, bound, complete,
                                      complete and bound - bar.mean > TIE_TOLERANCE))
    clearing = [c for c in out if c.clears]
    chosen = max(clearing, key=lambda c: (c.bound, -c.node_id)).node_id if clearing else bar.id
    return Confirmation(bar.id, bar.mean, len(bar.task_scores), config.z, tuple(out), chosen)


def select_final(stats: TreeStats, config: SearchConfig) -> NodeStats:
    """With exact evaluation, the confirmation's choice (`confirm_final`); otherwise argmax of
    `selection_bound` (the LCB) over evaluated nodes, a tie to the older node."""
    evaluated = [v for v in stats.nodes if not v.failed and v.n > 0]
    if not evaluated:
        raise ValueError("no evaluated node to select from")
    if uses_task_uncertainty(stats, config):
        return stats.node(confirm_final(stats, config).chosen)
    bounds = {v.id: selection_bound(v, stats, config) for v in evaluated}
    best = max(bounds.values())
    bar = reference(stats).id if uses_task_uncertainty(stats, config) else None
    return min(
        (v for v in evaluated if best - bounds[v.id] <= TIE_TOLERANCE),
        key=lambda v: (v.id != bar, v.id),
    )
