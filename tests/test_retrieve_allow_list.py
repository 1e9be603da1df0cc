"""One allow-list of what a retrieve task may carry (`contract.RETRIEVE_METADATA_KEYS` plus the keys
a benchmark declares known at question time): a user's benchmark that puts labels and unknown keys
in its retrieve tasks hands none of them to a sandboxed program, its declared key does reach it, and
the dropped keys are named in one notice per run."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from automemo.benchmarks.base import Task
from automemo.benchmarks.conversation.benchmark import ConversationOptions
from automemo.benchmarks.conversation.memgallery import MemGallery
from automemo.contract import BUDGET_KEY, PartialRecorder, retrieve_metadata
from automemo.episode_store import EpisodeStore
from automemo.evaluation import EvaluationConfig, Evaluator
from automemo.meta.llm.samples import task_excerpt
from automemo.sandbox import get_sandbox
from sandboxtools import METADATA_PROBE as PROBE
from conversation_data import write_memgallery


SMUGGLED = ("label", "gold_ids", "reference", "foo")


class UsersOwnBenchmark(MemGallery):
    """A user's benchmark whose retrieve tasks carry labels, an unknown key and one declared key."""

    name = "users_own"
    question_time_keys = frozenset({"channel"})

    def partial(self, task: Task, store: EpisodeStore) -> PartialRecorder:
        partial = super().partial(task, store)
        if task.data["kind"] == "session":
            return partial
        extra = {"label": task.category, "gold_ids": ["D1:2"], "reference": "the answer", "foo": 1,
                 "channel": "mail"}
        return dataclasses.replace(partial, metadata={**partial.metadata, **extra})


@pytest.fixture
def users_benchmark(tmp_path) -> UsersOwnBenchmark:
    return UsersOwnBenchmark(ConversationOptions(path=str(write_memgallery(tmp_path / "mem-gallery"))))


@pytest.mark.bwrap
def test_a_sandboxed_program_sees_only_the_allow_list_and_one_notice_names_the_dropped_keys(
        users_benchmark, tmp_path, caplog):
    evaluator = Evaluator(users_benchmark, get_sandbox("bwrap"), EpisodeStore(tmp_path / "store"),
                          config=EvaluationConfig(quiet=True))
    try:
        with caplog.at_level(logging.WARNING, logger="automemo.evaluation"):
            results = [evaluator.evaluate(PROBE, split=split) for split in ("test", "train", "test")]
    finally:
        evaluator.close()
    seen = {tuple(t.payload.metadata["seen"]) for r in results for t in r.tasks}
    assert seen == {(BUDGET_KEY, "channel", "user")}, seen  # the declared key arrives; nothing smuggled does
    notices = [r.getMessage() for r in caplog.records if r.name == "automemo.evaluation"]
    assert len(notices) == 1, notices  # once per run: not per task, split or evaluation
    assert all(key in notices[0] for key in SMUGGLED) and "channel" not in notices[0]
    assert "users_own" in notices[0]


def test_the_meta_agents_excerpt_of_a_retrieve_task_reads_the_same_allow_list():
    task = PartialRecorder("q1", "users_own", "Where do I live?",
                           metadata={"user": "ana", "channel": "mail", **{k: "x" for k in SMUGGLED}})
    assert '"label"' not in task_excerpt(task, 4000) and '"foo"' not in task_excerpt(task, 4000)
    assert '"channel"' not in task_excerpt(task, 4000)
    assert '"channel"' in task_excerpt(task, 4000, {"channel"}) and '"user"' in task_excerpt(task, 4000)


def test_the_allow_list_keeps_the_contract_keys_and_names_what_it_drops():
    kept, dropped = retrieve_metadata({"user": "u", "time": "t", BUDGET_KEY: {}, "site": "s", "answer": "a"},
                                      {"site"})
    assert kept == {"user": "u", "time": "t", BUDGET_KEY: {}, "site": "s"} and dropped == ("answer",)


def test_the_llm_meta_agent_shows_the_benchmarks_declared_keys_in_its_data_excerpt(monkeypatch, tmp_path):
    """The search hands the meta agent its benchmark's `question_time_keys`: the retrieve task
    excerpt in its prompt shows a declared key, and still no label."""
    from types import SimpleNamespace

    from automemo.contract import EpisodeRecorder
    from automemo.meta import build_meta_agent
    from automemo.meta.config import MetaConfig
    from automemo.meta.context import ParentView
    from automemo.meta.llm import agent as agent_module

    episode = EpisodeRecorder("q1", "users_own", "Where do I live?",
                              metadata={"user": "ana", "channel": "mail", **{k: "x" for k in SMUGGLED}})
    evidence = SimpleNamespace(tasks=[SimpleNamespace(episode=episode)])
    monkeypatch.setattr(agent_module, "read_evidence", lambda _dir: evidence)
    llm = SimpleNamespace(configured=lambda role: role == "meta", config=None)
    meta = build_meta_agent(llm, MetaConfig(), question_time_keys=UsersOwnBenchmark.question_time_keys)
    parent = ParentView(node_id=0, source="", score=0.0, n_evals=1, evaluation=None, evidence_dir=str(tmp_path))
    excerpt = meta.contract_for(parent)["samples"]["retrieve_task"]
    assert '"channel"' in excerpt and '"user"' in excerpt
    assert not any(f'"{key}"' in excerpt for key in SMUGGLED)
    # The budget reaches retrieve in every evaluation, so the excerpt shows it too.
    assert f'"{BUDGET_KEY}"' in excerpt and '"max_chars"' in excerpt


def test_a_deployed_memory_hands_retrieve_what_the_harness_did(tmp_path):
    """`load_memory` (and the served memory, which recalls through it) shows a program a task as
    the search's harness did: the allow-list plus the searched benchmark's question-time keys, and
    the run's budget; a label an application passes along never reaches it."""
    from automemo.deploy import load_memory
    from automemo.measurements.stand_ins.serve_export import write_export

    export = write_export(tmp_path / "export", PROBE, [], benchmark="miniwob")  # declares env, seed, site
    task = PartialRecorder("q1", "miniwob", "Click OK", metadata={"user": "ana", "site": "s", "answer": "x",
                                                                  "category": "click"})
    with load_memory(export, sandbox="unsafe", unsafe=True) as memory:
        seen = memory.retrieve(task).metadata["seen"]
    assert seen == sorted([BUDGET_KEY, "site", "user"]), seen
