"""Update episodes, collected once.

The update episodes of a split are run with the fixed agent and no memory, stored in the episode
store under a group named by a hash of (benchmark description, agent description, split), and
then reused by every candidate of the run and by later runs with the same configuration. A
manifest (`collections/<group>.json`) lists them in split order once the collection is complete;
episodes stored before a crash are kept and only the missing ones run again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
from dataclasses import dataclass
from typing import Any, Sequence

from automemo.benchmarks.base import Benchmark, InfrastructureError, Task
from automemo.contract import EpisodeRecorder
from automemo.episode_store import EpisodeStore
from automemo.evaluation.executor import Executor
from automemo.evaluation.progress import track
from automemo.failures import InfrastructureFailure
from automemo.llm import LLMError

INFRASTRUCTURE_ERRORS = (InfrastructureError, InfrastructureFailure, LLMError)
"""Failures that are not the memo program's or the agent's: a browser crash, an API error that
outlived the client's own retries. The harness retries them, then excludes the task.
`BudgetExceeded` is not among them: a spent budget stops the evaluation."""

# One collection per group at a time in this process: two evaluators of the same run asking
# for the same split must not both run (and pay for) the agent on every update task.
_GROUP_LOCKS: dict[str, threading.Lock] = {}
_GROUP_LOCKS_GUARD = threading.Lock()


@dataclass(frozen=True)
class Collection:
    group: str
    episodes: tuple[EpisodeRecorder, ...]   # in split order, excluded tasks left out
    excluded: tuple[str, ...] = ()          # update tasks that kept failing on infrastructure
    ran: int = 0                            # episodes run now (0: everything came from the store)


def agent_description(agent: Any) -> Any:
    """What identifies an agent's behaviour for the cache key: its `describe()` if it has one,
    else its class, its config dataclass and the model and endpoint its LLM answers the agent
    role with: the same agent code on two models collects different experience, and a memo
    program must never be scored on update episodes another model played."""
    if agent is None:
        return None
    describe = getattr(agent, "describe", None)
    if callable(describe):
        return describe()
    config = getattr(agent, "config", None)
    return {
        "class": f"{type(agent).__module__}.{type(agent).__qualname__}",
        "config": dataclasses.asdict(config) if dataclasses.is_dataclass(config) else None,
        "llm": _agent_role(getattr(agent, "llm", None)),
    }


def _agent_role(llm: Any) -> dict[str, Any] | None:
    role = getattr(getattr(llm, "config", None), "agent", None)
    if role is None:
        return None
    # An empty base_url is the SDK's choice: $OPENAI_BASE_URL when set, else OpenAI's endpoint.
    endpoint = role.base_url or os.environ.get("OPENAI_BASE_URL", "")
    return {"model": role.model, "base_url": endpoint.rstrip("/"), "temperature": role.temperature}


def collection_group(benchmark: Benchmark, agent: Any, split: str) -> str:
    key = {"benchmark": benchmark.describe(), "agent": agent_description(agent), "split": split}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()
    return f"update-{split}-{digest[:16]}"


def manifest_path(group: str) -> str:
    return f"collections/{group}.json"


def collect_update_episodes(
    benchmark: Benchmark,
    split: str,
    tasks: Sequence[Task],
    agent: Any,
    store: EpisodeStore,
    *,
    executor: Executor,
    infra_retries: int,
    quiet: bool = True,
) -> Collection:
    group = collection_group(benchmark, agent, split)
    with _GROUP_LOCKS_GUARD:
        lock = _GROUP_LOCKS.setdefault(group, threading.Lock())
    with lock:
        cached = _read_manifest(store, group, tasks)
        if cached is not None:
            return cached
        have = {t.task_id: store.get_episode(group, t.task_id) for t in tasks}
        missing = [t for t in tasks if have[t.task_id] is None]
        excluded: list[str] = []

        def run(task: Task) -> tuple[Task, EpisodeRecorder | None]:
            return task, _run_with_retries(benchmark, task, agent, store, infra_retries)

        with track(f"collecting {split} update episodes", len(missing), quiet=quiet) as bar:
            # A worker lost on every attempt (remote executors): excluded like a crashed browser.
            for task, episode in executor.map(run, missing, lost=lambda task, errors: (task, None)):
                if episode is None:
                    excluded.append(task.task_id)
                else:
                    store.put_episode(group, episode)
                    have[task.task_id] = episode
                bar.advance()
        episodes = tuple(have[t.task_id] for t in tasks if have[t.task_id] is not None)
        excluded_ordered = tuple(t.task_id for t in tasks if t.task_id in set(excluded))
        store.put_json(
            manifest_path(group),
            {
                "group": group,
                "split": split,
                "benchmark": benchmark.describe(),
                "agent": agent_description(agent),
                "task_ids": [e.task_id for e in episodes],
                "excluded": list(excluded_ordered),
            },
        )
        return Collection(group, episodes, excluded_ordered, ran=len(missing))


def _run_with_retries(
    benchmark: Benchmark, task: Task, agent: Any, store: EpisodeStore, infra_retries: int
) -> EpisodeRecorder | None:
    for _ in range(infra_retries + 1):
        try:
            return benchmark.run_episode(task, agent, None, store)
        except INFRASTRUCTURE_ERRORS:
            continue
    return None


def _read_manifest(store: EpisodeStore, group: str, tasks: Sequence[Task]) -> Collection | None:
    """The stored collection if it is complete for exactly these tasks, else None."""
    path = store.root / manifest_path(group)
    if not path.exists():
        return None
    manifest = json.loads(path.read_text())
    listed = list(manifest.get("task_ids", [])) + list(manifest.get("excluded", []))
    if sorted(listed) != sorted(t.task_id for t in tasks):
        return None
    episodes, texts = [], {}
    for task_id in manifest["task_ids"]:
        episode = store.get_episode(group, task_id)
        if episode is None:
            return None
        episodes.append(_sharing_texts(episode, texts))
    return Collection(group, tuple(episodes), tuple(manifest.get("excluded", [])), ran=0)


def _sharing_texts(episode: EpisodeRecorder, texts: dict[str, str]) -> EpisodeRecorder:
    """`episode` with each step's observation the string already read for the same text. A
    collection read back from the store repeats the text of every session that many haystacks
    share (a LongMemEval M split holds each filler session ~60 times), and JSON gives each copy
    its own string; built by the benchmark, they were one."""
    steps = tuple(step if texts.setdefault(step.observation, step.observation) is step.observation
                  else dataclasses.replace(step, observation=texts[step.observation]) for step in episode.steps)
    if all(a is b for a, b in zip(steps, episode.steps)):
        return episode
    return dataclasses.replace(episode, steps=steps)
