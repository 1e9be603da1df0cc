"""The validation questions of a search with a question budget (`search.question_budget`): the
one order every node is scored in, the sample size, and what is left to spend.

Every node is scored on the same order of questions, a first sample first and each later
evaluation the next questions it has not been asked yet. So any two nodes were scored on a
common prefix of that order, and they compare paired on it: the questions' difficulty, shared
by both, cancels (`policy.paired`). The order is drawn once per run from its seed, stratified by
question category (every prefix holds each category in about its share of the whole), and is
written to the run directory (`questions.json`), so a resumed run, or one read by a newer
version, asks the questions it asked before.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from automemo.episode_store import atomic_write

PLAN_FILE = "questions.json"
RACE_FILE = "confirmation.json"
MIN_SAMPLE = 10
"""The smallest automatic sample: below it a first sample's mean says too little to rank on."""


@dataclass(frozen=True)
class QuestionPlan:
    order: tuple[str, ...]   # every validation question id, in the order nodes are scored in
    sample_size: int         # questions one evaluation asks (the last one of a node: what is left)

    def __post_init__(self) -> None:
        if len(set(self.order)) != len(self.order):
            raise ValueError("a question plan lists every question once")
        if not 1 <= self.sample_size <= max(1, len(self.order)):
            raise ValueError(f"the sample size must be in [1, {len(self.order)}], got {self.sample_size}")

    @property
    def total(self) -> int:
        return len(self.order)

    def next_questions(self, taken: Iterable[str], count: int | None = None) -> tuple[str, ...]:
        """The first `count` questions of the order (a sample by default) not in `taken` (the
        questions a node was asked, and those reserved by its evaluations in flight)."""
        taken = set(taken)
        count = self.sample_size if count is None else count
        out = []
        for question in self.order:
            if len(out) >= count:
                break
            if question not in taken:
                out.append(question)
        return tuple(out)

    def remaining(self, taken: Iterable[str]) -> tuple[str, ...]:
        """Every question of the order not in `taken`."""
        return self.next_questions(taken, self.total)

    def to_dict(self) -> dict:
        return {"order": list(self.order), "sample_size": self.sample_size}

    @classmethod
    def from_dict(cls, data: dict) -> QuestionPlan:
        return cls(tuple(data["order"]), int(data["sample_size"]))


@dataclass(frozen=True)
class Race:
    """The final confirmation's race with a question budget (`search.halving`), fixed when it
    starts and kept in the run directory (`confirmation.json`), so a resumed run replays the
    rounds it ran: which arms race, the hand design they are held to, how many questions of the
    order every surviving arm is scored on in each round, and the question budget it was planned
    under (a resume that raises the budget plans a new race once its steps are done)."""

    bar: int                    # the best hand design when the race began
    arms: tuple[int, ...]       # the candidates, highest bound first when the race began (halving.race_arms)
    prefixes: tuple[int, ...]   # L_r: the first L_r questions of the order, round by round
    budget: int                 # search.question_budget it was planned under

    def to_dict(self) -> dict:
        return {"bar": self.bar, "arms": list(self.arms), "prefixes": list(self.prefixes),
                "budget": self.budget}

    @classmethod
    def from_dict(cls, data: dict) -> Race:
        return cls(int(data["bar"]), tuple(data["arms"]), tuple(data["prefixes"]), int(data["budget"]))


def stratified_order(questions: Sequence[tuple[str, str]], seed: int) -> tuple[str, ...]:
    """(id, category) pairs in a seeded order whose every prefix holds each category in about its
    share: questions are shuffled within their category, the i-th of n in a category is placed
    at (i + ½) / n, and the order sorts by that place (ties by category, then id)."""
    by_category: dict[str, list[str]] = {}
    for question_id, category in questions:
        by_category.setdefault(category, []).append(question_id)
    rng = random.Random(seed)
    placed = []
    for category in sorted(by_category):
        ids = sorted(by_category[category])
        rng.shuffle(ids)
        placed += [((i + 0.5) / len(ids), category, q) for i, q in enumerate(ids)]
    return tuple(q for _, _, q in sorted(placed))


def auto_sample_size(budget: int, steps: int, total: int) -> int:
    """Half the budget spread over the first samples of every step (and the root's), the other
    half kept for samples that grow and the final confirmation; at least `MIN_SAMPLE`, at most
    every question."""
    if total <= 0:
        raise ValueError("a question budget needs validation questions to sample")
    share = math.ceil(budget / (2 * (steps + 1)))
    return max(1, min(total, max(MIN_SAMPLE, share)))


def _read(run_path: Path, name: str) -> dict | None:
    path = Path(run_path) / name
    return json.loads(path.read_text()) if path.exists() else None


def _write(run_path: Path, name: str, data: dict) -> None:
    atomic_write(Path(run_path) / name, json.dumps(data, indent=1).encode())


def load_plan(run_path: Path) -> QuestionPlan | None:
    """The run's plan, None for a run without a question budget."""
    data = _read(run_path, PLAN_FILE)
    return QuestionPlan.from_dict(data) if data is not None else None


def write_plan(run_path: Path, plan: QuestionPlan) -> None:
    _write(run_path, PLAN_FILE, plan.to_dict())


def load_race(run_path: Path) -> Race | None:
    """The run's confirmation race, None before it started (or without a question budget)."""
    data = _read(run_path, RACE_FILE)
    return Race.from_dict(data) if data is not None else None


def write_race(run_path: Path, race: Race) -> None:
    _write(run_path, RACE_FILE, race.to_dict())
