"""Which pseudo-questions a search gets: per conversation a number that grows with its sessions
(capped), shared among the kinds by their weights, each kind's candidates drawn in a seeded
order, every draw checked against the rules (`model.check`), no two questions alike."""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from automemo.benchmarks.pseudo.model import KINDS, InvalidPseudoQuestion, PseudoQuestion, check, normalized


@dataclass(frozen=True)
class Quota:
    """How many pseudo-questions to draw."""

    per_session: float           # per session of a conversation
    per_conversation: int        # at most, per conversation
    total: int                   # at most, over all conversations (shared in proportion)
    weights: Mapping[str, float] = field(default_factory=dict)  # kind -> share


def conversation_counts(sessions: Mapping[str, int], quota: Quota) -> dict[str, int]:
    """Scope -> questions to draw: `per_session` × its sessions (at least 1), capped per
    conversation, then scaled down together so that the sum stays within `total` (each at
    least one while the total allows: a conversation without questions cannot be held out)."""
    wanted = {s: min(quota.per_conversation, max(1, math.ceil(quota.per_session * n))) for s, n in sessions.items()}
    whole = sum(wanted.values())
    if whole <= quota.total:
        return wanted
    scale = quota.total / whole
    out = {s: max(1, math.floor(w * scale)) for s, w in wanted.items()}
    for scope in sorted(out, key=lambda s: -out[s]):  # the rounding's excess, from the largest
        if sum(out.values()) <= quota.total:
            break
        if out[scope] > 1:
            out[scope] -= 1
    return out


def draw(candidates: Mapping[str, Sequence[PseudoQuestion]], n: int, weights: Mapping[str, float],
         turn_text: Mapping[str, str], seed: str) -> list[PseudoQuestion]:
    """Up to `n` questions of one conversation from each kind's `candidates`, valid and distinct
    (by text; and by kind and clues, for questions not cut from a turn: two of them on the same
    turns ask the same thing, where two sentences of one turn may ask two)."""
    valid: dict[str, list[PseudoQuestion]] = {}
    for kind, found in candidates.items():
        kept = []
        for q in found:
            try:
                check(q, turn_text)
            except InvalidPseudoQuestion:
                continue
            kept.append(q)
        rng = random.Random(int(hashlib.sha256(f"{seed}/{kind}".encode()).hexdigest()[:16], 16))
        rng.shuffle(kept)
        valid[kind] = kept
    # One question at a time to the kind furthest below its share (D'Hondt's rule), so that
    # a kind that runs out of distinct candidates leaves its share to the others.
    out: list[PseudoQuestion] = []
    taken = {k: 0 for k in valid if weights.get(k, 0) > 0}
    texts: set[str] = set()
    asked: set[tuple[str, frozenset[str], str]] = set()
    while len(out) < n and taken:
        kind = min(taken, key=lambda k: ((taken[k] + 1) / weights[k], KINDS.index(k)))
        found = valid[kind]
        while found:
            q = found.pop()
            text = normalized(q.question)
            # Unsourced questions on the same turns ask the same thing; sourced ones differ by
            # what was cut from their source.
            key = (kind, frozenset(q.clues), text if q.sources else "")
            if text not in texts and key not in asked:
                texts.add(text)
                asked.add(key)
                out.append(q)
                taken[kind] += 1
                break
        else:
            del taken[kind]
    return out
