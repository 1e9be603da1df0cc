"""Latest state: for a question about a current or final value, the latest unit that states it
ranks above earlier ones.

A value that changes during a conversation ("I use a gas oven" ... "I switched to induction")
leaves every version in memory, and the earliest is often the one a search scores best (it
introduced the topic with the most of the question's words). A question asking what holds *now*
("currently", "latest", "finally", "updated", "in the end") needs the last version. This is the
knowledge-update case of LongMemEval (Wu et al., ICLR 2025, arXiv:2410.10813) and Mem-Gallery's
knowledge-retention questions; memory systems meet it by time-aware ranking (Zep / Graphiti's
bi-temporal edges supersede old facts, Rasmussen et al. 2025, arXiv:2501.13956). Without a
model of facts, the unit-level form is: among the first stage's candidates, the ones relevant
enough to state the value (within a `floor` of the best score) are reordered latest first in
the places they held (`latest_state`), so the last version leads and the earlier ones follow. Whether a question asks for a state is read from its
text (`is_state_question`), never from a label.
"""

from __future__ import annotations

import re
from typing import Sequence

_STATE = re.compile(
    r"\b(current(ly)?|now|latest|last|final(ly)?|ultimate(ly)?|eventual(ly)?|in the end|updated?|"
    r"most recent(ly)?|recent(ly)?|still|change[sd]?|changing|anymore|no longer|these days|at present|"
    r"today|nowadays|switch(ed)?|decided|later)\b", re.IGNORECASE)


def is_state_question(question: str) -> bool:
    """Whether a question asks what holds now or in the end (a current, final, updated or
    changed value), from its wording."""
    return bool(_STATE.search(question or ""))


def latest_state(hits: Sequence[tuple[int, float]], units: Sequence = (), floor: float = 0.3,
                 depth: int | None = None) -> list[tuple[int, float]]:
    """`hits` (`(row, score)` best first) with the ones that state the value, those scoring at
    least `floor` times the best score among the first `depth` hits (all when None), put in
    latest-first order in the places they held: a later row (rows grow with update order and
    position, as a `UnitStore` numbers them) takes the place of an earlier one. The other hits
    keep their places and scores; nothing is dropped. `units` is unused, kept so every reranker
    takes the same arguments."""
    head = list(hits[:depth]) if depth is not None else list(hits)
    if len(head) < 2 or floor > 1:
        return list(hits)
    best = max(s for _, s in head)
    places = [i for i, (_, s) in enumerate(head) if best > 0 and s >= floor * best]
    stating = sorted((head[i] for i in places), key=lambda rs: -rs[0])
    for place, hit in zip(places, stating):
        head[place] = (hit[0], head[place][1])   # the place's score stays: the order is by place
    return head + list(hits[len(head):])
