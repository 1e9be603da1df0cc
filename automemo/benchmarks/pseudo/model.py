"""What a pseudo-question is, and the two rules every one of them keeps, whatever wrote it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from automemo.errors import AutomemoError

KINDS = ("refer", "context", "cloze", "date", "picture", "llm")
"""Every kind of pseudo-question; a kind is the question's type in per-type tables and the label a
question router is fitted on. The first five are written offline (`offline.py`), the last by the
configured LLM role (`llm_writer.py`)."""


@dataclass(frozen=True)
class PseudoQuestion:
    scope: str                   # the conversation it is asked in (its memory)
    kind: str                    # one of KINDS
    question: str
    clues: tuple[str, ...]       # refs of the turns that answer it, best first
    sources: tuple[str, ...] = ()  # refs of the turns its words were taken from: never among the clues
    # Any one clue is the whole answer (`context`: either turn around its source), so it is scored
    # by Hit@k (conversation.model.Question.any_clue).
    any_clue: bool = False


class InvalidPseudoQuestion(AutomemoError, ValueError):
    """A pseudo-question breaks one of the rules (`check`); the message says which."""


_SPACE = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^a-z0-9]+")


def normalized(text: str) -> str:
    """Lower case, every run of non-alphanumerics one space: how "verbatim" is judged, so that
    punctuation or spacing changes do not make a copied sentence count as a new question."""
    return _SPACE.sub(" ", _NON_WORD.sub(" ", (text or "").lower())).strip()


def check(question: PseudoQuestion, turn_text: Mapping[str, str]) -> None:
    """Raise `InvalidPseudoQuestion` unless `question` keeps the rules: it has clues, each a turn of
    the data (`turn_text`: ref -> text); no source turn is a clue (a question cut from a turn
    would otherwise be answered by finding where it was cut from, which every lexical index does
    and no real question asks); and the question is not a verbatim substring of a clue turn (it
    would be near-duplicate detection, not recall)."""
    if question.kind not in KINDS:
        raise InvalidPseudoQuestion(f"unknown kind {question.kind!r}; kinds are {', '.join(KINDS)}")
    if not question.clues:
        raise InvalidPseudoQuestion("no clue: a pseudo-question needs the turns that answer it")
    unknown = [c for c in question.clues if c not in turn_text]
    if unknown:
        raise InvalidPseudoQuestion(f"clue(s) naming no turn: {', '.join(unknown)}")
    own = sorted(set(question.sources) & set(question.clues))
    if own:
        raise InvalidPseudoQuestion(f"its source turn counts as its evidence: {', '.join(own)}")
    text = normalized(question.question)
    if len(text.split()) < 3:
        raise InvalidPseudoQuestion(f"too short to be a question: {question.question!r}")
    for clue in question.clues:
        if text in normalized(turn_text[clue]):
            raise InvalidPseudoQuestion(f"a verbatim substring of its answer turn {clue}")
