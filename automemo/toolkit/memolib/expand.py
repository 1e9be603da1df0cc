"""Re-ranking a hit list: neighbour expansion (the rounds around a hit often hold the answer's
context or its picture) and MMR diversity (Carbonell & Goldstein 1998: the next pick trades its
relevance against its similarity to what was already picked)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from automemo.toolkit.memolib.units import Unit


def _first_rows(turns: Sequence[Unit]) -> dict[tuple[str, int], int]:
    """(episode, position) -> the first row there: the turn itself, not the image units
    (`image_units`) stored after it at the same position."""
    at: dict[tuple[str, int], int] = {}
    for row, u in enumerate(turns):
        at.setdefault((u.episode_id, u.position), row)
    return at


def neighbours(turns: Sequence[Unit], radius: int = 1) -> list[list[int]]:
    """For each row of `turns`, the rows of the same episode within `radius` positions, nearest
    first (the row itself excluded)."""
    at = _first_rows(turns)
    out = []
    for u in turns:
        near = []
        for d in range(1, radius + 1):
            for pos in (u.position - d, u.position + d):
                row = at.get((u.episode_id, pos))
                if row is not None:
                    near.append(row)
        out.append(near)
    return out


def expand(hits: Sequence[int], turns: Sequence[Unit], radius: int = 1, limit: int | None = None) -> list[int]:
    """`hits` (rows of `turns`, best first) each followed by its neighbours within `radius`,
    without repeats, cut at `limit` rows. `turns` a `UnitStore` costs O(hits * radius) (it keeps
    the row at each position); a list of units O(all units) to index them first."""
    row_at = turns.row_at if hasattr(turns, "row_at") else (lambda e, p, at=_first_rows(turns): at.get((e, p)))
    out: list[int] = []
    seen: set[int] = set()
    for hit in hits:
        u = turns[hit]
        near = (row_at(u.episode_id, p) for d in range(1, radius + 1) for p in (u.position - d, u.position + d))
        chain = [hit] + [row for row in near if row is not None]
        for row in chain:
            if row not in seen:
                seen.add(row)
                out.append(row)
    return out[:limit] if limit is not None else out


def mmr(hits: Sequence[tuple[int, float]], vectors: np.ndarray, k: int, lam: float = 0.7) -> list[int]:
    """Maximal marginal relevance over `hits` (`(row, relevance)` pairs, e.g. a search result):
    pick `k` rows, each maximising `lam * relevance - (1 - lam) * max cosine to the rows picked`.
    `vectors[row]` are L2-normalised; relevance is min-max normalised first so `lam` means the
    same for any scorer. `lam = 1` keeps the hits' order."""
    if not hits or k <= 0:
        return []
    rows = [r for r, _ in hits]
    rel = np.asarray([s for _, s in hits], dtype=np.float64)
    rel = (rel - rel.min()) / (rel.max() - rel.min()) if rel.max() > rel.min() else np.ones_like(rel)
    sims = vectors[rows] @ vectors[rows].T
    picked: list[int] = []
    closest = np.full(len(rows), -np.inf)
    for _ in range(min(k, len(rows))):
        penalty = np.where(np.isfinite(closest), closest, 0.0)
        value = lam * rel - (1.0 - lam) * penalty
        value[picked] = -np.inf
        best = int(np.argmax(value))
        picked.append(best)
        closest = np.maximum(closest, sims[best])
    return [rows[i] for i in picked]
