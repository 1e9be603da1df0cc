"""A small LongMemEval file in the published format, written at test time: one question of each
type, an abstention question, three filler sessions shared by every haystack (as the release
shares sessions between haystacks), and, with `dirty`, the faults a release holds. A second file,
`official_items`, holds the edge cases of LongMemEval's official retrieval figures."""

from __future__ import annotations

import copy
import json
from pathlib import Path

FILLERS = {
    "sharegpt_fill_1": [
        {"role": "user", "content": "Can you explain how photosynthesis works in simple terms?"},
        {"role": "assistant", "content": "Plants turn sunlight, water and carbon dioxide into sugar and oxygen."},
    ],
    "ultrachat_fill_2": [
        {"role": "user", "content": "Write a haiku about autumn leaves falling."},
        {"role": "assistant", "content": "Crimson leaves drifting, quiet wind over the pond, the year exhales slow."},
    ],
    "sharegpt_fill_3": [
        {"role": "user", "content": "What is the capital of Australia?"},
        {"role": "assistant", "content": "Canberra is the capital of Australia."},
    ],
}


def _turns(*pairs: tuple[str, str, bool]) -> list[dict]:
    return [{"role": role, "content": text, "has_answer": marked} for role, text, marked in pairs]


# Each question: (id, type, question, answer, question date, evidence sessions {id: (date, turns)}).
QUESTIONS = [
    ("q-ssu", "single-session-user", "What breed is my new dog?", "a beagle", "2023/05/30 (Tue) 10:00", {
        "answer_ssu_1": ("2023/05/20 (Sat) 02:21", _turns(
            ("user", "I adopted a beagle puppy named Rufus last week.", True),
            ("assistant", "Congratulations on adopting Rufus!", False))),
    }),
    ("q-ssa", "single-session-assistant", "Which herb did you suggest for my tomato pasta sauce?", "basil",
     "2023/06/11 (Sun) 09:00", {
        "answer_ssa_1": ("2023/06/01 (Thu) 18:30", _turns(
            ("user", "How can I make my tomato pasta sauce taste fresher?", False),
            ("assistant", "Add a handful of torn fresh basil right before serving.", True))),
    }),
    ("q-ssp", "single-session-preference", "Can you recommend a weekend activity for me?",
     "The user would prefer outdoor climbing, as they mentioned loving bouldering.", "2023/07/02 (Sun) 08:00", {
        "answer_ssp_1": ("2023/06/20 (Tue) 12:00", _turns(
            ("user", "I love bouldering outdoors, it is my favourite way to spend a Saturday.", True),
            ("assistant", "Bouldering is a great full-body workout.", False))),
    }),
    ("q-ms", "multi-session", "How many musical instruments do I play?", "two", "2023/08/15 (Tue) 20:00", {
        "answer_ms_1": ("2023/08/01 (Tue) 19:00", _turns(
            ("user", "I practised the violin for an hour tonight.", True),
            ("assistant", "Steady practice pays off.", False))),
        "answer_ms_2": ("2023/08/09 (Wed) 19:00", _turns(
            ("user", "My cello teacher says my bowing improved.", True),
            ("assistant", "That is great progress.", False))),
    }),
    ("q-ku", "knowledge-update", "Where do I work now?", "at the Lisbon aquarium", "2023/10/01 (Sun) 10:00", {
        "answer_ku_1": ("2023/09/01 (Fri) 09:00", _turns(
            ("user", "I started a job at the city library today.", True),
            ("assistant", "Good luck at the library!", False))),
        "answer_ku_2": ("2023/09/20 (Wed) 09:00", _turns(
            ("user", "I left the library and now work at the Lisbon aquarium.", True),
            ("assistant", "The aquarium sounds like fun.", False))),
    }),
    ("q-tr", "temporal-reasoning", "How many days ago did I run the half marathon?", "10 days",
     "2023/11/11 (Sat) 12:00", {
        "answer_tr_1": ("2023/11/01 (Wed) 08:00", _turns(
            ("user", "I finished my first half marathon this morning!", True),
            ("assistant", "Well done on the half marathon!", False))),
    }),
    ("q-ssu_abs", "single-session-user", "What breed is my new cat?",
     "You mentioned a dog, not a cat.", "2023/05/30 (Tue) 10:00", {
        "answer_ssu_abs_1": ("2023/05/21 (Sun) 02:21", _turns(
            ("user", "I adopted a beagle puppy named Rufus last week.", False),
            ("assistant", "Congratulations on adopting Rufus!", False))),
    }),
]

FILLER_DATES = ("2023/01/05 (Thu) 10:00", "2023/02/10 (Fri) 11:00", "2023/03/15 (Wed) 12:00")


def question(qid: str, qtype: str, text: str, answer: str, date: str, evidence: dict) -> dict:
    """One question object as published: fillers first (older), then its evidence sessions."""
    sessions = [(sid, FILLER_DATES[i], turns) for i, (sid, turns) in enumerate(FILLERS.items())]
    sessions += [(sid, d, turns) for sid, (d, turns) in evidence.items()]
    return {
        "question_id": qid, "question_type": qtype, "question": text, "answer": answer, "question_date": date,
        "haystack_session_ids": [s[0] for s in sessions], "haystack_dates": [s[1] for s in sessions],
        "haystack_sessions": [copy.deepcopy(s[2]) for s in sessions],
        "answer_session_ids": list(evidence),
    }


def longmemeval_items() -> list[dict]:
    return [question(*q) for q in QUESTIONS]


# The edge cases of LongMemEval's official retrieval figures (tests/test_longmemeval_official.py).
# q-boats: three answer sessions. boats_1 has a user turn marked has_answer (a target) and an
# assistant turn marked too (not a target: the official corpus indexes user turns only); boats_2
# has two targets among unmarked turns; boats_3 is listed among answer_session_ids but only its
# assistant turn is marked, so it holds no target and is no gold session. q-advice has no user
# turn marked has_answer (excluded from the official figures); q-boats_abs is an abstention
# question whose answer session does have a target (excluded all the same).
OFFICIAL_QUESTIONS = [
    ("q-boats", "multi-session", "How many boats do I own?", "three", "2023/09/30 (Sat) 10:00", {
        "answer_boats_1": ("2023/08/01 (Tue) 09:00", _turns(
            ("user", "I bought a red kayak.", True),
            ("assistant", "Red kayaks are easy to spot on the water.", True),
            ("user", "It fits two people.", False),
            ("assistant", "Great for trips with a friend.", False))),
        "answer_boats_2": ("2023/08/20 (Sun) 09:00", _turns(
            ("user", "Any tips for paddling in wind?", False),
            ("assistant", "Keep low and paddle steadily.", False),
            ("user", "I also bought a blue canoe.", True),
            ("assistant", "Canoes are very stable.", False),
            ("user", "And a green paddleboard last week.", True))),
        "answer_boats_3": ("2023/09/10 (Sun) 09:00", _turns(
            ("user", "Which boat should I take to the lake?", False),
            ("assistant", "Your kayak, since you said it fits two.", True))),
    }),
    ("q-advice", "single-session-assistant", "Which wax did you recommend for my skis?", "a fluoro-free glide wax",
     "2023/12/20 (Wed) 10:00", {
        "answer_advice_1": ("2023/12/01 (Fri) 18:00", _turns(
            ("user", "My skis feel slow on wet snow.", False),
            ("assistant", "Try a fluoro-free glide wax made for warm snow.", True))),
    }),
    ("q-boats_abs", "multi-session", "How many planes do I own?", "You mentioned boats, not planes.",
     "2023/09/30 (Sat) 10:00", {
        "answer_boats_abs_1": ("2023/08/01 (Tue) 09:00", _turns(
            ("user", "I bought a red kayak.", True),
            ("assistant", "Red kayaks are easy to spot on the water.", False))),
    }),
]


def official_items() -> list[dict]:
    return [question(*q) for q in OFFICIAL_QUESTIONS]


def write_longmemeval(path: Path, *, dirty: bool = False, items: list[dict] | None = None) -> Path:
    """The clean file, or with `dirty` the faults of a real release added (see DIRT)."""
    items = items if items is not None else longmemeval_items()
    if dirty:
        items = dirtied(items)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(items, indent=1))
    return path


DIRT = {
    "empty session": "q-ssu: session sharegpt_fill_1 has no turns",
    "empty turn": "q-ms: the second turn of answer_ms_1 has no text",
    "unmarked turn": "q-tr: the assistant turn of answer_tr_1 has no has_answer",
    "unknown answer session": "q-ku: answer_session_ids also names answer_ku_9, not in its haystack",
    "bad date": "q-ssp: question_date is 'yesterday'",
    "no question text": "an eighth question without `question`",
    "no haystack": "a ninth question without haystack_sessions",
    "repeated id": "a tenth question repeating q-ms",
}


def dirtied(items: list[dict]) -> list[dict]:
    items = copy.deepcopy(items)
    by_id = {q["question_id"]: q for q in items}
    by_id["q-ssu"]["haystack_sessions"][0] = []
    by_id["q-ms"]["haystack_sessions"][3][1]["content"] = ""
    del by_id["q-tr"]["haystack_sessions"][3][1]["has_answer"]
    by_id["q-ku"]["answer_session_ids"].append("answer_ku_9")
    by_id["q-ssp"]["question_date"] = "yesterday"
    no_text = copy.deepcopy(by_id["q-ssu"])
    no_text.update(question_id="q-notext", question="")
    no_haystack = copy.deepcopy(by_id["q-tr"])
    no_haystack["question_id"] = "q-nohay"
    del no_haystack["haystack_sessions"]
    return items + [no_text, no_haystack, copy.deepcopy(by_id["q-ms"])]
