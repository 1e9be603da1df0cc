"""LongMemEval (Wu et al., ICLR 2025), read from its published `longmemeval_s`, `_m` or `_oracle`
JSON file: a list of questions, each with its own haystack.

A question holds `question_id` (`..._abs` for an abstention question, whose answer was never
given), `question_type`, `question`, `answer`, `question_date` ("2023/05/20 (Sat) 02:21"),
`haystack_session_ids`, `haystack_dates` and `haystack_sessions` (lists of turns `{role, content,
has_answer?}`), and `answer_session_ids`.

Each question is its own memory (its own user, `scope` = its id): its update episodes are its
haystack's sessions in date order, one step per turn, cited as `"<question>/<session>:<turn>"`
(turns numbered from 1 as released); then its one question is asked, with its date as the
retrieve task's time. Splits are by question, stratified by type. The same session in many
haystacks (most of M's ~500 a question) is read once, keyed by its id and a hash of its content,
its texts kept once; each question's memory refers to it by its own refs; and the run's
content-keyed embedding cache embeds each of its turns once. `has_answer`, `answer_session_ids` and `answer` stay on the host for scoring.

Two readings of the evidence are kept: a question's clues, every turn marked `has_answer` (the
user's or the assistant's), which the project's figures score; and its targets, the turns
LongMemEval's official retrieval scorer reads as evidence (`longmemeval_metrics`): the user
turns marked `has_answer` of the sessions whose id holds `answer`, as its code recognises an
answer session (`run_retrieval.py`, `process_item_flat_index`). The release names its answer
sessions so; a file whose `answer_session_ids` disagree with that reading is said once.

Real files are dirty: a session with no turns, a turn without text, a question without a haystack
or without its text is left out and said once; a turn without `has_answer` counts as not
evidence; an answer session id that is not in the haystack is a dropped clue.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Mapping

from automemo.benchmarks.base import Task, TaskScore
from automemo.benchmarks.conversation.benchmark import ConversationBenchmark, TextConversationOptions
from automemo.benchmarks.conversation.files import as_list, in_date_order, iter_json_list
from automemo.benchmarks.conversation.longmemeval_metrics import NAMES as OFFICIAL_NAMES, official_metrics
from automemo.benchmarks.conversation.model import (
    Conversations, DatasetError, DroppedClue, DroppedItem, Question, Session, Turn, UnknownClues, qualified,
)
from automemo.contract import MemoryPayload
from automemo.interaction import evidence

FORMAT = ("a LongMemEval file (longmemeval_s / _m / _oracle): a list of {question_id, question_type, "
          "question, answer, question_date, haystack_session_ids, haystack_dates, haystack_sessions, "
          "answer_session_ids}")
ABSTENTION_MARK = "_abs"  # in the id of an abstention question, as the official code tests it (`'_abs' in`)
ANSWER_SESSION_MARK = "answer"  # in the id of a session the official scorer reads as an answer session
LOCOMO_PREFIX = "locomo_"  # the conversation figures LongMemEval does not report (LoCoMo's own)
DESCRIBED_DROPS = 20  # dropped parts listed in describe() (all are counted; all are said when read)
_DATE = re.compile(r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\((\w+)\))?\s*(?:(\d{1,2}):(\d{2}))?")


@dataclass(frozen=True)
class LongMemEvalOptions(TextConversationOptions):
    """The conversation options without `image_dir`: the release is text only."""

    path: str = ""                    # longmemeval_s.json, longmemeval_m.json or longmemeval_oracle.json (required)


def iso_date(released: str) -> str | None:
    """A released date ("2023/05/20 (Sat) 02:21") as the ISO form the toolkit's time filters read
    ("2023-05-20 02:21 (Sat)"); None when it is not in that form."""
    m = _DATE.match(released or "")
    if not m:
        return None
    year, month, day, weekday, hour, minute = m.groups()
    try:
        datetime(int(year), int(month), int(day))
    except ValueError:
        return None
    out = f"{int(year):04d}-{int(month):02d}-{int(day):02d}"
    out += f" {int(hour):02d}:{minute}" if hour is not None else ""
    return out + (f" ({weekday})" if weekday else "")


@dataclass(frozen=True, slots=True)
class _ParsedSession:
    """A haystack session as read once, however many haystacks hold it."""

    turns: tuple[tuple[int, str, str], ...]  # (turn number as released, role, text) of each kept turn
    marked: tuple[bool, ...]                 # has_answer of each kept turn
    unmarked: int                            # kept turns without has_answer
    drops: tuple[tuple[str, str], ...]       # (which turn, why) of each turn left out


class _Reader:
    """One pass over the file; what it leaves out is kept for the report."""

    def __init__(self, path: Path, unknown_clues: UnknownClues) -> None:
        self.path, self.unknown_clues = path, unknown_clues
        self.dropped: list[DroppedItem] = []
        self.dropped_clues: list[DroppedClue] = []
        self.sessions: list[Session] = []
        self.questions: list[Question] = []
        self.targets: dict[str, tuple[str, ...]] = {}  # question -> the official scorer's evidence turns
        self.strata: dict[str, str] = {}
        self.without_has_answer = 0
        self.misread_sessions = 0
        self._marked: dict[str, tuple[bool, ...]] = {}  # session -> has_answer of each kept turn
        self._targets: dict[str, tuple[str, ...]] = {}  # session -> its turns the official scorer reads as evidence
        self._answer_ids: set[str] = set()  # the current question's answer_session_ids, as released
        self._texts: dict[str, str] = {}  # one string per distinct turn text: haystacks share sessions
        self._parsed: dict[tuple[str, bytes], _ParsedSession] = {}  # (session id, content hash) -> read once
        self.session_references = 0  # haystack sessions read, over every question

    def drop(self, where: str, what: str) -> None:
        self.dropped.append(DroppedItem(where, what))

    def question(self, qi: int, item: Any) -> None:
        where = f"{self.path.name}: question[{qi}]"
        if not isinstance(item, Mapping):
            return self.drop(where, f"not a question object ({type(item).__name__})")
        qid = str(item.get("question_id") or "").strip()
        if not qid:
            return self.drop(where, "a question without question_id")
        where += f" ({qid})"
        if qid in self.strata:
            return self.drop(where, "a second question with this question_id")
        if not str(item.get("question") or "").strip():
            return self.drop(where, "a question without its text")
        self._answer_ids = set(map(str, as_list(item.get("answer_session_ids"))))
        sessions = self._haystack(qid, item, where)
        if not sessions:
            return self.drop(where, "a question without a usable haystack session")
        qtype = str(item.get("question_type") or "").strip()
        if not qtype:
            self.drop(where, "no question_type: typed as 'unknown'")
            qtype = "unknown"
        date = iso_date(str(item.get("question_date") or ""))
        if date is None:
            self.drop(where, f"question_date {item.get('question_date')!r} is not a date like "
                             f"'2023/05/20 (Sat) 02:21': asked without a time")
        refusal = ABSTENTION_MARK in qid
        in_haystack = {s.session_id.split("/", 1)[1] for s in sessions}
        if not refusal:  # an abstention question's sessions are not evidence anyway
            for sid in map(str, as_list(item.get("answer_session_ids"))):
                if sid in in_haystack:
                    continue
                if self.unknown_clues == "error":
                    raise DatasetError(f"{self.path}: {where}: answer session {sid!r} is not in its haystack; "
                                       f'fix the file, or set unknown_clues = "drop" (the default)')
                self.dropped_clues.append(DroppedClue(where, sid))
            self.misread_sessions += sum((ANSWER_SESSION_MARK in sid) != (sid in self._answer_ids)
                                         for sid in in_haystack)
        clues = tuple(t.ref for s in sessions for t, marked in zip(s.turns, self._marked[s.session_id]) if marked)
        self.sessions += sessions
        self.strata[qid] = qtype
        self.targets[qualified(qid, "Q")] = tuple(t for s in sessions for t in self._targets[s.session_id])
        self.questions.append(Question(
            qualified(qid, "Q"), qid, qtype, str(item["question"]), str(item.get("answer") or ""),
            clues, refusal, date=date or "",
        ))

    def _haystack(self, qid: str, item: Mapping, where: str) -> list[Session]:
        ids, dates, raw = (as_list(item.get(k)) for k in ("haystack_session_ids", "haystack_dates", "haystack_sessions"))
        if len(ids) != len(raw) or len(dates) != len(raw):
            self.drop(where, f"{len(raw)} haystack_sessions, {len(ids)} haystack_session_ids, {len(dates)} "
                             f"haystack_dates: sessions without an id or a date are named by position / undated")
        dated: list[tuple[str, Session]] = []
        seen: set[str] = set()
        for si, turns in enumerate(raw):
            sid = str(ids[si]) if si < len(ids) and ids[si] else f"session-{si + 1}"
            s_where = f"{where}: session {si} ({sid})"
            if sid in seen:
                self.drop(s_where, "a session id repeated in one haystack")
                continue
            seen.add(sid)
            date = iso_date(str(dates[si])) if si < len(dates) else None
            session = self._session(qid, sid, date or "", turns, s_where)
            if session is not None:
                dated.append((date or "", session))
        # Date order, as the sessions happened; an undated session keeps its place among the dated
        # ones it was released between.
        return in_date_order(dated)

    def _session(self, qid: str, sid: str, date: str, turns: Any, where: str) -> Session | None:
        if not isinstance(turns, list) or not turns:
            self.drop(where, "an empty session (no turns)")
            return None
        # A session many haystacks hold (most of M's) is read once: keyed by its id and its
        # content, so a session id reused for other text is read as the other session it is.
        key = (sid, hashlib.blake2b(json.dumps(turns, ensure_ascii=False).encode(), digest_size=16).digest())
        parsed = self._parsed.get(key)
        if parsed is None:
            parsed = self._parsed[key] = self._parse(turns)
        self.session_references += 1
        for at, what in parsed.drops:  # said for every haystack that holds it, as read
            self.drop(f"{where}: {at}", what)
        if sid in self._answer_ids:
            # Only an evidence session's turns are marked in the release; one without the mark
            # is read as not evidence and counted in the report.
            self.without_has_answer += parsed.unmarked
        if not parsed.turns:
            self.drop(where, "a session whose turns have no text")
            return None
        session_id = qualified(qid, sid)
        out = tuple(Turn(qualified(qid, f"{sid}:{number}"), role, text) for number, role, text in parsed.turns)
        self._marked[session_id] = parsed.marked
        # The official corpus indexes user turns only, and reads has_answer only in the sessions
        # it takes for answer sessions (their other turns become never-gold `noans` items).
        self._targets[session_id] = tuple(
            t.ref for t, m in zip(out, parsed.marked) if m and t.speaker == "user" and ANSWER_SESSION_MARK in sid)
        return Session(session_id, qid, date, out)

    def _parse(self, turns: list) -> _ParsedSession:
        kept, marked, drops, unmarked = [], [], [], 0
        for ti, turn in enumerate(turns):
            content = turn.get("content") if isinstance(turn, Mapping) else None
            if not isinstance(content, str) or not content.strip():
                drops.append((f"turn {ti + 1}", "a turn without text"))
                continue
            unmarked += "has_answer" not in turn
            role = str(turn.get("role") or "unknown")
            text = f"{role}: {content}"
            text = self._texts.setdefault(text, text)  # the key is the value: one string, not two
            kept.append((ti + 1, role, text))
            marked.append(turn.get("has_answer") is True)
        return _ParsedSession(tuple(kept), tuple(marked), unmarked, tuple(drops))

    @property
    def distinct_sessions(self) -> int:
        return len(self._parsed)


@dataclass(frozen=True)
class Release:
    """A read file: its conversations, and what stays on the host for LongMemEval's official
    figures and for the report."""

    data: Conversations
    targets: Mapping[str, tuple[str, ...]]  # question id -> the turns the official scorer reads as evidence
    without_has_answer: int  # turns of answer sessions without has_answer (read as not evidence)
    misread_sessions: int    # haystack sessions whose id and answer_session_ids disagree on being evidence
    session_references: int = 0  # non-empty haystack sessions over every question
    distinct_sessions: int = 0   # of them, distinct (id, content): each read once


def read_release(path: Path, unknown_clues: UnknownClues = "drop") -> Release:
    """The file as `Conversations` and the labels of `Release`."""
    if not path.is_file():
        raise DatasetError(f"longmemeval: {path} does not exist; set the option `path` to the downloaded "
                           f"longmemeval_s.json (or _m / _oracle)")
    reader = _Reader(path, unknown_clues)
    # One question at a time: the M file (~2.7 GB) is never held whole, only what is kept of it.
    for qi, item in enumerate(iter_json_list(path, FORMAT)):
        reader.question(qi, item)
    if not reader.questions:
        raise DatasetError(f"{path}: no usable question ({len(reader.dropped)} parts left out"
                           + (f", e.g. {reader.dropped[0].where}: {reader.dropped[0].what}" if reader.dropped else "")
                           + f"); expected {FORMAT}")
    data = Conversations(str(path), tuple(reader.strata), dict(reader.strata), tuple(reader.sessions),
                         tuple(reader.questions), 0, 0, {}, tuple(reader.dropped_clues), (), tuple(reader.dropped))
    return Release(data, dict(reader.targets), reader.without_has_answer, reader.misread_sessions,
                   reader.session_references, reader.distinct_sessions)


class LongMemEval(ConversationBenchmark):
    name = "longmemeval"
    Options = LongMemEvalOptions
    format_hint = "the downloaded longmemeval_s.json, longmemeval_m.json or longmemeval_oracle.json"
    session_references = 0  # haystack sessions over every question read (set by `read`)
    distinct_sessions = 0   # of them, distinct (session id, content): each parsed once

    def read(self) -> Conversations:
        release = read_release(Path(self.options.path).expanduser(), self.options.unknown_clues)
        self._targets = release.targets
        self.session_references, self.distinct_sessions = release.session_references, release.distinct_sessions
        source = release.data.source
        if release.without_has_answer:
            print(f"{self.name}: {release.without_has_answer} turn(s) of answer sessions without has_answer "
                  f"({source}), read as not evidence",
                  file=sys.stderr)
        if release.misread_sessions:
            print(f"{self.name}: {release.misread_sessions} haystack session(s) whose id disagrees with "
                  f"answer_session_ids on being evidence ({source}): LongMemEval's official figures read an "
                  f"answer session by '{ANSWER_SESSION_MARK}' in its id, as its code does",
                  file=sys.stderr)
        return release.data

    @classmethod
    def metric_names(cls, options: LongMemEvalOptions) -> tuple[str, ...]:
        """The conversation figures but LoCoMo's (which means nothing here), and in retrieval mode
        LongMemEval's official figures after them: any of them can rank a search."""
        names = super().metric_names(options)
        if options.mode != "retrieval":
            return names
        return tuple(m for m in names if not m.startswith(LOCOMO_PREFIX)) + OFFICIAL_NAMES

    @classmethod
    def guard_metrics(cls, options: LongMemEvalOptions) -> tuple[str, ...]:
        """The official session recall_any@5 and recall_all@5, at turn-to-session and at session
        granularity: what LongMemEval's retrieval tables and the one-document-per-session systems
        publish (docs/benchmarks.md); retrieval mode only."""
        if options.mode != "retrieval":
            return ()
        return ("session_recall_any@5", "session_recall_all@5", "session_gran_recall_any@5",
                "session_gran_recall_all@5")

    def memory_scope(self, task: Task) -> str | None:
        """The question's own haystack: its memory is its sessions and nothing else, as in the
        release, so a sample of questions needs only their haystacks updated."""
        return str(task.data["user"])

    def adversarial_categories(self) -> frozenset[str]:
        """None: abstention questions span the types and are left out of retrieval metrics
        question by question (their types are not adversarial as a whole)."""
        return frozenset()

    def _retrieval_score(self, task: Task, payload: MemoryPayload | None) -> TaskScore:
        if task.data["refusal"]:
            return TaskScore(0.0, {}, counted=False, feedback=(
                "not counted: an abstention question (its answer was never given; left out of retrieval "
                "metrics, as LongMemEval's evaluation does)"))
        base = super()._retrieval_score(task, payload)
        if self._questions[task.task_id].guard:  # its guard metric alone (benchmark.as_guard)
            return base
        # LoCoMo's own evidence recall means nothing here; the session-level any-hit of the first
        # k cited turns (session_hit@k) stays, beside the official figures.
        kept = {m: v for m, v in base.metrics.items() if not m.startswith(LOCOMO_PREFIX)}
        targets = self.official_targets(self._questions[task.task_id])
        if not targets:
            why = ("LongMemEval's official figures left out: no user turn marked has_answer in an answer "
                   "session (its evaluation leaves such a question out)")
            return dataclasses.replace(base, metrics=kept, feedback="; ".join(f for f in (base.feedback, why) if f))
        ranked, _ = evidence.cited_evidence(payload, len(self._session_of) + 1)
        return dataclasses.replace(base, metrics={**kept, **official_metrics(ranked, targets, self._session_of)})

    def official_targets(self, question: Question) -> tuple[str, ...]:
        """The turns LongMemEval's official figures score `question` against: a release question's
        targets (the user turns marked has_answer of its answer sessions; none: no official figure),
        a pseudo-question's (a label-free search) clues, whatever their speaker."""
        if question.question_id in self._targets:
            return self._targets[question.question_id]
        return question.clues

    def _judge(self, task: Task, answer: str) -> tuple[bool, str]:
        from automemo.interaction.judges import LongMemEvalJudge

        return LongMemEvalJudge(self.llm).judge(task.instruction, task.data["answer"], answer,
                                                qtype=task.category, abstention=task.data["refusal"])

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        # Hundreds of questions, each its own conversation: the split's question ids as a count
        # and a digest (what the update collection is keyed by), the dropped parts as the first
        # few, so that the record and the meta agent's task description stay short.
        out["conversations"] = {name: {"questions": len(ids), "digest": hashlib.sha256(
            "\n".join(sorted(ids)).encode()).hexdigest()[:16]} for name, ids in out["conversations"].items()}
        out["dropped"]["items"] = out["dropped"]["items"][:DESCRIBED_DROPS]
        # What a shared session saves: haystack sessions read against the distinct ones.
        out["haystack_sessions"] = {"references": self.session_references, "distinct": self.distinct_sessions}
        if self.options.mode == "retrieval":
            out["metrics"] += (" (session_*, turn_* and session_gran_* are LongMemEval's official figures; "
                               "abstention questions and questions without a user turn marked has_answer "
                               "left out of them)")
        return out
