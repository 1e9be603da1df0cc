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


def test_a_session_holds_at_most_the_bounded_update_steps_whatever_the_memories_count():
    """An M-sized haystack is ten S-sized ones: the bound on steps, not the count of memories,
    keeps what one guest holds (episodes without steps count as one step each)."""
    from automemo.contract import Step

    def episode(user, i, steps):
        return EpisodeRecorder(task_id=f"{user}/s{i}", benchmark="b", instruction="", metadata={"user": user},
                               steps=tuple(Step(index=k, observation="t") for k in range(steps)))

    sizes = {"a": 3, "b": 3, "c": 7, "d": 1}
    episodes = tuple(episode(user, i, n) for i in range(2) for user, n in sizes.items())
    tasks = tuple(Task(f"{user}/Q", "b", "t", "?", {"user": user}) for user in "abcd")
    groups = memory_groups(OwnMemory(), episodes, tasks, 50, update_steps_per_session=12)
    # a + b hold 12 steps; c alone holds 14, past the bound: a session of its own; d follows.
    assert [[t.task_id for t in g.tasks] for g in groups] == [["a/Q", "b/Q"], ["c/Q"], ["d/Q"]]
    assert [sum(len(e.steps) for e in g.episodes) for g in groups] == [12, 14, 2]
    unbounded = memory_groups(OwnMemory(), episodes, tasks, 50, update_steps_per_session=0)
    assert len(unbounded) == 1 and unbounded[0].episodes == episodes
    no_steps = memory_groups(OwnMemory(), EPISODES, TASKS, 50, update_steps_per_session=2)
    assert [g.tasks for g in no_steps] == [TASKS[:1], TASKS[1:2], TASKS[2:]]
