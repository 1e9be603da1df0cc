"""A namespace's open trial: an adapted version served beside the current one, its results
interleaved with the current program's in recalls, until the agent's feedback on those recalls
promotes it or retires it (docs/serve.md, "Trials").

    users/<key>/versions/trial.json   {"version": 3, "trial": "5be1…", "source": "pooled",
                                       "incarnation": "…", "opened": "…"}

The pointer names a version installed like any other (`NamespaceVersions.install(serve=False)`),
so that forgetting an episode its fit read retires it as it retires versions; retiring the
version removes the pointer with it (`NamespaceVersions.retire`). `current.json` does not move
while a trial is open. Adaptation opens and decides trials (`automemo.adapt.trial`); the service
only reads the pointer, answers with the interleave and logs each shown item's team."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from automemo.episode_store import atomic_write
from automemo.serve.interleave import credit
from automemo.serve.storage.recall_log import LoggedRecall

TRIAL_FILE = "trial.json"   # beside current.json, in users/<key>/versions/


@dataclass(frozen=True)
class TrialPointer:
    version: int        # the version on trial
    trial: str          # the trial's id: a pooled trial's is the same in every user it opened for
    source: str         # "per-user" or "pooled"
    incarnation: str    # the namespace's life it was opened on (`state_folder.incarnation`)
    opened: str

    @staticmethod
    def path(versions_root: Path) -> Path:
        return Path(versions_root) / TRIAL_FILE

    @classmethod
    def read(cls, versions_root: Path) -> TrialPointer | None:
        try:
            return cls(**json.loads(cls.path(versions_root).read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def write(self, versions_root: Path) -> None:
        """Call it holding the namespace's versions lock."""
        atomic_write(self.path(versions_root), json.dumps(asdict(self)).encode(), durable=True)

    @classmethod
    def remove(cls, versions_root: Path) -> None:
        cls.path(versions_root).unlink(missing_ok=True)

    @classmethod
    def stamp(cls, versions_root: Path) -> tuple[int, int] | None:
        """What changes when the pointer is written or removed: one stat, compared per call."""
        try:
            st = cls.path(versions_root).stat()
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns


@dataclass(frozen=True)
class TrialCounts:
    """One namespace's record of a trial, numbers only: what a pooled decision may read."""

    recalls: int = 0    # recalls answered with the interleave
    wins: int = 0       # of those with feedback: the agent used more of the trial's team's items
    losses: int = 0     # ... fewer
    ties: int = 0       # ... as many (or none of either): decides nothing

    @property
    def decided(self) -> int:
        return self.wins + self.losses

    def __add__(self, other: TrialCounts) -> TrialCounts:
        return TrialCounts(self.recalls + other.recalls, self.wins + other.wins, self.losses + other.losses,
                           self.ties + other.ties)


def trial_counts(recalls: Iterable[LoggedRecall], trial: str) -> TrialCounts:
    """The trial's counts over a namespace's recall log: each recall it answered, credited by the
    agent's feedback (`interleave.credit`)."""
    counts = TrialCounts()
    for recall in recalls:
        if recall.trial != trial:
            continue
        outcome = 0 if recall.used is None else credit(dict(zip(recall.shown, recall.teams)), recall.used)
        counts = counts + TrialCounts(1, int(outcome > 0), int(outcome < 0),
                                      int(recall.used is not None and outcome == 0))
    return counts
