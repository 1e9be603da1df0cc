"""`evaluation.executor = "ray"`: episodes on a real local Ray cluster (shared by these tests),
the memo session in a real bubblewrap sandbox on the driver.

- the scores are identical to the thread executor's on a deterministic benchmark, and the LLM
  calls the agent makes on the workers land in the driver's ledger and spend guard;
- a worker process killed in the middle of an episode is an infrastructure failure: the
  episode is retried on a fresh worker, and excluded (and reported) once the retries are spent.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from automemo.episode_store import EpisodeStore
from automemo.evaluation import EvaluationConfig, Evaluator
from automemo.evaluation.executor import ThreadExecutor
from automemo.evaluation.ray_executor import RayExecutor
from automemo.llm import Ledger, LLMClient, LLMConfig, RoleConfig
from automemo.measurements.latency_benchmark import FACTS_PROGRAM, LatencyBenchmark
from tests.sandboxtools import sandbox

ray = pytest.importorskip("ray", reason="Ray is installed by the test command (automemo[ray])")

pytestmark = [pytest.mark.bwrap]


@pytest.fixture(scope="session")
def ray_cluster():
    """One local cluster for every Ray test: it takes seconds to start."""
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}})
    yield
    ray.shutdown()


class AskingBenchmark(LatencyBenchmark):
    """The agent (an LLM client) is asked once per retrieve episode; the answer is ignored, so
    scores stay deterministic while every episode costs tokens."""

    def run_episode(self, task, agent, payload, store):
        if payload is not None:
            agent.chat("agent", [{"role": "user", "content": task.instruction}], node=7,
                       purpose="ray test episode")
        return super().run_episode(task, agent, payload, store)


class CrashingBenchmark(LatencyBenchmark):
    """Task q1 kills its worker process the first time it is played; task q2 every time."""

    def __init__(self, n_tasks: int, marker_dir: str) -> None:
        super().__init__(n_tasks, latency_s=0.05)
        self.marker_dir = marker_dir

    def run_episode(self, task, agent, payload, store):
        if payload is not None and task.data["i"] in (1, 2):
            marker = Path(self.marker_dir) / task.task_id
            if task.data["i"] == 2 or not marker.exists():
                marker.touch()
                os.kill(os.getpid(), signal.SIGKILL)  # the worker dies mid-episode
        return super().run_episode(task, agent, payload, store)


def evaluate(benchmark, executor, tmp_path, name, agent=None):
    evaluator = Evaluator(benchmark, sandbox("bwrap"), EpisodeStore(tmp_path / f"store-{name}"),
                          agent=agent,
                          config=EvaluationConfig(concurrency=3, infra_retries=1, quiet=True),
                          executor=executor)
    try:
        return evaluator.evaluate(FACTS_PROGRAM, split="test", evidence_dir=tmp_path / name)
    finally:
        evaluator.close()


def test_ray_scores_and_llm_spend_equal_the_thread_executor_ones(ray_cluster, fake_llm,
                                                                   tmp_path, monkeypatch):
    monkeypatch.setenv("RAY_TEST_KEY", "fake")  # workers inherit it through the cluster's env
    role = RoleConfig(model="fake", base_url=fake_llm.base_url, api_key_env="RAY_TEST_KEY")
    benchmark = AskingBenchmark(9, latency_s=0.05, known=7)  # two facts unknown: score 0
    clients = {name: LLMClient(LLMConfig(agent=role), ledger=Ledger(tmp_path / f"{name}.db"))
               for name in ("threads", "ray")}
    threads = evaluate(benchmark, ThreadExecutor(3), tmp_path, "threads", clients["threads"])
    on_ray = evaluate(benchmark, RayExecutor(3), tmp_path, "ray", clients["ray"])
    per_task = lambda r: [(t.task_id, t.score, t.excluded) for t in r.tasks]  # noqa: E731
    assert per_task(on_ray) == per_task(threads)
    assert on_ray.mean == threads.mean and 0 < threads.mean < 1
    assert on_ray.info["concurrency"] == 3 and not on_ray.excluded
    # the calls made on the workers are in the driver's ledger and count against its caps
    rows = {name: c.ledger.rows(role="agent") for name, c in clients.items()}
    assert len(rows["ray"]) == len(rows["threads"]) == 9
    assert {r["node"] for r in rows["ray"]} == {"7"}
    assert clients["ray"].guard.spent == clients["threads"].guard.spent
    assert clients["ray"].guard.spent.tokens > 0


@pytest.mark.slow
def test_a_worker_killed_mid_episode_is_retried_then_excluded(ray_cluster, tmp_path):
    executor = RayExecutor(2, retries=1)
    evaluator = Evaluator(CrashingBenchmark(5, str(tmp_path)), sandbox("bwrap"),
                          EpisodeStore(tmp_path / "store"),
                          config=EvaluationConfig(concurrency=2, infra_retries=1, quiet=True),
                          executor=executor)
    try:
        result = evaluator.evaluate(FACTS_PROGRAM, split="test", evidence_dir=tmp_path / "ev")
        # the dead workers were replaced: the executor is back to full width
        assert len(set(executor.worker_pids())) == 2
    finally:
        evaluator.close()
    by_id = {t.task_id: t for t in result.tasks}
    # q1 died once and was played again on a fresh worker: scored as if nothing happened
    assert not by_id["test-q1"].excluded and by_id["test-q1"].score == pytest.approx(2 / 3)
    # q2 killed its worker on every attempt: an infrastructure failure, excluded and reported
    assert by_id["test-q2"].excluded and "worker lost" in by_id["test-q2"].error
    assert list(result.excluded) == ["test-q2"] and result.n_scored == 4
    others = [t for i, t in enumerate(result.tasks) if i not in (1, 2)]
    assert all(not t.excluded and t.score > 0 for t in others)
    assert (tmp_path / "test-q1").exists()  # it really died once


def test_what_a_search_ships_to_workers_pickles_into_fresh_copies(fake_llm, monkeypatch):
    """Mini-Gallery and the LLM client travel to a worker as their settings: the copy has a
    lock and a ledger of its own, and knows the spend so far so that it respects the caps."""
    import pickle

    from automemo.benchmarks.minigallery.benchmark import MiniGallery, MiniGalleryOptions

    monkeypatch.setenv("RAY_TEST_KEY", "fake")
    role = RoleConfig(model="fake", base_url=fake_llm.base_url, api_key_env="RAY_TEST_KEY")
    llm = LLMClient(LLMConfig(agent=role, max_total_tokens=10_000))
    llm.chat("agent", [{"role": "user", "content": "hello"}])
    gallery = MiniGallery(MiniGalleryOptions(users_per_split=1), llm=llm)
    copy = pickle.loads(pickle.dumps(gallery))
    assert copy.options == gallery.options and copy._lock is not gallery._lock
    assert copy.split("test").retrieve == gallery.split("test").retrieve
    assert copy.llm.ledger is not llm.ledger and copy.llm.guard.spent == llm.guard.spent
