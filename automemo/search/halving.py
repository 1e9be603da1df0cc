"""The final confirmation with a question budget: a fixed-budget best-arm identification by
successive halving (Karnin, Koren and Somekh, "Almost optimal exploration in multi-armed
bandits", ICML 2013), as pure functions of the tree's statistics (docs/search.md, "Samples that
grow").

A first sample of a few dozen questions can order programs wrongly; paying the first-sample
leader every question is then a bet. Instead the few candidates the samples least rule out
(hand designs and stopped nodes aside, `SearchConfig.race_candidates`; ranked by the upper
bound of their paired lead over the bar, `arm_bound`) race in rounds:

    round r: every surviving candidate and the bar b are scored on the first L_r questions of
             the one stratified order (`questions.QuestionPlan`); the candidates are ranked by
             their mean on exactly those questions (the same questions for all: ranking by mean
             is ranking by paired difference with the round's leader), and the better half
             (rounded up) goes on;
    the duel: the last candidate w and b are scored on as many more questions as the budget
             left pays for, both on the same ones;
    decision: w is chosen if LCB_b(w) = μ(b) + d(w, b) − z · SE(d) > μ(b) (§23), else b is kept.

The bar races in every round, never ranked with the candidates: the final decision pairs it
with the winner, so it is asked every question the winner is. Round budgets follow Karnin et
al.: the questions left when the race starts are split evenly between the ⌈log2 c⌉ halving
rounds; in round r each of the c_r candidates and the bar get an equal part
(L_r − L_{r−1} = ⌊share / (c_r + 1)⌋). What the rounds do not spend (an arm already asked more,
rounding) goes to the duel. Measured on the planted fixture of tests/test_halving.py (the truly
best ranked third by its first sample, 100 seeds, four candidates): this split picks it in 97;
giving the duel an equal share as a further round, in 89.

The race (arms, bar, L_r) is fixed when it starts and kept in the run directory
(`questions.Race`); everything after is replayed from the per-question scores, which never
change once committed, so a run killed mid-race resumes where it stopped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from automemo.search import policy, win_rule
from automemo.search.config import SearchConfig
from automemo.search.policy import NodeStats, TreeStats
from automemo.search.questions import Race


@dataclass(frozen=True)
class RaceRound:
    """One halving round as it was run: the prefix, the candidates' means on it, who went on."""

    prefix: int                          # L_r
    means: tuple[tuple[int, float], ...]  # (candidate, mean on the prefix), best first
    kept: tuple[int, ...]
    dropped: tuple[int, ...]


@dataclass(frozen=True)
class RaceState:
    """Where a race stands: the rounds run, the survivors, and what the next step asks."""

    rounds: tuple[RaceRound, ...]
    survivors: tuple[int, ...]           # best first; one once the halving is over
    needs: tuple[tuple[int, int], ...]   # (node, questions) the current round or duel still asks

    @property
    def winner(self) -> int | None:
        return self.survivors[0] if self.survivors else None


def race_arms(stats: TreeStats, config: SearchConfig) -> list[NodeStats]:
    """The candidates that race: of the nodes that are not hand designs and not stopped, the few
    whose upper bound on their lead over the bar is highest (`arm_bound`), not the few with the
    best μ, and a near-copy of an arm already chosen left out (`copies`). A first sample says
    least about a program unlike the bar (their per-question differences spread widely), so
    ranking on μ alone would leave a different program out on one unlucky sample while
    near-copies of the leader, whose small samples rank them closely, take every arm; where all
    arms are alike, the bound ranks them as μ does."""
    designs = [v for v in stats.nodes if not v.failed and v.n > 0 and policy.is_hand_design(v)]
    bar = policy.reference(stats) if designs else None
    pool = [v for v in stats.nodes if bar is not None and not v.stopped and policy.is_candidate(v, stats, bar)]
    arms: list[NodeStats] = []
    for v in sorted(pool, key=lambda v: (-arm_bound(v, bar, config), -v.mean, v.id)):
        if len(arms) == config.race_candidates:
            break
        if not any(copies(v, a, config) for a in arms):
            arms.append(v)
    return arms


def arm_bound(v: NodeStats, bar: NodeStats, config: SearchConfig) -> float:
    """μ(b) + d(v, b) + z_s · SE(d(v, b)) on the questions v and the bar b share, z_s the bound
    early stopping uses (`early_stop_z`): the most v may lead the bar by that its questions do
    not rule out. μ(v) when they share none."""
    try:
        d = policy.paired(v, bar)
    except ValueError:
        return v.mean
    return bar.mean + d.difference + config.early_stop_z * d.se


def copies(a: NodeStats, b: NodeStats, config: SearchConfig) -> bool:
    """Whether `a` and `b` are near-copies: on the questions both were asked, the upper bound
    (Wilson's, z = `early_stop_z`) on the share where their scores differ is below
    `SearchConfig.race_distinct`. A candidate that is a chosen arm's copy (that arm's bound is
    higher) races as it. The bound, not the observed share, so that a small sample on which two
    good programs happen to agree does not make them copies: agreeing on all of 39 shared
    questions bounds the share at 0.093 (copies at 0.1), on all of 12 only at 0.25. On a
    quarter-budget dev-data search (docs/discovery.md) a crossover and its copy, identical on
    their 39 first-sample questions, took two of the four arms while the ranked starter, unlike
    both, was left out, and the race chose the copy (validation on all 310 questions: the ranked
    starter 0.833, the copy 0.827)."""
    if config.race_distinct < 0:
        return False
    shared = set(a.task_scores) & set(b.task_scores)
    if not shared:
        return False
    n = len(shared)
    share = sum(abs(a.task_scores[q] - b.task_scores[q]) > 1e-9 for q in shared) / n
    z2 = config.early_stop_z ** 2
    upper = (share + z2 / (2 * n) + config.early_stop_z * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n))) / (1 + z2 / n)
    return upper < config.race_distinct


def plan_race(stats: TreeStats, config: SearchConfig, left: int) -> Race:
    """The race's arms and round prefixes with `left` questions of budget (see the docstring)."""
    bar = policy.reference(stats)
    arms = race_arms(stats, config)
    rounds = math.ceil(math.log2(len(arms))) if len(arms) > 1 else 0
    base = min((v.questions for v in (*arms, bar)), default=0)
    share = max(0, left) / max(rounds, 1)
    prefixes, prefix, alive = [], base, len(arms)
    for _ in range(rounds):
        prefix = min(stats.validation_questions, prefix + int(share // (alive + 1)))
        prefixes.append(prefix)
        alive = math.ceil(alive / 2)
    return Race(bar.id, tuple(v.id for v in arms), tuple(prefixes), config.question_budget)


def _mean_on(v: NodeStats, questions: tuple[str, ...]) -> float:
    scored = [v.task_scores[q] for q in questions if q in v.task_scores]
    return sum(scored) / len(scored) if scored else 0.0


def _shared(nodes: Sequence[NodeStats]) -> tuple[str, ...]:
    common = set(nodes[0].task_scores)
    for v in nodes[1:]:
        common &= set(v.task_scores)
    return tuple(sorted(common))


def leader_among(standing: Sequence[NodeStats]) -> NodeStats:
    """Of candidates still standing together, the one with the best mean on the questions all of
    them were asked (the same questions for all: the best paired mean); ties go to the earlier
    in `standing`. How a race the budget ended with several candidates standing names its
    winner; with one standing, that one."""
    shared = _shared(standing)
    return min(enumerate(standing), key=lambda iv: (-_mean_on(iv[1], shared), iv[0]))[1]


def race_state(stats: TreeStats, race: Race, left: int) -> RaceState:
    """Replay `race` on the committed scores: the rounds every arm was scored for, and what the
    next confirmation step must ask with `left` questions of budget (nothing: the race is over).
    A round the budget cannot pay for whole ends the race: the survivors are then ranked on the
    questions they all were asked."""
    bar = stats.node(race.bar)
    arms = [stats.node(a) for a in race.arms if any(v.id == a for v in stats.nodes)]
    rank = {v.id: i for i, v in enumerate(arms)}
    survivors, rounds = arms, []
    for prefix in race.prefixes:
        if len(survivors) <= 1:
            break
        needs = tuple((v.id, prefix - v.questions) for v in (bar, *survivors) if v.questions < prefix)
        if needs:
            if sum(q for _, q in needs) > left:
                break  # the budget ends inside this round: rank on what they share
            return RaceState(tuple(rounds), tuple(v.id for v in survivors), needs[:1])
        questions = stats.order[:prefix]
        ranked = sorted(survivors, key=lambda v: (-_mean_on(v, questions), rank[v.id]))
        keep = math.ceil(len(ranked) / 2)
        rounds.append(RaceRound(prefix, tuple((v.id, _mean_on(v, questions)) for v in ranked),
                                tuple(v.id for v in ranked[:keep]), tuple(v.id for v in ranked[keep:])))
        survivors = ranked[:keep]
    if len(survivors) > 1:  # the halving did not finish: the best on the questions all share
        survivors = [leader_among(sorted(survivors, key=lambda v: rank[v.id]))]
    if not survivors:
        return RaceState(tuple(rounds), (), ())
    return RaceState(tuple(rounds), (survivors[0].id,), _duel(stats, survivors[0], bar, left))


def _duel(stats: TreeStats, winner: NodeStats, bar: NodeStats, left: int) -> tuple[tuple[int, int], ...]:
    """The winner and the bar on the most questions the budget pays for, the same for both:
    the largest L with (L − asked(w))⁺ + (L − asked(b))⁺ ≤ left. Stable while it is paid (each
    question asked lowers the cost and the budget alike), so the bar's step and the winner's
    aim at the same L."""
    total = stats.validation_questions
    low = min(winner.questions, bar.questions)
    cost = lambda length: max(0, length - winner.questions) + max(0, length - bar.questions)  # noqa: E731
    length = low
    hi = total
    while length < hi:  # the largest affordable L by bisection (cost grows with L)
        mid = (length + hi + 1) // 2
        if cost(mid) <= left:
            length = mid
        else:
            hi = mid - 1
    return tuple((v.id, length - v.questions) for v in (bar, winner) if v.questions < length)[:1]


def current_race(stats: TreeStats, config: SearchConfig) -> Race:
    """The race recorded for this budget, or (before it starts) the one the tree would run
    with no budget left: the candidates ranked on the questions they share."""
    if stats.race is not None and stats.race.budget == config.question_budget:
        return stats.race
    return plan_race(stats, config, 0)


def decide(stats: TreeStats, config: SearchConfig) -> policy.Confirmation:
    """The confirmation's verdict: the race's winner held to the bar by the paired bound."""
    race = current_race(stats, config)
    bar = stats.node(race.bar)
    state = race_state(stats, race, 0)
    dropped_in = {d: i for i, r in enumerate(state.rounds) for d in r.dropped}
    out = []
    for arm in race.arms:
        v = stats.node(arm)
        try:
            d = policy.paired(v, bar)
        except ValueError:  # no shared question: nothing says v beats the bar
            continue
        bound = bar.mean + d.difference - config.z * d.se
        complete = set(bar.task_scores) <= set(v.task_scores)
        clears = arm == state.winner and win_rule.clears(d, config.z)
        out.append(policy.ConfirmedCandidate(arm, v.mean, d.difference, d.se, d.tasks, bound, complete,
                                             clears, dropped_in.get(arm), guards=policy.guard_checks(v, bar, config.z)))
    # The winner is held to the guard metrics too; losing one, the hand design is kept.
    chosen = state.winner if any(c.admissible for c in out) else bar.id
    return policy.Confirmation(bar.id, bar.mean, len(bar.task_scores), config.z, tuple(out), chosen,
                               rounds=state.rounds, raced=True)


def final_confirmation(stats: TreeStats, config: SearchConfig) -> policy.Confirmation:
    """The tree strategy's final confirmation in either regime: the race with samples that grow,
    else every candidate paired with the bar on every question (`policy.confirm_final`)."""
    return decide(stats, config) if stats.sampled else policy.confirm_final(stats, config)


def tree_final(stats: TreeStats, config: SearchConfig) -> NodeStats:
    """The tree strategy's final choice: the confirmation's with per-question scores (exact, or
    samples that grow), else `policy.final_by_bound` (the LCB)."""
    if stats.sampled:
        return stats.node(decide(stats, config).chosen)
    return policy.final_by_bound(stats, config)
