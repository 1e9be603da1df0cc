"""Cost bounds on the final selection: `search.max_ingest_ms_per_turn` and `search.max_recall_ms`
(docs/search.md, "Cost bounds"; docs/cost.md says what the figures count).

A node is within the bounds when its latest evaluation's cost figures (automemo.evaluation.cost)
are at or below each bound that is set; a node whose cost was not measured is outside them (it
cannot be shown to fit). Pure: no I/O.

    bounds = CostBounds.from_search(config.search)
    bounds.violations({"ingest_cpu_ms_per_turn": 64.1, "recall_cpu_ms": 29.1})
    # ("ingest 64.10 ms/turn > 21.00",)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

INGEST = "ingest_cpu_ms_per_turn"
RECALL = "recall_cpu_ms"


@dataclass(frozen=True)
class CostBounds:
    """0 (the default) for a bound means none."""

    max_ingest_ms_per_turn: float = 0.0
    max_recall_ms: float = 0.0

    @classmethod
    def from_search(cls, search: Any) -> CostBounds:
        """From a `SearchConfig` or a run's config.json "search" table (keys absent: no bound)."""
        get = search.get if isinstance(search, Mapping) else (lambda k, d=0.0: getattr(search, k, d))
        return cls(float(get("max_ingest_ms_per_turn", 0.0) or 0.0), float(get("max_recall_ms", 0.0) or 0.0))

    @property
    def active(self) -> bool:
        return self.max_ingest_ms_per_turn > 0 or self.max_recall_ms > 0

    def violations(self, cost: Mapping[str, Any] | None) -> tuple[str, ...]:
        """Why a node with these cost figures is outside the bounds; () when it fits."""
        if not self.active:
            return ()
        if not cost or INGEST not in cost:
            return ("its cost was not measured",)
        out = []
        if self.max_ingest_ms_per_turn > 0 and float(cost[INGEST]) > self.max_ingest_ms_per_turn:
            out.append(f"ingest {float(cost[INGEST]):.2f} ms/turn > {self.max_ingest_ms_per_turn:g}")
        if self.max_recall_ms > 0 and float(cost.get(RECALL, 0.0)) > self.max_recall_ms:
            out.append(f"recall {float(cost[RECALL]):.2f} ms > {self.max_recall_ms:g}")
        return tuple(out)

    def describe(self) -> str:
        parts = []
        if self.max_ingest_ms_per_turn > 0:
            parts.append(f"ingest ≤ {self.max_ingest_ms_per_turn:g} ms CPU per turn")
        if self.max_recall_ms > 0:
            parts.append(f"recall ≤ {self.max_recall_ms:g} ms CPU")
        return ", ".join(parts) or "none"

    def to_dict(self) -> dict[str, float]:
        return {"max_ingest_ms_per_turn": self.max_ingest_ms_per_turn, "max_recall_ms": self.max_recall_ms}
