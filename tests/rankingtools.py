"""A planted-label fixture for the fitted ranking stage: in conversation "leaky" the relevant
round of every session is its last, in "c2" and "c3" its middle one, and every round of a
session says the same words, so only where a round sits tells it apart. "leaky" has most of the
questions: weights fitted on all of them learn "the last round" and rank every "leaky" question
right (a leak scores 1.0); weights fitted without "leaky" learn the middle and rank none right.
Embeddings are word hashes, so the fixture needs no model."""

from __future__ import annotations

import hashlib

import numpy as np

from automemo.contract import EpisodeRecorder, PartialRecorder, Step
from automemo.meta.offline.ranking import RankingQuestion
from automemo.toolkit import memolib

DIM = 16
ROUNDS = 5


def embed(texts):
    out = []
    for text in texts:
        v = np.zeros(DIM)
        for word in memolib.tokens(text):
            v[int(hashlib.md5(word.encode()).hexdigest(), 16) % DIM] += 1
        out.append(list(v / (np.linalg.norm(v) or 1.0)))
    return out


class HashToolkit:
    """What a recipe's program asks of its toolkit, with hashed-word embeddings."""

    vector_index = None

    def embedding_dims(self):
        return {"text": DIM}

    def embed_text(self, texts):
        return embed(texts)

    def embed_tokens(self, texts):
        raise AssertionError("the fixture's ranker was fitted without late interaction")


def session(user: str, k: int, topic: str | None = None) -> EpisodeRecorder:
    """Session `k` of `user`: ROUNDS rounds that all say the same words, about `topic`
    (default: a word made of the user and k)."""
    text = f"we talked about the {topic or f'topic{user}{k}'} garden"
    steps = tuple(Step(index=i, observation=text, ref=f"{user}/D{k}:{i + 1}") for i in range(ROUNDS))
    return EpisodeRecorder(task_id=f"{user}-D{k}", benchmark="conv", instruction="session", steps=steps,
                           reward=1.0, success=True, metadata={"conversation": True, "user": user})


def planted(users=(("leaky", 12, ROUNDS), ("c2", 2, 3), ("c3", 2, 3))):
    """(episodes, questions): per (user, sessions, relevant round) one question per session."""
    episodes, questions = [], []
    for user, n, target in users:
        for k in range(n):
            episodes.append(session(user, k))
            text = f"What about the topic{user}{k} garden?"
            questions.append(RankingQuestion(text, text, user, frozenset({f"{user}/D{k}:{target}"})))
    return episodes, questions


def ask(question: RankingQuestion) -> PartialRecorder:
    return PartialRecorder(task_id="q", benchmark="conv", instruction=question.question,
                           metadata={"user": question.scope, "conversation": True})
