"""The cost figures every evaluation records (automemo.evaluation.cost; docs/cost.md), through a
real sandbox: what a program asks the host to encode is charged cold at a fixed rate here (the
rate a real run measures once per encoder), so the host part of each figure is exact; the
guest's CPU is what its runner reports."""

from __future__ import annotations

import numpy as np
import pytest

from automemo.benchmarks.base import Benchmark, Split, Task, TaskScore
from automemo.contract import PartialRecorder
from automemo.episode_store import EpisodeStore
from automemo.evaluation import EvaluationConfig, Evaluator
from automemo.evaluation.cost import ProgramCost, percentile
from automemo.sandbox import get_sandbox
from automemo.toolkit.embedding import CachedImageEncoder, CachedTextEncoder, EmbeddingCache, Encoders
from automemo.toolkit.encode_cost import ColdEncodeMeter, EncodeRate, EncodeRates, estimated_pieces
from automemo.toolkit.image_encoders import PerceptualImageEncoder
from automemo.toolkit.services import MemoServices

MS_PER_PIECE = 0.5
FACTS = 6


class Facts(Benchmark):
    name = "facts"
    family = "conversation"

    def describe(self):
        return {"name": self.name}

    def split(self, name):
        update = tuple(Task(f"u{i}", self.name, "fact", f"remember: key{i} is value{i} " + "filler " * i)
                       for i in range(FACTS))
        retrieve = tuple(Task(f"r{i}", self.name, "q", f"what is key{i}?", {"answer": f"value{i}"})
                         for i in range(FACTS))
        return Split(name, update, retrieve)

    def partial(self, task, store):
        return PartialRecorder(task_id=task.task_id, benchmark=self.name, instruction=task.instruction)

    def run_episode(self, task, agent, payload, store):
        from automemo.contract import EpisodeRecorder

        return EpisodeRecorder(task_id=task.task_id, benchmark=self.name, instruction=task.instruction)

    def score(self, task, episode, payload):
        return TaskScore(1.0 if task.data.get("answer", "") in (payload.text if payload else "") else 0.0)


class HashText:
    """A text encoder with no model: a vector from the text's hash."""

    name, dim = "test-hash", 8

    def encode(self, texts, *, node=None):
        return np.stack([np.random.default_rng(abs(hash(t)) % 2**32).random(self.dim) for t in texts]).astype(np.float32)


DENSE = """
from automemo.contract import MemoProgram
from automemo.toolkit import memolib

class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.dense = memolib.DenseIndex(toolkit.embed_text, toolkit.embedding_dims()["text"])
        self.store = memolib.UnitStore()

    def update(self, episode):
        units = memolib.episode_units(episode)
        self.dense.add_many([u.text for u in units])
        self.store.add_episode(units)

    def retrieve(self, task):
        hits = self.dense.search(task.instruction, 3)
        return memolib.make_payload(["\\n".join(self.store.units[r].text for r, _ in hits)], budget=memolib.budget_of(task))
"""

LEXICAL = """
from automemo.contract import MemoProgram
from automemo.toolkit import memolib

class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.lexical = memolib.BM25Index()
        self.store = memolib.UnitStore()

    def update(self, episode):
        units = memolib.episode_units(episode)
        self.lexical.add_many([u.text for u in units])
        self.store.add_episode(units)

    def retrieve(self, task):
        hits = self.lexical.search(task.instruction, 3)
        return memolib.make_payload(["\\n".join(self.store.units[r].text for r, _ in hits)], budget=memolib.budget_of(task))
"""

HOARDER = """
from automemo.contract import MemoProgram, MemoryPayload

class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.kept = []

    def update(self, episode):
        self.kept.append("x" * 50_000)
        total = 0
        for i in range(200_000):  # some work of its own, in the guest
            total += i * i
        self.total = total

    def retrieve(self, task):
        return MemoryPayload()
"""


@pytest.fixture
def store(tmp_path):
    return EpisodeStore(tmp_path / "store")


@pytest.fixture
def encoders():
    cache = EmbeddingCache(None)
    return Encoders(CachedTextEncoder(HashText(), cache, shipped=None), CachedImageEncoder(PerceptualImageEncoder(), cache))


@pytest.fixture
def rates():
    return EncodeRates(measure_text=lambda e: EncodeRate(e.name, MS_PER_PIECE, "estimated word piece"))


def evaluator(store, encoders, rates, backend: str = "unsafe") -> Evaluator:
    factory = lambda node=None: MemoServices(encoders, None, store.root, node=node,  # noqa: E731
                                             meter=ColdEncodeMeter(encoders, rates))
    return Evaluator(Facts(), get_sandbox(backend), store, services_factory=factory,
                     config=EvaluationConfig(concurrency=1, quiet=True))


def cost(result) -> ProgramCost:
    figures = ProgramCost.from_dict(result.cost)
    assert figures is not None, result.cost
    return figures


def test_every_figure_is_recorded_and_embedding_every_turn_costs_more_than_bm25(store, encoders, rates):
    ev = evaluator(store, encoders, rates)
    dense, lexical = cost(ev.evaluate(DENSE)), cost(ev.evaluate(LEXICAL))
    for c in (dense, lexical):
        assert c.turns == FACTS and c.recalls == FACTS and c.unreported_calls == 0
        assert c.recall_p95_ms >= 0 and c.index_bytes_per_1k_turns > 0
    assert lexical.ingest_host_ms == 0 and lexical.recall_host_ms == 0
    assert dense.ingest_host_ms > 0 and dense.recall_host_ms > 0
    assert dense.ingest_cpu_ms_per_turn > lexical.ingest_cpu_ms_per_turn
    assert dense.recall_cpu_ms > lexical.recall_cpu_ms


def test_encoding_is_charged_cold_each_distinct_text_once_and_a_warm_cache_is_charged_again(store, encoders, rates):
    """The six turns are fewer than memolib's batch (EMBED_BATCH): they are embedded when the
    evaluation flushes the updates, and charged to remembering, not to the first recall."""
    ev = evaluator(store, encoders, rates)
    turns = [t.instruction for t in Facts().split("train").update]
    questions = [t.instruction for t in Facts().split("train").retrieve]
    first, second = cost(ev.evaluate(DENSE)), cost(ev.evaluate(DENSE))  # the second finds every vector cached
    for c in (first, second):
        assert c.ingest_host_ms == pytest.approx(MS_PER_PIECE * sum(estimated_pieces(t) for t in turns))
        assert c.recall_host_ms == pytest.approx(MS_PER_PIECE * sum(estimated_pieces(q) for q in questions))


def test_the_guest_cpu_and_the_state_it_holds_are_measured(store, encoders, rates):
    ev = evaluator(store, encoders, rates)
    hoarder, lexical = cost(ev.evaluate(HOARDER)), cost(ev.evaluate(LEXICAL))
    assert hoarder.ingest_guest_ms > 0 and hoarder.ingest_host_ms == 0 and hoarder.unreported_calls == 0
    assert hoarder.index_bytes >= FACTS * 50_000 > lexical.index_bytes


def test_an_isolating_backend_reports_the_guest_cpu_too(store, encoders, rates):
    """The runner inside bubblewrap reports each call's CPU as the unsafe one does (Docker runs
    the same runner)."""
    from automemo.sandbox.base import SandboxUnavailable

    try:
        ev = evaluator(store, encoders, rates, "bwrap")
    except SandboxUnavailable as exc:
        pytest.skip(f"bubblewrap is not usable here: {exc}")
    hoarder = cost(ev.evaluate(HOARDER))
    assert hoarder.ingest_guest_ms > 0 and hoarder.unreported_calls == 0 and hoarder.index_bytes >= FACTS * 50_000


def test_the_figures_reach_the_evaluation_json(store, encoders, rates, tmp_path):
    from automemo.evaluation.evidence import read_evidence

    ev = evaluator(store, encoders, rates)
    ev.evaluate(DENSE, evidence_dir=tmp_path / "evidence")
    assert ProgramCost.from_dict(read_evidence(tmp_path / "evidence").result.cost).turns == FACTS


def test_percentile_is_the_nearest_rank():
    assert percentile([], 0.95) == 0.0
    assert percentile(range(1, 101), 0.95) == 95
    assert percentile([3.0, 1.0, 2.0], 0.95) == 3.0


def test_a_run_keeps_its_cold_rates_for_a_resume(tmp_path, encoders):
    """The rates are written where a run keeps them and read back by a later process (a resumed
    search), which then charges at them instead of measuring again; each evaluation says the
    rate it was charged at."""
    measured = []

    def measure(encoder):
        measured.append(encoder.name)
        return EncodeRate(encoder.name, 0.25 * len(measured), "estimated word piece", 10, 2.5)

    first = EncodeRates(measure_text=measure)
    first.keep_in(tmp_path / "encode_rates.json")
    meter = ColdEncodeMeter(encoders, first)
    meter.texts(["a turn"])
    assert meter.rates_used == {"test-hash": 0.25}
    resumed = EncodeRates(measure_text=measure)
    resumed.keep_in(tmp_path / "encode_rates.json")
    again = ColdEncodeMeter(encoders, resumed)
    assert again.texts(["a turn"]) == pytest.approx(0.25 * estimated_pieces("a turn"))
    assert measured == ["test-hash"]  # measured once, by the first process


def test_the_evaluation_records_the_rate_it_charged(store, encoders, rates):
    assert cost(evaluator(store, encoders, rates).evaluate(DENSE)).rates == {"test-hash": MS_PER_PIECE}
    assert cost(evaluator(store, encoders, rates).evaluate(LEXICAL)).rates == {}
