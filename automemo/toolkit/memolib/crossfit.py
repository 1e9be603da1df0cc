"""Cross-fitting by conversation, the one scheme every fitted part of a program shares (the
question router, the ranking stage, a crossover's per-type routes): train conversations are
dealt into folds (`conversation_folds`), each fold's model is fitted without its conversations,
and a question of a train conversation is answered by its fold's model (`held_out`), every other
question (a test conversation's, a deployed user's) by the model fitted on every train question.
The search scores programs on the train split's questions; what was fitted on a question's own
conversation would score it better than it will score anyone's new ones.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

CROSS_FIT_FOLDS = 10
"""At most this many held-out fits: conversations are grouped into this many folds (sorted, dealt
round-robin); up to 10 train conversations, every conversation is held out on its own."""


def conversation_folds(scopes: Iterable[str], folds: int = CROSS_FIT_FOLDS) -> dict[str, int]:
    """Each distinct conversation's fold: sorted, dealt round-robin into max(2, min(`folds`, n))
    folds. Raises ValueError with fewer than two conversations (none could be held out while
    another remains to fit on) or an unnamed one ("")."""
    names = sorted({str(s) for s in scopes})
    if "" in names:
        raise ValueError("cross-fitting needs every question's conversation; some name none")
    if len(names) < 2:
        raise ValueError("cross-fitting needs questions of two or more conversations")
    k = max(2, min(folds, len(names)))
    return {name: i % k for i, name in enumerate(names)}


def held_out(scope: str, fold_of: Mapping[str, int], folds: Sequence[Any], fitted_on_all: Any, owner: str) -> Any:
    """What a question of conversation `scope` is answered with: a train conversation's fold's
    model, fitted without it; every other conversation's, the model fitted on all. A fold table
    that names a fold it does not hold is a broken program: it raises rather than answering that
    conversation with a model that saw its labels."""
    fold = fold_of.get(scope) if scope else None
    if fold is None:
        return fitted_on_all
    if not 0 <= fold < len(folds):
        raise ValueError(f"{owner}: conversation {scope!r} is held out by fold {fold}, "
                         f"but it carries {len(folds)} folds")
    return folds[fold]
