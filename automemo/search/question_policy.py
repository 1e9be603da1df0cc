"""What a search with a question budget decides besides the step's action, as pure functions of
the tree's statistics (`policy.TreeStats` with `sampled`): when a child stops being scored, how
many questions the final confirmation keeps, and which node it scores next (docs/search.md,
"Samples that grow").

μ(v) with samples is `paired_means`: a node's mean, moved onto the questions of the node scored
on the most, so that nodes asked different questions compare as if asked the same ones.

Early stopping (successive-halving style). A child's first sample is paired with the leader (the
node with the highest LCB = μ − z·SE) on the questions both were asked, which the shared order
makes the child's whole sample:

    stop(c)  ⇔  d(c, L) + z_s · SE(d(c, L)) < 0

that is, even the child's upper bound on the same questions is below the leader. A stopped node
gets no evaluate action and is not a candidate of the final confirmation; it stays a parent.
Pairing is what makes a first sample enough: the questions' difficulty, shared by both, cancels.

The final confirmation. Before the search ends, the best few candidates and the bar race by
successive halving on the same questions (`halving`), one node's block of questions per step,
and the winner is held to the bar by the paired bound. While the search runs it keeps the
questions the bar and the leading candidate would need to be asked every question
(`confirmation_reserve`): what the race's rounds and its duel spend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from automemo.search import halving, policy
from automemo.search.config import SearchConfig
from automemo.search.policy import TIE_TOLERANCE, NodeStats, TreeStats


def paired_means(scores: Mapping[int, Mapping[str, float]]) -> dict[int, float]:
    """μ(v) of each node from its per-question scores, made comparable across samples of
    different questions: the anchor A (the node scored on the most questions, the older on a
    tie; the shared order makes its questions a superset of everyone's) keeps its own mean, and
    every other node gets μ(A) plus its mean paired difference with A on the questions both were
    scored on. A harder second sample then lowers no node against the others; where two nodes
    were asked the same questions this is each one's own mean."""
    scored = {v: s for v, s in scores.items() if s}
    if not scored:
        return {}
    anchor = max(scored, key=lambda v: (len(scored[v]), -v))
    base = scored[anchor]
    mu = sum(base.values()) / len(base)
    out = {}
    for v, own in scored.items():
        shared = [q for q in own if q in base]
        if v == anchor or not shared:
            out[v] = sum(own.values()) / len(own)
        else:
            out[v] = mu + sum(own[q] - base[q] for q in shared) / len(shared)
    return out


@dataclass(frozen=True)
class EarlyStop:
    """Why a child's first sample ends its scoring."""

    leader: int
    difference: float   # d(c, L) on the questions both were asked
    se: float
    tasks: int
    bound: float        # d + z_s · SE(d), below 0

    @property
    def reason(self) -> str:
        return (f"stopped early: on the {self.tasks} questions it shares with the leader #{self.leader}, "
                f"d = {self.difference:+.3f} ± {self.se:.3f} (SE); its upper bound {self.bound:+.3f} is below 0")


def leader(stats: TreeStats, config: SearchConfig) -> NodeStats | None:
    """The node with the highest LCB, stopped ones aside (the older on a tie)."""
    live = [v for v in stats.nodes if not v.failed and v.n > 0 and not v.stopped]
    if not live:
        return None
    return max(live, key=lambda v: (policy.lcb(v, stats, config), -v.id))


def early_stop(child: NodeStats, stats: TreeStats, config: SearchConfig) -> EarlyStop | None:
    """Whether `child`, just scored on its first sample and not yet in `stats` (the tree it was
    made on), stops there. Never without samples, with `early_stop` off, or with no leader."""
    if not stats.sampled or not config.early_stop:
        return None
    best = leader(stats, config)
    if best is None:
        return None
    try:
        d = policy.paired(child, best)
    except ValueError:  # nothing shared: nothing says the child is worse
        return None
    bound = d.difference + config.early_stop_z * d.se
    if bound >= -TIE_TOLERANCE:
        return None
    return EarlyStop(best.id, d.difference, d.se, d.tasks, bound)


def _missing(v: NodeStats, stats: TreeStats) -> int:
    return max(0, stats.validation_questions - v.questions)


def confirmation_reserve(stats: TreeStats, config: SearchConfig) -> int:
    """Questions the confirmation still needs for the bar and the leading candidate: what a
    search step may not spend."""
    if not stats.sampled or not any(not v.failed and v.n > 0 for v in stats.nodes):
        return 0
    need = _missing(policy.reference(stats), stats)
    best = halving.race_arms(stats, config)[:1]
    return need + (_missing(best[0], stats) if best else 0)


@dataclass(frozen=True)
class ConfirmationStep:
    node_id: int
    questions: int      # how many of the questions it was not asked yet it is asked now


def next_confirmation(stats: TreeStats, config: SearchConfig, left: int) -> ConfirmationStep | None:
    """The confirmation's next node with `left` questions of budget left, None when it is done:
    the next arm of the race's current round (the bar first), then the duel's
    (`halving.race_state`)."""
    if not stats.sampled or left <= 0:
        return None
    needs = halving.race_state(stats, halving.current_race(stats, config), left).needs
    return ConfirmationStep(*needs[0]) if needs else None
