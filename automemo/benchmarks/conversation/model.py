"""The data of a released conversation benchmark, whatever its file format: conversations
("scopes": a Mem-Gallery scenario, a LoCoMo sample) made of sessions of turns, and questions
with gold answers and the refs of the turns that support them.

Refs are qualified by their conversation (`"<scope>/<round id>"`): a test split holds several
conversations in one memory, and bare round ids ("D1:3") repeat in every one of them.

Turns, sessions and questions have slots, not a `__dict__`: a LongMemEval M split holds over a
million turns (~300 bytes less each).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from automemo.errors import DataError

REFUSAL = "Not mentioned."
"""The gold answer of a question whose answer was never given (Mem-Gallery's AR, LoCoMo's
adversarial category)."""


class DatasetError(DataError, ValueError):
    """A release file does not have the published format; the message names the file and item."""


def qualified(scope: str, local_id: str) -> str:
    return f"{scope}/{local_id}"


UnknownClues = Literal["drop", "error"]


@dataclass(frozen=True)
class DroppedClue:
    """A gold clue naming no turn of its conversation (published releases hold a few, e.g.
    LoCoMo's conv-42 qa[58] cites `D10:19`), left out of its question's clues."""

    where: str               # the file and item, e.g. "locomo10.json: sample 3 (conv-42): qa[58]"
    clue: str


@dataclass(frozen=True)
class RepairedClue:
    """A gold clue that names no turn as written but does once split or spelled canonically
    (LoCoMo's `"D9:1 D4:4 D4:6"`, `"D:11:26"`), kept as the turns it names."""

    where: str
    clue: str
    read_as: tuple[str, ...]  # the local ids it was read as, e.g. ("D9:1", "D4:4", "D4:6")


@dataclass(frozen=True)
class DroppedItem:
    """A part of a release a reader left out because it cannot be used as published (LongMemEval's
    empty sessions, turns without text, questions without a haystack), said once when read."""

    where: str               # the file and item, e.g. "longmemeval_s.json: question[3] (q7): session 2"
    what: str                # what was left out and why, e.g. "an empty session (no turns)"


@dataclass(frozen=True, slots=True)
class TurnImage:
    image_id: str            # qualified, e.g. "alice/D1:IMG_001"
    file: Path | None        # a real image file; None when it is missing or a git-LFS pointer
    caption: str | None


@dataclass(frozen=True, slots=True)
class Turn:
    ref: str                 # qualified round / dialogue-turn id: what a program cites
    speaker: str             # "user" / "assistant" or a LoCoMo speaker name
    text: str                # the turn as the memory reads it (both sides of a Mem-Gallery round)
    images: tuple[TurnImage, ...] = ()


@dataclass(frozen=True, slots=True)
class Session:
    session_id: str          # qualified, e.g. "alice/D1"; the update task id
    scope: str
    date: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Question:
    question_id: str         # qualified, e.g. "alice/Q007"
    scope: str
    qtype: str               # the per-type table's row: FR..AR, or LoCoMo's category
    question: str
    answer: str              # REFUSAL when the answer was never given
    clues: tuple[str, ...]   # qualified refs; a refusal question keeps what the release cites (LoCoMo cat 5)
    refusal: bool = False
    images: tuple[TurnImage, ...] = ()
    date: str = ""           # when it is asked (LongMemEval's question_date): known at question time
    # The clues are alternatives, one of them the whole answer (a label-free `context` question:
    # the turns on either side of the one it was cut from): its value is Hit@k, not Recall@k, so a
    # program that returns a turn's neighbours as one block earns no more than one that finds one.
    any_clue: bool = False
    # Asked and scored but not counted in the mean: a label-free search's guard question
    # (benchmarks.pseudo.label_free), whose Recall@k is its own metric (`guard_metric`) that a
    # selection must not lose on.
    guard: bool = False
    # A question from an agent's feedback on a recall (benchmarks/conversation/feedback.py): the
    # refs that recall showed, in its order. Only those could be marked used, so a program is
    # compared with the clues only among them (`evidence_score.feedback_score`); a ref it finds
    # that the recall never showed is unlabelled, neither right nor wrong. Empty: no feedback.
    shown: tuple[str, ...] = ()
    # Each clue's weight, aligned with `clues` (inverse examination propensity of the rank it was
    # shown at: a used item low in the list was less likely seen, so it stands for more); empty:
    # every clue weighs 1.
    clue_weights: tuple[float, ...] = ()


@dataclass(frozen=True)
class Conversations:
    """A whole release: its conversations' sessions and questions, and how many images could
    not be read (missing files or git-LFS pointers whose content was never fetched)."""

    source: str
    scopes: tuple[str, ...]
    strata: dict[str, str]   # scope -> stratum its split is drawn from
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]
    images_total: int
    images_missing: int
    aliases: dict[str, tuple[str, ...]]  # cited id -> refs it stands for (an image id -> its round)
    dropped_clues: tuple[DroppedClue, ...] = ()  # clues naming no turn, left out (unknown_clues = "drop")
    repaired_clues: tuple[RepairedClue, ...] = ()  # joined or misspelled clues read as the turns they name
    dropped: tuple[DroppedItem, ...] = ()  # sessions, turns or questions left out as unusable
