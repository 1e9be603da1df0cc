"""Evidence-retrieval metrics, the same for every benchmark that scores cited evidence.

The payload cites evidence as a ranked list of round / image ids in
`metadata["evidence"]`; the first K distinct ids count. Recall@K = |R_K ∩ G| / |G|,
nDCG@K with binary relevance (DCG = Σ rel_i / log2(i + 1), ideal = the |G| clues first),
Hit@K = 1 if any clue is in R_K. Questions without clues (refusal questions such as Mem-Gallery's AR or LoCoMo's adversarial
category) have no defined recall and are excluded by the benchmark. A cited id may stand for
other clues through aliases (a round's ref for the picture shown in it); each clue is retrieved
at most once, so the figures stay within [0, 1].
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from automemo.contract import MemoryPayload


def cited_evidence(payload: MemoryPayload | None, k: int) -> tuple[list[str], list[str]]:
    """The first `k` distinct string ids of `payload.metadata["evidence"]`, and the problems
    found (shown as task feedback so that the meta agent learns the format)."""
    if payload is None:
        return [], ["no payload"]
    raw: Any = payload.metadata.get("evidence")
    if raw is None:
        return [], ['payload.metadata has no "evidence" list (ranked round/image ids)']
    if not isinstance(raw, list):
        return [], [f'payload.metadata["evidence"] must be a list of ids, got {type(raw).__name__}']
    ids, problems = [], []
    for item in raw:
        if not isinstance(item, str):
            problems.append(f"ignored non-string evidence item {item!r}")
        elif item not in ids:
            ids.append(item)
    if len(ids) > k:
        problems.append(f"{len(ids)} evidence ids cited; only the first {k} count")
    return ids[:k], problems


def matched_clues(
    ranked: Sequence[str], gold: Sequence[str], k: int, aliases: Mapping[str, Sequence[str]] | None = None
) -> list[str | None]:
    """For each of the first `k` cited ids, the clue it retrieves (None: none). A cited id
    retrieves itself if it is a clue, else the first still-unretrieved clue it is an alias of
    (`aliases[id]`, e.g. the picture shown in a cited round); each clue is retrieved once."""
    remaining = list(dict.fromkeys(gold))
    out: list[str | None] = []
    for rid in ranked[:k]:
        hit = rid if rid in remaining else next(
            (a for a in (aliases or {}).get(rid, ()) if a in remaining), None
        )
        if hit is not None:
            remaining.remove(hit)
        out.append(hit)
    return out


def recall_at_k(ranked: Sequence[str], gold: Sequence[str], k: int, aliases: Mapping[str, Sequence[str]] | None = None) -> float:
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("recall is undefined without clues (AR questions are excluded)")
    return sum(m is not None for m in matched_clues(ranked, gold, k, aliases)) / len(gold_set)


def ndcg_at_k(ranked: Sequence[str], gold: Sequence[str], k: int, aliases: Mapping[str, Sequence[str]] | None = None) -> float:
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("nDCG is undefined without clues (AR questions are excluded)")
    matched = matched_clues(ranked, gold, k, aliases)
    dcg = sum(1.0 / math.log2(i + 2) for i, m in enumerate(matched) if m is not None)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold_set), k)))
    return dcg / ideal


def hit_at_k(ranked: Sequence[str], gold: Sequence[str], k: int, aliases: Mapping[str, Sequence[str]] | None = None) -> float:
    return 1.0 if any(m is not None for m in matched_clues(ranked, gold, k, aliases)) else 0.0


# --- the figures published memory benchmarks quote -------------------------------------------


def session_hit_at_k(
    ranked: Sequence[str], gold: Sequence[str], k: int, session_of: Mapping[str, str],
    aliases: Mapping[str, Sequence[str]] | None = None,
) -> float:
    """Session-level any-hit@K: 1 when any of the first `k` cited ids lies in a session that
    holds a gold clue (`session_of`: turn ref -> its session; a cited image id lies where the
    turn it stands for lies), else 0. The granularity most published memory benchmarks report
    retrieval at: finding the right session counts, whichever of its turns was cited."""
    gold_sessions = {session_of[c] for c in gold if c in session_of}
    if not gold_sessions:
        raise ValueError("session hit is undefined without clues that lie in a session")
    for rid in ranked[:k]:
        if any(session_of.get(ref) in gold_sessions for ref in (rid, *(aliases or {}).get(rid, ()))):
            return 1.0
    return 0.0


def locomo_recall_at_k(
    ranked: Sequence[str], gold: Sequence[str], k: int, aliases: Mapping[str, Sequence[str]] | None = None
) -> float:
    """LoCoMo's official evidence recall (snap-research/locomo, task_eval/evaluation.py,
    `eval_question_answering`: `recall_acc = sum(ev in context for ev in evidence) /
    len(evidence)`, and 1 for a question without evidence): the fraction of the gold evidence
    ids found among the retrieved ids, here the first `k` cited (a cited image id counts as the
    turn it stands for). Averaged over every question, adversarial ones included, by the
    official `analyze_aggr_acc`."""
    if not gold:
        return 1.0
    retrieved = {ref for rid in ranked[:k] for ref in (rid, *(aliases or {}).get(rid, ()))}
    return sum(g in retrieved for g in gold) / len(gold)
