"""The questions' text embeddings, computed once per split, in batches, before any program asks.

Nearly every program embeds its question at retrieve time, as `memolib.query_text(task)` (the
seeds, the offline generator's recipes), and a late-interaction recipe also its token matrix. The run's embedding cache answers later programs, but
the first one evaluated on a split paid the encoder for every question, one forward pass each,
inside its timed retrieve calls: on a loaded machine MiniLM takes 100+ ms for one sentence, so
the program swept first (acgm, alphabetically) measured 200-500 ms a question on the dev data
against 2 ms with the cache warm. One batched pass here costs a fraction of those single passes,
and every program then reads its question vectors from the cache.

Best effort: a question a program words differently is embedded when it asks, as before, and an
encoder that fails here is left for the program's own call to meet and report.
"""

from __future__ import annotations

import logging
from typing import Any, Iterable

from automemo.contract import PartialRecorder
from automemo.toolkit.memolib.text import query_text

log = logging.getLogger(__name__)

DENSE_QUERY_CHARS = 1000
"""`memolib.DenseIndex` and `memolib.TokenIndex` cut a query to this many characters before
embedding it."""


def question_texts(partials: Iterable[PartialRecorder]) -> list[str]:
    """The texts programs embed for these questions: `query_text`, whole and as the dense index
    cuts it; each once, in question order."""
    texts: dict[str, None] = {}
    for partial in partials:
        text = query_text(partial)
        if text:
            texts[text] = None
            texts[text[:DENSE_QUERY_CHARS]] = None
    return list(texts)


def warm_question_embeddings(encoders: Any, partials: Iterable[PartialRecorder]) -> int:
    """Embed the questions' texts through `encoders.text` (cached by content); their token
    matrices, when the encoder has them, are announced (`expect_tokens`) and computed in one
    batch with the first token matrices a program asks for, so a run without late interaction
    never computes them. Returns how many texts were asked for (0 when there is no text encoder
    or it failed)."""
    text_encoder = getattr(encoders, "text", None)
    if text_encoder is None:
        return 0
    texts = question_texts(partials)
    if not texts:
        return 0
    try:
        text_encoder.embed(texts)
        if getattr(text_encoder, "has_tokens", False):  # late interaction's query side (TokenIndex)
            text_encoder.expect_tokens(texts)
    except Exception as exc:  # noqa: BLE001 - any encoder failure: the program's own call reports it
        log.debug("question embeddings not warmed: %s", exc)
        return 0
    return len(texts)
