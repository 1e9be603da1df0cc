"""Latest state: for a question about a current or final value, the latest unit that states it
ranks above earlier ones.

A value that changes during a conversation ("I use a gas oven" ... "I switched to induction")
leaves every version in memory, and the earliest is often the one a search scores best (it
introduced the topic with the most of the question's words). A question asking what holds *now*
("currently", "latest", "finally", "updated", "in the end") needs the last version. This is the
knowledge-update case of LongMemEval (Wu et al., ICLR 2025, arXiv:2410.10813) and Mem-Gallery's
knowledge-retention questions; memory systems meet it by time-aware ranking (Zep / Graphiti's
bi-temporal edges supersede old facts, Rasmussen et al. 2025, arXiv:2501.13956). Without a
model of facts, the unit-level form is: in the sessions of the best hits, the latest round
that also states the value (within a `floor` of the session's best score) moves ahead of the
best hit (`latest_state`), which stays right behind it: the last version leads, the earlier
follows. Whether a question asks for a state is read from its
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


def latest_state(hits: Sequence[tuple[int, float]], units: Sequence, floor: float = 0.5,
                 depth: int | None = None, sessions: int = 3) -> list[tuple[int, float]]:
    """`hits` (`(row, score)` best first; `units[row]` has `episode_id` and `position`) where,
    for each of the first `sessions` sessions among the hits, the latest hit of that session
    that states the value too (a later position, a score at least `floor` times the session's
    best hit's) moves to just before that best hit, taking its score. The earlier version stays,
    one place down: a question about a change needs both, the latest first. Only the first
    `depth` hits are considered (all when None); nothing is dropped."""
    out = list(hits[:depth]) if depth is not None else list(hits)
    tail = list(hits[len(out):])
    done: set[str] = set()
    i = 0
    while i < len(out) and len(done) < sessions:
        row, score = out[i]
        session = units[row].episode_id
        if session in done:
            i += 1
            continue
        done.add(session)
        later = [(units[r].position, j) for j, (r, s) in enumerate(out)
                 if j > i and units[r].episode_id == session and units[r].position > units[row].position
                 and score > 0 and s >= floor * score]
        if later:
            _, j = max(later)
            moved = out.pop(j)
            out.insert(i, (moved[0], score))
            i += 1   # the best hit is one place down now
        i += 1
    return out + tail
