"""A learned question router: predicts a question's type from its text alone.

`retrieve` never sees a question's category (only what an application has at question time), so
type-aware behaviour is learned: `QuestionRouter.fit` runs on the host at search time over the
train split's questions and their labels, and the fitted router is plain data (`params()`: labels,
log priors, per-feature log weights) written into the program's source, where
`QuestionRouter.from_params(...)` rebuilds it inside the sandbox. Deployment needs the question only.

The model is a multinomial naive Bayes over the question's words, word pairs and its opening words
(`^when`, `^how many`: the strongest cue of a question's type), keeping the `max_features`
features that say most about the label so the baked-in parameters stay a few kilobytes.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

_WORD = re.compile(r"[a-z0-9]+")


def router_features(question: str) -> list[str]:
    """The distinct features of a question: its words (stop words kept: "when" and "how" carry
    the type), adjacent word pairs, and its first one and two words marked with `^`."""
    words = _WORD.findall((question or "").lower())
    feats = list(words) + [f"{a} {b}" for a, b in zip(words, words[1:])]
    if words:
        feats.append("^" + words[0])
    if len(words) > 1:
        feats.append(f"^{words[0]} {words[1]}")
    return list(dict.fromkeys(feats))


@dataclass(frozen=True)
class QuestionRouter:
    """Predicts one of `labels` for a question; `prior[i]` and `weights[f][i]` are log terms."""

    labels: tuple[str, ...]
    prior: tuple[float, ...]
    weights: Mapping[str, tuple[float, ...]]

    @classmethod
    def fit(cls, questions: Sequence[str], labels: Sequence[str], *, max_features: int = 300,
            alpha: float = 0.5) -> QuestionRouter:
        """Fit on labelled questions (the train split's, on the host). Raises ValueError when the
        two lists differ in length or hold no question."""
        if len(questions) != len(labels):
            raise ValueError(f"QuestionRouter.fit: {len(questions)} questions but {len(labels)} labels")
        if not questions:
            raise ValueError("QuestionRouter.fit: no labelled question to fit on")
        names = tuple(sorted({str(label) for label in labels}))
        index = {name: i for i, name in enumerate(names)}
        per_label = [Counter() for _ in names]
        docs = Counter(str(label) for label in labels)
        for question, label in zip(questions, labels):
            per_label[index[str(label)]].update(router_features(question))
        total = sum(docs.values())
        chosen = _informative(per_label, [docs[n] for n in names], total, max_features)
        mass = [sum(c[f] for f in chosen) + alpha * len(chosen) for c in per_label]
        weights = {f: tuple(round(math.log((c[f] + alpha) / m), 3) for c, m in zip(per_label, mass))
                   for f in chosen}
        prior = tuple(round(math.log(docs[n] / total), 3) for n in names)
        return cls(names, prior, weights)

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> QuestionRouter:
        """The router `params()` describes (as written into a program's source)."""
        return cls(tuple(params["labels"]), tuple(params["prior"]),
                   {str(f): tuple(w) for f, w in params["weights"].items()})

    def params(self) -> dict[str, Any]:
        """Plain JSON-able data (lists, floats, strings) that `from_params` reads back."""
        return {"labels": list(self.labels), "prior": list(self.prior),
                "weights": {f: list(w) for f, w in sorted(self.weights.items())}}

    def scores(self, question: str) -> dict[str, float]:
        """Each label's log score for `question` (higher is likelier)."""
        total = list(self.prior)
        for feature in router_features(question):
            row = self.weights.get(feature)
            if row is not None:
                total = [t + w for t, w in zip(total, row)]
        return dict(zip(self.labels, total))

    def predict(self, question: str) -> str:
        """The likeliest label (ties: the first in label order)."""
        scores = self.scores(question)
        return max(self.labels, key=lambda label: scores[label])

    def accuracy(self, questions: Sequence[str], labels: Sequence[str]) -> float:
        """Share of `questions` predicted as their label (0.0 for none)."""
        hits = sum(self.predict(q) == str(label) for q, label in zip(questions, labels))
        return hits / len(questions) if questions else 0.0


def held_out_recall(questions: Sequence[str], labels: Sequence[str], folds: int = 5, **fit_args: Any) -> dict[str, float]:
    """Per label, the share of its questions a router fitted without them predicts right
    (`folds`-fold cross-validation, question i in fold i mod `folds`): how well the router will
    recognise the type on questions it has not seen, which its training accuracy overstates."""
    hits: Counter = Counter()
    seen = Counter(str(label) for label in labels)
    for fold in range(folds):
        train = [i for i in range(len(questions)) if i % folds != fold]
        test = [i for i in range(len(questions)) if i % folds == fold]
        if not test or not train:
            continue
        router = QuestionRouter.fit([questions[i] for i in train], [labels[i] for i in train], **fit_args)
        hits.update(str(labels[i]) for i in test if router.predict(questions[i]) == str(labels[i]))
    return {label: hits[label] / n for label, n in sorted(seen.items())}


def _informative(per_label: list[Counter], docs: list[int], total: int, k: int) -> list[str]:
    """The `k` features with the highest mutual information with the label (present in two or
    more questions: a feature seen once is an accident of that question)."""
    seen = Counter()
    for counts in per_label:
        seen.update(counts)
    scored = []
    for feature, n_f in seen.items():
        if n_f < 2:
            continue
        p_f = n_f / total
        mi = 0.0
        for counts, n_c in zip(per_label, docs):
            for present, n in ((True, counts[feature]), (False, n_c - counts[feature])):
                p_joint = n / total
                p_x = p_f if present else 1.0 - p_f
                if p_joint > 0 and p_x > 0:
                    mi += p_joint * math.log(p_joint / (p_x * n_c / total))
        scored.append((-mi, feature))
    return [f for _, f in sorted(scored)[:k]]
