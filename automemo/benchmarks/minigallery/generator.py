"""The Mini-Gallery generator: seeded users, their sessions of rounds, and their questions.

A split's users are generated from `(seed, split)` alone, so train and test hold different people
and the same seed always yields byte-identical data. Per user: sample facts (`facts.py`), place
their lines into sessions (respecting "this comes in a later session" constraints), pad with
filler lines, interleave assistant replies, then give every round and image its id and write the
questions (`questions.py`) against those ids.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from automemo.benchmarks.minigallery import vocabulary as V
from automemo.benchmarks.minigallery.facts import Line, UserFacts, lines, sample_facts
from automemo.benchmarks.minigallery.images import ImageSpec
from automemo.benchmarks.minigallery.model import GalleryImage, GallerySplit, Round, Session, UserLog
from automemo.benchmarks.minigallery.questions import Located, build_questions

START = datetime(2024, 1, 8, 9, 0)


@dataclass(frozen=True)
class GeneratorConfig:
    users: int
    sessions_per_user: int
    rounds_per_session: int
    captions: str   # "partial" | "full" | "none"


def generate_split(seed: int, split: str, config: GeneratorConfig) -> GallerySplit:
    # Train users are U1..Un, test users U(n+1)..U(2n): ids and names never overlap.
    rng = random.Random(f"minigallery:{seed}:{split}")
    offset = 0 if split == "train" else config.users
    names = random.Random(f"minigallery-names:{seed}").sample(V.USER_NAMES, 2 * config.users)
    users, questions = [], []
    for i in range(config.users):
        user_id = f"U{offset + i + 1}"
        log, qs = _generate_user(rng, user_id, names[offset + i], config)
        users.append(log)
        questions += qs
    return GallerySplit(split, tuple(users), tuple(questions))


def _generate_user(rng: random.Random, user_id: str, name: str, config: GeneratorConfig):
    facts = sample_facts(rng)
    content = lines(facts, rng)
    per_session = _place(content, config, rng)
    relative_names = [r.name for r in facts.relatives]
    time = START + timedelta(days=rng.randint(0, 20))
    sessions, located = [], {}
    for s, session_lines in enumerate(per_session):
        time = (time + timedelta(days=rng.randint(2, 12))).replace(
            hour=rng.randint(8, 21), minute=rng.randint(0, 59)
        )
        session_id = f"{user_id}:S{s + 1}"
        rounds, clock, n_images = [], time, 0
        for line in session_lines:
            for speaker, text, spec in _with_reply(line, name, relative_names, rng, config):
                clock += timedelta(minutes=rng.randint(1, 4))
                round_id = f"{session_id}:R{len(rounds) + 1}"
                image = None
                if spec is not None:
                    n_images += 1
                    image = GalleryImage(f"{session_id}:IMG{n_images}", spec, _caption(spec, rng, config.captions))
                rounds.append(Round(round_id, speaker, text, _fmt(clock), image))
                if speaker == name and line.key:
                    located[line.key] = Located(round_id, image.image_id if image else None, _fmt(clock))
        sessions.append(Session(session_id, user_id, _fmt(time), tuple(rounds)))
    ask_time = _fmt(time + timedelta(days=rng.randint(1, 5)))
    questions = build_questions(user_id, facts, located, ask_time, rng)
    return UserLog(user_id, name, tuple(sessions)), questions


def _place(content: list[Line], config: GeneratorConfig, rng: random.Random) -> list[list[Line]]:
    """Distribute content lines over sessions, then pad each session with filler lines (keyless)."""
    n_sessions = config.sessions_per_user
    slots = config.rounds_per_session // 2  # user lines per session; each gets one reply
    if n_sessions < 2 or len(content) > n_sessions * slots:
        raise ValueError(
            f"Mini-Gallery needs at least 2 sessions and room for {len(content)} user lines per "
            f"user, got {n_sessions} sessions x {slots} user lines (rounds_per_session="
            f"{config.rounds_per_session}); raise sessions_per_user or rounds_per_session"
        )
    has_dependents = {line.after for line in content if line.after}
    where: dict[str, int] = {}
    sessions: list[list[Line]] = [[] for _ in range(n_sessions)]
    # Anchors first (they must leave a later session free), then dependents, then the rest.
    order = sorted(content, key=lambda l: (0 if l.key in has_dependents else 1 if l.after else 2))
    for line in order:
        lo = where[line.after] + 1 if line.after else 0
        hi = n_sessions - 2 if line.key in has_dependents else n_sessions - 1
        choices = [s for s in range(lo, hi + 1) if len(sessions[s]) < slots]
        if not choices:  # crowded: any later session, then any session at all
            choices = [s for s in range(lo, n_sessions) if len(sessions[s]) < slots] or [
                s for s in range(n_sessions) if len(sessions[s]) < slots
            ]
        s = rng.choice(choices)
        where[line.key] = s
        sessions[s].append(line)
    for session in sessions:
        while len(session) < slots:
            session.append(Line("", rng.choice(V.USER_FILLERS)))
        rng.shuffle(session)
    return sessions


def _with_reply(line: Line, name: str, relatives: list[str], rng: random.Random, config: GeneratorConfig):
    text = line.text.format(name=rng.choice(relatives)) if not line.key else line.text
    yield name, text, line.image
    yield "Assistant", rng.choice(V.ASSISTANT_REPLIES), None


def _caption(spec: ImageSpec, rng: random.Random, mode: str) -> str | None:
    """What a text-only memory sees of an image: in "partial" mode one attribute at most, the way
    a hurried captioner would describe it, so that only the pixels answer every question."""
    if mode == "none":
        return None
    if mode == "full":
        return f"a photo of {spec.describe()}"
    return rng.choice(
        (
            f"a photo of some {spec.colour} shapes",
            f"a photo of {spec.kinds}",
            f"a photo with {spec.count} objects" if spec.count > 1 else "a photo of a single object",
            "a photo",
        )
    )


def _fmt(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M")
