"""MiniWoB++ in a REAL headless chromium, driven by the web agent over the real fake-LLM server:
a sensible scripted policy solves click-button, a bad one fails, invalid actions are counted."""

from __future__ import annotations

import re

import pytest

from automemo.agents import build_agent
from automemo.benchmarks import load
from automemo.configtools import ConfigError
from automemo.contract import MemoryPayload
from automemo.episode_store import EpisodeStore
from automemo.llm import LLMClient, LLMConfig, RoleConfig

from webpolicy import click_named_button, click_other_button, last_user_text, type_then_submit

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def bench():
    b = load("miniwob", {"tasks": ["click-button", "enter-text", "click-link", "focus-text", "login-user"],
                         "train_episodes_per_task": 2, "test_episodes_per_task": 1})
    yield b
    b.close()


def _agent(bench, fake):
    return build_agent(bench, LLMClient(LLMConfig(agent=RoleConfig(model="fake", base_url=fake.base_url, max_retries=0))))


def _click_button_task(bench, split="train"):
    s = bench.split(split)
    return next(t for t in s.update + s.retrieve if t.category == "click-button")


def test_sensible_agent_solves_click_button_in_a_real_browser(bench, fake_llm, tmp_path):
    fake_llm.set_handler(click_named_button)
    store = EpisodeStore(tmp_path)
    task = _click_button_task(bench)
    episode = bench.run_episode(task, _agent(bench, fake_llm), MemoryPayload(text="Read the quoted label."), store)
    assert episode.success and episode.reward == 1.0, episode.judge_feedback
    assert bench.score(task, episode, MemoryPayload()).value == 1.0
    assert len(episode.steps) == 1 and episode.steps[0].action.startswith("click [")
    assert episode.instruction.startswith("Click on the") and "button" in episode.initial_observation
    assert store.image_bytes(episode.initial_screenshot).startswith(b"\x89PNG")
    assert episode.usage["llm_calls"] == 1 and episode.usage["invalid_actions"] == 0


def test_wrong_agent_fails_and_invalid_actions_are_counted(bench, fake_llm, tmp_path):
    replies = iter(["I am not sure what to do.", "Action: click [9999]"])
    fake_llm.set_handler(lambda req: next(replies, None) or click_other_button(req))
    episode = bench.run_episode(_click_button_task(bench), _agent(bench, fake_llm), None, EpisodeStore(tmp_path))
    assert not episode.success and episode.reward == 0.0
    assert episode.usage["invalid_actions"] == 1
    assert episode.steps[0].error.startswith("invalid action")
    assert "no element [9999]" in episode.steps[1].error
    # The execution error was shown to the agent on the next turn.
    assert "no element [9999]" in last_user_text(fake_llm.requests[2])
    assert "environment reward -1" in episode.judge_feedback


def test_typing_into_a_field_solves_enter_text(bench, fake_llm, tmp_path):
    fake_llm.set_handler(type_then_submit)
    s = bench.split("train")
    task = next((t for t in s.update + s.retrieve if t.category == "enter-text"), None) or next(
        t for t in bench.split("test").retrieve if t.category == "enter-text")
    episode = bench.run_episode(task, _agent(bench, fake_llm), None, EpisodeStore(tmp_path))
    assert episode.success, (episode.judge_feedback, [s.action for s in episode.steps])
    assert [s.action.split()[0] for s in episode.steps] == ["type", "click"]


def test_partial_is_the_page_before_the_first_action(bench, tmp_path):
    store = EpisodeStore(tmp_path)
    task = _click_button_task(bench, "test")
    partial = bench.partial(task, store)
    assert partial.instruction.startswith("Click on the")
    assert re.search(r'^\[\d+\] button "', partial.initial_observation, re.MULTILINE)
    assert partial.metadata["env"] == "click-button"
    # Same seed, same page.
    bench._partials.clear()
    assert bench.partial(task, store) == partial


def test_splits_hold_unseen_types_and_unseen_seeds(bench):
    seen, unseen = bench.task_types()
    assert unseen and set(seen) | set(unseen) == {"click-button", "enter-text", "click-link", "focus-text", "login-user"}
    train, test = bench.split("train"), bench.split("test")
    train_ids = {t.task_id for t in train.update + train.retrieve}
    assert {t.category for t in train.update + train.retrieve} == set(seen)
    assert {t.category for t in test.retrieve} == set(seen) | set(unseen)
    assert not train_ids & {t.task_id for t in test.retrieve}
    assert not {t.data["seed"] for t in train.update + train.retrieve} & {t.data["seed"] for t in test.retrieve}
    assert test.update == train.update


def test_a_browser_crash_is_an_infrastructure_error_and_the_browser_is_replaced(bench, fake_llm, tmp_path):
    from automemo.benchmarks.base import InfrastructureError

    bench.pool.driver().quit()  # simulate chromium dying under the harness
    fake_llm.set_handler(click_named_button)
    with pytest.raises(InfrastructureError, match="browser"):
        bench.run_episode(_click_button_task(bench), _agent(bench, fake_llm), None, EpisodeStore(tmp_path))
    episode = bench.run_episode(_click_button_task(bench), _agent(bench, fake_llm), None, EpisodeStore(tmp_path))
    assert episode.success


def test_unknown_task_types_and_options_are_rejected():
    with pytest.raises(ValueError, match="unknown task type"):
        load("miniwob", {"tasks": ["click-buton"]})
    with pytest.raises(ConfigError, match="max_step"):
        load("miniwob", {"max_step": 3})
    with pytest.raises(ValueError, match="chromium not found at /nonexistent"):
        load("miniwob", {"browser": {"chrome_binary": "/nonexistent"}})


def test_a_browser_outlives_its_thread_and_serves_the_next_one():
    """Executors may start fresh threads for every evaluation; the pool must not start (and
    keep alive) one chromium per thread ever seen, only one per worker alive at once."""
    import threading

    from automemo.benchmarks.browser import BrowserPool

    pool = BrowserPool()
    try:
        def use(into):
            into.append(pool.driver())

        first, second, both = [], [], []
        for into in (first, second):
            worker = threading.Thread(target=use, args=(into,))
            worker.start()
            worker.join()
        assert second[0] is first[0] and pool.size() == 1
        # Two threads alive at once each need their own browser.
        gate = threading.Barrier(2)
        workers = [threading.Thread(target=lambda: (use(both), gate.wait(timeout=30))) for _ in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert len({id(d) for d in both}) == 2 and first[0] in both and pool.size() == 2
    finally:
        pool.close()
    assert pool.size() == 0
