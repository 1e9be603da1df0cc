"""The token/cost ledger: one row per LLM attempt in table `ledger` of a sqlite file.

In a run that file is `tree.db`, shared with the tree and the event log, so the ledger opens
its own connection with a generous busy timeout and writes one short transaction per row.
Failed attempts are rows too (status names the failure): retries cost time and sometimes money,
and a run's report should show them.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import sqlite_utils

TABLE = "ledger"
_COLUMNS = {
    "id": int,
    "ts": float,
    "role": str,
    "kind": str,  # "chat" | "embed"
    "model": str,
    "node": str,
    "purpose": str,
    "attempt": int,
    "status": str,  # "ok" | "http 429" | "timeout" | "connection" | "bad-response" | ...
    "prompt_tokens": int,
    "completion_tokens": int,
    "usd": float,
    "priced": int,
    "latency_s": float,
    "error": str,
    "cached_tokens": int,  # prompt tokens the server said it reused from its cache
    "interrupted": int,    # 1: spent by a step that never committed (a crash or kill); still counted
}


@dataclass(frozen=True)
class LedgerEntry:
    role: str
    model: str
    status: str
    kind: str = "chat"
    node: str | None = None
    purpose: str = ""
    attempt: int = 1
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usd: float = 0.0
    priced: bool = True
    latency_s: float = 0.0
    error: str = ""
    cached_tokens: int = 0
    interrupted: bool = False


class Ledger:
    """`Ledger(path)` for a file, `Ledger()` for an in-memory ledger (a client with no run)."""

    def __init__(self, db_path: str | Path | None = None) -> None:
        self.path = Path(db_path) if db_path is not None else None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            str(self.path) if self.path else ":memory:", timeout=30.0, check_same_thread=False
        )
        # One row per call: a full fsync per row would cost more than a local model call. In
        # WAL mode (the run's tree.db) NORMAL still survives a crash of the process.
        conn.execute("PRAGMA synchronous=NORMAL")
        self._db = sqlite_utils.Database(conn)
        self._lock = threading.Lock()
        with self._lock:
            self._db[TABLE].create(_COLUMNS, pk="id", if_not_exists=True)
            missing = {k: t for k, t in _COLUMNS.items() if k not in self._db[TABLE].columns_dict}
            for name, kind in missing.items():  # a ledger written by an older version
                self._db[TABLE].add_column(name, kind, not_null_default=0)

    def record(self, entry: LedgerEntry) -> None:
        row = asdict(entry)
        row["ts"] = time.time()
        row["priced"] = int(entry.priced)
        row["interrupted"] = int(entry.interrupted)
        row["node"] = None if entry.node is None else str(entry.node)
        with self._lock, self._db.conn:
            self._db[TABLE].insert(row)

    def rows(self, **where: Any) -> list[dict[str, Any]]:
        """Rows in insertion order, filtered by equality on columns (e.g. `rows(role="memo")`)."""
        unknown = sorted(set(where) - set(_COLUMNS))
        if unknown:
            raise ValueError(f"unknown ledger column(s) {unknown}; columns: {sorted(_COLUMNS)}")
        clause = " and ".join(f"[{k}] = ?" for k in where) or None
        params = [str(v) if k == "node" and v is not None else v for k, v in where.items()]
        with self._lock:
            return list(self._db[TABLE].rows_where(clause, params, order_by="id"))

    def totals(self, by: str = "role") -> dict[str, dict[str, Any]]:
        """Per `by` value (role, node, model, purpose): successful calls, failed attempts,
        tokens and USD; unpriced models are listed so a cost figure of 0 is not taken at face value."""
        if by not in ("role", "node", "model", "purpose"):
            raise ValueError(f"totals(by={by!r}): expected role, node, model or purpose")
        sql = (
            f"select [{by}] as key, sum(status = 'ok') as calls, sum(status != 'ok') as failed, "
            "coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), coalesce(sum(usd), 0.0), "
            "group_concat(distinct case when priced = 0 and status = 'ok' then model end) "
            f"from {TABLE} group by [{by}] order by [{by}]"
        )
        with self._lock:
            result = self._db.execute(sql).fetchall()
        return {
            str(key): {
                "calls": calls,
                "failed": failed,
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "usd": usd,
                "unpriced_models": sorted(set(unpriced.split(","))) if unpriced else [],
            }
            for key, calls, failed, prompt, completion, usd, unpriced in result
        }

    def models_by_role(self) -> dict[str, set[str]]:
        """The models each role actually called (failed attempts included)."""
        with self._lock:
            result = self._db.execute(f"select distinct role, model from {TABLE}").fetchall()
        out: dict[str, set[str]] = {}
        for role, model in result:
            out.setdefault(role, set()).add(model)
        return out

    def spent(self) -> tuple[int, float]:
        """(total tokens, total USD) over every row: what a resumed run has already used."""
        with self._lock:
            tokens, usd = self._db.execute(
                f"select coalesce(sum(prompt_tokens + completion_tokens), 0), coalesce(sum(usd), 0.0) from {TABLE}"
            ).fetchone()
        return int(tokens), float(usd)

    def close(self) -> None:
        with self._lock:
            self._db.conn.close()
