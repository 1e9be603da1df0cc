"""Search strategies at equal budget: which action to take next, and which node to return.

Every strategy is a pure policy over the same `TreeStats` (plus, for the sampling ones, a seed
the loop derives from the run seed and the step), so the same loop drives them, records them in
the same run directory and resumes them identically. A comparison at equal budget is one flag.

- `tree`   the budget-aware tree search (`policy`): re-evaluates or generates by U_eval / U_gen;
           returns the best lower confidence bound.
- `alma`   ALMA's parent sampling: every step generates one child from a parent drawn with
           probability ∝ exp(score(v) / T), score(v) = sigmoid(μ(v) − μ(r)) − 0.5·ln(1 + visits(v)),
           T = 0.5, visits(v) the children already generated from v (failed ones too); returns
           the best mean.
- `greedy` always generates from the best mean (ties: the older node); returns the best mean.
- `random` generates from a uniformly drawn evaluated node; returns the best mean.

Only `tree` ever re-evaluates, which is why it calls the meta agent less at equal steps.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Protocol

from automemo.search import halving, policy
from automemo.search.config import SearchConfig
from automemo.search.policy import TIE_TOLERANCE, Action, NodeStats, TreeStats, fits

ALMA_TEMPERATURE = 0.5
ALMA_VISIT_PENALTY = 0.5


def _evaluated(stats: TreeStats) -> list[NodeStats]:
    nodes = [v for v in stats.nodes if not v.failed and v.n > 0]
    if not nodes:
        raise ValueError("no evaluated node in the tree: evaluate the root first")
    return nodes


def best_mean(stats: TreeStats, *, bounded: bool = False) -> NodeStats:
    """argmax μ over evaluated nodes (`bounded`: those within the cost bounds, all of them when
    none is: the final selection); a tie goes to the node with more evaluations, then the older."""
    nodes = _evaluated(stats)
    if bounded:
        nodes = [v for v in nodes if fits(v)] or nodes
    best = max(v.mean for v in nodes)
    return min((v for v in nodes if best - v.mean <= TIE_TOLERANCE), key=lambda v: (-v.n, v.id))


def _draw(actions: list[Action], seed: int) -> Action:
    """One action drawn with probability ∝ its score (scores are probabilities here)."""
    point = random.Random(seed).random() * sum(a.score for a in actions)
    for action in actions:
        point -= action.score
        if point < 0:
            return action
    return actions[-1]


@dataclass(frozen=True)
class TreeStrategy:
    config: SearchConfig
    name: str = "tree"
    selection: str = "lcb"

    def candidates(self, stats: TreeStats) -> list[Action]:
        return policy.candidates(stats, self.config)

    def choose(self, stats: TreeStats, *, seed: int) -> Action:
        return policy.choose_action(stats, self.config)

    def select_final(self, stats: TreeStats) -> NodeStats:
        return halving.tree_final(stats, self.config)


@dataclass(frozen=True)
class AlmaStrategy:
    config: SearchConfig
    name: str = "alma"
    selection: str = "mean"

    def score(self, v: NodeStats, stats: TreeStats) -> float:
        visits = sum(1 for c in stats.nodes if c.parent == v.id)
        return (1.0 / (1.0 + math.exp(-(v.mean - stats.root.mean)))
                - ALMA_VISIT_PENALTY * math.log(1 + visits))

    def candidates(self, stats: TreeStats) -> list[Action]:
        """One generate action per evaluated node; its score is the sampling probability."""
        nodes = _evaluated(stats)
        logits = [self.score(v, stats) / ALMA_TEMPERATURE for v in nodes]
        top = max(logits)
        weights = [math.exp(x - top) for x in logits]
        total = sum(weights)
        return [Action("generate", v.id, w / total) for v, w in zip(nodes, weights)]

    def choose(self, stats: TreeStats, *, seed: int) -> Action:
        return _draw(self.candidates(stats), seed)

    def select_final(self, stats: TreeStats) -> NodeStats:
        return best_mean(stats, bounded=True)


@dataclass(frozen=True)
class GreedyStrategy:
    config: SearchConfig
    name: str = "greedy"
    selection: str = "mean"

    def candidates(self, stats: TreeStats) -> list[Action]:
        return [Action("generate", v.id, v.mean) for v in _evaluated(stats)]

    def choose(self, stats: TreeStats, *, seed: int) -> Action:
        best = best_mean(stats)
        return Action("generate", best.id, best.mean)

    def select_final(self, stats: TreeStats) -> NodeStats:
        return best_mean(stats, bounded=True)


@dataclass(frozen=True)
class RandomStrategy:
    config: SearchConfig
    name: str = "random"
    selection: str = "mean"

    def candidates(self, stats: TreeStats) -> list[Action]:
        nodes = _evaluated(stats)
        return [Action("generate", v.id, 1.0 / len(nodes)) for v in nodes]

    def choose(self, stats: TreeStats, *, seed: int) -> Action:
        return _draw(self.candidates(stats), seed)

    def select_final(self, stats: TreeStats) -> NodeStats:
        return best_mean(stats, bounded=True)


class Strategy(Protocol):
    """What every strategy is (as TreeQuest's `Algorithm`): a pure policy over `TreeStats`. The
    loop asks it for the next action (`choose`, with a seed the loop derives per step, for the
    sampling ones) and, when the budget is spent, for the node the search returns
    (`select_final`); `candidates` are the actions it weighed (the run's record of a step)."""

    config: SearchConfig
    name: str          # what `search.strategy` calls it
    selection: str     # how its final node is chosen: "lcb" (held to a bar) or "mean"

    def candidates(self, stats: TreeStats) -> list[Action]: ...

    def choose(self, stats: TreeStats, *, seed: int) -> Action: ...

    def select_final(self, stats: TreeStats) -> NodeStats: ...

_BY_NAME = {"tree": TreeStrategy, "alma": AlmaStrategy, "greedy": GreedyStrategy,
            "random": RandomStrategy}


def strategy_for(config: SearchConfig) -> Strategy:
    """The strategy `config.strategy` names, with the config's hyper-parameters."""
    return _BY_NAME[config.strategy](config)


def final_node(stats: TreeStats, config: SearchConfig) -> NodeStats:
    """The node a finished (or stopped) search returns, by its strategy's own rule."""
    return strategy_for(config).select_final(stats)
