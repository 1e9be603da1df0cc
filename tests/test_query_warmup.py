"""The questions of a split are embedded once, in one batched call, before the first program's
retrieve calls: later programs and later evaluations of the split ask the encoder nothing more."""

from __future__ import annotations

import numpy as np

from automemo.contract import PartialRecorder
from automemo.evaluation import Evaluator
from automemo.evaluation.query_warmup import DENSE_QUERY_CHARS, question_texts, warm_question_embeddings
from automemo.sandbox import get_sandbox
from automemo.toolkit.memolib import query_text
from automemo.toolkit.services import MemoServices
from tests.test_evaluation import N_RETRIEVE, FactsBenchmark, config, facts_program, store  # noqa: F401 - fixture


class RecordingText:
    name, dim = "recording", 4

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.fail = fail

    def embed(self, texts, *, node=None):
        self.calls.append(list(texts))
        if self.fail:
            raise RuntimeError("encoder down")
        return np.ones((len(texts), self.dim), dtype=np.float32)


class RecordingTokenText(RecordingText):
    has_tokens = True

    def __init__(self) -> None:
        super().__init__()
        self.token_calls: list[list[str]] = []

        self.expected: list[list[str]] = []

    def expect_tokens(self, texts):
        self.expected.append(list(texts))


class RecordingEncoders:
    def __init__(self, text: RecordingText) -> None:
        self.text = text

    def dims(self):
        return {"text": self.text.dim, "image": 2}


def partial(task_id: str, instruction: str, observation: str = "") -> PartialRecorder:
    return PartialRecorder(task_id=task_id, benchmark="b", instruction=instruction, initial_observation=observation)


def test_question_texts_are_what_programs_embed_each_once():
    long = partial("q1", "where did I park? " + "x" * 2000)
    short = partial("q2", "what did Ann bake?")
    texts = question_texts([long, short, partial("q3", "what did Ann bake?")])
    assert texts == [query_text(long), query_text(long)[:DENSE_QUERY_CHARS], query_text(short)]


def test_a_failing_encoder_is_left_to_the_program():
    text = RecordingText(fail=True)
    assert warm_question_embeddings(RecordingEncoders(text), [partial("q", "a question")]) == 0
    assert text.calls == [["a question"]]
    assert warm_question_embeddings(object(), [partial("q", "a question")]) == 0  # no text encoder


def test_the_evaluator_embeds_a_splits_questions_once_in_one_call(store):
    text = RecordingText()
    evaluator = Evaluator(FactsBenchmark(), get_sandbox("unsafe"), store, config=config(),
                          services_factory=lambda node: MemoServices(RecordingEncoders(text), None, store.root, node=node))
    first = evaluator.evaluate(facts_program(), node_id=1)
    evaluator.evaluate(facts_program(), node_id=2)
    evaluator.evaluate(facts_program(), split="test", node_id=3)

    assert first.mean == 1.0
    # one batch per split, holding every question; the second program of a split adds none
    assert [len(call) for call in text.calls] == [N_RETRIEVE, N_RETRIEVE]
    assert text.calls[0] == [f"what is key{i}?" for i in range(N_RETRIEVE)]


def test_token_matrices_are_announced_when_the_encoder_has_them():
    text = RecordingTokenText()
    questions = [partial("q1", "what did Ann bake?"), partial("q2", "where is Rex?")]
    assert warm_question_embeddings(RecordingEncoders(text), questions) == 2
    assert text.calls == text.expected == [["what did Ann bake?", "where is Rex?"]]
    plain = RecordingText()  # pooled vectors only: no token call is made
    assert warm_question_embeddings(RecordingEncoders(plain), questions) == 2
    assert plain.calls == [["what did Ann bake?", "where is Rex?"]]
