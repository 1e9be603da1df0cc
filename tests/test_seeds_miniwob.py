"""Every seed runs a MiniWoB++ evaluation end to end: real chromium, the real web agent against
the fake OpenAI-compatible server (a scripted policy that reads the element list and acts
sensibly), update episodes collected once with no memory, then update-then-retrieve for each
seed in a real Docker sandbox with real MiniLM embeddings. One evaluator, one browser pool and
one server serve all seeds: a chromium start costs seconds, an episode well under one."""

from __future__ import annotations

import json
import re

import pytest

from automemo import benchmarks
from automemo.agents import build_agent
from automemo.agents.memory import MEMORY_MARKER
from automemo.episode_store import EpisodeStore
from automemo.evaluation import EvaluationConfig, Evaluator
from automemo.llm import LLMClient, LLMConfig, RoleConfig
from automemo.llm.messages import message_text
from automemo.measurements.stand_ins.fakellm import FakeLLM
from automemo.paths import SEEDS_DIR
from automemo.toolkit.services import MemoServices

import seedtools
from sandboxtools import sandbox
from webpolicy import competent

pytestmark = [pytest.mark.browser, pytest.mark.docker]

SEEDS = sorted(p.stem for p in SEEDS_DIR.glob("*.py") if not p.name.startswith("_"))
# Two easy types, two train seeds each: one update and one retrieve episode per type.
OPTIONS = {"tasks": ["click-button", "enter-text"], "train_episodes_per_task": 2, "unseen_task_fraction": 0.0}
CONCURRENCY = 2


@pytest.fixture(scope="module")
def server():
    with FakeLLM() as fake:
        fake.set_handler(competent)
        yield fake


@pytest.fixture(scope="module")
def bench():
    b = benchmarks.load("miniwob", OPTIONS)
    yield b
    b.close()


@pytest.fixture(scope="module")
def evaluator(server, bench, tmp_path_factory):
    store = EpisodeStore(tmp_path_factory.mktemp("store"))
    llm = LLMClient(LLMConfig(agent=RoleConfig(model="fake-agent", base_url=server.base_url, max_retries=0)))
    encoders = seedtools.encoders()
    return Evaluator(
        bench,
        sandbox("docker"),
        store,
        agent=build_agent(bench, llm),
        services_factory=lambda node: MemoServices(encoders, None, store.root, node=node),
        config=EvaluationConfig(concurrency=CONCURRENCY, quiet=True),
    )


@pytest.fixture(scope="module")
def update_episodes(evaluator, server):
    """Collected once, before any seed, by the agent without memory."""
    episodes = evaluator.update_episodes("train")
    assert server.requests and not any(MEMORY_MARKER in json.dumps(r["messages"]) for r in server.requests)
    return episodes


def test_update_episodes_are_collected_once_without_memory(update_episodes, evaluator):
    assert [e.metadata["env"] for e in update_episodes] == ["click-button", "enter-text"]
    assert all(e.success for e in update_episodes), [e.judge_feedback for e in update_episodes]
    assert evaluator.update_episodes("train") == update_episodes
    # The premise of the 'learned from the update episodes' check below: what the update pages
    # asked for is not what the retrieve pages ask for.
    asked = " ".join(p.instruction for p in evaluator.partials("train").values())
    assert not any(target in asked for target in _update_targets(update_episodes))


def _episode_requests(requests: list[dict], instruction: str) -> list[dict]:
    """The chat requests of the episode whose task is `instruction`, in order."""
    task_line = f"Task: {instruction}\n"
    return [r for r in requests if task_line in message_text([m for m in r["messages"] if m["role"] == "user"][-1])]


def _update_targets(episodes) -> set[str]:
    """What only the update episodes' pages asked for: the button label / the word to type."""
    return {re.search(r'"([^"]+)"', e.instruction).group(1) for e in episodes}


@pytest.mark.parametrize("seed", SEEDS)
def test_seed_runs_a_miniwob_evaluation(seed, evaluator, server, update_episodes, bench, tmp_path):
    before = len(server.requests)
    result = evaluator.evaluate((SEEDS_DIR / f"{seed}.py").read_text(), evidence_dir=tmp_path, node_id=seed)
    requests = server.requests[before:]

    retrieve = evaluator.split("train").retrieve
    assert len(result.tasks) == len(retrieve) == 2
    assert result.excluded == () and result.info["fatal"] is None
    assert result.errors == {} and [t.error for t in result.tasks] == [None, None]
    assert result.info["n_update_applied"] == len(update_episodes) and result.info["update_failures"] == 0
    assert result.mean > 0 and any(t.score == 1.0 for t in result.tasks)
    # The update episodes were not collected again: every request is a step of a retrieve task.
    assert len(requests) == sum(t.steps for t in result.tasks) > 0

    partials = evaluator.partials("train")
    for task in result.tasks:
        episode = _episode_requests(requests, partials[task.task_id].instruction)
        assert len(episode) == task.steps >= 1, task.task_id
        first = episode[0]["messages"]
        markers = [i for i, m in enumerate(first) if MEMORY_MARKER in message_text(m)]
        if task.payload is not None and task.payload.text.strip():
            # Once, as its own user message right after the system prompt, before the first turn.
            assert markers == [1] and first[0]["role"] == "system" and first[1]["role"] == "user"
            assert task.payload.text.strip()[:200] in message_text(first[1])
            images = [p for p in first[1]["content"] if p.get("type") == "image_url"] if isinstance(first[1]["content"], list) else []
            assert len(images) == len(task.payload.images)
            assert "Step 1 of" in message_text(first[2])
            # Later turns carry the same single memory message, never a second copy.
            assert all(sum(MEMORY_MARKER in message_text(m) for m in r["messages"]) == 1 for r in episode)
        else:
            assert markers == [] and "Step 1 of" in message_text(first[1])

    if seed == "no_memory":
        assert all(t.payload is None or not t.payload.text for t in result.tasks)
    else:
        # A memory-bearing seed learned from the update episodes: its payloads are non-empty and
        # carry what only those episodes' pages asked for.
        texts = [t.payload.text for t in result.tasks]
        assert all(text.strip() for text in texts), texts
        assert any(target in text for target in _update_targets(update_episodes) for text in texts), texts


def test_the_browser_pool_stays_at_one_browser_per_worker(evaluator, bench, update_episodes):
    """Runs after the seeds: evaluations on fresh executor threads reuse the browsers of ended
    ones (one per worker, plus the main thread's for the partial recorders)."""
    evaluator.evaluate((SEEDS_DIR / "no_memory.py").read_text())
    assert bench.pool.size() <= CONCURRENCY + 1
