"""What the search drives, handed in by whoever assembles it (`automemo.assembly`, tests)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from automemo.contract import Budget
from automemo.exam import quick_exam
from automemo.meta.base import MetaAgent
from automemo.paths import SEEDS_DIR
from automemo.runs.records import ActionRecord
from automemo.sandbox.base import Limits


@dataclass
class Collaborators:
    """`evaluator`: `automemo.evaluation.Evaluator` (or anything with `evaluate`,
    `sample_for_exam` and `store`); `services_factory(node_id)` gives the host services of a
    node's sandbox sessions; `llm` (optional) is asked whether a cap is reached; `on_commit` is
    called on the scheduler's thread after every committed step (the root's included) with its
    action record, once the run directory holds it (a live report refreshes there); `strategy`
    replaces the one `search.strategy` names (tests script the actions with it)."""

    evaluator: Any
    meta: MetaAgent
    sandbox: Any
    llm: Any = None
    services_factory: Callable[[int], Any] | None = None
    budget: Budget = field(default_factory=Budget)
    limits: Limits = field(default_factory=Limits)
    exam: Callable[..., Any] = quick_exam
    seeds_dir: Path = SEEDS_DIR  # where the root's seed program is read
    on_commit: Callable[[ActionRecord], None] | None = None
    strategy: Any = None
