"""What a served namespace remembered, as the sessions file of the `conversations` benchmark
(docs/benchmarks.md, "Your own conversations"): the data an adaptation's label-free search reads.

Each live episode of the log is one session (an acknowledged remember: a chat session, an agent
trajectory), each of its steps one turn (its observation, and its action when it has one). Ids
are the log's sequence numbers, not the client's task ids: a pooled search writes every
namespace's sessions into one file under opaque conversation names, and nothing a user chose (a
task id, a user name) is in it. A session's date is kept when it is an ISO date or datetime (the
file's format); other dates leave the session undated, in log order. Images are named by their
path in the namespace's store, read in place."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Sequence

from automemo.serve.storage.episode_log import EpisodeLog, LogEntry, live_episodes
from automemo.serve.storage.state_folder import LOG, STORE, incarnation


@dataclass(frozen=True)
class History:
    """One namespace's live episodes, read from its log at one moment."""

    key: str                          # the namespace's folder name (a keyed digest of its user id)
    store: Path                       # its image store
    entries: tuple[LogEntry, ...]     # live episodes, in log order
    # which life of the namespace they were read from (`state_folder.incarnation`; None: it had
    # no namespace): sequence numbers restart at 1 after a forget all, so they alone cannot say
    # that what a round read is still what the user remembers
    incarnation: str | None = None

    @property
    def sessions(self) -> int:
        return sum(1 for e in self.entries if _turns(e.episode, self.store))

    @property
    def turns(self) -> int:
        return sum(len(_turns(e.episode, self.store)) for e in self.entries)

    @property
    def seqs(self) -> tuple[int, ...]:
        return tuple(e.seq for e in self.entries)


def read_history(user_dir: Path) -> History:
    """The namespace's live episodes now (read without the writer's handle: a served namespace
    keeps appending while a round works on what it read)."""
    # the incarnation first: read after the log, a forget all and a new claim in between would
    # pair the old life's episodes with the new life's identity
    born = incarnation(user_dir)
    entries = live_episodes(EpisodeLog(user_dir / LOG).read())
    return History(user_dir.name, user_dir / STORE, tuple(entries), born)


def still_live(user_dir: Path, seqs: Iterable[int], born: str | None) -> bool:
    """Whether every one of these log entries of the namespace's life `born` is still
    remembered: the namespace is that life still (not forgotten whole and used again since, which
    restarts sequence numbers at 1), and none of them was forgotten since."""
    if born is None or incarnation(user_dir) != born:
        return False
    live = {e.seq for e in live_episodes(EpisodeLog(user_dir / LOG).read())}
    return set(seqs) <= live


def session_lines(history: History, conversation: str) -> list[dict[str, Any]]:
    """The history's sessions as lines of the sessions file, under `conversation`."""
    lines = []
    for entry in history.entries:
        # turn ids are unique within a conversation: each is its session's id and its step's index
        turns = [{**t, "id": f"s{entry.seq}.{t['id']}"} for t in _turns(entry.episode, history.store)]
        if not turns:
            continue
        line: dict[str, Any] = {"id": f"s{entry.seq}", "conversation": conversation, "turns": turns}
        date = _iso_date(_episode_time(entry.episode))
        if date:
            line["date"] = date
        lines.append(line)
    return lines


def write_sessions(path: Path, histories: Sequence[tuple[History, str]]) -> int:
    """Write the sessions of each (history, conversation name) to `path`; returns the sessions."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with open(path, "w", encoding="utf-8") as fh:
        for history, conversation in histories:
            for line in session_lines(history, conversation):
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
                count += 1
    return count


def _turns(episode: dict[str, Any] | None, store: Path) -> list[dict[str, Any]]:
    out = []
    for step in (episode or {}).get("steps") or ():
        meta = step.get("metadata") or {}
        speaker = str(meta.get("speaker") or "user")
        text = str(step.get("observation") or "")
        # a conversation benchmark's turn reads "speaker: text"; the file names the speaker apart
        text = text[len(speaker) + 2:] if text.startswith(f"{speaker}: ") else text
        if step.get("action"):
            text = f"{text}\n{step['action']}".strip()
        images = []
        shot = step.get("screenshot")
        if isinstance(shot, dict) and shot.get("path") and (store / shot["path"]).is_file():
            images.append({"path": str((store / shot["path"]).resolve()), "caption": shot.get("caption") or ""})
        if not text.strip() and not any(i["caption"] for i in images):
            continue  # the sessions file refuses a turn with nothing to read
        out.append({"id": f"{step.get('index', len(out))}", "speaker": speaker, "text": text,
                    **({"images": images} if images else {})})
    return out


def _episode_time(episode: dict[str, Any] | None) -> str:
    episode = episode or {}
    when = (episode.get("metadata") or {}).get("time")
    if not when:
        steps = episode.get("steps") or ()
        when = ((steps[0].get("metadata") or {}).get("time")) if steps else None
    return str(when or "")


def _iso_date(given: str) -> str:
    for candidate in (given.strip(), given.strip()[:19], given.strip()[:10]):
        try:
            datetime.fromisoformat(candidate)
            return candidate
        except ValueError:
            continue
    return ""
