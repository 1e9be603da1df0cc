"""What a round leaves on record, and what the next one reads of it: a round's outcome
(`Outcome`, `RoundResult`), the round logs (a user's `versions/rounds.jsonl`, the pooled
`STATE/adapt-rounds.jsonl`), and when the next round is due, per user and pooled: enough history
(`eligible`), grown by `regrow` since the last round that measured something (`not_grown`)."""

from __future__ import annotations

import enum
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from automemo.adapt.config import AdaptConfig
from automemo.adapt.history import History, read_history
from automemo.serve.storage.state_folder import StateFolder
from automemo.serve.storage.versions import NamespaceVersions, now

ROUNDS = "rounds.jsonl"   # a namespace's round log (versions/rounds.jsonl); pooled: STATE/adapt-rounds.jsonl


class Outcome(enum.Enum):
    INSTALLED = "installed"     # a candidate won its race and serves now
    KEPT = "kept"               # the live program stays: the search kept it, or the candidate lost
    SKIPPED = "skipped"         # not enough history (or nothing new since the last round)
    DISCARDED = "discarded"     # it won, but an episode it read was forgotten during the round
    REFUSED = "refused"         # pooled: no candidate had a shape that may be pooled
    TRIAL = "trial"             # on feedback: the candidate is on trial beside the live one


@dataclass(frozen=True)
class RoundResult:
    mode: str
    outcome: Outcome
    reason: str
    users: tuple[str, ...] = ()                 # namespaces the round read, by folder key
    versions: dict[str, int] = field(default_factory=dict)   # folder key -> version installed
    race: dict[str, Any] = field(default_factory=dict)
    search: dict[str, Any] = field(default_factory=dict)
    history: dict[str, int] = field(default_factory=dict)    # sessions, turns read
    seconds: float = 0.0

    def to_dict(self, *, with_users: bool = True) -> dict[str, Any]:
        out = {**asdict(self), "outcome": self.outcome.value, "at": now()}
        if not with_users:
            out.pop("users")
            out.pop("versions")
        return out


def eligible(history: History, config: AdaptConfig) -> str | None:
    """Why this history cannot be adapted on yet, or None."""
    if history.sessions < config.min_sessions or history.turns < config.min_turns:
        return (f"the history holds {history.sessions} sessions and {history.turns} turns; adaptation starts at "
                f"{config.min_sessions} sessions and {config.min_turns} turns")
    return None


def not_grown(rounds_file: Path, history: History, config: AdaptConfig) -> str | None:
    last = last_round(rounds_file)
    if last is None:
        return None
    before = int((last.get("history") or {}).get("sessions") or 0)
    if before and history.sessions < before * (1 + config.regrow):
        return (f"the last round read {before} sessions and the history holds {history.sessions}; the next "
                f"starts at {int(before * (1 + config.regrow)) + 1} (or run `automemo memory adapt` to force one)")
    return None


def user_due(state: StateFolder, user: str, config: AdaptConfig) -> bool:
    """Whether a per-user round on `user` is due: enough history, grown since their last round."""
    folder = state.user_dir(user)
    history = read_history(folder)
    return eligible(history, config) is None and \
        not_grown(NamespaceVersions(folder).root / ROUNDS, history, config) is None


def pooled_due(state: StateFolder, config: AdaptConfig) -> bool:
    """Whether a pooled round is due: enough users with enough history, whose sessions grew by
    `regrow` since the last pooled round."""
    ready = [read_history(state.user_dir(u)) for u in state.users()]
    ready = [h for h in ready if eligible(h, config) is None]
    if len(ready) < config.min_blocks:
        return False
    sessions = sum(h.sessions for h in ready)
    last = last_round(state.root / f"adapt-{ROUNDS}")
    before = int((last or {}).get("history", {}).get("sessions") or 0)
    return not before or sessions >= before * (1 + config.regrow)


def last_round(rounds_file: Path) -> dict[str, Any] | None:
    """The last round of a round log that measured something (not a skip), or None."""
    try:
        lines = [json.loads(line) for line in rounds_file.read_text().splitlines() if line.strip()]
    except (OSError, ValueError):
        return None
    measured = [r for r in lines if r.get("outcome") != Outcome.SKIPPED.value]
    return measured[-1] if measured else None


def append_round(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, default=str) + "\n")
