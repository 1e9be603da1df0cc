#!/usr/bin/env python3
"""Write a synthetic LongMemEval file of the S split's size, in the published format, for timing
(docs/benchmarks.md, "longmemeval: cost"). Nothing in it is real data.

    python3 scripts/longmemeval_synthetic.py /tmp/lme/longmemeval_synthetic_s.json \
        [--questions 500] [--sessions 50] [--turns 10] [--pool 2000] [--words 170] [--seed 0]

Each question gets `--sessions` sessions of `--turns` turns (user and assistant in turn, about
`--words` words each, as S's ~115k tokens over ~500 turns per question; the made-up words split
into ~3.5 MiniLM word pieces each, so a turn is ~590 of them, past both MiniLM paths' windows of
256 and 128, where S's English turns average ~230: the file overstates per-turn encoding cost):
its evidence sessions (one, or two for multi-session and knowledge-update questions), each
stating a fact the question asks about at the start of a turn marked `has_answer` (so truncation
never cuts it off, as it may in real turns), and filler sessions drawn from a pool
of `--pool` sessions shared between haystacks, as the release shares sessions. The six question
types take turns; every tenth question is an abstention question (`_abs`).
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import datetime, timedelta
from pathlib import Path

TYPES = ("single-session-user", "single-session-assistant", "single-session-preference", "multi-session",
         "knowledge-update", "temporal-reasoning")
SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "su", "do", "fa", "gi", "ho", "ju", "be")


def vocabulary(rng: random.Random, size: int = 20000) -> list[str]:
    words = set()
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--pool", type=int, default=2000, help="filler sessions shared between haystacks")
    parser.add_argument("--words", type=int, default=170, help="words per turn")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    words = vocabulary(rng)
    pool = [(f"sharegpt_{i:05d}_0", session(rng, words, args.turns, args.words)) for i in range(args.pool)]
    items = []
    start = datetime(2023, 1, 1, 9, 0)
    for qi in range(args.questions):
        qtype = TYPES[qi % len(TYPES)]
        abstention = qi % 10 == 9
        qid = f"syn{qi:05d}" + ("_abs" if abstention else "")
        topic, value, later = rng.sample(words, 3)
        n_evidence = 2 if qtype in ("multi-session", "knowledge-update") else 1
        facts = [f"My {topic} is {value}.", f"My {topic} is now {later}."][:n_evidence]
        role = "assistant" if qtype == "single-session-assistant" else "user"
        evidence = [(f"answer_{qid}_{i + 1}", session(rng, words, args.turns, args.words, fact, role))
                    for i, fact in enumerate(facts)]
        fillers = rng.sample(pool, args.sessions - n_evidence)
        haystack = fillers + evidence
        rng.shuffle(haystack)
        days = sorted(rng.sample(range(max(365, len(haystack))), len(haystack)))  # M: 500 sessions
        dates = [stamp(start + timedelta(days=d, minutes=rng.randrange(600))) for d in days]
        items.append({
            "question_id": qid, "question_type": qtype,
            "question": f"What is my {topic}?" if not abstention else f"What is my {rng.choice(words)}?",
            "answer": (later if qtype == "knowledge-update" else value) if not abstention else "never mentioned",
            "question_date": stamp(start + timedelta(days=400)),
            "haystack_session_ids": [sid for sid, _ in haystack], "haystack_dates": dates,
            "haystack_sessions": [turns for _, turns in haystack],
            "answer_session_ids": [sid for sid, _ in evidence],
        })
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(items))
    distinct = {sid for item in items for sid in item["haystack_session_ids"]}
    print(f"{args.out}: {len(items)} questions, {len(items) * args.sessions} haystack sessions, "
          f"{len(distinct)} distinct, {args.out.stat().st_size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
