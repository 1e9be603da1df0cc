"""Deterministic stratified splitting (the paper's protocol: train/test about 1:4, stratified by
category, domain or site; the train split divided into an update and a retrieve batch).

Everything is a function of the items, their categories and a seed: each category is shuffled with
its own generator seeded by `(seed, salt, category)`, so adding a category leaves the split of the
others unchanged. Outputs keep the input order.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from typing import Callable, Sequence, TypeVar

T = TypeVar("T")


def stratified_split(
    items: Sequence[T],
    category: Callable[[T], str],
    fraction: float,
    seed: int,
    *,
    salt: str = "",
    round_up: bool = False,
) -> tuple[list[T], list[T]]:
    """Split `items` into (rest, taken), taking `fraction` of every category (rounded to the
    nearest, or up with `round_up` so that `taken` never holds less than `fraction` of a
    category, but never every item; and at least one and at most all-but-one of a category with two or more items, so
    that both sides see every category that can be shared)."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"split fraction must be within [0, 1], got {fraction}")
    by_category: dict[str, list[int]] = defaultdict(list)
    for i, item in enumerate(items):
        by_category[category(item)].append(i)
    taken: set[int] = set()
    for cat in sorted(by_category):
        idx = by_category[cat]
        n = len(idx)
        k = math.ceil(n * fraction - 1e-9) if round_up else round(n * fraction)
        if n >= 2 and 0.0 < fraction < 1.0:
            k = min(max(k, 1), n - 1)
        order = list(idx)
        random.Random(f"{seed}:{salt}:{cat}").shuffle(order)
        taken.update(order[:k])
    if round_up and taken and len(taken) == len(items):
        # Rounding up lone items of their category can take everything: one item, drawn with
        # the seed, stays in `rest` (a single item stays there alone, as rounding would leave it).
        taken.discard(random.Random(f"{seed}:{salt}:rest").choice(sorted(taken)))
    rest = [item for i, item in enumerate(items) if i not in taken]
    return rest, [items[i] for i in sorted(taken)]


def holdout(names: Sequence[str], fraction: float, seed: int, *, salt: str = "") -> tuple[list[str], list[str]]:
    """Split a list of names (task types, sites) into (seen, unseen): `fraction` of them,
    rounded, at least one when there are two or more, held out entirely."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"holdout fraction must be within [0, 1], got {fraction}")
    names = list(dict.fromkeys(names))
    k = round(len(names) * fraction)
    if len(names) >= 2 and 0.0 < fraction < 1.0:
        k = min(max(k, 1), len(names) - 1)
    order = sorted(names)
    random.Random(f"{seed}:{salt}:holdout").shuffle(order)
    held = set(order[:k])
    return [n for n in names if n not in held], [n for n in names if n in held]
