"""A simulated search landscape: search research without an LLM or a benchmark.

Programs are numbers with a hidden true quality in [0, 1]. Evaluating one returns its quality
plus Gaussian noise (`noise`); a child of a program inherits its parent's quality plus a random
step (mean `gain`, spread `spread`), or the generation fails (`failure_rate`). Because the true
quality is known, the regret of a search's final selection is exact.

Everything is a pure function of (seed, what is asked): `evaluate(program, draw)` of its draw
number, `child_of(parent)` of how many children the parent already had, so two runs asking the
same questions in the same order see the same landscape.
"""

from __future__ import annotations

import hashlib
import random


def _rng(*key: object) -> random.Random:
    return random.Random(hashlib.sha256(":".join(map(str, key)).encode()).digest())


class Landscape:
    """Program 0 is the root. `child_of` numbers new programs 1, 2, … in creation order."""

    root = 0

    def __init__(self, seed: int = 0, *, noise: float = 0.05, gain: float = 0.0,
                 spread: float = 0.1, failure_rate: float = 0.2, root_quality: float = 0.3) -> None:
        if noise < 0 or spread < 0:
            raise ValueError(f"noise and spread must be >= 0, got {noise} and {spread}")
        if not 0.0 <= failure_rate < 1.0:
            raise ValueError(f"failure_rate must be in [0, 1), got {failure_rate}")
        if not 0.0 <= root_quality <= 1.0:
            raise ValueError(f"root_quality must be in [0, 1], got {root_quality}")
        self.seed, self.noise, self.gain = seed, noise, gain
        self.spread, self.failure_rate = spread, failure_rate
        self._quality: list[float] = [root_quality]
        self._parent: list[int | None] = [None]
        self._children: dict[int, int] = {}

    def quality(self, program: int) -> float:
        """The hidden true quality of `program`."""
        self._check(program)
        return self._quality[program]

    def parent_of(self, program: int) -> int | None:
        self._check(program)
        return self._parent[program]

    @property
    def programs(self) -> int:
        return len(self._quality)

    def best_quality(self) -> float:
        """The best true quality of any program created so far."""
        return max(self._quality)

    def evaluate(self, program: int, draw: int) -> float:
        """A noisy score of `program` in [0, 1]; the same `draw` gives the same score."""
        score = self.quality(program) + _rng(self.seed, "eval", program, draw).gauss(0.0, self.noise)
        return min(1.0, max(0.0, score))

    def child_of(self, parent: int) -> int | None:
        """A new program from `parent`, or None when this generation fails."""
        self._check(parent)
        nth = self._children.get(parent, 0)
        self._children[parent] = nth + 1
        rng = _rng(self.seed, "child", parent, nth)
        if rng.random() < self.failure_rate:
            return None
        step = rng.gauss(self.gain, self.spread)
        self._quality.append(min(1.0, max(0.0, self._quality[parent] + step)))
        self._parent.append(parent)
        return len(self._quality) - 1

    def _check(self, program: int) -> None:
        if not 0 <= program < len(self._quality):
            raise KeyError(f"no program {program} in the landscape (it has {len(self._quality)})")
