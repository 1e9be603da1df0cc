"""What a Mini-Gallery user tells the assistant: the facts sampled for one user, before they are
laid out into sessions. Each fact becomes one or more user lines (`Line`, keyed so that questions
can find the rounds that state them)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from automemo.benchmarks.minigallery import vocabulary as V
from automemo.benchmarks.minigallery.images import BACKGROUNDS, COLOURS, KINDS, PATTERNS, ImageSpec


@dataclass(frozen=True)
class Relative:
    relation: str
    name: str
    fact: str    # "job" | "city"
    value: str


@dataclass(frozen=True)
class Photo:
    context: str
    spec: ImageSpec


@dataclass(frozen=True)
class Category:
    """A made-up category (test-time learning): every member shares kind and colour."""

    name: str
    kind: str
    colour: str
    exemplars: tuple[ImageSpec, ...]
    probe: ImageSpec   # the new instance the question shows


@dataclass(frozen=True)
class ChangingFact:
    topic: str
    statement: str
    correction: str
    question: str
    old: str
    new: str


@dataclass(frozen=True)
class StableFact:
    topic: str
    statement: str
    restatement: str
    value: str


@dataclass(frozen=True)
class UserFacts:
    relatives: tuple[Relative, ...]          # two with a job fact, then two with a city fact
    events: tuple[tuple[str, str], ...]      # (name, statement), two of them
    photos: tuple[Photo, ...]                # A, A' (same kind and colour), B, C, D, E
    filler_photos: tuple[ImageSpec, ...]
    categories: tuple[Category, ...]
    changing: ChangingFact
    stable: StableFact
    unused_relations: tuple[str, ...]
    unused_contexts: tuple[str, ...]
    c_probe: ImageSpec                       # a new picture of photo C's kind and colour


@dataclass(frozen=True)
class Line:
    """One user line to place in the conversation. `after` names a line that must come in an
    earlier session (a correction after its statement, a second photo after the first)."""

    key: str
    text: str
    image: ImageSpec | None = None
    after: str | None = None


def _label(rng: random.Random) -> str:
    letters = "ABCDEFGHJKLMNPRSTUVWXZ"
    return f"{rng.choice(letters)}{rng.choice(letters)}-{rng.randint(1, 9)}"


def _spec(rng: random.Random, kind: str, colour: str, *, not_like: ImageSpec | None = None) -> ImageSpec:
    """A picture of `kind`/`colour` objects; with `not_like`, its pattern and count differ so that
    the two pictures are different instances of the same thing."""
    while True:
        spec = ImageSpec(
            kind=kind,
            colour=colour,
            pattern=rng.choice(PATTERNS),
            count=rng.randint(1, 5),
            label=_label(rng),
            background=rng.choice(sorted(BACKGROUNDS)),
        )
        if not_like is None or (spec.pattern != not_like.pattern and spec.count != not_like.count):
            return spec


def sample_facts(rng: random.Random) -> UserFacts:
    relations = rng.sample(V.RELATIONS, len(V.RELATIONS))
    names = rng.sample(V.RELATIVE_NAMES, 4)
    jobs = rng.sample(V.JOBS, 2)
    cities = rng.sample(V.CITIES, 2)
    relatives = tuple(
        Relative(relations[i], names[i], "job" if i < 2 else "city", (jobs + cities)[i])
        for i in range(4)
    )
    # Ten distinct (kind, colour) pairs: six photo subjects (A' repeats A), two fillers and two
    # categories. They may share a kind or a colour, which is what makes captions ambiguous.
    pairs = rng.sample([(k, c) for k in KINDS for c in sorted(COLOURS)], 9)
    a = _spec(rng, *pairs[0])
    contexts = rng.sample(V.PHOTO_CONTEXTS, 8)
    photo_specs = [a, _spec(rng, *pairs[0], not_like=a)] + [_spec(rng, *p) for p in pairs[1:5]]
    photos = tuple(Photo(contexts[i], s) for i, s in enumerate(photo_specs))
    categories = []
    for i, name in enumerate(rng.sample(V.TTL_NAMES, 2)):
        kind, colour = pairs[7 + i]
        exemplars = tuple(_spec(rng, kind, colour) for _ in range(3))
        categories.append(Category(name, kind, colour, exemplars, _spec(rng, kind, colour, not_like=exemplars[0])))
    topic, statement, correction, question, values = rng.choice(V.CHANGING_FACTS)
    old, new = rng.sample(values, 2)
    s_topic, s_first, s_again, s_values = rng.choice(V.STABLE_FACTS)
    return UserFacts(
        relatives=relatives,
        events=tuple(rng.sample(V.EVENTS, 2)),
        photos=photos,
        filler_photos=(_spec(rng, *pairs[5]), _spec(rng, *pairs[6])),
        categories=tuple(categories),
        changing=ChangingFact(topic, statement, correction, question, old, new),
        stable=StableFact(s_topic, s_first, s_again, rng.choice(s_values)),
        unused_relations=tuple(relations[4:7]),
        unused_contexts=tuple(contexts[6:8]),
        c_probe=_spec(rng, *pairs[3], not_like=photo_specs[3]),
    )


def lines(facts: UserFacts, rng: random.Random) -> list[Line]:
    """Every content line of a user, keyed for the question builder."""
    out: list[Line] = []
    for i, r in enumerate(facts.relatives):
        templates = V.JOB_STATEMENTS if r.fact == "job" else V.CITY_STATEMENTS
        out.append(Line(f"rel{i}", rng.choice(templates).format(rel=r.relation, name=r.name, value=r.value)))
    for i, (_, text) in enumerate(facts.events):
        out.append(Line(f"event{i}", text, after="event0" if i == 1 else None))
    for i, p in enumerate(facts.photos):
        text = rng.choice(V.PHOTO_STATEMENTS).format(ctx=p.context)
        out.append(Line(f"photo{i}", text, p.spec, after="photo0" if i == 1 else None))
    for i, spec in enumerate(facts.filler_photos):
        out.append(Line(f"filler_photo{i}", V.FILLER_PHOTO_STATEMENTS[i], spec))
    for c, cat in enumerate(facts.categories):
        for j, spec in enumerate(cat.exemplars):
            text = V.TTL_FIRST if j == 0 else rng.choice(V.TTL_MORE)
            out.append(Line(f"ttl{c}_{j}", text.format(name=cat.name), spec, after=f"ttl{c}_0" if j else None))
    ch = facts.changing
    out.append(Line("change_old", ch.statement.format(value=ch.old)))
    out.append(Line("change_new", ch.correction.format(value=ch.new), after="change_old"))
    st = facts.stable
    out.append(Line("stable_a", st.statement.format(value=st.value)))
    out.append(Line("stable_b", st.restatement.format(value=st.value), after="stable_a"))
    return out
