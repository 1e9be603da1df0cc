"""Query-side entity and quoted-phrase matching: the names and quoted phrases a question
contains, looked up as whole phrases in the units, as one more ranking to fuse.

A bag-of-words index splits "Lisa Park" into two common words and a quoted title into its
words; a question that names someone or quotes something wants the units holding exactly that
phrase. Hybrid pipelines on LoCoMo-style conversational memory add such an entity-match channel
next to BM25 and dense search (e.g. the entity lists of Zep / Graphiti's search, arXiv:2501.13956,
and the named-entity boost in HippoRAG's query-to-node matching, arXiv:2405.14831); here the
entities are read from the question's surface form alone: capitalised word runs that are not a
sentence's first word, and quoted phrases.
"""

from __future__ import annotations

import math
import re
from typing import Collection, Sequence

from automemo.toolkit.memolib.text import STOPWORDS

_QUOTED = re.compile(r"\"([^\"]{2,80})\"|“([^”]{2,80})”|(?<![A-Za-z])'([^']{2,80})'(?![A-Za-z])")
_CAPITALISED_RUN = re.compile(r"\b[A-Z][a-zA-Z0-9&'-]*(?:\s+(?:of\s+|the\s+|de\s+)?[A-Z][a-zA-Z0-9&'-]*)*")
# Capitalised words that name no entity: calendar words (temporal anchoring reads those) and
# pronouns.
_NOT_NAMES = frozenset(
    "i i'm i've january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)


def query_phrases(question: str) -> list[str]:
    """The quoted phrases and capitalised names of `question`, lower-cased, longest first. A
    capitalised word that opens a sentence counts only as part of a longer run ("New York").
    Only the question itself is read, up to its first question mark: what follows is how to
    answer ("Please answer using an Arabic numeral (e.g., "2" instead of "Two")"), not what."""
    question = (question or "").split("?", 1)[0]
    phrases = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(question)]
    for match in _CAPITALISED_RUN.finditer(question):
        # An all-caps word with a hyphen is a format placeholder ("YYYY-MM-DD"), not a name.
        words = [w for w in match.group(0).split() if not (w.isupper() and "-" in w)]
        before = question[: match.start()].rstrip()
        opens_sentence = not before or before[-1] in ".?!:\"'“"
        if opens_sentence:
            words = words[1:]
        while words and words[0].lower() in STOPWORDS | _NOT_NAMES:
            words = words[1:]
        if words and not (len(words) == 1 and words[0].lower() in _NOT_NAMES | STOPWORDS):
            phrases.append(" ".join(words))
    out = []
    for p in sorted({" ".join(p.lower().split()) for p in phrases if p.strip()}, key=lambda p: (-len(p), p)):
        if any(c.isalpha() for c in p):
            out.append(p)
    return out


def _pattern(phrase: str) -> re.Pattern[str]:
    return re.compile(r"(?<![a-z0-9])" + r"\s+".join(map(re.escape, phrase.split())) + r"(?![a-z0-9])")


class PhraseIndex:
    """Unit texts (lower-cased), searched by a question's phrases. A row scores the sum, over
    the question's phrases it contains, of the phrase's word count times its inverse document
    frequency among the rows searched: a full name outranks a first name, a rare name a common
    one. Rows are numbered in insertion order like the other indexes."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    @property
    def size(self) -> int:
        return len(self.texts)

    def add_many(self, texts: Sequence[str]) -> list[int]:
        start = len(self.texts)
        self.texts += [" ".join((t or "").lower().split()) for t in texts]
        return list(range(start, len(self.texts)))

    def add(self, text: str) -> int:
        return self.add_many([text])[0]

    def search(self, question: str, k: int, allowed: Collection[int] | None = None,
               prior: Sequence[int | tuple[int, float]] = (), max_share: float = 0.2) -> list[tuple[int, float]]:
        """Rows holding the question's phrases, best first; ties in the order of `prior` (a first
        stage's ranking), then by row. A phrase found in more than `max_share` of the rows
        searched is left out: the user's own name, said every few rounds, tells no round apart.
        Empty when the question names nothing that narrows the rows."""
        phrases = query_phrases(question)
        if not phrases:
            return []
        rows = sorted(allowed) if allowed is not None else range(len(self.texts))
        rows = [r for r in rows if 0 <= r < len(self.texts)]
        found = {p: [r for r in rows if _pattern(p).search(self.texts[r])] for p in phrases}
        scores: dict[int, float] = {}
        for phrase, hits in found.items():
            if not hits or len(hits) > max_share * len(rows):
                continue
            weight = len(phrase.split()) * math.log(1.0 + len(rows) / len(hits))
            for r in hits:
                scores[r] = scores.get(r, 0.0) + weight
        place = {(p[0] if isinstance(p, tuple) else p): i for i, p in enumerate(prior)}
        ranked = sorted(scores.items(), key=lambda rs: (-rs[1], place.get(rs[0], len(place)), rs[0]))
        return [(r, float(s)) for r, s in ranked[:k]]
