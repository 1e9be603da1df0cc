"""Small releases in the published Mem-Gallery and LoCoMo formats, written at test time: two
Mem-Gallery scenarios with real JPGs, git-LFS pointer files and a missing image, and two short
LoCoMo conversations; and a user's own logs in the `conversations` benchmark's JSON-lines format.
The real datasets are never needed by the tests."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

LFS_POINTER = (
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 48213\n"
)


def _jpg(path: Path, colour: tuple[int, int, int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (24, 24), colour).save(path, format="JPEG")


def _scenario(name: str, relative: str, pet: str, city: str, colour: str) -> dict:
    """Three sessions: a pet photo (real JPG), a city move, a bike photo (LFS pointer), a
    changed favourite food and a dish photo whose file is missing."""
    img = f"../image/{name}"
    return {
        "character_profile": {"name": name.title(), "persona_summary": "a test persona",
                              "traits": ["curious"], "conversation_style": "short"},
        "multi_session_dialogues": [
            {"session_id": "D1", "date": "2024-06-17", "dialogues": [
                {"round": "D1:1", "user": "Hi, I just adopted a dog.", "assistant": "Congratulations!"},
                {"round": "D1:2", "user": f"Here is my {pet} sleeping on the sofa.", "assistant": "So cute.",
                 "image_id": ["D1:IMG_001"], "input_image": [f"{img}/D1_IMG_001.jpg"],
                 "image_caption": [f"a {colour} {pet} sleeping on a sofa"]},
                {"round": "D1:3", "user": f"My {relative} works as a carpenter.", "assistant": "Nice craft."},
            ]},
            {"session_id": "D2", "date": "2024-07-02", "dialogues": [
                {"round": "D2:1", "user": f"We are moving to {city} next month.", "assistant": "Exciting move!"},
                {"round": "D2:2", "user": "This is my new bike.", "assistant": "Looks fast.",
                 "image_id": ["D2:IMG_001"], "input_image": [f"{img}/D2_IMG_001.jpg"],
                 "image_caption": ["a red racing bike"]},
                {"round": "D2:3", "user": "My favourite food is sushi.", "assistant": "Good choice."},
            ]},
            {"session_id": "D3", "date": "2024-08-09", "dialogues": [
                {"round": "D3:1", "user": "Actually my favourite food is now ramen, not sushi.", "assistant": "Noted."},
                {"round": "D3:2", "user": "I cooked this dish tonight.", "assistant": "Yummy.",
                 "image_id": ["D3:IMG_001"], "input_image": [f"{img}/D3_IMG_001.jpg"],
                 "image_caption": ["a bowl of ramen with egg"]},
            ]},
        ],
        "human-annotated QAs": [
            {"point": "FR", "question": f"What does my {relative} work as?", "answer": "a carpenter",
             "session_id": ["D1"], "clue": ["D1:3"]},
            {"point": "TR", "question": f"Which city are we moving to next month?", "answer": city,
             "session_id": ["D2"], "clue": ["D2:1"]},
            {"point": "VS", "question": f"Which picture shows my {pet} sleeping on the sofa?",
             "answer": "D1:IMG_001", "session_id": ["D1"], "clue": ["D1:2"]},
            {"point": "KR", "question": "What is my favourite food now?", "answer": "ramen",
             "session_id": ["D2", "D3"], "clue": ["D2:3", "D3:1"]},
            {"point": "CD", "question": "Did my favourite food change between sessions?", "answer": "Yes",
             "session_id": ["D2", "D3"], "clue": ["D2:3", "D3:1"]},
            {"point": "VR", "question": "What colour is the bike in the picture?", "answer": "red",
             "session_id": ["D2"], "clue": ["D2:2"], "question_image": [f"{img}/Q_IMG_001.jpg"],
             "image_caption": ["a red racing bike"]},
            {"point": "AR", "question": "What is the name of my grandmother's cat?", "answer": "Not mentioned.",
             "session_id": [], "clue": []},
        ],
    }


def write_memgallery(root: Path, *, questions: bool = True) -> Path:
    """A release folder `root` with `dialog/<scenario>.json` and `image/<scenario>/*.jpg`.
    Per scenario: D1_IMG_001 and the question image are real JPGs, D2_IMG_001 is a git-LFS
    pointer and D3_IMG_001 is missing, so 4 of 8 images have no pixels. Without `questions`,
    alice's "human-annotated QAs" is `[]` and bob's has no such key (two ways a file holds none)."""
    people = [("alice", "sister", "cat", "Lisbon", "white", (240, 240, 240)),
              ("bob", "brother", "dog", "Oslo", "brown", (120, 70, 20))]
    for name, relative, pet, city, colour, rgb in people:
        dialog = root / "dialog" / f"{name}.json"
        dialog.parent.mkdir(parents=True, exist_ok=True)
        scenario = _scenario(name, relative, pet, city, colour)
        if not questions:
            if name == "alice":
                scenario["human-annotated QAs"] = []
            else:
                del scenario["human-annotated QAs"]
        dialog.write_text(json.dumps(scenario, indent=1))
        images = root / "image" / name
        _jpg(images / "D1_IMG_001.jpg", rgb)
        _jpg(images / "Q_IMG_001.jpg", (200, 20, 20))
        (images / "D2_IMG_001.jpg").write_text(LFS_POINTER)
    return root


def _conversation(sample_id: str, a: str, b: str, hobby: str, city: str) -> dict:
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": a, "speaker_b": b,
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": a, "dia_id": "D1:1", "text": f"I started {hobby} lessons last week!"},
                {"speaker": b, "dia_id": "D1:2", "text": "That sounds fun, how is it going?"},
                {"speaker": a, "dia_id": "D1:3", "text": "Look at what I made.",
                 "img_url": ["https://example.invalid/photos/pot.jpg"], "blip_caption": "a photo of a clay pot",
                 "query": "clay pot"},
            ],
            "session_2_date_time": "10:37 am on 27 June, 2023",
            "session_2": [
                {"speaker": b, "dia_id": "D2:1", "text": f"I visited {city} with my family."},
                {"speaker": a, "dia_id": "D2:2", "text": f"Wow, did you like {city}?"},
                {"speaker": b, "dia_id": "D2:3", "text": "Yes, the museums were great."},
            ],
        },
        "qa": [
            {"question": f"What lessons did {a} start?", "answer": hobby, "evidence": ["D1:1"], "category": 4},
            {"question": f"Which city did {b} visit with family?", "answer": city, "evidence": ["D2:1"], "category": 1},
            {"question": f"When did {b} visit {city}?", "answer": 2023, "evidence": ["D2:1; D2:3"], "category": 2},
            {"question": f"What did {a} make in the lessons?", "answer": "a clay pot", "evidence": ["D1:3"],
             "category": 3},
            {"question": f"What is {b}'s favourite museum painting?", "adversarial_answer": "the Mona Lisa",
             "evidence": ["D2:3"], "category": 5},
        ],
        "event_summary": {}, "observation": {}, "session_summary": {},
    }


def write_locomo(path: Path, *, unknown_clue: bool = False, dirty_clues: bool = False,
                 questions: bool = True) -> Path:
    """With `unknown_clue`, conv-2's second question also cites `D10:19`, a turn the
    conversation does not have, as the published locomo10.json does (conv-42, qa[58]). With
    `dirty_clues`, conv-1's evidence is written as the published file writes some of its own:
    ids joined by spaces (`"D9:1 D4:4 D4:6"`, conv-49), a misspelt id (`"D:11:26"`, conv-43), a
    leading zero (`"D30:05"`, conv-50), and a joined entry with one id naming no turn. Without
    `questions`, conv-1's `qa` is `[]` and conv-2 has no `qa` key."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = [_conversation("conv-1", "Caroline", "Melanie", "pottery", "Paris"),
            _conversation("conv-2", "Jon", "Gina", "dance", "Rome")]
    if not questions:
        data[0]["qa"] = []
        del data[1]["qa"]
    if unknown_clue:
        data[1]["qa"][1]["evidence"] = ["D2:1", "D10:19"]
    if dirty_clues:
        qa = data[0]["qa"]
        qa[0]["evidence"] = ["D2:1 D1:1 D1:3"]
        qa[1]["evidence"] = ["D:2:1"]
        qa[2]["evidence"] = ["D2:03"]
        qa[3]["evidence"] = ["D1:3; D7:7"]
    path.write_text(json.dumps(data, indent=1))
    return path


# --- a user's own logs (the `conversations` benchmark) ---------------------------------------

_ANA = [
    # Written out of date order: s2 before s1. s3 has no date: it keeps its place after s2, the
    # session written before it.
    {"id": "s2", "conversation": "ana", "date": "2024-05-03",
     "turns": [{"id": "t3", "text": "We moved to Porto last week."},
               {"id": "t4", "speaker": "assistant", "text": "How exciting!"}]},
    {"id": "s3", "conversation": "ana",
     "turns": [{"id": "t5", "text": "Here is my spare key.",
                "images": [{"path": "img/missing.jpg", "caption": "a brass key on a hook"}]}]},
    {"id": "s1", "conversation": "ana", "date": "2024-05-01",
     "turns": [{"id": "t1", "text": "I left my bike at the station",
                "images": [{"path": "img/bike.jpg", "caption": "a red bike"},
                           {"url": "https://example.invalid/photos/cat.jpg", "caption": "a grey cat"}]},
               {"id": "t2", "speaker": "assistant", "text": "Noted."}]},
]
_BEN = [
    # 09:00Z comes after 10:00+02:00 (08:00Z), although its text sorts first.
    {"id": "s3", "conversation": "ben", "date": "2024-06-01T09:00:00Z",
     "turns": [{"id": "t3", "speaker": "Ben", "text": "My club meets on Fridays."}]},
    {"id": "s1", "conversation": "ben", "date": "2024-06-01T10:00:00+02:00",
     "turns": [{"id": "t1", "speaker": "Ben", "text": "I play chess every evening."},
               {"id": "t2", "speaker": "assistant", "text": ""}]},  # no text, no image: left out
    {"id": "s2", "conversation": "ben", "date": "2024-06-02", "turns": []},  # no turn: left out
]
USER_LOG_SESSIONS = _ANA + _BEN
USER_LOG_QUESTIONS = [
    {"id": "q1", "conversation": "ana", "question": "Where did I leave my bike?", "answer": "at the station",
     "evidence": ["t1"], "type": "FR", "date": "2024-06-01"},
    {"id": "q2", "conversation": "ana", "question": "What is my sister's name?", "answer": None},
    {"id": "q3", "conversation": "ben", "question": "Which game do I play every evening?", "answer": "chess",
     "evidence": ["t1"], "type": "FR"},
    {"id": "q4", "conversation": "ben", "question": "When does my club meet?", "answer": "Fridays",
     "evidence": ["t3", "t9"], "type": "TR"},  # t9 names no turn of ben: a dropped clue
]


def jsonl(path: Path, records: list, *, blank_lines: bool = False) -> Path:
    """`records` one a line (a string is written as it is: a line that is not valid JSON)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text(("\n\n" if blank_lines else "\n").join(lines) + "\n")
    return path


def write_user_logs(root: Path) -> dict[str, Path]:
    """The `conversations` benchmark's options for `root/sessions.jsonl` (two conversations: ana
    with a real JPG, a URL image and a missing image; ben) and `root/questions.jsonl`."""
    _jpg(root / "img" / "bike.jpg", (200, 30, 30))
    return {"path": jsonl(root / "sessions.jsonl", USER_LOG_SESSIONS, blank_lines=True),
            "questions": jsonl(root / "questions.jsonl", USER_LOG_QUESTIONS)}


_TOPICS = {
    "ana": ["kayak", "harbour", "paddle", "lighthouse", "seagull", "tide", "anchor", "sailcloth", "regatta"],
    "ben": ["sourdough", "oven", "crust", "starter", "rye", "flour", "bakery", "proofing", "baguette"],
    "cai": ["telescope", "nebula", "eyepiece", "observatory", "comet", "tripod", "astrophoto", "galaxy", "meteor"],
    "dee": ["violin", "rosin", "concerto", "bow", "orchestra", "scales", "sonata", "luthier", "metronome"],
}


_RARE = {"ana": ["Orla", "Pemberton", "Quill"], "ben": ["Rasmus", "Sorrel", "Tamsin"],
         "cai": ["Ulric", "Vesna", "Wrenna"], "dee": ["Xavi", "Yolanda", "Zenobia"]}


def write_user_logs_many(root: Path, *, sessions: int = 6, turns: int = 10, questions: bool = False) -> dict[str, Path]:
    """A `conversations` log of four people, `sessions` dated sessions of `turns` turns each, whose
    turns talk about their topic (a few rare words come back across sessions) and share a picture
    now and then: enough turns for a label-free search to hold some out and write questions.
    With `questions`, one labelled question per conversation (its second session's first turn)."""
    records, asked = [], []
    for person, words in _TOPICS.items():
        for s in range(sessions):
            day = f"2024-0{1 + s % 9}-{10 + s:02d}"
            turn_list = []
            for t in range(turns):
                a, b, c = words[(s + t) % 9], words[(2 * s + 3 * t + 1) % 9], words[(s * t + 5) % 9]
                speaker = "user" if t % 2 == 0 else "assistant"
                text = (f"Today I worked on the {a} and the {b}; the {c} was tricky, number {s * 10 + t}."
                        if speaker == "user" else f"Good to hear about the {a}. Did the {b} help the {c} at the {words[(s + 2 * t) % 9]} club?")
                # A few rare words come back once, in a later session: what links two sessions.
                names = _RARE[person]
                for k, rare in enumerate(names):
                    if (s, t) in ((k, 2), (k + 2, 6)):
                        text += f" We met {rare} and {names[(k + 1) % 3]}{k} near the old {words[k]} corner."
                turn = {"id": f"s{s}t{t}", "speaker": speaker, "text": text}
                if t == 3:
                    turn["images"] = [{"url": f"https://example.org/{person}{s}.jpg",
                                       "caption": f"a photo of a {b} beside a {c} in warm light"}]
                turn_list.append(turn)
            records.append({"id": f"{person}-{s}", "conversation": person, "date": day, "turns": turn_list})
        asked.append({"id": f"q-{person}", "conversation": person,
                      "question": f"What did I say about the {words[1]} and the {words[2]}?", "evidence": ["s1t0"]})
    out = {"path": jsonl(root / "sessions.jsonl", records)}
    if questions:
        out["questions"] = jsonl(root / "questions.jsonl", asked)
    return out
