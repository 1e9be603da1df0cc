"""LongMemEval's official retrieval metrics (Wu et al., ICLR 2025), by the definitions of its own
scorer (xiaowu0162/LongMemEval, `src/retrieval/eval_utils.py` and `src/retrieval/run_retrieval.py`),
computed from the ids a payload cites, in the order it cites them.

The official scorer ranks a corpus and reads three families of figures, each `recall_any@k`
(1 when some gold item is within the cut), `recall_all@k` (1 when every one is) and
`ndcg_any@k`:

- `turn_*@k`: a turn-granularity run (`evaluate_retrieval` with `granularity = turn`). Its
  corpus holds each user turn; the gold items, its *targets*, are the user turns marked
  `has_answer` of the sessions it reads as answer sessions (`process_item_flat_index`:
  `'answer' in sess_id`; `correct_docs` are the ids that keep `answer`). The cut is the first k
  cited turns.
- `session_*@k`: the same turn-level run read at session level (`evaluate_retrieval_turn2session`).
  A target reads as its session; every other turn of a session that holds a target is a
  separate, never-gold entry (the official ids of those turns have `answer` replaced by `noans`,
  so stripping the turn number leaves `noans_<session>`); a turn of any other session reads as
  its session. The gold sessions are the sessions holding a target. The cut widens past k
  until it holds k distinct entries, and relevance stays per cited turn, so two cited targets
  of one session both count in the dcg.
- `session_gran_*@k`: a session-granularity run (`evaluate_retrieval` with `granularity =
  session`), the way systems that index one document per session are scored: a session counts
  when any of its turns is cited, the cited turns' sessions in order of first citation are the
  ranking, the cut is the first k sessions. The gold sessions are again the sessions holding a
  target (an answer session without one is named `noans` there too).

The dcg is the official one (`eval_utils.dcg`): rank 1 weighs 1 and rank i ≥ 2 weighs
1/log2(i), so ranks 1 and 2 weigh alike (the textbook form weighs rank i by 1/log2(i + 1)). The
ideal dcg counts every relevant corpus item, cited or not: the targets at turn level and in the
turn-to-session reading (one corpus item per target turn), the gold sessions at session
granularity.

Where a payload is not the official ranking of the whole corpus: a cited assistant turn (the
official corpus indexes user turns only) is read as a non-target turn of its session, so it takes
its rank as every ranked item does; an id that names no turn is an entry of its own, never gold;
a ranking that runs out before the widened cut holds k entries is read as followed by uncited
items of new sessions (as the official full ranking would be), which sets the cut the ideal dcg
is taken at.

Which questions have these figures is the benchmark's word (`LongMemEval._retrieval_score`), as
the official `run_retrieval.py` has it (`main`, since 2025-04-26): every figure of a run leaves out
abstention questions (`'_abs' in question_id`) and questions with no user turn marked has_answer
(`src/evaluation/print_retrieval_metrics.py`, which averages a saved log, leaves out abstention
questions only). Here a question without a target has none; the official check looks at the whole
haystack, so a marked user turn outside the answer sessions (we know of none in the release) would
keep a question it scores with nothing to find (recall_all 1, recall_any and ndcg 0).
"""

from __future__ import annotations

import math
from typing import Hashable, Mapping, Sequence

KS = (5, 10)
"""The cut-offs reported: the ones the official `print_retrieval_metrics.py` prints."""

FIGURES = ("recall_any", "recall_all", "ndcg_any")
"""The official figure names (`run_retrieval.py`: `recall_any@k`, `recall_all@k`, `ndcg_any@k`)."""

LEVELS = ("session", "turn", "session_gran")
"""The families, as the metric name's prefix: turn-to-session, turn, session granularity."""

NAMES = tuple(f"{level}_{figure}@{k}" for level in LEVELS for k in KS for figure in FIGURES)
"""Every metric name `official_metrics` reports, e.g. `session_recall_any@5`."""

PREFIXES = tuple(f"{level}_{figure}@" for level in LEVELS for figure in FIGURES)
"""Metric name prefixes of these figures (for the commands that print published figures)."""


def dcg(relevant: Sequence[bool]) -> float:
    """LongMemEval's discounted cumulative gain of a ranking's relevance marks, best first."""
    return sum(1.0 if rank == 1 else 1.0 / math.log2(rank) for rank, hit in enumerate(relevant, 1) if hit)


def evaluate(entries: Sequence[Hashable], gold: frozenset, relevant_items: int, cut: int) -> tuple[float, float, float]:
    """(recall_any, recall_all, ndcg_any) of the first `cut` ranked `entries` against `gold`, as
    the official `evaluate_retrieval`; `relevant_items` is how many corpus items are gold, the
    length of the ideal ranking."""
    window = entries[:cut]
    found = set(window)
    ideal = dcg([True] * min(relevant_items, cut))
    ndcg = dcg([e in gold for e in window]) / ideal if ideal else 0.0
    return float(any(g in found for g in gold)), float(all(g in found for g in gold)), ndcg


def widened_cut(entries: Sequence[Hashable], k: int) -> int:
    """How many ranked entries hold the first `k` distinct ones (the official turn-to-session cut,
    which grows from k until it holds k distinct sessions); a ranking that runs out first counts
    one uncited item of a new session for each missing one."""
    seen: set = set()
    for n, entry in enumerate(entries, 1):
        seen.add(entry)
        if len(seen) == k:
            return n
    return len(entries) + k - len(seen)


def session_entries(ranked: Sequence[str], targets: frozenset[str], session_of: Mapping[str, str]) -> list[tuple[str, str]]:
    """Each cited id as the turn-to-session reading sees it: a target as its session, another turn
    of a session that holds a target as that session's `noans` twin, a turn of any other session
    as its session, an id naming no turn as itself."""
    target_sessions = {session_of[t] for t in targets if t in session_of}
    out = []
    for ref in ranked:
        session = session_of.get(ref)
        if session is None:
            out.append(("unknown", ref))
        elif ref in targets or session not in target_sessions:
            out.append(("session", session))
        else:
            out.append(("noans", session))
    return out


def session_documents(ranked: Sequence[str], session_of: Mapping[str, str]) -> list[tuple[str, str]]:
    """The cited ids' sessions, each once, in order of first citation: the ranking of a corpus of
    one document per session (an id naming no turn is a document of its own)."""
    docs = (("session", session_of[ref]) if ref in session_of else ("unknown", ref) for ref in ranked)
    return list(dict.fromkeys(docs))


def official_metrics(ranked: Sequence[str], targets: Sequence[str], session_of: Mapping[str, str],
                     ks: Sequence[int] = KS) -> dict[str, float]:
    """Every figure of `NAMES` (for each k in `ks`) of the cited ids `ranked` (best first) against
    the question's `targets` (the turns the official scorer reads as evidence; see the module's
    docstring); `session_of` maps a turn ref to its session."""
    if not targets:
        raise ValueError("LongMemEval's official figures are undefined without a target turn "
                         "(its evaluation leaves such a question out)")
    ranked = list(dict.fromkeys(ranked))
    turn_gold = frozenset(targets)
    session_gold = frozenset(("session", session_of[t]) for t in turn_gold if t in session_of)
    by_turn_session = session_entries(ranked, turn_gold, session_of)
    documents = session_documents(ranked, session_of)
    out: dict[str, float] = {}
    for k in ks:
        families = {
            "turn": evaluate(ranked, turn_gold, len(turn_gold), k),
            # One corpus item per turn, so as many relevant items as targets.
            "session": evaluate(by_turn_session, session_gold, len(turn_gold), widened_cut(by_turn_session, k)),
            "session_gran": evaluate(documents, session_gold, len(session_gold), k),
        }
        for level, values in families.items():
            out.update({f"{level}_{figure}@{k}": v for figure, v in zip(FIGURES, values)})
    return out
