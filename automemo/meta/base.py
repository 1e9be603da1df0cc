"""The meta agent's interface: diagnose a parent from its evidence and write a child,
repair a child that failed its quick exam, or write a program from nothing.

Two implementations: the LLM meta agent (prompts in `prompts/`) and the offline parameter
mutator. The search loop only sees this interface and builds each call's context.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Mapping

from automemo.errors import AutomemoError
# What an agent is told lives with the context; named here too, where the interface's users look.
from automemo.meta.context import (ChildAttempt, GenerationContext, Improvement, ParentView, RepairContext,
                                   ScoredProgram, ScoredTask, evidence_questions, scored_tasks)

__all__ = ["ChildAttempt", "GenerationContext", "Improvement", "MetaAgent", "MetaError", "ParentView", "Proposal",
           "RepairContext", "ScoredProgram", "ScoredTask", "evidence_questions", "scored_tasks"]


@dataclass(frozen=True)
class Proposal:
    """A candidate program plus why it was written. `summary` is the one-line change summary the
    tree shows; `diagnosis` the structured analysis (JSON) that led to it; `usage` tokens/cost."""

    source: str
    summary: str
    diagnosis: Mapping[str, Any] = field(default_factory=dict)
    usage: Mapping[str, Any] = field(default_factory=dict)
    author: str = ""    # which agent wrote it ("llm", "offline"): a mixed agent routes its repair by it


class MetaError(AutomemoError, RuntimeError):
    """The meta agent could not produce a usable proposal (invalid JSON twice, no code block...).
    The step fails cleanly; the message says why."""


class MetaAgent(abc.ABC):
    """A meta agent keeps no state between calls: all a call needs is in its context
    (automemo/meta/context.py), so calls of several generate actions run at once."""

    @abc.abstractmethod
    def propose(self, context: GenerationContext) -> Proposal:
        """Analyse `context.parent` and write a child."""

    @abc.abstractmethod
    def repair(self, context: RepairContext) -> Proposal:
        """Fix `context.source`, which failed the quick exam described by `context.exam_report`."""

    @abc.abstractmethod
    def initialize(self, task_description: str, *, node_id: int, seed: int) -> Proposal:
        """Write a program from nothing but the task description and the interface."""
