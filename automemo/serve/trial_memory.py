"""The program on trial beside a namespace's live one (`serve.storage.trials`): opened from the trial
version's snapshot and the log's tail, as a version swap opens a version; every remember applied
to it too; every recall answered with the team-draft interleave of both programs' evidence.

What the answer carries during a trial (docs/serve.md, "Trials"): the interleaved evidence ids,
and a text the server renders from the user's own log, one line per shown item in the shown
order ("[id] the step's words"), cut to the program's budget. Neither program's own text: a
program's text is its own rendering of its items (neighbours, summaries, headers) and cannot be
cut into items, and showing one team's rendering would favour that team's items in what the
agent reads; rendered alike, the agent's choice between items says which ranking served it
better. The images are the two payloads' images drafted the same way, as many as the live
program returned. The answer never says which team an item is (the agent must not know); the
recall log does.

The trial program is the service's guest: its failure never fails a call. A crash or timeout
while it remembers or recalls ends the trial (its version is retired, the pointer with it) and
the call is answered by the live program alone. What it asks the embedding cache is kept out of
the file (`EmbeddingCache.transient`): the file holds what the live program embedded, each entry
recorded against its episode for forgetting, and a trial's extra vectors would escape that."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from automemo.contract import MemoryPayload, PartialRecorder
from automemo.deploy import DeployedMemory
from automemo.sandbox.base import ProgramError
from automemo.serve.interleave import LIVE, TRIAL, Interleaved, team_draft
from automemo.serve.storage.episode_log import LogEntry
from automemo.serve.storage.recall_log import episode_item_ids
from automemo.serve.storage.trials import TrialPointer

# An item's line of the rendered text is cut to this many characters: a long step (a pasted
# document) must not push the other items out of the budget.
ITEM_CHARS = 1_200


@dataclass
class TrialSide:
    pointer: TrialPointer
    memory: DeployedMemory
    items: dict[str, str] = field(default_factory=dict)   # item id -> its line of the rendered text

    def learn_items(self, entries: Iterable[LogEntry]) -> None:
        for entry in entries:
            if entry.episode is not None:
                self.items.update(item_lines(entry.episode))

    def update(self, episode: dict[str, Any], cache: Any) -> None:
        """Apply a remembered episode; raises what the program raised (the caller ends the trial
        on a crash; a program's refusal of one episode is skipped, as a replay skips it)."""
        self.items.update(item_lines(episode))
        with _transient(cache):
            self.memory.update(episode, checked=True)

    def retrieve(self, task: PartialRecorder) -> MemoryPayload:
        """Its payload for a recall's task (called inside the recall's own transient block)."""
        return self.memory.retrieve(task)

    def answer(self, live: MemoryPayload, trial: MemoryPayload, recall_id: str,
               budget: Any) -> tuple[MemoryPayload, Interleaved]:
        """The answer of a recall during the trial, and the interleave it shows."""
        drafted = team_draft(_evidence(live), _evidence(trial), len(_evidence(live)), recall_id)
        images = team_draft([r.path for r in live.images], [r.path for r in trial.images], len(live.images),
                            f"{recall_id}/images")
        by_path = {r.path: r for r in (*trial.images, *live.images)}
        text = "\n".join(self.items.get(item, f"[{item}]") for item in drafted.items)
        payload = MemoryPayload(text=text, images=tuple(by_path[p] for p in images.items),
                                metadata={**live.metadata, "evidence": list(drafted.items)})
        return payload.truncated(budget), drafted

    def close(self) -> None:
        self.memory.close()


def open_trial(pointer: TrialPointer, memory_of: Callable[[Path | None], DeployedMemory],
               snapshot: tuple[Any, Path] | None, live: list[LogEntry], owned: Callable[[dict], dict],
               cache: Any) -> TrialSide:
    """The trial program from its version's snapshot (`snapshot`: its meta and file, or None to
    replay the whole log) and the live log entries after it."""
    memory = memory_of(snapshot[1] if snapshot is not None else None)
    side = TrialSide(pointer, memory)
    try:
        start = snapshot[0].seq if snapshot is not None else 0
        with _transient(cache):
            for entry in live:
                if entry.seq > start:
                    try:
                        memory.update(owned(entry.episode), checked=True)
                    except ProgramError:
                        pass  # it raised when it was remembered too: the same skip
        side.learn_items(live)
    except BaseException:
        memory.close()
        raise
    return side


def item_lines(episode: dict[str, Any]) -> dict[str, str]:
    """Each item id a program may cite for the episode's steps -> its line of a trial's text."""
    steps = {int(s.get("index", i)): s for i, s in enumerate(episode.get("steps") or ())}
    when = str((episode.get("metadata") or {}).get("time") or "")
    out = {}
    for item, index in episode_item_ids(episode).items():
        step = steps.get(index) or {}
        words = " ".join(str(step.get("observation") or "").split())[:ITEM_CHARS]
        out[item] = f"[{item}]{f' ({when})' if when else ''} {words}"
    return out


def _evidence(payload: MemoryPayload) -> list[str]:
    evidence = payload.metadata.get("evidence")
    return [str(e) for e in evidence] if isinstance(evidence, list) else []


def _transient(cache: Any) -> Any:
    return cache.transient() if cache is not None else contextlib.nullcontext()


__all__ = ["LIVE", "TRIAL", "TrialSide", "open_trial", "item_lines"]
