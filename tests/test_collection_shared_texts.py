"""A collection of update episodes read back from the episode store holds one string per distinct
step text, as the benchmark built it, not one per copy: a LongMemEval M split repeats each shared
session's text in ~60 haystacks' episodes."""

from __future__ import annotations

from automemo.benchmarks.base import Task
from automemo.contract import EpisodeRecorder, Step
from automemo.episode_store import EpisodeStore
from automemo.evaluation.collect import collect_update_episodes
from automemo.evaluation.executor import ThreadExecutor

SHARED = "user: the same turn in every haystack " * 20


class Sessions:
    name = "shared-sessions"

    def describe(self):
        return {"name": self.name}

    def run_episode(self, task, agent, payload, store):
        user = task.task_id.split("/")[0]
        return EpisodeRecorder(task_id=task.task_id, benchmark=self.name, instruction="s", metadata={"user": user},
                               steps=(Step(index=0, observation=SHARED[:-1] + "!", ref=f"{user}/s:1"),
                                      Step(index=1, observation=f"{user} alone", ref=f"{user}/s:2")))


def test_a_stored_collection_reads_back_one_string_per_distinct_text(tmp_path):
    tasks = [Task(f"q{i}/s", "shared-sessions", "session", "s", {}) for i in range(4)]
    store = EpisodeStore(tmp_path / "store")

    def collect():
        return collect_update_episodes(Sessions(), "train", tasks, None, store, executor=ThreadExecutor(1),
                                       infra_retries=0)

    built = collect()
    read = collect()  # a later process: the manifest is complete, every episode comes from the store
    assert built.ran == 4 and read.ran == 0
    assert [e.to_dict() for e in read.episodes] == [e.to_dict() for e in built.episodes]
    first = read.episodes[0].steps[0].observation
    assert all(e.steps[0].observation is first for e in read.episodes)
    assert len({id(e.steps[1].observation) for e in read.episodes}) == 4  # distinct texts stay distinct
