"""The root of every exception the package raises for others to catch, and the few kinds the
`automemo` command maps to an exit status and a sentence (docs/cli.md, "Exit status").

Each exception class of the package derives from one kind, and keeps the builtin base its callers
catch (`ConfigError` is a `UsageError` and a `ValueError`). The kinds say whose move it is:

    UsageError   the command line or a config file asks for something that cannot be   exit 2
    DataError    data the user gave does not fit (a dataset, a program file, a run     exit 2
                 directory, an exported folder, a state folder)
    HostError    the host's machinery failed, not the input (the sandbox engine, an    exit 1
                 LLM endpoint, a host service, a browser): fix it and run again
    BudgetSpent  a run's token or USD cap is reached: raise it to go on                exit 1

An `AutomemoError` of no kind is the package failing at what it does (a program that never loaded,
a meta reply it could not use): exit 1. Internal control flow (classes with a leading underscore)
stays outside the tree.

Stdlib only and importing nothing of automemo: the bottom layer, imported by every other one,
the contract and the sandbox guest included.
"""

from __future__ import annotations

from typing import ClassVar


class AutomemoError(Exception):
    """The root: an error the package raises on purpose, with a message that says what happened
    and, where the user can act, what to do."""

    exit_status: ClassVar[int] = 1
    """What `automemo` exits with when this error ends a command."""

    advice: ClassVar[str] = ""
    """The kind's sentence, printed after the message when the error ends a command."""


class UsageError(AutomemoError):
    """The command line or a config file asks for something that cannot be: an unknown key, a
    value out of range, flags that contradict each other."""

    exit_status = 2


class DataError(AutomemoError):
    """Data the user gave does not fit what reads it: a missing or malformed dataset, a program
    file, a run directory, an exported folder, a state folder. The message names the place."""

    exit_status = 2


class HostError(AutomemoError):
    """The host's machinery failed, not the user's input and not a memo program: the sandbox
    engine, an LLM endpoint, a host toolkit service, a browser, a worker."""

    exit_status = 1
    advice = "This is the host's failure, not the input's: once it is fixed, run the command again."


class BudgetSpent(AutomemoError):
    """A run's token or USD cap is reached: no new LLM call starts."""

    exit_status = 1
    advice = "The run's LLM cap is spent: raise llm.max_usd / llm.max_total_tokens to go on."
