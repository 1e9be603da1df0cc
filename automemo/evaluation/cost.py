"""What a memo program costs to run, per evaluation: the figures a deployment pays for every turn
it remembers and every recall it answers (docs/cost.md).

    ingest_cpu_ms_per_turn    CPU per remembered turn: the host's encoders on what the program's
                              `update` asked to encode, counted cold, plus the guest's own CPU in
                              `update`, over the turns of the update episodes it was given
    recall_cpu_ms             CPU per `retrieve`, host encoding (cold) and guest together, the mean
    recall_p95_ms             wall-clock p95 of `retrieve` as it ran (shared caches warm)
    index_bytes_per_1k_turns  the program's state after its updates, as a snapshot holds it
                              (`save_state` bytes, vectors it holds included, and its state dir's
                              files), per 1,000 remembered turns

Counted cold: the run's embedding cache is shared by every program (and a data set may ship
vectors), so what a call actually cost depends on who ran before; each program is charged what
its encoding would cost alone, each distinct text once (automemo.toolkit.encode_cost). The guest's
CPU is what its runner reports for each call (automemo.sandbox.runner `cpu_ms`).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, fields
from typing import Any, Iterable, Mapping


class CostTally:
    """One memo session's running totals (a `MemoSession` keeps one): first-pass calls only, a
    rebuilt guest's replay is not the program's cost."""

    def __init__(self) -> None:
        self.turns = 0
        self.ingest_guest_ms = 0.0
        self.ingest_host_ms = 0.0
        self.recall_guest_ms: list[float] = []
        self.recall_host_ms: list[float] = []
        self.recall_wall_ms: list[float] = []
        self.index_bytes: int | None = None
        self.unreported = 0  # calls whose guest CPU was not reported (counted as 0)

    def guest(self, cpu_ms: float | None) -> float:
        if cpu_ms is None:
            self.unreported += 1
            return 0.0
        return cpu_ms

    def ingest(self, guest_ms: float | None, host_ms: float, turns: int = 0) -> None:
        self.ingest_guest_ms += self.guest(guest_ms)
        self.ingest_host_ms += host_ms
        self.turns += turns

    def recall(self, guest_ms: float | None, host_ms: float, wall_ms: float) -> None:
        self.recall_guest_ms.append(self.guest(guest_ms))
        self.recall_host_ms.append(host_ms)
        self.recall_wall_ms.append(wall_ms)


def percentile(values: Iterable[float], share: float) -> float:
    """The nearest-rank percentile (`share` in 0..1) of `values`; 0 for none."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


@dataclass(frozen=True)
class ProgramCost:
    """An evaluation's cost figures (the JSON's `cost`) and the totals they come from."""

    ingest_cpu_ms_per_turn: float
    recall_cpu_ms: float
    recall_p95_ms: float
    index_bytes_per_1k_turns: float | None   # None: the state could not be measured
    turns: int = 0
    recalls: int = 0
    ingest_host_ms: float = 0.0
    ingest_guest_ms: float = 0.0
    recall_host_ms: float = 0.0
    recall_guest_ms: float = 0.0
    index_bytes: int | None = None
    unreported_calls: int = 0
    rates: Mapping[str, float] = field(default_factory=dict)  # encoder -> cold ms per unit charged

    def to_dict(self) -> dict[str, Any]:
        return {f.name: (dict(getattr(self, f.name)) if f.name == "rates" else getattr(self, f.name))
                for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> ProgramCost | None:
        """The figures of a recorded evaluation; None for one recorded without them."""
        if not data or "ingest_cpu_ms_per_turn" not in data:
            return None
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def summarize_cost(tallies: Iterable[CostTally], rates: Mapping[str, float] | None = None) -> ProgramCost:
    """The evaluation's figures over its memory sessions (one per memory group); `rates`: the
    cold rates its host encoding was charged at (encoder -> ms per unit)."""
    tallies = list(tallies)
    turns = sum(t.turns for t in tallies)
    host = sum(t.ingest_host_ms for t in tallies)
    guest = sum(t.ingest_guest_ms for t in tallies)
    recall_cpu = [g + h for t in tallies for g, h in zip(t.recall_guest_ms, t.recall_host_ms)]
    sizes = [t.index_bytes for t in tallies]
    index = None if not sizes or any(s is None for s in sizes) else sum(sizes)  # type: ignore[misc]
    return ProgramCost(
        ingest_cpu_ms_per_turn=(host + guest) / turns if turns else 0.0,
        recall_cpu_ms=statistics.fmean(recall_cpu) if recall_cpu else 0.0,
        recall_p95_ms=percentile((w for t in tallies for w in t.recall_wall_ms), 0.95),
        index_bytes_per_1k_turns=index * 1000.0 / turns if index is not None and turns else None,
        turns=turns,
        recalls=len(recall_cpu),
        ingest_host_ms=host,
        ingest_guest_ms=guest,
        recall_host_ms=sum(h for t in tallies for h in t.recall_host_ms),
        recall_guest_ms=sum(g for t in tallies for g in t.recall_guest_ms),
        index_bytes=index,
        unreported_calls=sum(t.unreported for t in tallies),
        rates=dict(rates or {}),
    )


def cost_line(cost: Mapping[str, Any] | ProgramCost | None) -> str:
    """The figures in one line, as `automemo tree`, `show` and the tables print them."""
    c = cost if isinstance(cost, ProgramCost) or cost is None else ProgramCost.from_dict(cost)
    if c is None:
        return "cost not measured"
    index = "—" if c.index_bytes_per_1k_turns is None else f"{c.index_bytes_per_1k_turns / 1024:,.0f} KiB/1k turns"
    return (f"ingest {c.ingest_cpu_ms_per_turn:.2f} ms/turn, recall {c.recall_cpu_ms:.1f} ms CPU "
            f"(p95 {c.recall_p95_ms:.1f} ms wall), index {index}")
