"""LLM clients shipped to worker processes (Ray evaluation workers).

Importing this module teaches pickle (and so Ray, and `copy`) how a client travels; the Ray
executor imports it, and the client itself knows nothing of workers. A client pickled to a
worker arrives with its config and the spend so far, and records its calls in a `RemoteLedger`: an in-memory ledger that also keeps each call for the trip home. The
worker returns them with each result (`drain`), and the process that owns the original client
writes them into its own ledger and spend guard (`absorb`), so the run's ledger and its caps
count every call wherever it was made, as if it had been made here.
"""

from __future__ import annotations

import copyreg
import threading
import uuid
import weakref

from automemo.llm.budget import Spend, SpendGuard
from automemo.llm.client import LLMClient
from automemo.llm.config import LLMConfig
from automemo.llm.ledger import Ledger, LedgerEntry

RemoteCall = tuple[str, LedgerEntry]  # (home client's key, the call)

_homes: weakref.WeakValueDictionary[str, LLMClient] = weakref.WeakValueDictionary()
_outbox: list[RemoteCall] = []
_lock = threading.Lock()


def home_key(client: LLMClient) -> str:
    """The key under which calls made by copies of `client` find their way back to it."""
    key = getattr(client, "_home_key", None)
    if key is None:
        key = client._home_key = uuid.uuid4().hex
        _homes[key] = client
    return key


class RemoteLedger(Ledger):
    def __init__(self, home: str) -> None:
        super().__init__()
        self.home = home

    def record(self, entry: LedgerEntry) -> None:
        super().record(entry)
        with _lock:
            _outbox.append((self.home, entry))


def drain() -> list[RemoteCall]:
    """The calls recorded in this process since the last drain (worker side)."""
    with _lock:
        calls = list(_outbox)
        _outbox.clear()
    return calls


def absorb(calls: list[RemoteCall]) -> None:
    """Record calls made by shipped copies in their home client's ledger and spend guard."""
    for key, entry in calls:
        client = _homes.get(key)
        if client is None:  # the client is gone (its evaluation ended): nothing to charge
            continue
        client.ledger.record(entry)
        if entry.status == "ok":
            client.guard.add(entry.prompt_tokens + entry.completion_tokens, entry.usd)


def _arrive(config: LLMConfig, spent: Spend, home: str) -> LLMClient:
    """The worker's copy: a fresh client (its own lock and connections) on a `RemoteLedger`,
    counting from the spend its home client had when it was shipped."""
    client = LLMClient(config, RemoteLedger(home))
    client.guard = SpendGuard(config.max_total_tokens, config.max_usd, already=spent)
    return client


def _ship(client: LLMClient) -> tuple:
    return _arrive, (client.config, client.guard.spent, home_key(client))


copyreg.pickle(LLMClient, _ship)
