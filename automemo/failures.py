"""Whose failure it was, as types: what a score may be charged with.

A retrieve task fails for one of four reasons, and only two of them are the program's:

    PROGRAM         the memo program's call failed (exception, timeout, crash, bad result): 0
    AGENT           the agent failed on what the program returned (its context overflowed, its
                    server refused the payload's image, it broke on the payload): 0, reason kept
    SCORER          the benchmark's scorer or judge raised: the task is excluded and reported
    INFRASTRUCTURE  the transport or the host failed (connection, 429/5xx after retries, a
                    browser crash, a host toolkit service, a dead sandbox engine): retried,
                    then excluded and reported; never charged to the program

`InfrastructureFailure` is raised where a failure must stop more than one task (an evaluation,
an exam, a run): every layer re-raises it, and the search stops with its sentence. Stdlib only:
the bottom layer, imported by the sandbox, the toolkit, the evaluation and the search.
"""

from __future__ import annotations

import enum

from automemo.errors import HostError


class FailureKind(enum.Enum):
    PROGRAM = "program"
    AGENT = "agent"
    SCORER = "scorer"
    INFRASTRUCTURE = "infrastructure"

    @property
    def charged_to_program(self) -> bool:
        """A failure the program's score carries (as 0) rather than one left out of its mean."""
        return self in (FailureKind.PROGRAM, FailureKind.AGENT)


class InfrastructureFailure(HostError, RuntimeError):
    """Something that is neither the program's nor the agent's answer failed beyond its
    retries. The message is a sentence saying what failed and what to do."""


class HostServiceFailed(InfrastructureFailure):
    """A host-side toolkit service (the memo LLM, the embedding model, an image encoder) failed
    while serving the program's call: the call's outcome says nothing about the program."""


class TooManyExcluded(InfrastructureFailure):
    """An evaluation excluded more of its tasks than the configured share: a mean over the few
    left would not be the program's score."""
