"""A cheap exported folder for the serve tests and `automemo bench serve`: a word-overlap memo
program (no model) and a few shipped update episodes, written in the export format with the
manifest's hashes, as `automemo export` would write them."""

from __future__ import annotations

from pathlib import Path

from automemo.bench.serve_export import write_export
from automemo.contract import EpisodeRecorder, Step

WORD_MEMORY = '''
from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.items = []
        self.pictures = {}

    def update(self, episode):
        if episode.instruction == "poison":
            raise ValueError("this program refuses poison")
        text = " ".join([episode.instruction] + [s.observation for s in episode.steps]
                        + [episode.final_answer or ""])
        refs = [s.ref or f"{episode.task_id}#{s.index}" for s in episode.steps]
        self.items.append((episode.task_id, str(episode.metadata.get("user") or ""), text, refs))
        self.pictures[episode.task_id] = [s.screenshot for s in episode.steps if s.screenshot]

    def retrieve(self, task):
        words = set(task.instruction.lower().split())
        scope = str(task.metadata.get("user") or "")
        scored = sorted(((len(words & set(t.lower().split())), i) for i, (_, user, t, _) in enumerate(self.items)
                         if not scope or user == scope), reverse=True)
        top = [self.items[i] for score, i in scored[:3] if score > 0]
        return MemoryPayload(
            text="\\n".join(f"[{tid}] {t}" for tid, _, t, _ in top),
            images=tuple(task.task_images[:1]) or tuple(p for item in top for p in self.pictures[item[0]])[:1],
            metadata={"evidence": [r for item in top for r in item[3]], "n_memories": len(self.items)},
        )
'''


def shipped_episode(i: int) -> EpisodeRecorder:
    return EpisodeRecorder(
        task_id=f"shipped-{i}", benchmark="minigallery", instruction=f"shipped fact number {i}",
        steps=(Step(index=0, observation=f"the shipped colour {i} is teal", action="note", ref=f"s{i}"),),
        final_answer="teal", reward=1.0, success=True,
    )


def make_export(out: Path, program: str = WORD_MEMORY, n_shipped: int = 3) -> Path:
    return write_export(out, program, [shipped_episode(i) for i in range(n_shipped)], node_id=3, extra={
        "run": {"run_id": "test", "path": "/secret/server/path/runs/test"},
        "config": {"runs_dir": "/secret/server/path/runs"},
    })
