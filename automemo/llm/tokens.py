"""The one estimate of how many tokens a text takes, where no tokenizer is at hand.

The meta agent sizes its prompts by it (to fit a model's context), and the LLM client records it in
the ledger when a server answers without usage figures. Code and JSON tokenise denser than prose
(about 3 to 3.5 characters per token with the usual BPE vocabularies): 3 errs on the side of a
prompt that fits and of a budget that is not overspent.
"""

from __future__ import annotations

import math

CHARS_PER_TOKEN = 3.0


def estimate_tokens(text: str | int) -> int:
    """Tokens a text (or a number of characters) takes; never 0 for a non-empty text."""
    chars = text if isinstance(text, int) else len(text)
    return math.ceil(chars / CHARS_PER_TOKEN)
