"""A run directory `runs/<run_id>/` (layout and schema: docs/run-directory.md).

`RunDir` creates the folder and its sqlite schema and is the read API every other part uses
(report, export, `automemo tree`/`show`). Writing rows during the search goes through
`automemo.runs.journal`, which commits one step at a time.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import sqlite3
import time
from pathlib import Path
from typing import Any, Mapping

import sqlite_utils

from automemo.episode_store import atomic_write
from automemo.errors import DataError

CONFIG_FILE = "config.json"
DB_FILE = "tree.db"
FINAL_FILE = "final.json"
RUNNING_FILE = "running.json"  # {pid, host} of the search working on the run; gone when it ends

# Columns holding JSON text, decoded by the read API.
JSON_COLUMNS = {
    "evaluations": ("metrics", "per_category", "excluded", "errors", "task_scores", "questions", "guard_scores", "cost"),
    "actions": ("candidates",),
    "events": ("data",),
}

SCHEMA = {
    "nodes": dict(
        columns={
            "id": int, "parent": int, "step": int, "action": str, "status": str, "summary": str,
            "program_path": str, "program_sha256": str, "parent_snapshot": float,
            "repair_attempts": int, "failure": str, "created_at": str,
        },
        pk="id",
    ),
    "evaluations": dict(
        columns={
            "id": int, "node_id": int, "k": int, "step": int, "mean": float, "n_scored": int,
            "metrics": str, "per_category": str, "excluded": str, "errors": str, "tokens": int,
            "wall_s": float, "update_s": float, "evidence_dir": str, "created_at": str,
            "exact": int, "task_scores": str, "questions": str, "stopped": str, "guard_scores": str,
            "cost": str,
        },
        pk="id",
    ),
    "actions": dict(
        columns={
            "step": int, "kind": str, "node_id": int, "child_id": int, "outcome": str,
            "policy_score": float, "candidates": str, "wall_s": float, "ledger_rowid": int,
            "detail": str, "created_at": str,
        },
        pk="step",
    ),
    "events": dict(
        columns={"id": int, "step": int, "time": str, "kind": str, "message": str, "data": str},
        pk="id",
    ),
    "journal": dict(columns={"key": str, "value": str}, pk="key"),
}


class RunDirError(DataError, RuntimeError):
    """The folder is not a usable run directory; the message says what is missing."""


class DamagedRun(RunDirError):
    """The run's tree.db is empty, truncated or corrupt (e.g. a partial copy): the message names
    the file, says to restore it from a copy and which files can still be read without it."""


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + os.urandom(2).hex()


class RunDir:
    def __init__(self, path: Path) -> None:
        self.path = Path(path).resolve()

    # creation ----------------------------------------------------------------------------------

    @classmethod
    def create(cls, runs_root: str | os.PathLike, config: Any, run_id: str | None = None) -> RunDir:
        """Make `runs_root/<run_id>/` with the resolved config and an empty schema. `config` is a
        config dataclass or a plain mapping; it must hold no secret (only env-var NAMES)."""
        run_id = run_id or new_run_id()
        path = Path(runs_root) / run_id
        if path.exists():
            raise RunDirError(f"{path} already exists; pick another run id or use --resume {path}")
        path.mkdir(parents=True)
        plain = dataclasses.asdict(config) if dataclasses.is_dataclass(config) else dict(config)
        atomic_write(path / CONFIG_FILE, json.dumps(plain, indent=2, sort_keys=True).encode())
        run = cls(path)
        run._create_schema()
        (run.path / "nodes").mkdir()
        run.store_root.mkdir()
        return run

    def _create_schema(self) -> None:
        db = sqlite_utils.Database(self.db_path)
        # WAL lets the LLM ledger append from its own connection while a step commits.
        db.execute("PRAGMA journal_mode=WAL")
        for name, spec in SCHEMA.items():
            db[name].create(spec["columns"], pk=spec["pk"], not_null={spec["pk"]})
        db["evaluations"].create_index(["node_id", "k"], unique=True)
        db["journal"].insert({"key": "ledger_watermark", "value": "0"})
        db.close()

    @classmethod
    def open(cls, path: str | os.PathLike) -> RunDir:
        run = cls(Path(path))
        for name in (CONFIG_FILE, DB_FILE):
            if not (run.path / name).exists():
                raise RunDirError(
                    f"{run.path} is not a run directory (no {name}); "
                    f"runs are the folders under runs/ made by `automemo search`"
                )
        run._check_database()
        return run

    def _check_database(self) -> None:
        """Refuse a tree.db that sqlite cannot read or that lacks the run tables, before any
        command reads (or writes) a row: one clear error instead of a traceback halfway."""
        try:
            conn = sqlite3.connect(self.db_path, timeout=30.0)
            try:
                tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                # quick_check reads every page: a truncated copy fails here, not in the middle of
                # a report. Run databases are small (a few MB), so this costs milliseconds.
                check = [r[0] for r in conn.execute("PRAGMA quick_check")]
            finally:
                conn.close()
        except sqlite3.DatabaseError as exc:
            raise DamagedRun(self._damage_message(str(exc))) from None
        missing = sorted(set(SCHEMA) - tables)
        if missing:
            size = self.db_path.stat().st_size
            what = "is empty (0 bytes)" if size == 0 else f"lacks the tables {', '.join(missing)}"
            raise DamagedRun(self._damage_message(what))
        if check != ["ok"]:
            raise DamagedRun(self._damage_message("; ".join(check[:3])))
        self._add_new_columns()

    def _add_new_columns(self) -> None:
        """A run made before a column was added (e.g. evaluations.task_scores) gets it, empty,
        so that it resumes and reads like a new one."""
        sql_types = {int: "INTEGER", float: "FLOAT", str: "TEXT"}
        conn = sqlite3.connect(self.db_path, timeout=30.0)
        try:
            for name, spec in SCHEMA.items():
                have = {r[1] for r in conn.execute(f'PRAGMA table_info("{name}")')}
                for column, kind in spec["columns"].items():
                    if column not in have:
                        conn.execute(f'ALTER TABLE "{name}" ADD COLUMN "{column}" {sql_types[kind]}')
            conn.commit()
        finally:
            conn.close()

    def _damage_message(self, detail: str) -> str:
        readable = f"the node folders {self.path / 'nodes'}/<id>/ hold each program (program.py) and its evaluations"
        if (self.path / FINAL_FILE).exists():
            readable += f", and {self.path / FINAL_FILE} holds the selected node and its scores"
        return (
            f"{self.db_path} is damaged ({detail}), so this run's tree cannot be read. Restore "
            f"{DB_FILE} from a copy of the run (copy the whole folder, with {DB_FILE}-wal if "
            f"present, while no search is writing to it). Without it, {readable}."
        )

    # paths -------------------------------------------------------------------------------------

    @property
    def run_id(self) -> str:
        return self.path.name

    @property
    def db_path(self) -> Path:
        return self.path / DB_FILE

    @property
    def store_root(self) -> Path:
        return self.path / "episodes"

    @property
    def pending_dir(self) -> Path:
        return self.path / ".pending"

    def node_dir(self, node_id: int) -> Path:
        return self.path / "nodes" / str(node_id)

    def evaluation_dir(self, node_id: int, k: int) -> Path:
        return self.node_dir(node_id) / "evaluations" / str(k)

    # reading -----------------------------------------------------------------------------------

    def connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.db_path, timeout=30.0)
        conn.row_factory = sqlite3.Row
        return conn

    def _rows(self, sql: str, params: tuple = (), table: str | None = None) -> list[dict[str, Any]]:
        conn = self.connect()
        try:
            rows = [dict(r) for r in conn.execute(sql, params)]
        finally:
            conn.close()
        for row in rows:
            for col in JSON_COLUMNS.get(table or "", ()):
                if isinstance(row.get(col), str):
                    row[col] = json.loads(row[col])
        return rows

    def config(self) -> dict[str, Any]:
        return json.loads((self.path / CONFIG_FILE).read_text())

    def write_config(self, config: Mapping[str, Any]) -> None:
        """Replace the resolved config (used when a resumed run extends its budget)."""
        atomic_write(self.path / CONFIG_FILE, json.dumps(dict(config), indent=2, sort_keys=True).encode())

    def nodes(self) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM nodes ORDER BY id", table="nodes")

    def node(self, node_id: int) -> dict[str, Any]:
        rows = self._rows("SELECT * FROM nodes WHERE id = ?", (node_id,), table="nodes")
        if not rows:
            known = [n["id"] for n in self.nodes()]
            raise KeyError(f"run {self.run_id} has no node {node_id}; nodes: {known}")
        return rows[0]

    def program_source(self, node_id: int) -> str:
        return (self.path / self.node(node_id)["program_path"]).read_text()

    def node_json(self, node_id: int, name: str) -> Any:
        """A JSON file of a node folder (diagnosis.json, exam.json), or None if it has none."""
        path = self.node_dir(node_id) / name
        return json.loads(path.read_text()) if path.exists() else None

    def evaluations(self, node_id: int | None = None) -> list[dict[str, Any]]:
        if node_id is None:
            return self._rows("SELECT * FROM evaluations ORDER BY step, node_id, k", table="evaluations")
        return self._rows(
            "SELECT * FROM evaluations WHERE node_id = ? ORDER BY k", (node_id,), table="evaluations"
        )

    def evaluation_result(self, node_id: int, k: int) -> dict[str, Any] | None:
        path = self.evaluation_dir(node_id, k) / "summary.json"
        return json.loads(path.read_text()) if path.exists() else None

    def actions(self) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM actions ORDER BY step", table="actions")

    def events(self) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM events ORDER BY id", table="events")

    def last_step(self) -> int | None:
        """The last committed step (0 = the root's first evaluation), None before any."""
        rows = self._rows("SELECT MAX(step) AS s FROM actions")
        return rows[0]["s"]

    def final(self) -> dict[str, Any] | None:
        path = self.path / FINAL_FILE
        return json.loads(path.read_text()) if path.exists() else None

    def write_final(self, final: Mapping[str, Any]) -> None:
        atomic_write(self.path / FINAL_FILE, json.dumps(final, indent=2, sort_keys=True).encode())

    # liveness ----------------------------------------------------------------------------------

    def mark_running(self) -> None:
        """Say that this process is searching the run (removed by `clear_running`; a killed
        search leaves it behind with a dead pid, which `is_running` sees through)."""
        atomic_write(self.path / RUNNING_FILE,
                     json.dumps({"pid": os.getpid(), "host": socket.gethostname()}).encode())

    def clear_running(self) -> None:
        (self.path / RUNNING_FILE).unlink(missing_ok=True)

    def is_running(self) -> bool:
        """Whether a search is working on the run now: a report of a run that was killed or
        interrupted says so, instead of "in progress"."""
        try:
            marker = json.loads((self.path / RUNNING_FILE).read_text())
        except (OSError, ValueError):
            return False
        if marker.get("host") != socket.gethostname():
            return True  # another machine's process: assume it is alive
        try:
            os.kill(int(marker["pid"]), 0)
        except PermissionError:
            return True  # alive, under another user
        except (ProcessLookupError, KeyError, ValueError, TypeError):
            return False  # dead, or not a marker a search wrote
        return True

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

