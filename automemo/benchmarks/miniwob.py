"""MiniWoB++: the web tasks shipped in the `miniwob` wheel, run in headless Debian
chromium with the LLM web agent; the environment's own reward decides success.

Splits: a few task types are held out entirely (unseen types, test only); every other type has
train episodes (split into update and retrieve batches, stratified by type) and different test
seeds. So the test split measures both generalisation to new seeds of seen types and transfer to
unseen types. The test split's update batch is the train update batch (memory is built from the
same experience before the test questions).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from automemo.benchmarks.base import Benchmark, InfrastructureError, Split, Task, TaskScore
from automemo.benchmarks.browser import BrowserConfig, BrowserPool, resolve_binaries
from automemo.benchmarks.splits import holdout, stratified_split
from automemo.contract import EpisodeRecorder, MemoryPayload, PartialRecorder, Step
from automemo.episode_store import EpisodeStore

# Task types a text LLM agent with click / type / press actions can do from the element list.
DEFAULT_TASKS = (
    "click-button", "click-button-sequence", "click-checkboxes", "click-dialog", "click-dialog-2",
    "click-link", "click-option", "click-tab", "click-test-2", "enter-password", "enter-text",
    "enter-text-2", "focus-text", "focus-text-2", "login-user",
)


@dataclass(frozen=True)
class MiniWoBOptions:
    seed: int = 0                        # fixes the held-out types and every episode's page seed
    tasks: tuple[str, ...] = DEFAULT_TASKS  # task types (file names in miniwob/html/miniwob)
    train_episodes_per_task: int = 4     # seeds per seen type in the train split
    test_episodes_per_task: int = 4      # seeds per type in the test split (seen and unseen)
    unseen_task_fraction: float = 0.2    # task types held out for the test split only
    retrieve_fraction: float = 0.5       # share of train episodes in the retrieve (validation) batch
    max_steps: int = 15                  # agent actions per episode (the paper's budget)
    episode_time_s: float = 600.0        # in-page episode timer (the pages' default of 10 s is for RL agents)
    browser: BrowserConfig = BrowserConfig()


class MiniWoB(Benchmark):
    name = "miniwob"
    family = "web"
    Options = MiniWoBOptions
    # The environment (task type) and page seed are how an application opens the page at all.
    question_time_keys = frozenset({"env", "seed", "site"})

    def __init__(self, options: MiniWoBOptions = MiniWoBOptions(), *, llm: Any = None) -> None:
        from automemo.benchmarks.miniwob_page import task_names

        known = set(task_names())
        unknown = [t for t in options.tasks if t not in known]
        if unknown:
            raise ValueError(f"miniwob: unknown task type(s) {unknown}; the miniwob package ships: {', '.join(sorted(known))}")
        if not options.tasks:
            raise ValueError("miniwob: `tasks` is empty; list at least one task type")
        try:
            # A missing browser is a setup mistake: say so now, not as an episode failure
            # retried and excluded task after task.
            resolve_binaries(options.browser)
        except InfrastructureError as exc:
            raise ValueError(f"miniwob: {exc}") from None
        self.options = options
        self.pool = BrowserPool(options.browser)
        self._partials: dict[tuple[str, str], PartialRecorder] = {}

    def agent_kind(self) -> str:
        return "web"

    # splits ----------------------------------------------------------------------------------

    def task_types(self) -> tuple[list[str], list[str]]:
        """(seen, unseen) task types."""
        return holdout(list(self.options.tasks), self.options.unseen_task_fraction, self.options.seed, salt="miniwob")

    def _task(self, env: str, split: str, i: int) -> Task:
        # Page seeds: train and test draw from disjoint ranges, so no test page was seen in training.
        seed = self.options.seed * 100_000 + (0 if split == "train" else 50_000) + i
        return Task(f"{env}:{split}{i}", self.name, env, f"MiniWoB++ {env} (seed {seed})", {"env": env, "seed": seed})

    def split(self, name: str) -> Split:
        seen, unseen = self.task_types()
        o = self.options
        train = [self._task(env, "train", i) for env in seen for i in range(o.train_episodes_per_task)]
        update, retrieve = stratified_split(train, lambda t: t.category, o.retrieve_fraction, o.seed, salt="miniwob-train")
        if name == "train":
            return Split("train", tuple(update), tuple(retrieve))
        if name == "test":
            test = [self._task(env, "test", i) for env in seen + unseen for i in range(o.test_episodes_per_task)]
            return Split("test", tuple(update), tuple(test))
        raise ValueError(f"miniwob has splits 'train' and 'test', not {name!r}")

    # episodes --------------------------------------------------------------------------------

    def _page(self, task: Task):
        from automemo.benchmarks.miniwob_page import MiniWoBPage

        page = MiniWoBPage(self.pool.driver(), task.data["env"], int(self.options.episode_time_s * 1000))
        page.start(task.data["seed"])
        return page

    def partial(self, task: Task, store: EpisodeStore) -> PartialRecorder:
        key = (task.task_id, str(store.root))
        if key not in self._partials:
            self._partials[key] = self._browser_call(lambda: self._partial(task, store, self._page(task).observe()))
        return self._partials[key]

    def _partial(self, task: Task, store: EpisodeStore, state) -> PartialRecorder:
        return PartialRecorder(
            task_id=task.task_id,
            benchmark=self.name,
            instruction=state.utterance,
            initial_observation=state.elements,
            initial_screenshot=store.put_image(state.screenshot),
            metadata={"env": task.data["env"], "seed": task.data["seed"], "site": "miniwob"},
        )

    def run_episode(self, task: Task, agent: Any, payload: MemoryPayload | None, store: EpisodeStore) -> EpisodeRecorder:
        if agent is None:
            raise ValueError("miniwob needs the web agent: configure the agent role (llm.agent.model)")
        return self._browser_call(lambda: self._run(task, agent, payload, store))

    def _browser_call(self, fn):
        return self.pool.guarded(fn)

    def _run(self, task: Task, agent: Any, payload: MemoryPayload | None, store: EpisodeStore) -> EpisodeRecorder:
        started = time.monotonic()
        page = self._page(task)
        state = page.observe()
        partial = self._partial(task, store, state)
        run = agent.start(state.utterance, payload, store)
        steps: list[Step] = []
        error: str | None = None
        final_answer = None
        outcome = page.outcome()
        from automemo.interaction.web import WebObservation

        for index in range(self.options.max_steps):
            if outcome["done"]:
                break
            shot = store.put_image(state.screenshot) if index else partial.initial_screenshot
            turn = run.act(WebObservation(state.elements, state.screenshot, error))
            error = None
            if turn.action is None:
                steps.append(Step(index, state.elements, shot, turn.reply.strip()[:500], turn.thought, f"invalid action: {turn.error}"))
            elif turn.action.kind == "answer":
                final_answer = turn.action.text
                steps.append(Step(index, state.elements, shot, str(turn.action), turn.thought))
                break
            else:
                error = page.execute(turn.action, state.refs)
                steps.append(Step(index, state.elements, shot, str(turn.action), turn.thought, error))
            outcome = page.outcome()
            if not outcome["done"]:
                state = page.observe()
        raw = float(outcome["raw_reward"]) if outcome["done"] else -1.0
        success = raw > 0
        reason = str(outcome.get("reason") or "") if outcome["done"] else f"not done after {len(steps)} steps"
        return EpisodeRecorder(
            **{**partial.to_dict(), "task_images": (), "initial_screenshot": partial.initial_screenshot},
            steps=tuple(steps),
            final_answer=final_answer,
            reward=1.0 if success else 0.0,
            success=success,
            judge_feedback=f"environment reward {raw:+.2f}" + (f" ({reason})" if reason else ""),
            usage={**run.usage, "wall_s": round(time.monotonic() - started, 3)},
        )

    def score(self, task: Task, episode: EpisodeRecorder, payload: MemoryPayload) -> TaskScore:
        value = 1.0 if episode.success else 0.0
        return TaskScore(value, {"success": value, "steps": float(len(episode.steps))}, feedback=episode.judge_feedback or "")

    def describe(self) -> dict[str, Any]:
        seen, unseen = self.task_types()
        return {"name": self.name, "family": self.family, "seen_tasks": seen, "unseen_tasks": unseen,
                "train": {k: len(v) for k, v in (("update", self.split("train").update), ("retrieve", self.split("train").retrieve))},
                "test_retrieve": len(self.split("test").retrieve), "max_steps": self.options.max_steps,
                "seed": self.options.seed}

    def close(self) -> None:
        self.pool.close()
