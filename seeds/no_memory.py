"""No memory: the root of every search tree.

Stores nothing and returns an empty payload, so the agent runs exactly as it would without a
memory mechanism. Its score is the baseline every other program is measured against (the
search's prior π(v) = κ·max(0, μ(v) − μ(r)) is relative to it), and it is what the meta agent
rewrites first.
"""

from __future__ import annotations

from automemo.contract import EpisodeRecorder, MemoProgram, MemoryPayload, PartialRecorder


class Memo(MemoProgram):
    def update(self, episode: EpisodeRecorder) -> None:
        return None

    def retrieve(self, task: PartialRecorder) -> MemoryPayload:
        return MemoryPayload()
