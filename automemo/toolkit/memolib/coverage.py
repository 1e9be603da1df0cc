"""Coverage for counting and series questions: the payload's k slots go to distinct sessions and
rounds instead of near-duplicates of the best hit.

"How many photos of vehicles did I share?", "every time I mentioned the oven", "all the
places we talked about": the answer is spread over several rounds, often in several sessions,
and a relevance ranking fills its top k with the rounds most like the best one (its neighbours,
its window views, the session that says it most). Diversifying the top k is the standard remedy:
maximal marginal relevance (Carbonell & Goldstein, SIGIR 1998; memolib's `mmr` does it over
vectors) or, as here without vectors, per-source quotas in the manner of search-result
diversification (xQuAD / PM-2 give each aspect its share of the slots; Santos et al. 2010,
Dang & Croft 2012): no session takes more than `quota` of the first k slots while another
session has candidates left. Whether a question counts or asks for a series is read from its
text (`is_count_question`), never from a label.

`session_diversity` is the same quota of one applied to the head of every ranking: the best turn
of each of the best few sessions first, then the rest in their order. A question answered in one
session then still has its best turns right after, while the payload's first places reach as
many sessions as they can (what session any-hit@k counts; the session-diverse first page of
search-result diversification, as xQuAD's and the session-level memories' "one hit per session
first" do).
"""

from __future__ import annotations

import re
from typing import Sequence

_COUNT = re.compile(
    r"\b(how many|how much|how often|number of|count|times|every|each|all (the|of)|in total|"
    r"altogether|series|which (days|dates|sessions|images|photos|pictures))\b", re.IGNORECASE)


def is_count_question(question: str) -> bool:
    """Whether a question counts things or asks for every member of a series, from its wording."""
    return bool(_COUNT.search(question or ""))


def coverage(rows: Sequence[int], units: Sequence, k: int, quota: int = 3) -> list[int]:
    """`rows` (best first) reordered so that the first `k` take at most `quota`
    rows of any one session (`units[row].episode_id`) as long as other sessions have candidates;
    a session over its quota gets its further rows in the slots left after every session had its
    turn. Past `k` the rest follow in their order. Nothing is dropped."""
    if k <= 0 or quota <= 0:
        return list(rows)
    taken: list[int] = []
    deferred: list[int] = []
    per_session: dict[str, int] = {}
    for hit in rows:
        if len(taken) >= k:
            deferred.append(hit)
            continue
        session = units[hit].episode_id
        if per_session.get(session, 0) < quota:
            per_session[session] = per_session.get(session, 0) + 1
            taken.append(hit)
        else:
            deferred.append(hit)
    # Slots no other session could fill go to the deferred rows, best first.
    return taken + deferred


def session_diversity(rows: Sequence[int], units: Sequence, sessions: int = 3) -> list[int]:
    """`rows` (best first) with the best row of each of the first `sessions` sessions they reach
    (`units[row].episode_id`) moved to the front, in their order, then every other row in its
    order: `coverage(rows, units, sessions, quota=1)`. Nothing is dropped."""
    return coverage(rows, units, sessions, quota=1)
