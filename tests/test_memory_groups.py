"""memory_groups: one session of everything by default; where each task has a memory of its own,
only the asked tasks' episodes, in sessions of a few tasks, the episodes' order kept."""

from __future__ import annotations

from automemo.benchmarks.base import Task
from automemo.contract import EpisodeRecorder
from automemo.evaluation.memory_groups import memory_groups


class Shared:
    def memory_scope(self, task):
        return None


class OwnMemory:
    def memory_scope(self, task):
        return task.data["user"]


EPISODES = tuple(EpisodeRecorder(task_id=f"{user}/s{i}", benchmark="b", instruction="", metadata={"user": user})
                 for i in range(2) for user in "abcd")
TASKS = tuple(Task(f"{user}/Q", "b", "t", "?", {"user": user}) for user in "dba")


def test_a_shared_memory_is_one_session_of_every_episode():
    [group] = memory_groups(Shared(), EPISODES, TASKS, 2)
    assert group.episodes == EPISODES and group.tasks == TASKS


def test_own_memories_feed_only_the_asked_tasks_episodes_a_few_tasks_a_session():
    groups = memory_groups(OwnMemory(), EPISODES, TASKS, 2)
    assert [g.tasks for g in groups] == [TASKS[:2], TASKS[2:]]
    assert [e.task_id for e in groups[0].episodes] == ["b/s0", "d/s0", "b/s1", "d/s1"]  # update order
    assert [e.task_id for e in groups[1].episodes] == ["a/s0", "a/s1"]
    assert memory_groups(OwnMemory(), EPISODES, (), 2) == []
