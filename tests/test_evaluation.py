"""The update-then-retrieve harness, end to end through real sandboxes.

Most tests use `FactsBenchmark`, a small benchmark defined here whose update episodes state
facts ("key3 is value3") and whose retrieve tasks ask for them: a task scores 1 only when the
memo program's payload carries the right value, so a score proves that updates reached the
program's memory (and were replayed after a crash). Its `run_episode` can be told to fail on
infrastructure a set number of times, or to wait at a barrier to prove overlap.
"""

from __future__ import annotations

import collections
import json
import os
import threading

import pytest

from automemo import configtools
from automemo.benchmarks.base import Benchmark, InfrastructureError, Split, Task, TaskScore
from automemo.contract import BUDGET_KEY, Budget, EpisodeRecorder, PartialRecorder, Step
from automemo.episode_store import EpisodeStore
from automemo.evaluation import EvaluationConfig, Evaluator, pick_examples, read_evidence
from automemo.evaluation.executor import ThreadExecutor
from automemo.sandbox import get_sandbox

N_UPDATE = 6
N_RETRIEVE = 6


class FactsBenchmark(Benchmark):
    name = "facts"
    family = "conversation"

    def __init__(self, *, infra_failures=None, infra_error=InfrastructureError, barrier_parties=0, version=1):
        self.infra_failures = dict(infra_failures or {})
        self.infra_error = infra_error
        self.barrier = threading.Barrier(barrier_parties, timeout=20) if barrier_parties else None
        self.version = version
        self.runs = collections.Counter()
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.events: list[tuple[str, str]] = []

    def describe(self):
        return {"name": self.name, "family": self.family, "version": self.version}

    def split(self, name):
        update = tuple(
            Task(f"{name}-u{i}", self.name, "fact", f"remember: key{i} is value{i}")
            for i in range(N_UPDATE)
        )
        retrieve = tuple(
            Task(
                f"{name}-r{i}",
                self.name,
                "even" if i % 2 == 0 else "odd",
                f"what is key{i}?",
                {"answer": f"value{i}"},
            )
            for i in range(N_RETRIEVE)
        )
        return Split(name, update, retrieve)

    def partial(self, task, store):
        return PartialRecorder(task_id=task.task_id, benchmark=self.name, instruction=task.instruction)

    def run_episode(self, task, agent, payload, store):
        with self.lock:
            self.runs[task.task_id] += 1
            attempt = self.runs[task.task_id]
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.events.append(("start", task.task_id))
        try:
            if attempt <= self.infra_failures.get(task.task_id, 0):
                raise self.infra_error(f"browser crashed on attempt {attempt}")
            if payload is not None and self.barrier is not None:
                # Passes only when `parties` episodes are running at the same moment.
                self.barrier.wait()
            answer = payload.text if payload is not None else task.instruction
            return EpisodeRecorder(
                task_id=task.task_id,
                benchmark=self.name,
                instruction=task.instruction,
                steps=(Step(index=0, action="answer"),),
                final_answer=answer,
                usage={"prompt_tokens": 7, "completion_tokens": 3},
            )
        finally:
            with self.lock:
                self.in_flight -= 1
                self.events.append(("end", task.task_id))

    def score(self, task, episode, payload):
        hit = float(task.data["answer"] in (episode.final_answer or "").split())
        return TaskScore(value=hit, metrics={"hit": hit})


# The memo program under evaluation: it learns "keyN is valueN" from update episodes and answers
# with the value. BEHAVIOUR maps a key to what goes wrong when that key is retrieved.
FACTS_PROGRAM = '''
import os, time
from automemo.contract import MemoProgram, MemoryPayload

BEHAVIOUR = {behaviour!r}
UPDATE_BEHAVIOUR = {update_behaviour!r}

class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.facts = {{}}

    def update(self, episode):
        key, value = episode.instruction.split(": ", 1)[1].split(" is ")
        if UPDATE_BEHAVIOUR.get(key) == "raise":
            raise RuntimeError("cannot digest " + key)
        self.facts[key] = value

    def retrieve(self, task):
        key = task.instruction.split()[2].rstrip("?")
        what = BEHAVIOUR.get(key)
        if what == "raise":
            raise ValueError("no idea about " + key)
        if what == "hang":
            time.sleep(600)
        if what == "exit":
            os._exit(3)
        if what == "long":
            return MemoryPayload(text=self.facts.get(key, "") + " " + "x" * 500)
        return MemoryPayload(text=self.facts.get(key, ""), metadata={{"evidence": [key]}})
'''


def facts_program(behaviour=None, update_behaviour=None) -> str:
    return FACTS_PROGRAM.format(behaviour=behaviour or {}, update_behaviour=update_behaviour or {})


def config(**overrides) -> EvaluationConfig:
    retrieve = overrides.pop("retrieve_timeout_s", 20.0)
    base = {"concurrency": 3, "quiet": True,
            "limits": {"retrieve_timeout_s": retrieve, "update_timeout_s": 20.0}}
    return configtools.build(EvaluationConfig, {**base, **overrides})


@pytest.fixture
def store(tmp_path) -> EpisodeStore:
    return EpisodeStore(tmp_path / "store")


@pytest.fixture(scope="module")
def unsafe():
    return get_sandbox("unsafe")


def scores(result) -> dict[str, float]:
    return {t.task_id: t.score for t in result.tasks}


# --- the core path in real sandboxes ------------------------------------------------------------


@pytest.mark.parametrize(
    "backend",
    [
        pytest.param("docker", marks=pytest.mark.docker),
        pytest.param("bwrap", marks=pytest.mark.bwrap),
        "unsafe",
    ],
)
def test_failures_cost_only_their_task(backend, store, tmp_path):
    """key1 hangs past the timeout (the guest is killed), key2 kills its own process, key4
    raises: those three score 0 and every other task still scores 1, which needs each rebuilt
    guest to have been fed the updates again."""
    bench = FactsBenchmark()
    evaluator = Evaluator(
        bench, get_sandbox(backend), store, config=config(retrieve_timeout_s=3.0, concurrency=2)
    )
    program = facts_program({"key1": "hang", "key2": "exit", "key4": "raise"})
    result = evaluator.evaluate(program, split="test", evidence_dir=tmp_path / "ev")

    assert scores(result) == {
        "test-r0": 1.0, "test-r1": 0.0, "test-r2": 0.0, "test-r3": 1.0, "test-r4": 0.0, "test-r5": 1.0
    }
    errors = {t.task_id: t.error.split(":")[0] for t in result.tasks if t.error}
    assert errors == {"test-r1": "timeout", "test-r2": "crash", "test-r4": "exception"}
    assert result.errors == {"crash": 1, "exception": 1, "timeout": 1}
    assert result.mean == pytest.approx(0.5)
    assert result.n_scored == N_RETRIEVE
    # Two guests died (hang, exit); each is rebuilt when the next call comes. With two workers
    # the calls' order is not fixed, and a death on the very last call needs no rebuild.
    assert result.info["session_restarts"] in (1, 2)
    assert result.info["n_update_applied"] == N_UPDATE


# --- protocol, in the unsafe backend (same guest runner, no isolation cost) ----------------------


def test_score_is_mean_reward_with_categories_metrics_tokens_and_steps(unsafe, store):
    result = Evaluator(FactsBenchmark(), unsafe, store, config=config()).evaluate(facts_program())
    assert result.mean == 1.0
    assert result.per_category == {"even": 1.0, "odd": 1.0}
    assert result.metrics == {"hit": 1.0}
    assert result.tokens == 10 * N_RETRIEVE
    assert all(t.steps == 1 for t in result.tasks)
    assert [t.task_id for t in result.tasks] == [f"train-r{i}" for i in range(N_RETRIEVE)]
    assert result.update_s > 0
    assert result.errors == {}


def test_every_retrieve_task_carries_the_runs_budget_under_the_contract_key(unsafe, store):
    """`task.metadata["budget"]` is the evaluation's budget, so a program can rank what fits."""
    program = facts_program().replace(
        'metadata={"evidence": [key]}', 'metadata={"evidence": [key], "seen": task.metadata.get(BUDGET_KEY)}'
    ).replace("from automemo.contract import", "from automemo.contract import BUDGET_KEY,")
    result = Evaluator(FactsBenchmark(), unsafe, store,
                       config=config(budget={"max_chars": 900, "max_images": 1})).evaluate(program)
    assert {json.dumps(t.payload.metadata["seen"]) for t in result.tasks} == {
        json.dumps({"max_chars": 900, "max_images": 1})}
    assert BUDGET_KEY == "budget"


def test_a_program_that_forgets_scores_zero(unsafe, store):
    """The score depends on the program: one that raises in update for some keys loses exactly
    the tasks about those keys, and the update failures are reported."""
    program = facts_program(update_behaviour={"key0": "raise", "key4": "raise"})
    result = Evaluator(FactsBenchmark(), unsafe, store, config=config()).evaluate(program)
    assert scores(result)["train-r0"] == 0.0 and scores(result)["train-r4"] == 0.0
    assert result.mean == pytest.approx(4 / 6)
    assert result.errors == {"update:exception": 2}
    assert result.info["n_update_applied"] == N_UPDATE - 2


def test_infrastructure_failures_are_retried_then_excluded(unsafe, store, tmp_path):
    bench = FactsBenchmark(infra_failures={"train-r1": 2, "train-r2": 9})
    evaluator = Evaluator(bench, unsafe, store, config=config(infra_retries=2))
    result = evaluator.evaluate(facts_program(), evidence_dir=tmp_path / "ev")

    assert bench.runs["train-r1"] == 3 and scores(result)["train-r1"] == 1.0
    assert bench.runs["train-r2"] == 3  # 1 try + 2 retries, then given up
    assert result.excluded == ("train-r2",)
    assert result.n_scored == N_RETRIEVE - 1
    assert result.mean == 1.0  # the excluded task neither counts 0 nor 1
    assert result.errors == {}
    evidence = read_evidence(tmp_path / "ev")
    r2 = next(t for t in evidence.tasks if t.result.task_id == "train-r2")
    assert r2.attempts == 3 and len(r2.infra_errors) == 3 and "browser crashed" in r2.infra_errors[0]


def test_an_api_error_is_an_infrastructure_failure_and_a_spent_budget_stops(unsafe, store):
    from automemo.llm import BudgetExceeded, LLMError

    def server_down(message):  # a transport failure that outlived the client's own retries
        return LLMError(message, role="agent", status="http 503")

    bench = FactsBenchmark(infra_failures={"train-r3": 9}, infra_error=server_down)
    result = Evaluator(bench, unsafe, store,
                       config=config(infra_retries=1, max_excluded_share=0.5)).evaluate(facts_program())
    assert result.excluded == ("train-r3",) and bench.runs["train-r3"] == 2
    assert result.mean == 1.0

    spent = FactsBenchmark(infra_failures={"train-r3": 9}, infra_error=BudgetExceeded)
    with pytest.raises(BudgetExceeded):
        Evaluator(spent, unsafe, store, config=config()).evaluate(facts_program())
    assert spent.runs["train-r3"] == 1  # never retried


def test_an_infrastructure_failure_while_collecting_excludes_that_update(unsafe, store):
    bench = FactsBenchmark(infra_failures={"train-u2": 9})
    evaluator = Evaluator(bench, unsafe, store, config=config(infra_retries=1))
    result = evaluator.evaluate(facts_program())
    assert result.info["update_excluded"] == ["train-u2"]
    assert scores(result)["train-r2"] == 0.0 and result.mean == pytest.approx(5 / 6)


def test_update_episodes_are_collected_once_and_reused(unsafe, store):
    first = FactsBenchmark()
    Evaluator(first, unsafe, store, config=config()).evaluate(facts_program())
    assert all(first.runs[f"train-u{i}"] == 1 for i in range(N_UPDATE))

    # A new evaluator (a later run, or another candidate) with the same configuration reuses
    # the stored episodes: the benchmark never runs an update task again.
    second = FactsBenchmark()
    evaluator = Evaluator(second, unsafe, store, config=config())
    assert evaluator.collection("train").ran == 0
    result = evaluator.evaluate(facts_program())
    evaluator.evaluate(facts_program({"key0": "raise"}))
    assert not any(k.startswith("train-u") for k in second.runs)
    assert result.mean == 1.0
    assert [e.task_id for e in evaluator.update_episodes()] == [f"train-u{i}" for i in range(N_UPDATE)]

    # A different benchmark configuration is a different group: collected afresh.
    changed = FactsBenchmark(version=2)
    assert Evaluator(changed, unsafe, store, config=config()).collection("train").ran == N_UPDATE
    assert changed.runs["train-u0"] == 1


def test_retrieve_tasks_overlap(unsafe, store):
    """With concurrency 4, four episodes wait at a 4-party barrier: it only opens if they all
    run at once. Serial execution would break the barrier and score 0."""
    bench = FactsBenchmark(barrier_parties=4)
    evaluator = Evaluator(bench, unsafe, store, config=config(concurrency=4))
    evaluator.update_episodes()  # collected without payloads: the barrier is not involved
    split = bench.split("train")
    four = Split("train", split.update, split.retrieve[:4])
    evaluator._splits["train"] = four
    result = evaluator.evaluate(facts_program())
    assert result.mean == 1.0
    assert bench.max_in_flight == 4
    starts = [i for i, (kind, _) in enumerate(bench.events) if kind == "start"]
    ends = [i for i, (kind, _) in enumerate(bench.events) if kind == "end"]
    assert max(starts[-4:]) < min(ends[-4:])


def test_concurrency_one_runs_tasks_one_at_a_time(unsafe, store):
    bench = FactsBenchmark()
    Evaluator(bench, unsafe, store, config=config(concurrency=1)).evaluate(facts_program())
    assert bench.max_in_flight == 1


def test_payload_is_truncated_to_the_budget(unsafe, store):
    program = facts_program({"key0": "long"})
    evaluator = Evaluator(
        FactsBenchmark(), unsafe, store, config=config(budget={"max_chars": 40, "max_images": 0})
    )
    result = evaluator.evaluate(program)
    payload = next(t.payload for t in result.tasks if t.task_id == "train-r0")
    assert payload.violations(Budget(max_chars=40, max_images=0)) == []
    assert payload.text.startswith("value0 xxx") and len(payload.text) == 40


def test_a_program_that_does_not_load_scores_zero_everywhere(unsafe, store, tmp_path):
    result = Evaluator(FactsBenchmark(), unsafe, store, config=config()).evaluate(
        "def broken(:\n", evidence_dir=tmp_path / "ev"
    )
    assert result.mean == 0.0 and result.n_scored == N_RETRIEVE
    assert result.info["fatal"].startswith("import")
    assert all(t.error.startswith("import") for t in result.tasks)
    assert (tmp_path / "ev" / "summary.json").exists()


def test_a_sandbox_engine_that_disappears_fails_the_evaluation_not_the_program(store):
    from automemo.sandbox import Sandbox, SandboxUnavailable

    class StoppedEngine(Sandbox):
        name = "stopped"

        def open(self, program_source, limits=None, *, services=None, store_root=None):
            raise SandboxUnavailable("the Docker engine stopped answering")

    with pytest.raises(SandboxUnavailable, match="stopped answering"):
        Evaluator(FactsBenchmark(), StoppedEngine(), store, config=config()).evaluate(facts_program())


def test_a_session_that_keeps_dying_stops_being_rebuilt(unsafe, store):
    program = facts_program({f"key{i}": "exit" for i in range(N_RETRIEVE)})
    evaluator = Evaluator(
        FactsBenchmark(), unsafe, store, config=config(max_session_restarts=2, concurrency=1)
    )
    result = evaluator.evaluate(program)
    kinds = [t.error.split(":")[0] for t in result.tasks]
    assert kinds == ["crash"] * 3 + ["gave-up"] * 3
    assert result.info["session_restarts"] == 2


# --- evidence -----------------------------------------------------------------------------------


def test_evidence_is_written_and_read_back(unsafe, store, tmp_path):
    program = facts_program({"key1": "raise"})
    evaluator = Evaluator(FactsBenchmark(), unsafe, store, config=config())
    result = evaluator.evaluate(program, evidence_dir=tmp_path / "ev", node_id=7)

    task_dir = tmp_path / "ev" / "tasks" / "train-r0"
    assert json.loads((task_dir / "payload.json").read_text())["text"] == "value0"
    assert EpisodeRecorder.from_json((task_dir / "episode.json").read_text()).final_answer == "value0"
    facts = json.loads((task_dir / "result.json").read_text())
    assert facts["score"] == 1.0 and facts["tokens"] == 10 and facts["steps"] == 1
    assert facts["wall_s"] > 0 and facts["retrieve_s"] > 0
    failed = json.loads((tmp_path / "ev" / "tasks" / "train-r1" / "result.json").read_text())
    assert failed["error"].startswith("exception") and "no idea about key1" in failed["traceback"]

    evidence = read_evidence(tmp_path / "ev")
    assert evidence.result == result
    assert evidence.result.info["node_id"] == 7
    assert evidence.store_root == store.root
    successes, failures = pick_examples(evidence, seed=3)
    assert len(successes) == 2 and all(t.result.score == 1.0 for t in successes)
    assert [t.result.task_id for t in failures] == ["train-r1"]
    assert pick_examples(evidence, seed=3) == (successes, failures)


def test_sample_for_exam_draws_train_episodes_and_partials(unsafe, store):
    evaluator = Evaluator(FactsBenchmark(), unsafe, store, config=config(exam_tasks=3))
    episodes, partials = evaluator.sample_for_exam(seed=1)
    assert len(episodes) == 3 and len(partials) == 3
    assert all(e.task_id.startswith("train-u") for e in episodes)
    assert all(p.task_id.startswith("train-r") for p in partials)
    ids = [e.task_id for e in episodes]
    assert ids == sorted(ids)  # update order is kept
    assert evaluator.sample_for_exam(seed=1) == (episodes, partials)


def test_executor_yields_results_as_they_finish():
    """Item "a" cannot finish before "b" has been yielded to the consumer, so an executor that
    yielded in submission order (or ran one item at a time) would deadlock into the timeout."""
    b_seen = threading.Event()

    def work(name):
        if name == "a":
            assert b_seen.wait(timeout=10), "b was not yielded while a was still running"
        return name

    order = []
    for name in ThreadExecutor(2).map(work, ["a", "b"]):
        order.append(name)
        if name == "b":
            b_seen.set()
    assert order == ["b", "a"]
    with pytest.raises(ZeroDivisionError):
        list(ThreadExecutor(2).map(lambda x: 1 / x, [1, 0, 2]))


def test_retrieve_fraction_scores_a_per_category_sample_fixed_by_its_seed(unsafe, store):
    """A sampled evaluation covers every category, draws the same tasks for the same seed and
    other tasks for another seed."""
    evaluator = Evaluator(FactsBenchmark(), unsafe, store, config=config(retrieve_fraction=0.5))
    everything = Evaluator(FactsBenchmark(), unsafe, store, config=config()).retrieve_tasks("train")
    first = evaluator.retrieve_tasks("train", sample_seed=1)
    assert len(first) < len(everything)
    assert {t.category for t in first} == {t.category for t in everything}
    assert [t.task_id for t in evaluator.retrieve_tasks("train", sample_seed=1)] == [t.task_id for t in first]
    others = {tuple(t.task_id for t in evaluator.retrieve_tasks("train", sample_seed=s)) for s in range(2, 8)}
    assert len(others | {tuple(t.task_id for t in first)}) > 1
    result = evaluator.evaluate(facts_program(), sample_seed=1)
    assert sorted(r.task_id for r in result.tasks) == sorted(t.task_id for t in first)
