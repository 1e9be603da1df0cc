"""A user's own conversation logs, exported from their application, as a conversation benchmark
(`conversations`): a JSON-lines file of sessions (`{"id", "conversation"?, "date"?, "turns":
[{"id", "speaker"?, "text", "images"?}]}` a line) and, optionally, one of questions (`{"id",
"conversation"?, "question", "evidence": [turn ids], "answer"?, "type"?, "date"?}` a line).

Refs are `"<conversation>/<turn id>"`, as in the released benchmarks; a conversation's sessions
are kept in date order (file order for ties and undated sessions). Splits are by conversation, so
a file holding one conversation (one person's own log, the common case) is cut into blocks of
`block_sessions` consecutive sessions, `<conversation>#1`, `#2`, ..., that act as conversations:
the search needs conversations to hold out, and a cross-fitted fit needs two or more. A question
belongs to the block that holds its evidence. Errors name the file, the line and the field
(docs/benchmarks.md, "Your own conversations").
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

from automemo.benchmarks.conversation.benchmark import ConversationBenchmark, ConversationOptions
from automemo.benchmarks.conversation.clues import ClueResolver
from automemo.benchmarks.conversation.files import (
    as_list, in_date_order, iter_json_lines, readable_image, resolve_image, url_image,
)
from automemo.benchmarks.conversation.model import (
    REFUSAL, Conversations, DatasetError, DroppedItem, Question, Session, Turn, TurnImage, UnknownClues,
    qualified,
)

SESSION_FORMAT = ('one session, a JSON object {"id", "conversation"?, "date"?, "turns": [{"id", "speaker"?, '
                  '"text", "images"?}]}')
QUESTION_FORMAT = ('one question, a JSON object {"id", "conversation"?, "question", "evidence": [turn ids], '
                   '"answer"?, "refusal"?, "type"?, "date"?, "images"?, "shown"?, "weights"?}')
DEFAULT_SPEAKER = "user"
DEFAULT_TYPE = "question"
REFUSAL_TYPE = "refusal"  # a refusal question's own type: the adversarial row is the refusals' type
LISTED_CONVERSATIONS = 5  # known conversations an error names

_EVIDENCE_HELP = ('give the ids of the turns that answer the question, e.g. ["t1", "t4"] (or "refusal": true '
                  'for a question the conversation never answers)')


@dataclass(frozen=True)
class UserConversationOptions(ConversationOptions):
    path: str = ""                    # the sessions file, JSON lines (required; docs/benchmarks.md)
    # The questions file, JSON lines, each question citing the turns that answer it; "" = none:
    # the data then has no retrieve task (a search can build pseudo-questions from the sessions).
    questions: str = ""
    # A sessions file holding one conversation is cut into blocks of this many consecutive
    # sessions (in date order; a remainder under half a block joins the last one), each a
    # conversation of its own: splits are by conversation, and the search needs some to hold out.
    block_sessions: int = 10
    # Metrics the final selection must not lose to the best hand design on by more than one
    # paired SE, besides the one it ranks by, e.g. ["session_hit@10"] (docs/search.md, guards).
    guards: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Line:
    """Where a value was read, for errors and dropped items: a file and a line number."""

    file: Path
    number: int

    def __str__(self) -> str:
        return f"{self.file} line {self.number}"

    def error(self, field: str, problem: str) -> DatasetError:
        return DatasetError(f"{self}: {field}: {problem}")


@dataclass(frozen=True)
class _LoggedImage:
    file: Path | None                 # a readable image file; None when missing, unreadable or a URL only
    caption: str | None


@dataclass(frozen=True)
class _LoggedTurn:
    local_id: str
    speaker: str
    text: str
    images: tuple[_LoggedImage, ...]


@dataclass(frozen=True)
class _LoggedSession:
    """A session as the file gives it, before it is placed in its conversation or block."""

    conversation: str
    local_id: str
    date: str                         # as given
    date_key: str                     # the date as a sortable UTC ISO string; "" = undated
    turns: tuple[_LoggedTurn, ...]


@dataclass(frozen=True)
class _Layout:
    """Where the sessions went: each conversation's turn ids as refs in their block (or in the
    conversation itself), and the block each ref lies in."""

    turn_refs: dict[str, dict[str, str]]  # conversation -> local turn id -> qualified ref
    scope_of: dict[str, str]              # qualified ref -> its scope (a conversation or a block)
    last_scope: dict[str, str]            # conversation -> its last block (itself when not cut)
    block_sessions: int


def _an_id(value: Any, line: _Line, field: str, todo: str) -> str:
    """A required id, as given: a non-blank string (a whole number reads as its digits)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    blank = value is None or isinstance(value, str)
    raise line.error(field, f"{'missing' if blank else f'expected a string, got {value!r}'}; {todo}")


def _text(value: Any, line: _Line, field: str) -> str:
    """An optional text field: "" when absent or null."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise line.error(field, f"expected a string, got {value!r}")
    return value


def _date(value: Any, line: _Line, field: str) -> tuple[str, str]:
    """An optional date, (as given, sort key): ISO dates and datetimes, with or without a zone;
    the key is the instant in UTC, so dates written with different offsets sort as they happened."""
    given = _text(value, line, field).strip()
    if not given:
        return "", ""
    try:
        when = datetime.fromisoformat(given)
    except ValueError:
        raise line.error(field, f"{given!r} is not an ISO date or datetime (2024-05-01, 2024-05-01T14:30); "
                                f"write it so, or leave the field out") from None
    if when.tzinfo is not None:
        when = when.astimezone(timezone.utc).replace(tzinfo=None)
    return given, when.isoformat()


def _claim_id(seen: dict[tuple[str, str], str], conversation: str, local_id: str, line: _Line, field: str,
              what: str, place: str) -> None:
    """Note that `what` (a session, turn or question) `local_id` of `conversation` is at `place`;
    a second one is refused, naming both places."""
    if (conversation, local_id) in seen:
        raise line.error(field, f"{what} {local_id!r} is also {seen[conversation, local_id]} (conversation "
                                f"{conversation!r}); {what} ids must be unique within their conversation")
    seen[conversation, local_id] = place


def _listed(names: list[str]) -> str:
    shown = ", ".join(map(repr, names[:LISTED_CONVERSATIONS]))
    return shown + (f", ... ({len(names)} in all)" if len(names) > LISTED_CONVERSATIONS else "")


def block_sizes(sessions: int, block: int) -> list[int]:
    """The sizes of consecutive blocks of `block` sessions over `sessions`: a remainder smaller
    than half a block joins the last full block rather than stand as a conversation too small to
    score a program on."""
    full, rest = divmod(sessions, block)
    if full == 0:
        return [rest]
    sizes = [block] * full
    if 2 * rest < block:
        sizes[-1] += rest
    else:
        sizes.append(rest)
    return sizes


def _images(value: Any, line: _Line, field: str, base: Path, image_dir: Path | None) -> tuple[_LoggedImage, ...]:
    """The images a turn or a question names: a file (relative to the file that names it, or
    absolute; looked up under `image_dir` when set) or a URL, which is never fetched (a file under
    `image_dir` named as the URL's last part stands for it, as for LoCoMo's img_url). An image
    without pixels keeps its caption."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise line.error(field, f'expected a list of images [{{"path" or "url", "caption"}}], got {value!r}')
    out = []
    for j, image in enumerate(value):
        at = f"{field}[{j}]"
        if not isinstance(image, Mapping):
            raise line.error(at, f'expected an image {{"path" or "url", "caption"}}, got {image!r}')
        path, url = _text(image.get("path"), line, f"{at}.path"), _text(image.get("url"), line, f"{at}.url")
        if path:
            file = resolve_image(path, base, image_dir)
            file = file if readable_image(file) else None
        elif url:
            file = url_image(url, image_dir)
        else:
            raise line.error(at, 'needs "path" (an image file, relative to this file or absolute) or "url"')
        out.append(_LoggedImage(file, _text(image.get("caption"), line, f"{at}.caption").strip() or None))
    return tuple(out)


def _turn_images(scope: str, owner: str, images: Iterable[_LoggedImage]) -> tuple[TurnImage, ...]:
    return tuple(TurnImage(qualified(scope, f"{owner}:IMG{j + 1}"), i.file, i.caption)
                 for j, i in enumerate(images))


class _LogReader:
    """One pass over each file; what it leaves out is kept for the report."""

    def __init__(self, sessions_file: Path, image_dir: Path | None, unknown_clues: UnknownClues) -> None:
        self.sessions_file = sessions_file
        # A file without conversation fields is one conversation, named as the file is.
        self.default_conversation = sessions_file.stem
        self.image_dir = image_dir
        self.resolve = ClueResolver(unknown_clues)
        self.dropped: list[DroppedItem] = []

    def sessions(self) -> dict[str, list[_LoggedSession]]:
        """Each conversation's usable sessions, in file order, conversations in order of appearance."""
        out: dict[str, list[_LoggedSession]] = {}
        session_places: dict[tuple[str, str], str] = {}  # (conversation, session id) -> "on line n"
        turn_places: dict[tuple[str, str], str] = {}  # (conversation, turn id) -> "turns[i] on line n"
        for number, record in iter_json_lines(self.sessions_file, SESSION_FORMAT):
            line = _Line(self.sessions_file, number)
            if not isinstance(record, Mapping):
                raise DatasetError(f"{line}: expected {SESSION_FORMAT}, got {type(record).__name__}")
            conversation = _text(record.get("conversation"), line, "conversation") or self.default_conversation
            if "/" in conversation:
                raise line.error("conversation", f"{conversation!r} holds a '/'; refs are '<conversation>/<turn id>', "
                                                 f"so a conversation name cannot: rename it")
            sid = _an_id(record.get("id"), line, "id", "every session needs an id unique within its conversation")
            _claim_id(session_places, conversation, sid, line, "id", "session", f"on line {number}")
            date, date_key = _date(record.get("date"), line, "date")
            turns = record.get("turns")
            if not isinstance(turns, list):
                problem = "missing" if turns is None else f"expected a list, got {type(turns).__name__}"
                raise line.error("turns", f'{problem}; every session needs a list of turns '
                                          f'[{{"id", "speaker", "text"}}]')
            kept = [t for ti, raw in enumerate(turns)
                    if (t := self._turn(raw, line, f"turns[{ti}]", conversation, turn_places)) is not None]
            if not kept:
                self.dropped.append(DroppedItem(f"{line} (session {sid})", "a session with no usable turn"
                                                + ("" if turns else " (turns is empty)")))
                continue
            out.setdefault(conversation, []).append(_LoggedSession(conversation, sid, date, date_key, tuple(kept)))
        return out

    def _turn(self, raw: Any, line: _Line, field: str, conversation: str,
              places: dict[tuple[str, str], str]) -> _LoggedTurn | None:
        if not isinstance(raw, Mapping):
            raise line.error(field, f'expected a turn {{"id", "speaker", "text"}}, got {raw!r}')
        tid = _an_id(raw.get("id"), line, f"{field}.id", "every turn needs an id unique within its conversation")
        _claim_id(places, conversation, tid, line, f"{field}.id", "turn", f"{field} on line {line.number}")
        speaker = _text(raw.get("speaker"), line, f"{field}.speaker").strip() or DEFAULT_SPEAKER
        text = _text(raw.get("text"), line, f"{field}.text")
        images = _images(raw.get("images"), line, f"{field}.images", self.sessions_file.parent, self.image_dir)
        if not text.strip() and not any(i.caption for i in images):
            self.dropped.append(DroppedItem(f"{line}: {field} ({tid})", "a turn without text or a captioned image"))
            return None
        return _LoggedTurn(tid, speaker, text, images)

    def questions(self, file: Path, layout: _Layout) -> list[Question]:
        out: list[Question] = []
        known = list(layout.turn_refs)
        question_places: dict[tuple[str, str], str] = {}
        for number, record in iter_json_lines(file, QUESTION_FORMAT):
            line = _Line(file, number)
            if not isinstance(record, Mapping):
                raise DatasetError(f"{line}: expected {QUESTION_FORMAT}, got {type(record).__name__}")
            qid = _an_id(record.get("id"), line, "id", "every question needs an id unique within its conversation")
            conversation = self._asked_of(record.get("conversation"), line, known)
            _claim_id(question_places, conversation, qid, line, "id", "question", f"on line {number}")
            text = _text(record.get("question"), line, "question")
            if not text.strip():
                raise line.error("question", "missing; every question needs its text")
            refusal = record.get("refusal", False)
            if not isinstance(refusal, bool):
                raise line.error("refusal", f"expected true or false, got {refusal!r}")
            # `"answer": null` says the same as `"refusal": true`: the answer was never given.
            refusal = refusal or ("answer" in record and record["answer"] is None)
            clues = self.resolve(self._evidence(record, line, refusal), layout.turn_refs[conversation],
                                 f"{line}: evidence", f"turn of conversation {conversation!r}")
            scopes = list(dict.fromkeys(layout.scope_of[ref] for ref in clues))
            if len(scopes) > 1:
                self.dropped.append(DroppedItem(
                    f"{line} (question {qid})",
                    f"its evidence lies in {', '.join(scopes)}, blocks of {layout.block_sessions} sessions held out "
                    f"apart; give the sessions a conversation field, or set a larger block_sessions"))
                continue
            # A question without evidence (a refusal) is asked after the whole log: in the last block.
            scope = scopes[0] if scopes else layout.last_scope[conversation]
            qtype = _text(record.get("type"), line, "type").strip() or (REFUSAL_TYPE if refusal else DEFAULT_TYPE)
            date, _ = _date(record.get("date"), line, "date")
            images = _turn_images(scope, f"Q:{qid}",
                                  _images(record.get("images"), line, "images", file.parent, self.image_dir))
            answer = REFUSAL if refusal else ", ".join(map(str, as_list(record.get("answer"))))
            shown, weights = self._feedback(record, line, layout.turn_refs[conversation], clues)
            out.append(Question(qualified(scope, qid), scope, qtype, text, answer, tuple(clues), refusal, images, date,
                                shown=shown, clue_weights=weights))
        return out

    @staticmethod
    def _feedback(record: Mapping, line: _Line, refs: Mapping[str, str],
                  clues: list[str]) -> tuple[tuple[str, ...], tuple[float, ...]]:
        """A feedback question's shown turns (refs, in the recall's order; a turn the file no
        longer holds, since forgotten, is left out) and each clue's weight (benchmarks/
        conversation/feedback.py); ((), ()) for any other question."""
        shown = record.get("shown")
        if shown is None:
            return (), ()
        if not isinstance(shown, list) or not all(isinstance(s, (str, int)) for s in shown):
            raise line.error("shown", f"expected the list of turn ids the recall showed, in its order, got {shown!r}")
        refs_shown = tuple(dict.fromkeys(refs[str(s)] for s in shown if str(s) in refs))
        missing = [c for c in clues if c not in refs_shown]
        if missing:
            raise line.error("evidence", f"{', '.join(missing)} not among the shown turns; a feedback question's "
                                         f"evidence is the shown turns the agent used")
        weights = record.get("weights") or {}
        if not isinstance(weights, Mapping) or not all(isinstance(w, (int, float)) and w > 0 for w in weights.values()):
            raise line.error("weights", f"expected {{turn id: positive number}}, got {weights!r}")
        by_ref = {refs[str(k)]: float(v) for k, v in weights.items() if str(k) in refs}
        return refs_shown, tuple(by_ref.get(c, 1.0) for c in clues)

    @staticmethod
    def _asked_of(value: Any, line: _Line, known: list[str]) -> str:
        """The conversation a question names, or the only one when it names none."""
        name = _text(value, line, "conversation")
        if not name:
            if len(known) == 1:
                return known[0]
            raise line.error("conversation", f"missing; the sessions file holds {len(known)} conversations "
                                             f"({_listed(known)}): name the one this question is about")
        if name not in known:
            raise line.error("conversation", f"{name!r} is no conversation of the sessions file; it holds "
                                             f"{_listed(known)}")
        return name

    @staticmethod
    def _evidence(record: Mapping, line: _Line, refusal: bool) -> list:
        evidence = record.get("evidence")
        if evidence is None and refusal:
            return []
        if not isinstance(evidence, list):
            problem = "missing" if evidence is None else f"expected a list of turn ids, got {evidence!r}"
            raise line.error("evidence", f"{problem}; {_EVIDENCE_HELP}")
        if not evidence and not refusal:
            raise line.error("evidence", f"empty; {_EVIDENCE_HELP}")
        for k, clue in enumerate(evidence):
            if isinstance(clue, bool) or not isinstance(clue, (str, int)) or clue == "":
                raise line.error(f"evidence[{k}]", f"expected a turn id, got {clue!r}; {_EVIDENCE_HELP}")
        return evidence


Placed = list[tuple[str, list[_LoggedSession]]]  # (scope, its sessions in date order)


def _place(logged: dict[str, list[_LoggedSession]], block_sessions: int) -> tuple[Placed, _Layout]:
    """Each conversation's sessions in date order, as (scope, sessions): the conversation itself,
    or, when the file holds one conversation, its blocks `<conversation>#1`, `#2`, ..."""
    placed: Placed = []
    for name, sessions in logged.items():
        ordered = in_date_order((s.date_key, s) for s in sessions)
        if len(logged) > 1:
            placed.append((name, ordered))
            continue
        start = 0
        for b, size in enumerate(block_sizes(len(ordered), block_sessions)):
            placed.append((f"{name}#{b + 1}", ordered[start:start + size]))
            start += size
    layout = _Layout({name: {} for name in logged}, {}, {}, block_sessions)
    for scope, sessions in placed:
        for session in sessions:
            layout.last_scope[session.conversation] = scope
            for turn in session.turns:
                ref = qualified(scope, turn.local_id)
                layout.turn_refs[session.conversation][turn.local_id] = ref
                layout.scope_of[ref] = scope
    return placed, layout


def read_logs(sessions_file: Path, questions_file: Path | None, *, block_sessions: int = 10,
              image_dir: Path | None = None, unknown_clues: UnknownClues = "drop") -> tuple[Conversations, str]:
    """The logs as `Conversations`, and a sentence saying how one conversation was cut into
    blocks ("" when the file holds several)."""
    for file, option, what in ((sessions_file, "path", "sessions"), (questions_file, "questions", "questions")):
        if file is not None and not file.is_file():
            raise DatasetError(f"conversations: {file} does not exist; set the option `{option}` to your {what} "
                               f"file (JSON lines, docs/benchmarks.md \"Your own conversations\")")
    reader = _LogReader(sessions_file, image_dir, unknown_clues)
    logged = reader.sessions()
    if not logged:
        left_out = f" ({len(reader.dropped)} left out, e.g. {reader.dropped[0].where})" if reader.dropped else ""
        raise DatasetError(f"{sessions_file}: no usable session{left_out}; each line must be {SESSION_FORMAT}")
    placed, layout = _place(logged, block_sessions)
    sessions, aliases = [], {}
    for scope, logged_sessions in placed:
        for s in logged_sessions:
            turns = []
            for t in s.turns:
                ref = qualified(scope, t.local_id)
                images = _turn_images(scope, t.local_id, t.images)
                aliases.update({image.image_id: (ref,) for image in images})  # a cited image is its turn
                turns.append(Turn(ref, t.speaker, f"{t.speaker}: {t.text}", images))
            sessions.append(Session(qualified(scope, s.local_id), scope, s.date, tuple(turns)))
    questions = reader.questions(questions_file, layout) if questions_file is not None else []
    images = [i for s in sessions for t in s.turns for i in t.images] + [i for q in questions for i in q.images]
    note = ""
    if len(logged) == 1:
        (name, whole), scopes = next(iter(logged.items())), [scope for scope, _ in placed]
        note = (f"{sessions_file} holds one conversation, {name!r} ({len(whole)} sessions): read as "
                f"{len(scopes)} block(s) of about {block_sessions} consecutive sessions in date order "
                f"({scopes[0]}{f' ... {scopes[-1]}' if len(scopes) > 1 else ''}), each a conversation of its own, "
                f"so that some can be held out from the search (option block_sessions)")
        if len(scopes) == 1:
            fits = [size for size in range(2, len(whole)) if len(block_sizes(len(whole), size)) > 1]
            note += "; one block leaves nothing to hold out: " + (
                f"set block_sessions to {fits[-1]} or less" if fits else "the log is too short to cut in two")
    data = Conversations(
        str(sessions_file), tuple(scope for scope, _ in placed), {}, tuple(sessions), tuple(questions),
        len(images), sum(i.file is None for i in images), aliases, tuple(reader.resolve.dropped),
        tuple(reader.resolve.repaired), tuple(reader.dropped),
    )
    return data, note


class UserConversations(ConversationBenchmark):
    name = "conversations"
    Options = UserConversationOptions
    format_hint = 'your sessions file, JSON lines (docs/benchmarks.md, "Your own conversations")'
    missing_images_are = "are missing, not image files, or only a URL (never fetched)"

    def __init__(self, options: UserConversationOptions = UserConversationOptions(), *, llm: Any = None) -> None:
        if options.block_sessions < 2:
            raise ValueError(f"{self.name}: block_sessions must be at least 2 (a block is a conversation held "
                             f"out whole), got {options.block_sessions}")
        unknown = [g for g in options.guards if g not in self.metric_names(options)]
        if unknown:
            raise ValueError(f"{self.name}: guards {', '.join(unknown)} are not metrics it scores; choose from "
                             f"{', '.join(self.metric_names(options))}")
        super().__init__(options, llm=llm)

    @classmethod
    def guard_metrics(cls, options: UserConversationOptions) -> tuple[str, ...]:
        """The metrics the user named as guards (option `guards`)."""
        return tuple(options.guards)

    def read(self) -> Conversations:
        o = self.options
        data, note = read_logs(
            Path(o.path).expanduser(), Path(o.questions).expanduser() if o.questions else None,
            block_sessions=o.block_sessions, image_dir=Path(o.image_dir).expanduser() if o.image_dir else None,
            unknown_clues=o.unknown_clues,
        )
        if note:
            print(f"{self.name}: {note}", file=sys.stderr)
        return data
