"""A learned question router: predicts a question's type from its text alone.

`retrieve` never sees a question's category (only what an application has at question time), so
type-aware behaviour is learned: `QuestionRouter.fit` runs on the host at search time over the
train split's questions and their labels, and the fitted router is plain data (`params()`: labels,
log priors, per-feature log weights) written into the program's source, where
`QuestionRouter.from_params(...)` rebuilds it inside the sandbox. Deployment needs the question only.

Cross-fitting (`QuestionRouter.cross_fit`): the search scores a routed program on the very train
questions its router was fitted on, and a router that memorised them would route them better than
it will route anyone's new questions. So a cross-fitted router also carries, for each train
conversation (scope) and each of its questions, the type predicted by a router fitted *without
that conversation* (`held_out`: scope -> question key -> type). `predict(question, scope)` answers
a question of a train conversation from that table only, and every other question (a test
conversation's, a deployed user's) with the router fitted on all train questions: the validation
score is the score of an honestly held-out router, and the deployed program is still one router
fitted on everything, with the question's text and its conversation id as its only inputs.
Predictions rather than the held-out routers themselves are carried because they are what
validation needs and they take a few kilobytes, where each fold's router would take ~30.

No label reaches a prediction through a fallback: a question of a train conversation that its
table lacks raises `UnheldQuestion` (the router fitted on everything may have seen its label), a
train question asked without its conversation is still answered from the table it is in, and a
question without a conversation cannot be cross-fitted at all (`cross_fit` refuses it: nothing
could key it at retrieve time, so the plain router that saw its label would answer it).

The model is a multinomial naive Bayes over the question's words, word pairs and its opening words
(`^when`, `^how many`: the strongest cue of a question's type), keeping the `max_features`
features that say most about the label so the baked-in parameters stay a few kilobytes.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

from automemo.errors import DataError
from automemo.toolkit.memolib.crossfit import CROSS_FIT_FOLDS, conversation_folds

_WORD = re.compile(r"[a-z0-9]+")



class UnheldQuestion(DataError, LookupError):
    """A question of a train conversation that the router's held-out table lacks: answering it
    with the router fitted on every train question could route it by its own label. The program
    and the data disagree (its router was fitted on other question texts than retrieve reads)."""


def question_key(question: str) -> str:
    """A short stable key of a question's text, the `held_out` table's index (12 hex digits of
    its sha256: collisions among a few thousand questions are out of reach)."""
    return hashlib.sha256((question or "").encode("utf-8")).hexdigest()[:12]


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
    # Cross-fitted predictions (`cross_fit`): scope -> question key -> the type a router fitted
    # without that scope's questions predicts; empty for a router made by `fit`.
    held_out: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

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
    def cross_fit(cls, questions: Sequence[str], labels: Sequence[str], scopes: Sequence[str], *,
                  folds: int = CROSS_FIT_FOLDS, **fit_args: Any) -> QuestionRouter:
        """The router fitted on all questions, with the `held_out` predictions for each
        question of a scope (conversation) made by a router fitted without that scope's fold.
        Raises ValueError when a question has no scope ("": it could not be held out, and the
        plain router, which saw its label, would answer it) or fewer than two scopes hold
        questions (no conversation could be held out while others remain to fit on)."""
        if len(scopes) != len(questions):
            raise ValueError(f"QuestionRouter.cross_fit: {len(questions)} questions but {len(scopes)} scopes")
        unscoped = sum(1 for s in scopes if not str(s))
        if unscoped:
            raise ValueError(f"QuestionRouter.cross_fit: {unscoped} of {len(questions)} questions have no "
                             "conversation to hold them out by; routing needs every train question's conversation")
        full = cls.fit(questions, labels, **fit_args)
        try:
            fold_of = conversation_folds(scopes, folds)
        except ValueError as exc:
            raise ValueError(f"QuestionRouter.cross_fit: {exc}") from None
        k = max(fold_of.values()) + 1
        held: dict[str, dict[str, str]] = {}
        for fold in range(k):
            inside = [i for i, s in enumerate(scopes) if fold_of.get(str(s)) != fold]
            router = cls.fit([questions[i] for i in inside], [labels[i] for i in inside], **fit_args)
            for i, scope in enumerate(scopes):
                if fold_of.get(str(scope)) == fold:
                    held.setdefault(str(scope), {})[question_key(questions[i])] = router.predict(questions[i])
        return replace(full, held_out={s: dict(sorted(held[s].items())) for s in sorted(held)})

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> QuestionRouter:
        """The router `params()` describes (as written into a program's source)."""
        held = params.get("held_out") or {}
        return cls(tuple(params["labels"]), tuple(params["prior"]),
                   {str(f): tuple(w) for f, w in params["weights"].items()},
                   {str(s): {str(q): str(t) for q, t in table.items()} for s, table in held.items()})

    def params(self) -> dict[str, Any]:
        """Plain JSON-able data (lists, floats, strings) that `from_params` reads back."""
        out: dict[str, Any] = {"labels": list(self.labels), "prior": list(self.prior),
                               "weights": {f: list(w) for f, w in sorted(self.weights.items())}}
        if self.held_out:
            out["held_out"] = {s: dict(t) for s, t in self.held_out.items()}
        return out

    def scores(self, question: str) -> dict[str, float]:
        """Each label's log score for `question` (higher is likelier)."""
        total = list(self.prior)
        for feature in router_features(question):
            row = self.weights.get(feature)
            if row is not None:
                total = [t + w for t, w in zip(total, row)]
        return dict(zip(self.labels, total))

    def predict(self, question: str, scope: str = "") -> str:
        """The likeliest label (ties: the first in label order). A question of a train
        conversation (`scope` in `held_out`) gets its cross-fitted prediction, and raises
        `UnheldQuestion` when the table lacks it; a train question asked without its
        conversation gets the held-out prediction of the table that holds it; every other
        question the prediction of the router fitted on all train questions."""
        key = question_key(question)
        if scope and scope in self.held_out:
            label = self.held_out[scope].get(key)
            if label is None:
                raise UnheldQuestion(
                    f"question {key} of train conversation {scope!r} has no held-out prediction: the "
                    "router was cross-fitted on other question texts than retrieve reads (refit it on "
                    "the texts the retrieve tasks carry)")
            return label
        if not scope:
            for table in self.held_out.values():
                if key in table:
                    return table[key]
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
