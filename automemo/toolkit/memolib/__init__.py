"""memolib: the component library memo programs are built from (seeds, the offline generator and
LLM-written programs alike), one small module per concept. Import it as
`from automemo.toolkit import memolib` and call `memolib.<name>`; `docs/memolib.md` lists the API.

Guest-safe: stdlib + numpy + `automemo.contract` only, because programs import it inside the
sandbox. A fix here lands in every program that uses it.

| module | holds |
|---|---|
| `units` | units at three granularities: turn (`units`), round with neighbours (`windows`), `session`; `image_units` |
| `text` | tokens, clipping, hosts, action verbs, a task's query text |
| `bm25` | `BM25Index`: Okapi BM25 lexical search |
| `dense` | `DenseIndex`: embedded texts, cosine search |
| `lazy` | `LazyDense`: texts embedded only when a first stage names them as candidates, then ranked by cosine (remembering costs what BM25 costs) |
| `buffers` | `GrowingArray`: numpy rows appended at amortised O(1), read in place |
| `vectors` | normalised matrices, top-k, cosine and faiss search, `ScopedIndex` |
| `ann` | the HNSW graphs a faiss-backed collection moves to past `APPROXIMATE_ROWS`, one search with an exact row filter |
| `fusion` | `rrf` (reciprocal rank, `RRF_K` = 60 by default, as the recipes fuse) and `weighted` (min-max normalised) fusion |
| `expand` | `expand` hits with their neighbours, `mmr` diversity |
| `filters` | `in_scope`, `in_time`, `recency`, `recency_rerank`, `parse_time` |
| `store` | `UnitStore`: stored units by row, their episode order, the rows of each scope |
| `router` | `QuestionRouter`: a question's type learned from its text |
| `crossfit` | `conversation_folds`, `held_out`: the cross-fitting by conversation the router, the ranker and a crossover's routes share |
| `payload` | the budget, `fit_sections`, `chronological` memory lines, `make_payload` with ranked citations, `citations` (every unit's own id before the pictures' ids) |
| `late` | `TokenIndex`, `maxsim`: ColBERT-style late interaction over MiniLM's token embeddings |
| `entities` | `PhraseIndex`, `query_phrases`: a question's names and quoted phrases matched whole |
| `temporal` | `DateIndex`, `date_mentions`, `is_time_question`: relative dates resolved, time questions anchored |
| `hierarchy` | `SessionIndex`, `hierarchical`: sessions ranked first, then the turns inside them; with `outside`, every turn's score mixed with its session's |
| `passages` | `PassageIndex`, `spans`, `best_turns`: a session, a window of turns or a session summary indexed as a document beside the turns, cited by its best turns |
| `summaries` | `SessionSummarizer`, `sentences`: a session's extractive summary, its salient sentences and terms by tf-idf within its conversation |
| `feedback` | `feedback_terms`, `expanded_search`: RM3 pseudo-relevance feedback |
| `speakers` | `named_speakers`, `speaker_ranking`: a named speaker's turns ranked up |
| `latest` | `is_state_question`, `latest_state`: the latest unit stating a value ranks above earlier ones |
| `coverage` | `is_count_question`, `coverage`: per-session quotas fill k slots for counting and series questions; `session_diversity`: the best turn of each of the best sessions first |
| `listing` | `is_list_question`, `session_expand`: a list question's best hits widened inside their session |
| `ranker` | `RankingSignals`, `LinearRanker`, `TreeRanker`, `BlendRanker`, `ranker_from_params`: a pairwise linear ranker (RankSVM-style), LambdaMART trees, or both fused by reciprocal rank, over every ranking's signals, fitted on the host |
"""

from automemo.toolkit.memolib.bm25 import BM25Index
from automemo.toolkit.memolib.buffers import GrowingArray
from automemo.toolkit.memolib.dense import DenseIndex
from automemo.toolkit.memolib.entities import PhraseIndex, query_phrases
from automemo.toolkit.memolib.expand import expand, mmr, neighbours
from automemo.toolkit.memolib.feedback import expanded_search, feedback_terms
from automemo.toolkit.memolib.hierarchy import SessionIndex, hierarchical
from automemo.toolkit.memolib.late import TokenIndex, maxsim
from automemo.toolkit.memolib.lazy import LazyDense
from automemo.toolkit.memolib.coverage import coverage, is_count_question, session_diversity
from automemo.toolkit.memolib.crossfit import CROSS_FIT_FOLDS, conversation_folds, held_out
from automemo.toolkit.memolib.latest import is_state_question, latest_state
from automemo.toolkit.memolib.listing import is_list_question, session_expand
from automemo.toolkit.memolib.passages import PASSAGE_KINDS, PassageIndex, best_turns, spans
from automemo.toolkit.memolib.ranker import (BlendRanker, LinearRanker, RankingSignals, TreeRanker, question_cues,
                                             ranker_from_params)
from automemo.toolkit.memolib.speakers import named_speakers, speaker_ranking
from automemo.toolkit.memolib.summaries import SessionSummarizer, sentences
from automemo.toolkit.memolib.temporal import DateIndex, DateSpan, date_mentions, is_time_question
from automemo.toolkit.memolib.filters import in_scope, in_time, parse_time, recency, recency_rerank
from automemo.toolkit.memolib.fusion import RRF_K, rrf, weighted
from automemo.toolkit.memolib.payload import (MAX_EVIDENCE, budget_of, chronological, citations, fit_sections,
                                              make_payload)
from automemo.toolkit.memolib.store import UnitStore
from automemo.toolkit.memolib.router import QuestionRouter, UnheldQuestion, held_out_recall, router_features
from automemo.toolkit.memolib.text import (STOPWORDS, action_type, clip, dedupe, generalise, host_of, overlap,
                                           query_text, task_images, tokens)
from automemo.toolkit.memolib.units import (Unit, episode_evidence, episode_units, image_units, indexed_text,
                                            is_conversation, scope_of, session, units, windows)
from automemo.toolkit.memolib.vectors import ScopedIndex, allowed_rows, as_matrix, cosine_top_k, faiss_matrix, faiss_search, top_indices

__all__ = [
    "BM25Index", "DenseIndex", "GrowingArray",
    "expand", "mmr", "neighbours",
    "in_scope", "in_time", "parse_time", "recency", "recency_rerank",
    "RRF_K", "rrf", "weighted",
    "MAX_EVIDENCE", "budget_of", "chronological", "citations", "fit_sections", "make_payload",
    "CROSS_FIT_FOLDS", "conversation_folds", "held_out",
    "QuestionRouter", "UnheldQuestion", "held_out_recall", "router_features",
    "UnitStore",
    "STOPWORDS", "action_type", "clip", "dedupe", "generalise", "host_of", "overlap", "query_text", "task_images",
    "tokens",
    "Unit", "episode_evidence", "episode_units", "image_units", "indexed_text", "is_conversation", "scope_of", "session", "units", "windows",
    "ScopedIndex", "allowed_rows", "as_matrix", "cosine_top_k", "faiss_matrix", "faiss_search", "top_indices",
    "TokenIndex", "maxsim",
    "PhraseIndex", "query_phrases",
    "DateIndex", "DateSpan", "date_mentions", "is_time_question",
    "SessionIndex", "hierarchical",
    "PASSAGE_KINDS", "PassageIndex", "best_turns", "spans", "SessionSummarizer", "sentences",
    "expanded_search", "feedback_terms",
    "named_speakers", "speaker_ranking",
    "coverage", "is_count_question", "session_diversity", "is_state_question", "latest_state", "is_list_question", "session_expand",
    "BlendRanker", "LinearRanker", "RankingSignals", "TreeRanker", "question_cues", "ranker_from_params",
]
