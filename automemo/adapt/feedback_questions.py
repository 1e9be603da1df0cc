"""A namespace's recalls with feedback as the questions file of its history (the
`conversations` benchmark with `questions = "feedback"`): each shown item mapped to the turn of
the sessions file it names (`history.session_lines`: turn "s<seq>.<step index>"), an item of a
forgotten episode left out, a recall with no used item left out.

The questions keep the recall's words; a per-user round writes them in the user's own work
folder, as it writes their sessions. A pooled round never writes them: a pooled candidate carries
numbers only (docs/serve.md, "Adaptation").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from automemo.adapt.history import History
from automemo.benchmarks.conversation.feedback import DEFAULT_ETA, RecallFeedback, question_line
from automemo.serve.storage.recall_log import LoggedRecall, episode_item_ids

MIN_FEEDBACK = 20
"""Recalls with feedback a round needs before it fits on them (half fit, half race: ten a side
give a paired SE of about 0.1, the most a race can still tell anything with)."""


def turn_of(history: History) -> dict[str, str]:
    """Item id a program may cite -> the sessions file's turn id, over the live episodes."""
    out: dict[str, str] = {}
    for entry in history.entries:
        for item, index in episode_item_ids(entry.episode or {}).items():
            out.setdefault(item, f"s{entry.seq}.{index}")
    return out


def feedback_recalls(history: History, recalls: Sequence[LoggedRecall], conversation: str) -> list[RecallFeedback]:
    """The recalls with feedback, their items as the sessions file's turn ids."""
    turns = turn_of(history)
    out = []
    for recall in recalls:
        if not recall.used:
            continue
        shown = tuple(dict.fromkeys(turns[i] for i in recall.shown if i in turns))
        used = tuple(turns[i] for i in recall.used if i in turns)
        if used:
            out.append(RecallFeedback(recall.recall_id, recall.query, recall.date or _iso(recall.at), shown, used,
                                      conversation))
    return out


def write_questions(path: Path, recalls: Sequence[RecallFeedback], eta: float = DEFAULT_ETA) -> int:
    """Write the questions file; returns how many questions it holds."""
    lines = [line for line in (question_line(r, eta) for r in recalls) if line is not None]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    return len(lines)


def _iso(at: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(at, tz=timezone.utc).isoformat(timespec="seconds") if at else ""
