"""The oracle of a search: the best test score among the programs the search evaluated.

Selection regret = oracle − the selection's test score: how much the search found but did not
pick. It separates the two ways a search falls short of the best seed: a generator that never
wrote a better program (oracle ≤ best seed) and a selection that missed one it wrote (regret
> 0). Every evaluated node's program is scored on test once; scores are cached by program text
(`TestScores`), so a swept seed costs nothing after `score_seeds` and the same program met in
several searches is scored once. `limit` bounds the test evaluations a search may add (a
program whose test score is already cached costs none and is always taken): past it, the
programs with the best validation means are scored (the selection always is) and the oracle is
a lower bound, marked as such.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence


@dataclass(frozen=True)
class Candidate:
    """A program a search evaluated: its node, text and validation mean (over its evaluations)."""

    node_id: int
    source: str
    validation: float


@dataclass(frozen=True)
class Oracle:
    test: float          # the best test score among the programs scored
    node_id: int         # the node holding it (the first such node)
    scored: int          # distinct programs scored on test
    evaluated: int       # distinct programs the search evaluated

    @property
    def complete(self) -> bool:
        """False when `limit` left programs out: the oracle is then a lower bound."""
        return self.scored == self.evaluated


def evaluated_candidates(run: Any) -> list[Candidate]:
    """The distinct programs of a run's evaluated nodes (failed generations have none), one per
    program text (the node with the best validation mean), best validation first."""
    best: dict[str, Candidate] = {}
    for node in run.nodes():
        if node.get("status") != "evaluated" or not node.get("program_path"):
            continue
        means = [e["mean"] for e in run.evaluations(node["id"])]
        if not means:
            continue
        candidate = Candidate(int(node["id"]), run.program_source(node["id"]), sum(means) / len(means))
        known = best.get(candidate.source)
        if known is None or candidate.validation > known.validation:
            best[candidate.source] = candidate
    return sorted(best.values(), key=lambda c: (-c.validation, c.node_id))


def search_oracle(candidates: Sequence[Candidate], test_score: Callable[[str], float], *, limit: int,
                  selected: str | None = None, cached: Callable[[str], bool] = lambda source: False) -> Oracle:
    """Score candidates on test, best validation first, with at most `limit` new evaluations
    (`cached` programs are free; the `selected` program text is always scored), and return the
    best."""
    if not candidates:
        raise ValueError("a search oracle needs at least one evaluated program")
    chosen, new = [], 0
    for c in candidates:
        free = cached(c.source) or c.source == selected
        if free or new < limit:
            chosen.append(c)
            new += not free
    scores = [(test_score(c.source), c) for c in chosen]
    top = max(s for s, _ in scores)
    node = min(c.node_id for s, c in scores if s == top)
    return Oracle(top, node, len(chosen), len(candidates))
