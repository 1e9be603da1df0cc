"""Extractive session summaries without a model: a session's most salient sentences and terms,
weighted by tf-idf within its conversation.

A question about a session's topic ("the exhibition Maya planned") shares few words with any one
round and many with the session as a whole, but a whole session is a long, diluted document (and
MiniLM reads only its first 256 word pieces). A summary keeps what sets the session apart from the
rest of the conversation: the sentences whose words weigh most in the session's tf-idf centroid
(MEAD's centroid score, Radev et al. 2004; Luhn's significance, 1958), redundant ones skipped,
followed by the session's heaviest terms. Session-level memories that summarise with an LLM
(SeCom's segments, Pan et al. 2025; LongMemEval's session summaries as keys, Wu et al. 2025)
index such a summary per session; this is the no-LLM form of that key.

Online: a session's summary is written when it arrives, with the document frequencies of the
sessions of its conversation (scope) seen so far, itself included; an early session's summary has
seen less of the conversation than a late one's (the first session's idf is flat, so its summary
follows term frequency alone). Nothing is recomputed later: an index holds each summary once.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Sequence

from automemo.toolkit.memolib.text import tokens

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_SPEAKER = re.compile(r"^\s*[A-Za-z][\w .'-]{0,30}:\s+")

MIN_TERMS = 3
"""A sentence needs this many distinct terms to be a summary sentence (not "Sure!" or "Wow.")."""

REDUNDANT = 0.5
"""A sentence sharing more than this share of its terms with the chosen ones is skipped."""


def sentences(text: str) -> list[str]:
    """The sentences of `text`, cut after a full stop, question or exclamation mark followed by a
    space and at line breaks, each line's leading speaker tag ("user: ", "Maya: ") removed."""
    out = []
    for line in text.splitlines():
        out += [s.strip() for s in _SENTENCE_END.split(_SPEAKER.sub("", line)) if s.strip()]
    return out


class SessionSummarizer:
    """Writes each session's extractive summary, keeping per conversation (scope) how many of its
    sessions hold each term."""

    def __init__(self, sentences: int = 3, terms: int = 8) -> None:
        self.sentences = sentences
        self.terms = terms
        self._frequency: dict[str, Counter[str]] = {}   # scope -> term -> sessions holding it
        self._sessions: Counter[str] = Counter()         # scope -> sessions seen

    def weights(self, counts: Counter[str], scope: str) -> dict[str, float]:
        """tf-idf of a session's term `counts` against its conversation's sessions so far."""
        seen, frequency = self._sessions[scope], self._frequency.get(scope, Counter())
        return {t: n * math.log(1.0 + seen / max(1, frequency[t])) for t, n in counts.items()}

    def add(self, texts: Sequence[str], scope: str = "") -> str:
        """Count one session (its turns' `texts`) into its conversation, and return its summary:
        the `sentences` most salient sentences in the order they were said, then a line of its
        `terms` heaviest terms."""
        said = [s for text in texts for s in sentences(text)]
        counts = Counter(t for s in said for t in tokens(s))
        self._sessions[scope] += 1
        self._frequency.setdefault(scope, Counter()).update(counts.keys())
        weight = self.weights(counts, scope)
        picked = _salient(said, weight, self.sentences)
        heavy = sorted(weight, key=lambda t: (-weight[t], t))[:self.terms]
        return "\n".join([*(said[i] for i in sorted(picked)), " ".join(heavy)]).strip()


def _salient(said: Sequence[str], weight: dict[str, float], count: int) -> list[int]:
    """Indices of the `count` sentences of largest centroid score (their distinct terms' weights
    over the square root of how many there are: long sentences are not salient for being long),
    skipping sentences mostly made of terms already chosen."""
    scored = []
    for i, sentence in enumerate(said):
        terms = set(tokens(sentence))
        if len(terms) >= MIN_TERMS:
            scored.append((-sum(weight.get(t, 0.0) for t in terms) / math.sqrt(len(terms)), i, terms))
    picked: list[int] = []
    covered: set[str] = set()
    for _, i, terms in sorted(scored, key=lambda x: (x[0], x[1])):
        if len(picked) >= count:
            break
        if len(terms & covered) > REDUNDANT * len(terms):
            continue
        picked.append(i)
        covered |= terms
    return picked
