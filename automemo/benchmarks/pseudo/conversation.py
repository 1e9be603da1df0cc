"""One conversation as the pseudo-question writers read it: its turns in order, each with its
session, date, speaker, text and picture captions, and the statistics of its words (which terms
are rare in it, which turns hold each term, which sentence of a turn holds a term).

Built from the update episodes' data (`benchmarks.conversation.model.Session`), never from a
question: a label-free search has none to read.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from automemo.benchmarks.conversation.model import Session
from automemo.toolkit.memolib.text import STOPWORDS

# Words a conversation is full of that say nothing about what it is about. The memolib list is
# for queries; pseudo-questions need the chatter out too, or "really" and "thanks" count as rare.
CHATTER = frozenset(
    """user assistant also really like just think know thing things one get got make made want
    going go yes yeah okay ok thanks thank sure well much many good great lot lots way time
    something anything everything maybe would could should still even though actually definitely
    feel felt sounds sound right kind sort pretty quite always never ever every back new first
    last next day days today tomorrow yesterday week weeks year years little bit able need needs
    help let see say said tell told use used using try trying keep really great wonderful amazing
    glad hope love idea ideas important especially perhaps however absolutely""".split()
)
SPREAD_MIN = 0.4
"""A rare term's least `spread`: with ten conversations, one used by at most about four of them."""
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’]*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_ROLE = re.compile(r"^\s*[A-Za-z_]+:\s*")


def term_of(word: str) -> str | None:
    """The term a word counts as (lower case, possessive dropped), or None for a stop or chatter
    word and for one-letter words."""
    term = word.lower().replace("’", "'")
    if term.endswith("'s"):
        term = term[:-2]
    if "'" in term:  # a contraction (we've, don't): grammar, not topic
        return None
    if term in STOPWORDS or term in CHATTER or len(term) < 3 and not term.isdigit():
        return None
    return term


def terms(text: str) -> list[str]:
    """The distinct terms of `text`, in the order they first occur."""
    found = (term_of(w) for w in _WORD.findall(text or ""))
    return list(dict.fromkeys(t for t in found if t))


def sentences(text: str) -> list[str]:
    """`text` cut into sentences, a speaker tag ("user: ") taken off each line."""
    out = []
    for line in (text or "").splitlines():
        out += [s.strip() for s in _SENTENCE.split(_ROLE.sub("", line)) if s.strip()]
    return out


@dataclass(frozen=True)
class SourceTurn:
    index: int                  # its place in the conversation, from 0
    ref: str                    # what a program cites
    session: int                # its session's place in the conversation (date order), from 0
    session_id: str
    date: str
    speaker: str
    text: str                   # the turn's words
    captions: tuple[str, ...]   # its pictures' captions

    @property
    def memory_text(self) -> str:
        """What the memory reads of the turn: its words and its pictures' captions."""
        return "\n".join([self.text, *self.captions])

    @property
    def who(self) -> str:
        """How a question names the turn's speaker: a name as given; a user or an assistant of a
        chat is "we" (the user asks about their own conversation)."""
        speaker = self.speaker.strip()
        return "we" if speaker.lower() in {"", "user", "assistant", "human", "ai", "bot", "system"} else speaker


class Conversation:
    """A conversation's turns and word statistics. A term is rare when it occurs in at least 2
    turns (so that it can link two of them) and at most `rare_share` of them, and is not spread
    over most conversations: `spread` (term -> 0..1, 1 for a term of this conversation alone, 0
    for one of every conversation; `Conversation.spreads`) weighs every term, so that words any
    conversation uses ("entire", "identify") do not pass for what this one is about."""

    def __init__(self, scope: str, sessions: Sequence[Session], *, spread: Mapping[str, float] | None = None,
                 rare_share: float = 0.03, held_out: float = 0.0, seed: str = "") -> None:
        self.scope = scope
        turns: list[SourceTurn] = []
        for si, session in enumerate(sessions):
            for turn in session.turns:
                captions = tuple(i.caption for i in turn.images if i.caption)
                turns.append(SourceTurn(len(turns), turn.ref, si, session.session_id, session.date,
                                        turn.speaker, turn.text, captions))
        self.turns = tuple(turns)
        self.sessions = len(sessions)
        self.terms = tuple(frozenset(terms(t.memory_text)) for t in self.turns)
        postings: dict[str, list[int]] = defaultdict(list)
        for i, found in enumerate(self.terms):
            for term in found:
                postings[term].append(i)
        self.postings = {t: tuple(ids) for t, ids in postings.items()}
        n = max(1, len(self.turns))
        spread = spread or {}
        self._idf = {t: math.log((n + 1) / (len(ids) + 0.5)) * spread.get(t, 1.0) for t, ids in self.postings.items()}
        self._spread = {t: spread.get(t, 1.0) for t in self.postings}
        self.rare_limit = max(2, math.ceil(rare_share * n))
        self.held = held_out_turns(self.turns, held_out, f"{seed}/{scope}")

    def memorized(self, index: int) -> bool:
        """Whether turn `index` stays in the memory (is not a held-out question source)."""
        return index not in self.held

    def idf(self, term: str) -> float:
        return self._idf.get(term, 0.0)

    def weight(self, found: Iterable[str]) -> float:
        # Summed in sorted order: a set's order changes with each process's string hash seed, and
        # a float sum with it, which reordered near ties and so drew other questions in another
        # process (a resumed search would pair a task id with another question).
        return sum(self.idf(t) for t in sorted(found))

    def rare(self, index: int) -> frozenset[str]:
        """The terms of turn `index` that occur in at least two and at most `rare_limit` turns, and
        in at most half the conversations (`SPREAD_MIN`)."""
        return frozenset(t for t in self.terms[index] if self.is_rare(t))

    def is_rare(self, term: str) -> bool:
        return 2 <= len(self.postings.get(term, ())) <= self.rare_limit and self._spread.get(term, 0.0) >= SPREAD_MIN

    def sentence_with(self, index: int, wanted: Iterable[str]) -> str:
        """The sentence of turn `index`'s words holding the most of `wanted` (the heavier first)."""
        wanted = set(wanted)
        best = max(sentences(self.turns[index].text) or [""],
                   key=lambda s: (self.weight(wanted & set(terms(s))), -len(s)))
        return best

    def by_ref(self) -> dict[str, str]:
        """Ref -> what the memory reads of it (the rules' `check` reads it)."""
        return {t.ref: t.memory_text for t in self.turns}


def held_out_turns(turns: Sequence[SourceTurn], share: float, seed: str) -> frozenset[int]:
    """`share` of the turns, drawn with `seed`, taken out of the memory to be questions' sources: a
    later message asks what the memory holds, as an application's next message does, and the
    memory never holds the words a question was cut from (they would be its best match, and no
    real question has one). A turn that shares a picture stays (it is a picture question's
    answer), as does the last turn left in its session."""
    if share <= 0:
        return frozenset()
    per_session: dict[int, int] = defaultdict(int)
    for t in turns:
        per_session[t.session] += 1
    rng = random.Random(int(hashlib.sha256(seed.encode()).hexdigest()[:16], 16))
    candidates = [t for t in turns if not t.captions]
    rng.shuffle(candidates)
    held: set[int] = set()
    for t in candidates[:]:
        if len(held) >= round(share * len(turns)):
            break
        if per_session[t.session] > 1:
            per_session[t.session] -= 1
            held.add(t.index)
    return frozenset(held)


def spreads(grouped: Mapping[str, Sequence[Session]]) -> dict[str, float]:
    """Term -> how few of the conversations use it, 0..1: log((C + 1) / (c + 0.5)) scaled so a term
    of one conversation alone is 1 (C conversations, c of them use the term); 1 for every term
    when there is one conversation (nothing to compare with)."""
    count: dict[str, int] = defaultdict(int)
    for group in grouped.values():
        for term in set().union(*(terms(_session_text(s)) for s in group)):
            count[term] += 1
    c = len(grouped)
    if c < 2:
        return {t: 1.0 for t in count}
    top = math.log((c + 1) / 1.5)
    return {t: max(0.0, math.log((c + 1) / (n + 0.5)) / top) for t, n in count.items()}


def _session_text(session: Session) -> str:
    return "\n".join(t.text + "\n" + "\n".join(i.caption or "" for i in t.images) for t in session.turns)


def conversations(sessions: Iterable[Session], scopes: Iterable[str], *, held_out: float = 0.0,
                  seed: str = "") -> list[Conversation]:
    """The conversations of `scopes`, each from its sessions in the order given (date order, as the
    readers give them), their terms weighed by how few of these conversations use them."""
    wanted = set(scopes)
    grouped: dict[str, list[Session]] = defaultdict(list)
    for session in sessions:
        if session.scope in wanted:
            grouped[session.scope].append(session)
    spread = spreads(grouped)
    return [Conversation(scope, grouped[scope], spread=spread, held_out=held_out, seed=seed) for scope in sorted(grouped)]
