"""Session expansion for list questions: the rounds beside a hit, inside its session.

"List the ways AI is used in creative industries": the items of a list are said one or two per
round over a stretch of one session, and only the round that names the topic matches the
question well; the rounds after it ("another one is ...") share few of its words. Following a
hit with its neighbours (small-to-big / sentence-window retrieval, as LlamaIndex's
SentenceWindow and parent-document retrievers do; RAPTOR's and SeCom's session context, Sarthi et
al. 2024, Pan et al. 2025) brings the rest of the list in. Unlike `expand`, which follows every
hit with its neighbours, `session_expand` widens only the best `seeds` hits, by `radius` rounds
each way inside the hit's own session (episode), before the other hits: a list lives where its
best hit is. Whether a question asks for a list is read from its text (`is_list_question`),
never from a label.
"""

from __future__ import annotations

import re
from typing import Sequence

_LIST = re.compile(
    r"\b(list|enumerate|name (all|the|some|every)|what (are|were) (the|all|some)|which (are|were)|"
    r"what (kinds|types|ways|sorts)|mention(ed)? (all|every)|all the|ways|examples|items)\b", re.IGNORECASE)


def is_list_question(question: str) -> bool:
    """Whether a question asks for a list of things, from its wording."""
    return bool(_LIST.search(question or ""))


def session_expand(rows: Sequence[int], store, radius: int = 2, seeds: int = 2) -> list[int]:
    """`rows` (best first) with the first `seeds` rows each followed by the rows of its session
    within `radius` positions (nearest first, the later side before the earlier at equal
    distance: a list goes on after it is introduced), then the other rows; no repeats. `store`
    is a `UnitStore` (`row_at(episode, position)`) or a list of units."""
    if hasattr(store, "row_at"):
        row_at, units = store.row_at, store
    else:
        at: dict[tuple[str, int], int] = {}
        for row, unit in enumerate(store):
            at.setdefault((unit.episode_id, unit.position), row)
        row_at, units = (lambda e, p: at.get((e, p))), store
    out: list[int] = []
    seen: set[int] = set()

    def take(row: int | None) -> None:
        if row is not None and row not in seen:
            seen.add(row)
            out.append(row)

    for hit in rows[:seeds]:
        take(hit)
        unit = units[hit]
        for d in range(1, radius + 1):
            take(row_at(unit.episode_id, unit.position + d))
            take(row_at(unit.episode_id, unit.position - d))
    for row in rows[seeds:]:
        take(row)
    return out
