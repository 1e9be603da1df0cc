"""LongMemEval's official retrieval metrics (Wu et al., ICLR 2025), computed from the ids a payload
cites, in the order it cites them.

- Session level: the cited turns read as their sessions, the first `k` distinct sessions kept (the
  official turn-to-session reading widens its cut until it holds `k` distinct sessions);
  `recall_any@k` is 1 when some evidence session is among them, `recall_all@k` when every one is.
- Turn level: the first `k` distinct cited turns against the turns marked `has_answer`; the same
  any / all.

Abstention questions (`_abs`) have no evidence and are left out by the benchmark, as the official
evaluation leaves them out. The metrics are named `session_recall_any@k` and so on, so a results
table shows them beside the project's Recall@k and nDCG@k.
"""

from __future__ import annotations

from typing import Mapping, Sequence

KS = (5, 10)
"""The cut-offs reported, as the published LongMemEval tables quote them."""

PREFIXES = ("session_recall_", "turn_recall_")
"""Metric name prefixes of these figures (for the commands that print published figures)."""


def first_sessions(ranked: Sequence[str], session_of: Mapping[str, str], k: int) -> list[str]:
    """The first `k` distinct sessions of the cited ids, in citation order; an id that names no
    turn of the release is skipped."""
    out: list[str] = []
    for ref in ranked:
        session = session_of.get(ref)
        if session is not None and session not in out:
            out.append(session)
            if len(out) == k:
                break
    return out


def any_all(found: Sequence[str], gold: Sequence[str]) -> tuple[float, float]:
    """(recall_any, recall_all) of `found` against the non-empty `gold`."""
    if not gold:
        raise ValueError("recall_any / recall_all are undefined without evidence")
    hits = [g in set(found) for g in gold]
    return float(any(hits)), float(all(hits))


def official_metrics(ranked: Sequence[str], gold_sessions: Sequence[str], gold_turns: Sequence[str],
                     session_of: Mapping[str, str], ks: Sequence[int] = KS) -> dict[str, float]:
    """Session- and turn-level recall_any@k / recall_all@k for each k in `ks`, from the distinct
    cited ids `ranked` (best first). A level without evidence (no answer session in the
    haystack, or no `has_answer` turn) reports nothing."""
    ranked = list(dict.fromkeys(ranked))
    out: dict[str, float] = {}
    for k in ks:
        if gold_sessions:
            out[f"session_recall_any@{k}"], out[f"session_recall_all@{k}"] = any_all(
                first_sessions(ranked, session_of, k), gold_sessions)
        if gold_turns:
            out[f"turn_recall_any@{k}"], out[f"turn_recall_all@{k}"] = any_all(ranked[:k], gold_turns)
    return out
