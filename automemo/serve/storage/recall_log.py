"""One namespace's recalls and the agent's feedback on them (docs/serve.md, "Feedback"): a JSON line per
recall, and one per feedback, in the user's own folder, fsynced before the call is answered.

    {"recall": "9f2c…", "at": 1764140000.0, "query": "where is my bike?", "date": "2024-06-01",
     "shown": ["s3#0", "s1#2"]}                               what recall returned, in its order
    {"feedback": "9f2c…", "at": 1764140003.1, "used": ["s1#2"], "not_used": ["s3#0"]}

A feedback line is fsynced before the call is answered; a recall line is written but not
fsynced (a recall changes no memory, and a sync per recall would cost every recall a disk
flush): a crash can lose the last recalls, and feedback on one of those is answered 404.

It is the user's, as their episodes are: forgetting an episode drops every recall that showed one
of its items (and its feedback: the ids it names would name nothing, and a query about a
forgotten thing is itself about it), `forget all` removes the log, an export carries it, and no
pooled record ever holds its text (a pooled round reads numbers from it, never a query).

Feedback is checked against its recall: an unknown recall id (or another user's: each log is one
user's), an id the recall did not return, or a second feedback for the same recall is refused
(`FeedbackRefused`, with the HTTP status it answers with) and changes nothing.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from automemo.errors import DataError

RECALLS = "recalls.jsonl"
"""The log's file in a namespace's folder."""
KEPT_RECALLS = 2_000
"""Recalls without feedback a log keeps, the newest: every recall is logged (a client sending
thousands grew one log to 35 MB), and feedback on an older one is answered 404. A recall with
feedback is kept whatever its age: it is what a round learns from."""


class FeedbackRefused(DataError, ValueError):
    """A feedback that cannot be taken; `status` is what the HTTP face answers with."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class LoggedRecall:
    recall_id: str
    at: float
    query: str
    shown: tuple[str, ...]
    date: str = ""                                  # the question's time, when the recall gave one
    used: tuple[str, ...] | None = None             # None: no feedback (yet)
    not_used: tuple[str, ...] = ()
    feedback_at: float | None = None
    # a recall answered during a trial (`serve.storage.trials`): each shown item's team, and the trial's id
    teams: tuple[str, ...] = ()
    trial: str = ""


@dataclass
class RecallLog:
    """The log at `path` (users/<key>/recalls.jsonl). Not thread-safe: a namespace's calls are
    serialised by its owner, as its episode log's are."""

    path: Path
    _entries: dict[str, LoggedRecall] | None = field(default=None, repr=False)

    @staticmethod
    def new_id() -> str:
        return uuid.uuid4().hex

    def entries(self) -> list[LoggedRecall]:
        return list(self._read().values())

    def record(self, recall_id: str, query: str, shown: Iterable[str], date: str = "", *,
               teams: Iterable[str] = (), trial: str = "") -> None:
        line = {"recall": recall_id, "at": time.time(), "query": query, "shown": list(shown),
                **({"date": date} if date else {}), **_trial_fields(tuple(teams), trial)}
        self._append(line, durable=False)
        entries = self._read()
        entries[recall_id] = _recall_of(line)
        waiting = sum(1 for e in entries.values() if e.used is None)
        if waiting > KEPT_RECALLS * 5 // 4:  # compacted a quarter over the bound: a rewrite per 500 recalls
            oldest = [r for r, e in entries.items() if e.used is None][:waiting - KEPT_RECALLS]
            for old in oldest:
                del entries[old]
            self._rewrite(entries.values())

    def feedback(self, recall_id: str, used: Iterable[str], not_used: Iterable[str] = ()) -> LoggedRecall:
        used, not_used = _ids(used, "used"), _ids(not_used, "not_used")
        recall = self._read().get(recall_id)
        if recall is None:
            raise FeedbackRefused(f"no recall {recall_id!r} of this user: pass the recall_id a recall of this user "
                                  f"answered with", 404)
        if recall.used is not None:
            raise FeedbackRefused(f"recall {recall_id} has feedback already; a recall takes one feedback", 409)
        shown = set(recall.shown)
        strangers = [i for i in (*used, *not_used) if i not in shown]
        if strangers:
            raise FeedbackRefused(f"{', '.join(strangers)}: not returned by recall {recall_id} (it returned "
                                  f"{', '.join(recall.shown) or 'nothing'}); name only items it returned", 400)
        both = sorted(set(used) & set(not_used))
        if both:
            raise FeedbackRefused(f"{', '.join(both)}: both used and not used", 400)
        line = {"feedback": recall_id, "at": time.time(), "used": used, "not_used": not_used}
        self._append(line)
        done = _with_feedback(recall, line)
        self._read()[recall_id] = done
        return done

    def drop_showing(self, ids: Iterable[str]) -> int:
        """Remove every recall that showed one of `ids` (a forgotten episode's items), with its
        feedback; the file is rewritten, so their lines leave the disk. Returns how many."""
        gone = set(ids)
        entries = self._read()
        dropped = [r for r, e in entries.items() if gone & set(e.shown)]
        if not dropped:
            return 0
        for recall_id in dropped:
            del entries[recall_id]
        self._rewrite(entries.values())
        return len(dropped)

    def lines(self) -> list[dict[str, Any]]:
        """The log as an export carries it: one line per recall, its feedback inside."""
        return [{"recall": e.recall_id, "at": e.at, "query": e.query, "shown": list(e.shown),
                 **({"date": e.date} if e.date else {}), **_trial_fields(e.teams, e.trial),
                 **({"used": list(e.used), "not_used": list(e.not_used)} if e.used is not None else {})}
                for e in self.entries()]

    def add_lines(self, lines: Iterable[Mapping[str, Any]]) -> int:
        """An export's recall lines added to this log (an import); a recall id the log holds
        already is left as it is. Returns how many were added."""
        entries = self._read()
        added = 0
        for line in lines:
            recall = _recall_of(line)
            if recall.recall_id in entries:
                continue
            entries[recall.recall_id] = _with_feedback(recall, line) if line.get("used") is not None else recall
            added += 1
        if added:
            self._rewrite(entries.values())
        return added

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)
        self._entries = {}

    # files ---------------------------------------------------------------------------------

    def _read(self) -> dict[str, LoggedRecall]:
        if self._entries is None:
            self._entries = read_recalls(self.path)
        return self._entries

    def _append(self, line: Mapping[str, Any], *, durable: bool = True) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
            fh.flush()
            if durable:
                os.fsync(fh.fileno())

    def _rewrite(self, entries: Iterable[LoggedRecall]) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for e in entries:
                fh.write(json.dumps({"recall": e.recall_id, "at": e.at, "query": e.query, "shown": list(e.shown),
                                     **({"date": e.date} if e.date else {}), **_trial_fields(e.teams, e.trial)},
                                    ensure_ascii=False) + "\n")
                if e.used is not None:
                    fh.write(json.dumps({"feedback": e.recall_id, "at": e.feedback_at, "used": list(e.used),
                                         "not_used": list(e.not_used)}) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)


def read_recalls(path: Path) -> dict[str, LoggedRecall]:
    """recall id -> the recall with its feedback, in log order; a torn or foreign line is skipped
    (a kill mid-append leaves one; that call was never answered)."""
    out: dict[str, LoggedRecall] = {}
    if not path.is_file():
        return out
    for raw in path.read_text(encoding="utf-8").splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(line, dict):
            continue
        if "recall" in line:
            out[str(line["recall"])] = _recall_of(line)
        elif "feedback" in line and str(line["feedback"]) in out:
            out[str(line["feedback"])] = _with_feedback(out[str(line["feedback"])], line)
    return out


def _recall_of(line: Mapping[str, Any]) -> LoggedRecall:
    return LoggedRecall(str(line["recall"]), float(line.get("at") or 0.0), str(line.get("query") or ""),
                        tuple(str(i) for i in line.get("shown") or ()), str(line.get("date") or ""),
                        teams=tuple(str(t) for t in line.get("teams") or ()), trial=str(line.get("trial") or ""))


def _trial_fields(teams: tuple[str, ...], trial: str) -> dict[str, Any]:
    """A trial recall's extra fields (`serve.storage.trials`); none for a recall outside a trial."""
    return {"teams": list(teams), "trial": trial} if trial else {}


def _with_feedback(recall: LoggedRecall, line: Mapping[str, Any]) -> LoggedRecall:
    from dataclasses import replace

    return replace(recall, used=tuple(line.get("used") or ()), not_used=tuple(line.get("not_used") or ()),
                   feedback_at=float(line.get("at") or 0.0))


def _ids(value: Iterable[str], name: str) -> list[str]:
    if isinstance(value, (str, bytes)) or not all(isinstance(i, str) and i for i in value):
        raise FeedbackRefused(f"{name}: expected a list of the item ids recall returned, got {value!r}", 400)
    return list(dict.fromkeys(value))


def episode_item_ids(episode: Mapping[str, Any]) -> dict[str, int]:
    """The ids a memo program may cite for an episode's steps, each to its step index: the step's
    ref, its round id or id metadata, "<task_id>#<index>" (the toolkit's default, memolib.units),
    and the ids of its images. What a forget drops recalls by, and what an adaptation round maps
    a recall's shown items to the history's turns with."""
    out: dict[str, int] = {}
    task = str(episode.get("task_id") or "")
    for position, step in enumerate(episode.get("steps") or ()):
        index = int(step.get("index", position))
        meta = step.get("metadata") or {}
        for key in (step.get("ref"), meta.get("round_id"), meta.get("id"), f"{task}#{index}", meta.get("image_id"),
                    *(meta.get("image_ids") or ())):
            if key:
                out.setdefault(str(key), index)
    return out
