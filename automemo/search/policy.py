"""The search policy (docs/search.md), as pure functions of the tree's statistics.

No I/O, no clock, no randomness: given `TreeStats` and a `SearchConfig`, the same action comes
out every time, which is what makes the policy testable on hand-computed trees and a resumed run
identical to an uninterrupted one. The formulas are a reconstruction (the paper's equations did
not survive in its text); they live here and nowhere else, under the names docs/search.md uses.
What differs between the three evaluation regimes (repeats, exact, sampled: n, N, ±, whether a
re-evaluation buys anything) is one object each in regimes.py, chosen once per decision; the
statistics every regime shares (paired differences, the bar) are in tree_stats.py.

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
the final choice is a race by successive halving among the best few and the bar
(`automemo.search.halving`), its winner held to the bar by the same paired bound.

One addition (`SearchConfig.widen_blocked`, on by default): a node that may not be expanded yet
because its parent is narrower than W still gets its U_gen, as a generate action on that parent
(`Action.via` names it). Without it, a first child far better than the root wins every step by
re-evaluation and the tree never grows; with it, the parent is widened to W and the promising
child becomes expandable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from automemo.search.config import SearchConfig
from automemo.search import win_rule
from automemo.search.regimes import Regime, complete, regime_for
from automemo.search.tree_stats import (TIE_TOLERANCE, NodeStats, PairedDifference, TreeStats, paired_scores,  # noqa: F401
                                        evaluated_children, fits, is_candidate, is_hand_design, paired,
                                        reference, standard_error)

@dataclass(frozen=True)
class Action:
    kind: Literal["evaluate", "generate"]
    node_id: int          # the node evaluated, or the parent the child is generated from
    score: float          # U_eval or U_gen when the action was chosen
    via: int | None = None  # a widening: the blocked node whose U_gen this is


def regime(stats: TreeStats, config: SearchConfig) -> Regime:
    """The evaluation regime of this tree (regimes.py), chosen once per decision."""
    return regime_for(stats, config)


def count(v: NodeStats, stats: TreeStats, config: SearchConfig = SearchConfig()) -> float:
    """n(v): v's evaluations, or with samples that grow, the samples' worth of questions."""
    return regime(stats, config).count(v, stats)


def total(stats: TreeStats, config: SearchConfig = SearchConfig()) -> float:
    """N = Σ n(v) over live nodes (`count`)."""
    return regime(stats, config).total(stats)


def uses_task_uncertainty(stats: TreeStats, config: SearchConfig) -> bool:
    """Whether the rules of per-question scores apply (the exact and sampled regimes)."""
    return regime(stats, config).per_task


def uncertainty(v: NodeStats, stats: TreeStats, config: SearchConfig) -> float:
    """The ± term actually used for v: z · SE(v) with per-question scores, else the paper's
    c_e · sqrt(ln N / n(v))."""
    return regime(stats, config).uncertainty(v, stats)


def eval_score(v: NodeStats, stats: TreeStats, config: SearchConfig) -> float:
    """U_eval(v). Only defined for n(v) ≥ 1: an unevaluated node is never re-evaluated."""
    return regime(stats, config).eval_score(v, stats)


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


def gen_score(v: NodeStats, stats: TreeStats, config: SearchConfig, rule: Regime | None = None) -> float:
    """U_gen(v); with per-question scores μ(v) is replaced by its upper bound μ(v) + z · SE(v)."""
    if v.n < 1:
        raise ValueError(f"node {v.id} has no evaluation; U_gen needs μ(v)")
    rule = rule or regime(stats, config)
    return (v.mean + rule.optimism(v, stats) + potential(v, stats, config)
            + config.c_g * rule.generate_explore(v, stats))


def is_expandable(v: NodeStats, stats: TreeStats, config: SearchConfig) -> bool:
    """Minimum width: the root always; another node once its parent has W evaluated children."""
    if v.failed or v.n < 1:
        return False
    if v.parent is None:
        return True
    return stats.node(v.parent).m >= config.min_width


def candidates(stats: TreeStats, config: SearchConfig) -> list[Action]:
    """Every action the policy weighs this step, with its score (recorded for the run's log)."""
    rule = regime(stats, config)
    out: list[Action] = []
    for v in stats.nodes:
        if v.failed or v.n < 1:
            continue
        if rule.evaluable(v, stats):
            out.append(Action("evaluate", v.id, rule.eval_score(v, stats)))
        if is_expandable(v, stats, config):
            out.append(Action("generate", v.id, gen_score(v, stats, config, rule)))
        elif config.widen_blocked and v.parent is not None:
            out.append(Action("generate", v.parent, gen_score(v, stats, config, rule), via=v.id))
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
class GuardCheck:
    """A candidate against the bar on one guard metric (`Benchmark.guard_metrics`), paired on the
    questions both have it for: it holds unless the candidate loses by more than z paired SEs."""

    metric: str
    difference: float   # candidate − bar, mean over the shared questions
    se: float
    tasks: int
    holds: bool


def guard_checks(v: NodeStats, bar: NodeStats, z: float) -> tuple[GuardCheck, ...]:
    """v held to the bar on every guard metric the bar was scored on (none recorded: none)."""
    out = []
    for metric in sorted(bar.guard_scores):
        try:
            d = paired_scores(v.guard_scores.get(metric, {}), bar.guard_scores[metric])
        except ValueError:  # no shared question has the metric: nothing to hold v to
            continue
        out.append(GuardCheck(metric, d.difference, d.se, d.tasks, win_rule.holds(d, z)))
    return tuple(out)


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
    guards: tuple[GuardCheck, ...] = ()   # the guard metrics against the bar

    @property
    def guards_hold(self) -> bool:
        return all(g.holds for g in self.guards)

    @property
    def admissible(self) -> bool:
        """Clears the bar and loses on no guard: what the final choice may take."""
        return self.clears and self.guards_hold


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
    # With exact evaluation and `search.select_shallowest`: the node the bounds chose (the
    # highest clearing bound) when a shallower one within z paired SEs of it was chosen instead.
    leader: int | None = None

    @property
    def rule(self) -> str:
        if self.raced:
            return (f"successive halving: the {len(self.candidates)} non-hand-designed node(s) with the highest "
                    f"upper bound on their lead over #{self.bar} (a near-copy of one left out) and "
                    f"the best hand design #{self.bar} asked the same questions in rounds, the worse half "
                    f"dropped each round; the last one is chosen if μ(b) + d − {self.z:g}·SE(d) > μ(b) on "
                    f"the questions it shares with #{self.bar}; else #{self.bar} is kept")
        rule = (f"the best {len(self.candidates)} non-hand-designed node(s) by μ, each paired with the "
                f"best hand design #{self.bar} on all {self.tasks} search questions; chosen if "
                f"μ(b) + d − {self.z:g}·SE(d) > μ(b) and it loses by no more than {self.z:g} paired SE on no "
                f"guard metric, the highest such bound wins; else #{self.bar} is kept")
        if self.leader is not None:
            rule += (f"; then the fewest generations from the root among the nodes within {self.z:g} paired "
                     f"SE of #{self.leader} that clear #{self.bar} as well: #{self.chosen}")
        return rule


def confirm_final(stats: TreeStats, config: SearchConfig) -> Confirmation:
    """The confirmation of the final choice (exact evaluation; see the module docstring). With
    samples that grow it is a race instead: `automemo.search.halving.final_confirmation`."""
    if not uses_task_uncertainty(stats, config):
        raise ValueError("the final confirmation needs exact evaluation (per-task scores)")
    if stats.sampled:
        raise ValueError("with a question budget the final confirmation is a race: "
                         "automemo.search.halving.final_confirmation")
    bar = reference(stats)
    # With cost bounds only the nodes within them are candidates (the bar is the best hand
    # design within them, `reference`).
    ranked = sorted((v for v in stats.nodes if is_candidate(v, stats, bar)), key=lambda v: (-v.mean, v.id))
    out: list[ConfirmedCandidate] = []
    for v in ranked[:config.confirm_top]:
        try:
            d = paired(v, bar)
        except ValueError:  # no shared question: nothing says v beats the bar
            continue
        bound = bar.mean + d.difference - config.z * d.se
        complete = set(bar.task_scores) <= set(v.task_scores)
        out.append(ConfirmedCandidate(v.id, v.mean, d.difference, d.se, d.tasks, bound, complete,
                                      complete and win_rule.clears(d, config.z),
                                      guards=guard_checks(v, bar, config.z)))
    # A candidate that loses on a guard metric is passed over: the next one is taken, then the bar.
    clearing = [c for c in out if c.admissible]
    chosen = max(clearing, key=lambda c: (c.bound, -c.node_id)).node_id if clearing else bar.id
    if not clearing or not config.select_shallowest:
        return Confirmation(bar.id, bar.mean, len(bar.task_scores), config.z, tuple(out), chosen)
    pick = shallowest_within(stats, config, stats.node(chosen), bar)
    if pick.node_id == chosen:
        return Confirmation(bar.id, bar.mean, len(bar.task_scores), config.z, tuple(out), chosen)
    if all(c.node_id != pick.node_id for c in out):
        out.append(pick)
    return Confirmation(bar.id, bar.mean, len(bar.task_scores), config.z, tuple(out), pick.node_id, leader=chosen)


def generations(stats: TreeStats, v: NodeStats) -> int:
    """How many edits separate v from the root (a swept seed: 1)."""
    depth = 0
    while v.parent is not None:
        v, depth = stats.node(v.parent), depth + 1
    return depth


def shallowest_within(stats: TreeStats, config: SearchConfig, leader: NodeStats, bar: NodeStats) -> ConfirmedCandidate:
    """The one-standard-error rule (Breiman, Friedman, Olshen and Stone, "Classification and
    Regression Trees", 1984, §3.4.3; Hastie, Tibshirani and Friedman, "The Elements of Statistical
    Learning", §7.10): of the nodes whose paired difference with the `leader` (the confirmation's
    choice) is within z paired SEs on every search question, and which clear the bar themselves,
    the simplest; here the one fewest generations from the root (then the highest μ). Each
    generation is a choice made on the validation questions (a parent expanded for its μ, a child
    kept for beating it), so a deep node's small validation lead over a shallow one is the most
    inflated by selection: on the dev data a crossover chosen for +0.005 on validation over the
    ranked starter, one of its two parents, scored 0.010 less on test (docs/discovery.md)."""
    depth = generations(stats, leader)
    best, chosen = (depth, 0.0, 0), leader
    for v in stats.nodes:
        if v.id == leader.id or not is_candidate(v, stats, bar):
            continue
        if not set(bar.task_scores) <= set(v.task_scores):
            continue
        try:
            lead, to_bar = paired(leader, v), paired(v, bar)
        except ValueError:
            continue
        if lead.difference > config.z * lead.se:
            continue  # the leader's lead over v is more than z paired SEs: not within one SE
        if not win_rule.clears(to_bar, config.z):  # does not clear the bar
            continue
        if not all(g.holds for g in guard_checks(v, bar, config.z)):  # loses on a guard metric
            continue
        key = (generations(stats, v), -v.mean, v.id)
        if key[0] < depth and key < best:  # only a shallower node displaces the leader
            best, chosen = key, v
    d = paired(chosen, bar)
    bound = bar.mean + d.difference - config.z * d.se
    return ConfirmedCandidate(chosen.id, chosen.mean, d.difference, d.se, d.tasks, bound, True, True,
                              guards=guard_checks(chosen, bar, config.z))


def final_by_bound(stats: TreeStats, config: SearchConfig) -> NodeStats:
    """With exact evaluation, the confirmation's choice (`confirm_final`); otherwise argmax of
    `selection_bound` (the LCB) over evaluated nodes within the cost bounds (all of them when
    none is), a tie to the older node."""
    evaluated = [v for v in stats.nodes if not v.failed and v.n > 0]
    if not evaluated:
        raise ValueError("no evaluated node to select from")
    evaluated = [v for v in evaluated if fits(v)] or evaluated
    if uses_task_uncertainty(stats, config):
        return stats.node(confirm_final(stats, config).chosen)
    bounds = {v.id: selection_bound(v, stats, config) for v in evaluated}
    best = max(bounds.values())
    bar = reference(stats).id if uses_task_uncertainty(stats, config) else None
    return min(
        (v for v in evaluated if best - bounds[v.id] <= TIE_TOLERANCE),
        key=lambda v: (v.id != bar, v.id),
    )
