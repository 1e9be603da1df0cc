"""Update-then-retrieve evaluation on Mini-Gallery along the whole path: real sandboxes, the real
all-MiniLM-L6-v2 encoder behind the host services, retrieval mode and QA mode with an LLM agent
on the fake OpenAI-compatible server. The harness's protocol (failures, retries, evidence) is
tested on a tiny benchmark in test_evaluation.py."""

from __future__ import annotations

import os

import pytest

from automemo import configtools
from automemo.episode_store import EpisodeStore
from automemo.evaluation import EvaluationConfig, Evaluator
from automemo.sandbox import get_sandbox


def config(**overrides) -> EvaluationConfig:
    base = {"concurrency": 4, "quiet": True, "limits": {"retrieve_timeout_s": 20.0, "update_timeout_s": 20.0}}
    return configtools.build(EvaluationConfig, {**base, **overrides})


@pytest.fixture
def store(tmp_path) -> EpisodeStore:
    return EpisodeStore(tmp_path / "store")


MINIGALLERY_SMALL = {"users_per_split": 1, "sessions_per_user": 3, "rounds_per_session": 16}

EMPTY_PROGRAM = """
from automemo.contract import MemoProgram, MemoryPayload

class Memo(MemoProgram):
    def update(self, episode):
        pass

    def retrieve(self, task):
        return MemoryPayload()
"""


@pytest.fixture(scope="module")
def minilm_encoders(torch_cpu_shim):
    """The real all-MiniLM-L6-v2 text encoder (and the perceptual image feature), loaded once."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from automemo.toolkit.embedding import default_encoders

    return default_encoders()


@pytest.mark.parametrize(
    "backend",
    [pytest.param("docker", marks=pytest.mark.docker), pytest.param("bwrap", marks=pytest.mark.bwrap)],
)
def test_minigallery_retrieval_with_real_embeddings(backend, minilm_encoders, store, tmp_path):
    """The MuRAG seed, sandboxed, embedding through host services with real MiniLM, is scored
    by Mini-Gallery's Recall@10 against the annotated clues; a program that cites nothing
    scores 0 on the same tasks, so the figure measures the program."""
    from automemo import benchmarks
    from automemo.paths import seed_path
    from automemo.toolkit.services import MemoServices

    bench = benchmarks.load("minigallery", MINIGALLERY_SMALL)
    services_made = []

    def services(node):
        services_made.append(node)
        return MemoServices(minilm_encoders, None, store.root, node=node)

    evaluator = Evaluator(
        bench, get_sandbox(backend), store, services_factory=services, config=config(concurrency=4)
    )
    murag = evaluator.evaluate(
        seed_path("murag").read_text(), evidence_dir=tmp_path / "murag", node_id=1
    )
    empty = evaluator.evaluate(EMPTY_PROGRAM, node_id=2)

    assert services_made == [1, 2]
    assert murag.errors == {} and murag.info["n_update_applied"] == murag.info["n_update"] > 0
    assert "AR" not in murag.per_category  # no clues to retrieve: excluded, as in Mem-Gallery
    assert murag.n_scored == sum(1 for t in murag.tasks if t.category != "AR") > 0
    assert murag.mean == pytest.approx(murag.metrics["recall@10"])
    assert murag.mean > 0.5
    assert empty.mean == 0.0 and empty.n_scored == murag.n_scored
    cited = [t.payload.metadata.get("evidence") for t in murag.tasks if t.payload is not None]
    assert all(isinstance(c, list) and len(c) <= 10 for c in cited)
    assert (tmp_path / "murag" / "summary.json").exists()


@pytest.mark.bwrap
def test_minigallery_qa_mode_whole_path_with_an_llm_agent(minilm_encoders, store, fake_llm, tmp_path):
    """QA mode end to end: the sandboxed MuRAG seed retrieves, the payload is injected into the
    visual agent's prompt, the agent (a fake LLM that answers right exactly when the memory it
    was shown holds the gold answer) replies, and token F1 scores the reply. MuRAG's memory
    carries the answers, no memory does not, so the score separates the programs."""
    from automemo import benchmarks
    from automemo.agents import build_agent
    from automemo.llm import LLMClient, LLMConfig, RoleConfig
    from automemo.llm.messages import message_text
    from automemo.paths import seed_path
    from automemo.toolkit.services import MemoServices

    bench = benchmarks.load("minigallery", {**MINIGALLERY_SMALL, "mode": "qa"})
    gold = {t.instruction: t.data["answer"] for t in bench.split("train").retrieve}

    def agent_answers(request):
        users = [message_text(m) for m in request["messages"] if m["role"] == "user"]
        question = next(q for q in gold if q in users[-1])
        memory = "\n".join(users[:-1])
        return f"Answer: {gold[question]}" if gold[question] in memory else "Answer: Not mentioned."

    fake_llm.set_handler(agent_answers)
    role = RoleConfig(model="fake-agent", base_url=fake_llm.base_url, max_retries=0, timeout_s=20.0)
    agent = build_agent(bench, LLMClient(LLMConfig(agent=role)))
    evaluator = Evaluator(
        bench, get_sandbox("bwrap"), store, agent=agent, config=config(concurrency=4),
        services_factory=lambda node: MemoServices(minilm_encoders, None, store.root, node=node),
    )
    murag = evaluator.evaluate(seed_path("murag").read_text(), evidence_dir=tmp_path / "qa", node_id=1)
    empty = evaluator.evaluate(EMPTY_PROGRAM, node_id=2)

    assert murag.errors == {} and not murag.excluded
    assert {"f1", "em"} <= set(murag.metrics)
    assert murag.mean > empty.mean + 0.3
    # with no memory only the refusal questions are answered right ("Not mentioned.")
    assert empty.per_category.get("AR", 0.0) == 1.0
    assert all(empty.per_category[c] == 0.0 for c in empty.per_category if c != "AR")
    asked = [r for r in fake_llm.requests if r["model"] == "fake-agent"]
    assert len(asked) == len(murag.tasks) + len(empty.tasks)
