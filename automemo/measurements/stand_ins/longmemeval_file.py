"""A synthetic LongMemEval file in the published format, of the S split's shape or the M split's,
written one question at a time (an M-shaped file is ~2 GB; the writer holds the filler pool and
one question, never the file). Nothing in it is real data.

Each question gets `sessions` sessions of `turns` turns (user and assistant in turn, about
`words` made-up words each; they split into ~3.5 MiniLM word pieces a word, so a turn is ~590
pieces, past both MiniLM windows): its evidence sessions (one, or two for multi-session and
knowledge-update questions), each stating a fact the question asks about at the start of a turn
marked `has_answer` (so truncation never cuts it off), and filler sessions drawn from a pool of
`pool` sessions shared between haystacks, as the release shares sessions. The six question types
take turns; every tenth question is an abstention question (`_abs`).

S: `sessions=50, pool=2000` (~115k tokens a question in the release). M (`M_SHAPE`):
`sessions=480` (the release's ~500; 249 questions of it are ~1.8 GB), its facts in words of
their own (`fact_words`), where a shared pool is what makes a shared
session's parsing and encoding once worth it: with `pool=2000`, 249 questions hold ~119,000
filler references to ~2,000 distinct sessions.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

TYPES = ("single-session-user", "single-session-assistant", "single-session-preference", "multi-session",
         "knowledge-update", "temporal-reasoning")
SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "su", "do", "fa", "gi", "ho", "ju", "be")
FACT_SYLLABLES = ("qua", "xe", "wy", "cri", "tho", "gly")  # never in a filler word (`SyntheticShape.fact_words`)
VOCABULARY = 20000  # made-up words the turns are drawn from
START = datetime(2023, 1, 1, 9, 0)  # the first possible session date


@dataclass(frozen=True)
class SyntheticShape:
    """What a synthetic file holds; the defaults are the S split's shape (500 questions of 50
    sessions), `M_SHAPE` the M split's."""

    questions: int = 500
    sessions: int = 50      # sessions a haystack
    turns: int = 10         # turns a session
    pool: int = 2000        # filler sessions shared between haystacks
    words: int = 170        # made-up words a turn
    seed: int = 0
    # The words of a question's fact from a vocabulary no filler uses (its own syllables), each
    # question's its own. Off, they are filler words: in a haystack of ~5,000 turns of 170 words
    # from 20,000, a fact's topic word is in ~40 other turns by chance, and the question no
    # longer names its evidence by its words (bm25_rag scored 0 Recall@10 on such an M file).
    # S keeps them off: its ~500 turns hold such a word ~4 times, and its figures were measured so.
    fact_words: bool = False


M_SHAPE = SyntheticShape(questions=249, sessions=480, fact_words=True)
"""The issue's M-shaped target: 249 questions of ~480 sessions (the real M file: ~500)."""


@dataclass(frozen=True)
class SyntheticFile:
    path: Path
    questions: int
    session_references: int  # haystack sessions over every question
    distinct_sessions: int   # of them, distinct session ids
    turn_references: int     # haystack turns over every question
    bytes: int


def vocabulary(rng: random.Random, size: int = VOCABULARY) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def sentence_block(rng: random.Random, words: list[str], n: int) -> str:
    return " ".join(rng.choice(words) for _ in range(n)) + "."


def session(rng: random.Random, words: list[str], turns: int, n_words: int, fact: str | None = None,
            fact_role: str = "user") -> list[dict]:
    """A session of `turns` turns; with `fact`, one turn of `fact_role` states it and is marked."""
    roles = ["user" if i % 2 == 0 else "assistant" for i in range(turns)]
    at = rng.choice([i for i, r in enumerate(roles) if r == fact_role]) if fact else -1
    out = []
    for i, role in enumerate(roles):
        text = sentence_block(rng, words, n_words)
        turn = {"role": role, "content": f"{fact} {text}" if i == at else text}
        if fact is not None:  # the release marks the turns of evidence sessions only
            turn["has_answer"] = i == at
        out.append(turn)
    return out


def stamp(day: datetime) -> str:
    return day.strftime("%Y/%m/%d (%a) %H:%M")


def write_synthetic_longmemeval(path: Path, shape: SyntheticShape = SyntheticShape()) -> SyntheticFile:
    """Write the file of `shape` to `path` (the same bytes for the same shape, as `json.dumps` of
    the whole list would write them) and say what it holds."""
    if shape.pool < shape.sessions - 1 or shape.sessions < 3:
        raise ValueError(f"a haystack of {shape.sessions} sessions draws up to {shape.sessions - 1} fillers from "
                         f"the pool: pool must be at least that and sessions at least 3, got pool {shape.pool}")
    rng = random.Random(shape.seed)
    words = vocabulary(rng)
    facts = _fact_vocabulary(shape) if shape.fact_words else None
    pool = [(f"sharegpt_{i:05d}_0", session(rng, words, shape.turns, shape.words)) for i in range(shape.pool)]
    path.parent.mkdir(parents=True, exist_ok=True)
    distinct: set[str] = set()
    references = turns = 0
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for qi in range(shape.questions):
            item = _question(rng, words, pool, qi, shape, facts)
            out.write((", " if qi else "") + json.dumps(item))
            distinct.update(item["haystack_session_ids"])
            references += len(item["haystack_sessions"])
            turns += sum(len(s) for s in item["haystack_sessions"])
        out.write("]")
    return SyntheticFile(path, shape.questions, references, len(distinct), turns, path.stat().st_size)


def _fact_vocabulary(shape: SyntheticShape) -> list[str]:
    """Three words a question (topic, value, later value), none a filler word, none repeated:
    every word of 3, then 4, ... fact syllables, shuffled."""
    out: list[str] = []
    length = 3
    while len(out) < 3 * shape.questions:
        out += ["".join(p) for p in itertools.product(FACT_SYLLABLES, repeat=length)]
        length += 1
    random.Random(f"facts-{shape.seed}").shuffle(out)
    return out


def _question(rng: random.Random, words: list[str], pool: list[tuple[str, list[dict]]], qi: int,
              shape: SyntheticShape, facts: list[str] | None = None) -> dict:
    qtype = TYPES[qi % len(TYPES)]
    abstention = qi % 10 == 9
    qid = f"syn{qi:05d}" + ("_abs" if abstention else "")
    topic, value, later = rng.sample(words, 3)  # drawn either way: the rest of the file stays the same
    if facts is not None:
        topic, value, later = facts[3 * qi:3 * qi + 3]
    n_evidence = 2 if qtype in ("multi-session", "knowledge-update") else 1
    facts = [f"My {topic} is {value}.", f"My {topic} is now {later}."][:n_evidence]
    role = "assistant" if qtype == "single-session-assistant" else "user"
    evidence = [(f"answer_{qid}_{i + 1}", session(rng, words, shape.turns, shape.words, fact, role))
                for i, fact in enumerate(facts)]
    fillers = rng.sample(pool, shape.sessions - n_evidence)
    haystack = fillers + evidence
    rng.shuffle(haystack)
    # A day each, over at least a year (M's ~500 sessions take more days than a year has).
    days = sorted(rng.sample(range(max(365, len(haystack))), len(haystack)))
    dates = [stamp(START + timedelta(days=d, minutes=rng.randrange(600))) for d in days]
    return {
        "question_id": qid, "question_type": qtype,
        "question": f"What is my {topic}?" if not abstention else f"What is my {rng.choice(words)}?",
        "answer": (later if qtype == "knowledge-update" else value) if not abstention else "never mentioned",
        "question_date": stamp(START + timedelta(days=max(400, len(haystack) + 35))),
        "haystack_session_ids": [sid for sid, _ in haystack], "haystack_dates": dates,
        "haystack_sessions": [turns for _, turns in haystack],
        "answer_session_ids": [sid for sid, _ in evidence],
    }
