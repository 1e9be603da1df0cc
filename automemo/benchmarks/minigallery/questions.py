"""Mini-Gallery questions of the nine Mem-Gallery types, each with its gold answer and the ids of
the rounds / images that support it (the clues retrieval is scored against).

Per user: FR 2, MR 2, TR 2, VS 3, VR 2, TTL 2, KR 1, CD 2, AR 2 (18 questions), close to
Mem-Gallery's proportions at this small scale. Answers follow Mem-Gallery's format prompts: VS
answers are sorted, comma-separated image ids; CD answers are "Yes"/"No"; AR answers are
"Not mentioned".
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from automemo.benchmarks.minigallery import vocabulary as V
from automemo.benchmarks.minigallery.facts import UserFacts
from automemo.benchmarks.minigallery.model import Question


@dataclass(frozen=True)
class Located:
    """Where a content line ended up: its round id, its image id (if any), its time."""

    round_id: str
    image_id: str | None
    time: str


def build_questions(
    user_id: str, facts: UserFacts, at: dict[str, Located], ask_time: str, rng: random.Random
) -> list[Question]:
    drafts: list[tuple[str, str, str, tuple[str, ...], object]] = []  # qtype, q, answer, clues, image

    def add(qtype, question, answer, clues, image=None):
        drafts.append((qtype, question, answer, tuple(clues), image))

    rel = facts.relatives
    # FR: one job fact and one city fact, asked in other words than they were told.
    for i in (rng.choice((0, 1)), rng.choice((2, 3))):
        r = rel[i]
        templates = V.JOB_QUESTIONS if r.fact == "job" else V.CITY_QUESTIONS
        add("FR", rng.choice(templates).format(rel=r.relation, name=r.name), r.value, [at[f"rel{i}"].round_id])
    # MR: both jobs, both cities.
    for a, b, templates in ((0, 1, V.MR_JOB_QUESTIONS), (2, 3, V.MR_CITY_QUESTIONS)):
        q = rng.choice(templates).format(rel0=rel[a].relation, rel1=rel[b].relation, name0=rel[a].name, name1=rel[b].name)
        add("MR", q, f"{rel[a].value} and {rel[b].value}", [at[f"rel{a}"].round_id, at[f"rel{b}"].round_id])
    # TR: event0 is always told in an earlier session than event1.
    (e0, _), (e1, _) = facts.events
    shown = (e0, e1) if rng.random() < 0.5 else (e1, e0)
    add("TR", rng.choice(V.TR_ORDER_QUESTIONS).format(e0=shown[0], e1=shown[1]), e0,
        [at["event0"].round_id, at["event1"].round_id])
    k = rng.choice((0, 1))
    add("TR", rng.choice(V.TR_DATE_QUESTIONS).format(e=facts.events[k][0]), at[f"event{k}"].time[:10],
        [at[f"event{k}"].round_id])
    # VS: by description (A and A' share kind and colour), by description, by example picture.
    a, b = facts.photos[0].spec, facts.photos[2].spec
    a_ids = sorted([at["photo0"].image_id, at["photo1"].image_id])
    add("VS", rng.choice(V.VS_TEXT_QUESTIONS).format(colour=a.colour, kinds=a.kinds), ", ".join(a_ids), a_ids)
    add("VS", rng.choice(V.VS_TEXT_QUESTIONS).format(colour=b.colour, kinds=b.kinds), at["photo2"].image_id,
        [at["photo2"].image_id])
    add("VS", rng.choice(V.VS_IMAGE_QUESTIONS), at["photo3"].image_id, [at["photo3"].image_id], facts.c_probe)
    # VR: attributes that live only in the pixels of a photo found through its context.
    d, e = facts.photos[4], facts.photos[5]
    add("VR", rng.choice(V.VR_COUNT_QUESTIONS).format(ctx=d.context), str(d.spec.count),
        [at["photo4"].round_id, at["photo4"].image_id])
    if rng.random() < 0.5:
        add("VR", rng.choice(V.VR_COLOUR_QUESTIONS).format(ctx=e.context), e.spec.colour,
            [at["photo5"].round_id, at["photo5"].image_id])
    else:
        add("VR", rng.choice(V.VR_PATTERN_QUESTIONS).format(ctx=e.context), e.spec.pattern,
            [at["photo5"].round_id, at["photo5"].image_id])
    # TTL: a new instance of each made-up category; only its exemplars' pixels tell which.
    for c, cat in enumerate(facts.categories):
        add("TTL", rng.choice(V.TTL_QUESTIONS), cat.name,
            [at[f"ttl{c}_{j}"].image_id for j in range(len(cat.exemplars))], cat.probe)
    # KR / CD: the later correction wins; a consistent restatement is no conflict.
    ch, st = facts.changing, facts.stable
    change_clues = [at["change_old"].round_id, at["change_new"].round_id]
    add("KR", ch.question, ch.new, change_clues)
    add("CD", rng.choice(V.CD_QUESTIONS).format(topic=ch.topic), "Yes", change_clues)
    add("CD", rng.choice(V.CD_QUESTIONS).format(topic=st.topic), "No",
        [at["stable_a"].round_id, at["stable_b"].round_id])
    # AR: never mentioned, no clues.
    for template in rng.sample(V.AR_QUESTIONS, 2):
        q = template.format(rel=rng.choice(facts.unused_relations), ctx=rng.choice(facts.unused_contexts))
        add("AR", q, V.NOT_MENTIONED, [])

    return [
        Question(f"{user_id}:Q{i + 1:02d}", user_id, qtype, question, answer, clues, ask_time, image)
        for i, (qtype, question, answer, clues, image) in enumerate(drafts)
    ]
