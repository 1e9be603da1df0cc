"""Step commits and crash recovery for a run directory (protocol: docs/run-directory.md).

A step stages its files under `.pending/step-<k>/`, renames them into `nodes/` when it is
complete, then writes all of its rows in ONE sqlite transaction whose `actions` row marks the
step as committed. `recover` discards whatever an interrupted step left behind, so that the step
can be redone from scratch and come out the same.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any, Iterator, Mapping

from automemo.runs.records import ActionRecord, EvaluationRecord, NodeRecord
from automemo.runs.rundir import RunDir, now_iso


def _json_ready(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: json.dumps(v, sort_keys=True) if isinstance(v, (dict, list, tuple)) else v
        for k, v in row.items()
    }


def _insert(conn: sqlite3.Connection, table: str, row: Mapping[str, Any]) -> None:
    row = _json_ready(row)
    cols = ", ".join(f'"{c}"' for c in row)
    marks = ", ".join("?" for _ in row)
    conn.execute(f'INSERT INTO "{table}" ({cols}) VALUES ({marks})', tuple(row.values()))


def _has_ledger(conn: sqlite3.Connection) -> bool:
    return conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ledger'"
    ).fetchone() is not None


def _ledger_high(conn: sqlite3.Connection) -> int:
    if not _has_ledger(conn):
        return 0
    return conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM ledger").fetchone()[0]


@contextlib.contextmanager
def _transaction(run: RunDir) -> Iterator[sqlite3.Connection]:
    # Autocommit connection + explicit BEGIN IMMEDIATE: the step's rows go in together or not
    # at all, and sqlite's implicit transaction handling cannot commit halfway.
    conn = sqlite3.connect(run.db_path, timeout=60.0, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    finally:
        conn.close()


class StepJournal:
    """Collects one step's files and rows; nothing is visible to readers before `commit`."""

    def __init__(self, run: RunDir, step: int) -> None:
        self.run = run
        self.step = step
        self.scratch = run.pending_dir / f"step-{step}"
        shutil.rmtree(self.scratch, ignore_errors=True)
        self.scratch.mkdir(parents=True)
        self._staged_nodes: dict[int, Path] = {}
        self._moves: list[tuple[Path, Path]] = []
        self._evaluation_dirs: dict[tuple[int, int], Path] = {}
        self._nodes: list[dict[str, Any]] = []
        self._evaluations: list[dict[str, Any]] = []
        self._events: list[dict[str, Any]] = []

    # files -------------------------------------------------------------------------------------

    def node_dir(self, node_id: int) -> Path:
        """Where a NEW node's folder is written during this step."""
        if node_id not in self._staged_nodes:
            staged = self.scratch / "nodes" / str(node_id)
            staged.mkdir(parents=True)
            self._staged_nodes[node_id] = staged
            self._moves.append((staged, self.run.node_dir(node_id)))
        return self._staged_nodes[node_id]

    def evaluation_dir(self, node_id: int, k: int) -> Path:
        """Where the evidence of node `node_id`'s k-th evaluation is written during this step."""
        if node_id in self._staged_nodes:
            path = self._staged_nodes[node_id] / "evaluations" / str(k)
        else:
            path = self.scratch / "evaluations" / f"{node_id}-{k}"
            self._moves.append((path, self.run.evaluation_dir(node_id, k)))
        path.mkdir(parents=True, exist_ok=True)
        self._evaluation_dirs[(node_id, k)] = path
        return path

    # rows --------------------------------------------------------------------------------------

    def add_node(self, node: NodeRecord) -> None:
        self._nodes.append({**node.to_row(), "step": self.step, "created_at": now_iso()})

    def add_evaluation(self, evaluation: EvaluationRecord) -> None:
        self._evaluations.append({**evaluation.to_row(), "step": self.step, "created_at": now_iso()})

    def add_event(self, kind: str, message: str, data: Mapping[str, Any] | None = None) -> None:
        self._events.append(
            {"step": self.step, "time": now_iso(), "kind": kind, "message": message,
             "data": dict(data or {})}
        )

    # commit ------------------------------------------------------------------------------------

    def commit(self, action: ActionRecord) -> None:
        """Move the files into place, then write every row and the `actions` row at once.
        The evidence of an evaluation that failed (no row) is dropped, never moved: a folder
        without its row would stand in the way of the evaluation that later gets its index."""
        rowed = {(row["node_id"], row["k"]) for row in self._evaluations}
        for key, path in self._evaluation_dirs.items():
            if key not in rowed:
                shutil.rmtree(path, ignore_errors=True)
        for src, dst in self._moves:
            if not src.exists():
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            if dst.exists():  # left by an interrupted earlier attempt at this very step
                shutil.rmtree(dst)
            src.rename(dst)
        with _transaction(self.run) as conn:
            for row in self._nodes:
                _insert(conn, "nodes", row)
            for row in self._evaluations:
                _insert(conn, "evaluations", row)
            for row in self._events:
                _insert(conn, "events", row)
            high = _ledger_high(conn)
            _insert(
                conn,
                "actions",
                {**action.to_row(), "step": self.step, "ledger_rowid": high, "created_at": now_iso()},
            )
            conn.execute(
                "UPDATE journal SET value = ? WHERE key = 'ledger_watermark'", (str(high),)
            )
            # A parallel search's record of this step in flight ends with the step's commit.
            conn.execute("DELETE FROM journal WHERE key = ?", (_inflight_key(self.step),))
        self.abandon()

    def abandon(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)
        try:
            self.run.pending_dir.rmdir()  # only when no other step's scratch is left in it
        except OSError:
            pass


INFLIGHT_PREFIX = "inflight:"


def _inflight_key(step: int) -> str:
    return f"{INFLIGHT_PREFIX}{step}"


def record_inflight(run: RunDir, step: int, action: Mapping[str, Any]) -> None:
    """Note that `action` was chosen at `step` and is running. A parallel search writes this
    before it starts the action, so that after a crash the actions that were in flight (chosen,
    never committed) are known and restarted as they were chosen; the step's commit deletes it
    in the same transaction."""
    with _transaction(run) as conn:
        conn.execute("INSERT OR REPLACE INTO journal (key, value) VALUES (?, ?)",
                     (_inflight_key(step), json.dumps(dict(action), sort_keys=True)))


def inflight(run: RunDir) -> list[dict[str, Any]]:
    """The actions recorded in flight and not committed, by step."""
    conn = sqlite3.connect(run.db_path, timeout=60.0)
    try:
        rows = conn.execute("SELECT key, value FROM journal WHERE key LIKE ?",
                            (INFLIGHT_PREFIX + "%",)).fetchall()
    finally:
        conn.close()
    return sorted((json.loads(value) for _, value in rows), key=lambda a: a["step"])


def record_event(
    run: RunDir, kind: str, message: str, data: Mapping[str, Any] | None = None,
    *, keep_ledger: bool = False,
) -> None:
    """A run-level event (created, resumed, stopped). It carries the last committed step so that
    recovery never mistakes it for part of an unfinished one. `keep_ledger` commits the ledger
    rows spent so far (a budget stop keeps the record of money that was really spent)."""
    with _transaction(run) as conn:
        step = conn.execute("SELECT MAX(step) FROM actions").fetchone()[0]
        _insert(conn, "events", {"step": step if step is not None else -1, "time": now_iso(),
                                 "kind": kind, "message": message, "data": dict(data or {})})
        if keep_ledger:
            conn.execute(
                "UPDATE journal SET value = ? WHERE key = 'ledger_watermark'",
                (str(_ledger_high(conn)),),
            )


def recover(run: RunDir) -> int | None:
    """Discard everything an interrupted step left (scratch files, node and evaluation folders
    without a committed row, ledger rows above the watermark) and return the last committed
    step, or None if not even the root's evaluation was committed."""
    shutil.rmtree(run.pending_dir, ignore_errors=True)
    with _transaction(run) as conn:
        last = conn.execute("SELECT MAX(step) FROM actions").fetchone()[0]
        node_ids = {r[0] for r in conn.execute("SELECT id FROM nodes")}
        evals = {(r[0], r[1]) for r in conn.execute("SELECT node_id, k FROM evaluations")}
        watermark = int(conn.execute(
            "SELECT value FROM journal WHERE key = 'ledger_watermark'"
        ).fetchone()[0])
        if _has_ledger(conn):
            conn.execute("DELETE FROM ledger WHERE rowid > ?", (watermark,))
    nodes_root = run.path / "nodes"
    for folder in sorted(nodes_root.iterdir()) if nodes_root.exists() else ():
        if not folder.name.isdigit() or int(folder.name) not in node_ids:
            shutil.rmtree(folder)
            continue
        ev_root = folder / "evaluations"
        for ev in sorted(ev_root.iterdir()) if ev_root.exists() else ():
            if not ev.name.isdigit() or (int(folder.name), int(ev.name)) not in evals:
                shutil.rmtree(ev)
    return last
