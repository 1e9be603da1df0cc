"""The three evaluation regimes of the search policy, one object each (docs/search.md, "Which
uncertainty applies when"): what n(v) and N count, where a node's ± comes from, whether
re-evaluating a node can buy anything, and how optimistic U_gen is about μ(v).

    repeats  stochastic evaluations (an LLM agent, a live site): the paper's c_e·sqrt(ln N / n),
             a repeat makes μ more precise, so U_eval(v) = μ + c_e·sqrt(ln N / n(v));
    exact    deterministic scoring of every validation question: a repeat returns the same
             number, so no evaluate action; ± = z·SE of the per-question scores;
    sampled  a question budget: an evaluation scores a sample, a re-evaluation the next questions
             the node was not asked; n counts samples; U_eval = μ + z·SE·sqrt(ln N).

A regime is stateless (TreeQuest's style: the caller owns the tree and hands its statistics in)
and chosen once per decision by `regime_for`; the policy's functions (policy.py) ask it and keep
no branch of their own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from automemo.search.config import SearchConfig
from automemo.search.tree_stats import NodeStats, TreeStats, standard_error


def explore(total: float, count: float) -> float:
    """sqrt(ln N / count): zero at N = 1 (one evaluation says nothing about exploring)."""
    if total < 1:
        raise ValueError("N must be >= 1: evaluate the root before asking the policy")
    if count <= 0:
        raise ValueError("the exploration term needs a positive count")
    return math.sqrt(math.log(total) / count)


def _evaluated(v: NodeStats, what: str) -> None:
    if v.n < 1:
        raise ValueError(f"node {v.id} has no evaluation; {what} needs n(v) >= 1")


@dataclass(frozen=True)
class Repeats:
    """The paper's formulas: uncertainty from how often a node was evaluated."""

    config: SearchConfig
    name: str = "repeats"
    per_task: bool = False  # whether the ± and the selection read per-question scores

    def count(self, v: NodeStats, stats: TreeStats) -> float:
        return v.n

    def total(self, stats: TreeStats) -> float:
        return stats.total_evaluations

    def uncertainty(self, v: NodeStats, stats: TreeStats) -> float:
        _evaluated(v, "its uncertainty")
        return self.config.c_e * explore(stats.total_evaluations, v.n)

    def eval_score(self, v: NodeStats, stats: TreeStats) -> float:
        _evaluated(v, "U_eval")
        return v.mean + self.uncertainty(v, stats)

    def evaluable(self, v: NodeStats, stats: TreeStats) -> bool:
        return True  # a repeat makes μ more precise

    def optimism(self, v: NodeStats, stats: TreeStats) -> float:
        return 0.0

    def generate_explore(self, v: NodeStats, stats: TreeStats) -> float:
        return explore(stats.total_evaluations, v.m + 1)


@dataclass(frozen=True)
class Exact(Repeats):
    """Deterministic scoring of every question: ± from the questions, never a repeat."""

    name: str = "exact"
    per_task: bool = True

    def uncertainty(self, v: NodeStats, stats: TreeStats) -> float:
        _evaluated(v, "its uncertainty")
        return self.config.z * standard_error(v.task_scores)

    def evaluable(self, v: NodeStats, stats: TreeStats) -> bool:
        return False  # an exact repeat returns the same number: never worth a step

    def optimism(self, v: NodeStats, stats: TreeStats) -> float:
        return self.uncertainty(v, stats)


@dataclass(frozen=True)
class Sampled(Exact):
    """A question budget: samples that grow, n and N in samples of questions."""

    name: str = "sampled"

    def count(self, v: NodeStats, stats: TreeStats) -> float:
        """The samples' worth of questions v was asked (a confirmation counts as the samples
        it replaces)."""
        return max(v.questions, 1) / stats.sample_size

    def total(self, stats: TreeStats) -> float:
        return sum(max(v.questions, 1) for v in stats.nodes if not v.failed and v.n > 0) / stats.sample_size

    def eval_score(self, v: NodeStats, stats: TreeStats) -> float:
        """UCB1-Normal's shape: the measured spread of v's question scores over the square root
        of how many it was asked, grown slowly with N: a sample is bought where v's questions say
        its μ is uncertain."""
        _evaluated(v, "U_eval")
        return v.mean + self.uncertainty(v, stats) * math.sqrt(math.log(max(self.total(stats), 1.0)))

    def evaluable(self, v: NodeStats, stats: TreeStats) -> bool:
        return not complete(v, stats) and not v.stopped  # questions not asked yet remain

    def generate_explore(self, v: NodeStats, stats: TreeStats) -> float:
        # sample counts are fractions: ln of a total below one sample is 0
        return math.sqrt(math.log(max(self.total(stats), 1.0)) / (v.m + 1))


Regime = Repeats  # the interface: Exact and Sampled refine it


def complete(v: NodeStats, stats: TreeStats) -> bool:
    """v was asked every validation question (always so without a question budget)."""
    return not stats.sampled or v.questions >= stats.validation_questions


def regime_for(stats: TreeStats, config: SearchConfig) -> Regime:
    """The regime of this tree: sampled with a question budget; else exact when forced
    (`uncertainty = "tasks"`) or ("auto") every evaluated node's evaluations were exact and
    recorded their task scores; else repeats."""
    if stats.sampled:
        return Sampled(config)
    if config.uncertainty != "auto":
        return Exact(config) if config.uncertainty == "tasks" else Repeats(config)
    evaluated = [v for v in stats.nodes if not v.failed and v.n > 0]
    if evaluated and all(v.exact and v.task_scores for v in evaluated):
        return Exact(config)
    return Repeats(config)
