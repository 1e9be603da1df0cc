"""Whose failure a task's is (issue: scores you can trust). The agent failing on what the
program returned scores 0 with its reason; a transport failure is retried, then excluded; a
scorer that raises fails its task, not the evaluation; too many exclusions fail the evaluation;
a host toolkit service failing, a run cap reached or a dead sandbox engine is never the
program's (whatever the program made of it: a crash or a quiet fallback)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from automemo.episode_store import EpisodeStore
from automemo.evaluation import Evaluator
from automemo.exam import quick_exam
from automemo.failures import FailureKind, HostServiceFailed, InfrastructureFailure, TooManyExcluded
from automemo.llm import BudgetExceeded, ContextLengthError, LLMError
from automemo.sandbox import get_sandbox
from automemo.sandbox.base import Sandbox, SandboxUnavailable
from automemo.toolkit.services import MemoServices
from test_evaluation import FactsBenchmark, config, facts_program


class FailingBenchmark(FactsBenchmark):
    """Raises `errors[task_id]` from `run_episode` (every attempt) and breaks its scorer on
    the tasks in `bad_scores`."""

    def __init__(self, errors=None, bad_scores=()):
        super().__init__()
        self.errors, self.bad_scores = dict(errors or {}), set(bad_scores)

    def run_episode(self, task, agent, payload, store):
        if task.task_id in self.errors:
            with self.lock:
                self.runs[task.task_id] += 1
            raise self.errors[task.task_id]
        return super().run_episode(task, agent, payload, store)

    def score(self, task, episode, payload):
        if task.task_id in self.bad_scores:
            raise KeyError("the scorer has no gold for " + task.task_id)
        return super().score(task, episode, payload)


def _evaluate(bench, tmp_path, program=None, services=None, **overrides):
    evaluator = Evaluator(bench, get_sandbox("unsafe"), EpisodeStore(tmp_path / "store"),
                          services_factory=(lambda node: services) if services else None,
                          config=config(**overrides))
    try:
        return evaluator.evaluate(program or facts_program(), split="test", evidence_dir=tmp_path / "ev")
    finally:
        evaluator.close()


def by_id(result):
    return {t.task_id: t for t in result.tasks}


def test_the_agent_failing_on_the_payload_scores_zero_and_transport_failures_are_excluded(tmp_path):
    overflow = ContextLengthError("the prompt does not fit the model's context", role="agent", status="http 400")
    image = LLMError("the server refused the image: invalid image", role="agent", status="http 400")
    transport = LLMError("503 after 3 attempts", role="agent", status="http 503", attempts=3)
    bench = FailingBenchmark({"test-r0": overflow, "test-r1": image, "test-r2": transport}, bad_scores={"test-r3"})
    result = _evaluate(bench, tmp_path, max_excluded_share=0.5)
    tasks = by_id(result)
    for task_id, reason in (("test-r0", "does not fit"), ("test-r1", "invalid image")):
        t = tasks[task_id]
        assert t.failure is FailureKind.AGENT and not t.excluded and t.counted and t.score == 0.0
        assert reason in t.error
    assert bench.runs["test-r0"] == 1  # not retried: the same payload overflows again
    assert tasks["test-r2"].excluded and tasks["test-r2"].failure is FailureKind.INFRASTRUCTURE
    assert bench.runs["test-r2"] == 3  # the harness's own retries, then excluded
    assert tasks["test-r3"].excluded and tasks["test-r3"].failure is FailureKind.SCORER
    assert "no gold" in tasks["test-r3"].error
    assert result.n_scored == 4 and result.mean == pytest.approx(2 / 4)
    assert set(result.excluded) == {"test-r2", "test-r3"}


def test_an_evaluation_excluding_more_than_its_limit_fails_loudly(tmp_path):
    transport = LLMError("connection refused", role="agent", status="connection")
    bench = FailingBenchmark({f"test-r{i}": transport for i in range(2)})  # 2 of 6: 33% > 20%
    with pytest.raises(TooManyExcluded, match=r"excluded 2 of 6 tasks \(33%, the limit is 20%\)"):
        _evaluate(bench, tmp_path, infra_retries=0)
    assert (tmp_path / "ev" / "summary.json").is_file()  # the evidence of what failed is kept


class _Encoders:
    """An embedding service that is down."""

    class text:  # noqa: N801 - stands for Encoders.text
        @staticmethod
        def embed(texts, node=None):
            raise ConnectionError("the embedding server does not answer")

    def dims(self):
        return {"text": 4, "image": 4}


class _CappedLLM:
    def configured(self, role):
        return True

    def chat(self, *args, **kwargs):
        raise BudgetExceeded("run cap of $1.00 reached")


# Calls the host in `retrieve` (or `update`) and falls back quietly when it fails: what a
# well-behaved program does, and what must not turn a host failure into the program's score.
FALLBACK_PROGRAM = '''
from automemo.contract import MemoProgram, MemoryPayload

class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.facts = {}

    def update(self, episode):
        key, value = episode.instruction.split(": ", 1)[1].split(" is ")
        if CALL_IN == "update":
            self._host(key)
        self.facts[key] = value

    def _host(self, key):
        try:
            return self.toolkit.llm("hi") if USE_LLM else self.toolkit.embed_text([key])
        except Exception:
            return None  # a deterministic fallback

    def retrieve(self, task):
        key = task.instruction.split()[2].rstrip("?")
        if CALL_IN == "retrieve" and key == "key1":
            self._host(key)
        return MemoryPayload(text=self.facts.get(key, ""))
'''


def _fallback(call_in: str, use_llm: bool = False) -> str:
    return f"CALL_IN = {call_in!r}\nUSE_LLM = {use_llm}\n" + FALLBACK_PROGRAM


def test_a_host_service_failure_is_never_the_programs(tmp_path):
    services = MemoServices(_Encoders(), None, tmp_path / "store")
    result = _evaluate(FactsBenchmark(), tmp_path / "r", _fallback("retrieve"), services, max_excluded_share=0.5)
    task = by_id(result)["test-r1"]
    assert task.excluded and task.failure is FailureKind.INFRASTRUCTURE
    assert "embedding server does not answer" in task.error
    assert result.mean == 1.0 and result.n_scored == 5
    with pytest.raises(HostServiceFailed, match="update with test-u0"):
        _evaluate(FactsBenchmark(), tmp_path / "u", _fallback("update"), services)


def test_a_cap_reached_mid_evaluation_commits_no_half_fallback_evaluation(tmp_path):
    services = MemoServices(_Encoders(), _CappedLLM(), tmp_path / "store")
    with pytest.raises(BudgetExceeded, match="retrieve of test-r1 stopped"):
        _evaluate(FactsBenchmark(), tmp_path, _fallback("retrieve", use_llm=True), services)
    assert not (tmp_path / "ev" / "summary.json").exists()


class _DeadEngine(Sandbox):
    name = "docker"

    def open(self, *args, **kwargs):
        raise SandboxUnavailable("cannot reach the Docker engine; start it, or use --sandbox bwrap")


def test_a_dead_sandbox_engine_is_no_failed_import(tmp_path):
    with pytest.raises(SandboxUnavailable) as caught:
        quick_exam(facts_program(), _DeadEngine(), [], [])
    assert isinstance(caught.value, InfrastructureFailure)
    services = MemoServices(_Encoders(), None, tmp_path)
    with pytest.raises(HostServiceFailed):  # a quiet fallback during the exam is no pass either
        bench = FactsBenchmark()
        evaluator = Evaluator(bench, get_sandbox("unsafe"), EpisodeStore(tmp_path / "s"), config=config())
        episodes, partials = evaluator.sample_for_exam(3)
        quick_exam(_fallback("update"), get_sandbox("unsafe"), episodes, partials, services=services)


def test_llm_errors_are_classified_by_type_not_by_message():
    from automemo.evaluation.player import episode_failure

    assert episode_failure(LLMError("x", role="agent", status="http 429")) == (FailureKind.INFRASTRUCTURE, True)
    assert episode_failure(LLMError("x", role="agent", status="http 401")) == (FailureKind.INFRASTRUCTURE, False)
    assert episode_failure(LLMError("x", role="judge", status="http 400")) == (FailureKind.SCORER, False)
    assert episode_failure(ContextLengthError("x", role="agent", status="http 400")) == (FailureKind.AGENT, False)
    assert episode_failure(np.linalg.LinAlgError("agent broke")) == (FailureKind.AGENT, False)


# Counts its retrieve calls and says which call served each task: memory that is not frozen.
COUNTING_PROGRAM = '''
import time
from automemo.contract import MemoProgram, MemoryPayload

class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.facts, self.calls = {}, 0

    def update(self, episode):
        key, value = episode.instruction.split(": ", 1)[1].split(" is ")
        self.facts[key] = value

    def retrieve(self, task):
        self.calls += 1
        time.sleep(0.02)
        key = task.instruction.split()[2].rstrip("?")
        return MemoryPayload(text=self.facts.get(key, "") + " call" + str(self.calls))
'''


def test_retrieves_run_in_task_order_whatever_the_thread_timing(tmp_path):
    # Thread timing differs run to run: with retrieves on pool threads, most of four runs of six
    # tasks serve some task out of order.
    for attempt in range(4):
        result = _evaluate(FactsBenchmark(), tmp_path / str(attempt), COUNTING_PROGRAM, concurrency=6)
        calls = [t.payload.text.split()[-1] for t in result.tasks]
        assert calls == [f"call{i + 1}" for i in range(len(result.tasks))]
        assert result.mean == 1.0


SLOW_RETRIEVE = '''
import time
from automemo.contract import MemoProgram, MemoryPayload

class Memo(MemoProgram):
    def update(self, episode):
        pass

    def retrieve(self, task):
        time.sleep(1.5)
        return MemoryPayload(text="late")
'''


def test_one_retrieve_time_limit_for_the_exam_the_evaluation_and_the_prompt(tmp_path):
    from automemo.meta.llm.prompts import contract_context
    from automemo.prompting import render
    from automemo.sandbox.base import Limits

    limits = Limits(retrieve_timeout_s=1.0, update_timeout_s=20.0)
    bench = FactsBenchmark()
    evaluator = Evaluator(bench, get_sandbox("unsafe"), EpisodeStore(tmp_path / "s"),
                          config=config(limits={"retrieve_timeout_s": 1.0, "update_timeout_s": 20.0},
                                        max_excluded_share=1.0, retrieve_fraction=0.34))
    episodes, partials = evaluator.sample_for_exam(1)
    report = quick_exam(SLOW_RETRIEVE, get_sandbox("unsafe"), episodes, partials, limits=limits)
    assert report.failed_check == "retrieve" and report.error.startswith("timeout")
    result = evaluator.evaluate(SLOW_RETRIEVE, split="test")
    assert {t.error.split(":")[0] for t in result.tasks} == {"timeout"}
    prompt = render("_contract", **contract_context(limits=limits))
    assert "20 s for one `update`" in prompt and "1 s for one `retrieve`" in prompt


def test_a_dead_engine_mid_search_stops_it_with_a_sentence_and_costs_no_repair(tmp_path):
    from automemo.runs import RunDir
    from automemo.search.config import SearchConfig
    from automemo.search.loop import Collaborators, SearchLoop
    from test_search_loop import ScoreFromSource, ScriptedMeta, exam_double

    def exam(source, *args, **kwargs):
        if "DEAD" in source:
            raise SandboxUnavailable("cannot reach the Docker engine; start it (scripts/start-dockerd.sh)")
        return exam_double(source, *args, **kwargs)

    run = RunDir.create(tmp_path / "runs", {"search": {"steps": 3}}, "r")
    meta = ScriptedMeta(["SCORE = 0.5", "SCORE = 0.6\nDEAD", "SCORE = 0.7"], repairable=True)
    parts = Collaborators(evaluator=ScoreFromSource(run.store_root), meta=meta, sandbox=None, exam=exam)
    final = SearchLoop(run, SearchConfig(steps=3, root="murag"), parts, quiet=True).run_search()
    assert final["stop_reason"] == "infrastructure" and final["steps_done"] == 1
    assert meta.repairs == 0  # never charged to the program as a failed "imports" check
    assert [n["id"] for n in run.nodes()] == [0, 1]  # the step in progress was abandoned
    assert any("cannot reach the Docker engine" in json.dumps(e) for e in run.events())
