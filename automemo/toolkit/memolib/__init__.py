"""memolib: the component library memo programs are built from (seeds, the offline generator and
LLM-written programs alike), one small module per concept. Import it as
`from automemo.toolkit import memolib` and call `memolib.<name>`; `docs/memolib.md` lists the API.

Guest-safe: stdlib + numpy + `automemo.contract` only, because programs import it inside the
sandbox. A fix here lands in every program that uses it.
"""

from automemo.toolkit.memolib.payload import MAX_EVIDENCE, budget_of, fit_sections, make_payload
from automemo.toolkit.memolib.router import QuestionRouter, router_features
from automemo.toolkit.memolib.text import (STOPWORDS, action_type, clip, dedupe, generalise, host_of, overlap,
                                           query_text, task_images, tokens)
from automemo.toolkit.memolib.units import Unit, episode_evidence, is_conversation, scope_of, units
from automemo.toolkit.memolib.vectors import ScopedIndex, as_matrix, cosine_top_k, faiss_search, top_indices

__all__ = [
    "MAX_EVIDENCE", "budget_of", "fit_sections", "make_payload",
    "QuestionRouter", "router_features",
    "STOPWORDS", "action_type", "clip", "dedupe", "generalise", "host_of", "overlap", "query_text", "task_images",
    "tokens",
    "Unit", "episode_evidence", "is_conversation", "scope_of", "units",
    "ScopedIndex", "as_matrix", "cosine_top_k", "faiss_search", "top_indices",
]
