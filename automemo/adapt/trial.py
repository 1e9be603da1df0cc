"""Deciding a trial (`serve.storage.trials`): the agent's feedback on interleaved recalls promotes the
program on trial, or retires it (docs/serve.md, "Trials").

Each recall answered during a trial is a paired comparison: its outcome is the sign of (items
the agent used from the trial's team − from the live team's), `serve.interleave.credit`. Ties
decide nothing. A trial is decided on its decided recalls, n = wins + losses, once n reaches
`MIN_DECIDED`, by the one-sided sign test at the adaptation's z (`AdaptConfig.z`):
- promoted when wins − losses > z·√n (under "no preference" wins − losses has mean 0, SD √n);
- retired when losses − wins > z·√n (clearly losing);
- retired undecided after `MAX_TRIAL_RECALLS` interleaved recalls (a preference that small is
  not worth the trial's second retrieve on every recall).
A pooled trial is one trial in every user it opened for, under one trial id: its decision reads
each user's counts (numbers only, `serve.storage.trials.TrialCounts`) and acts on every user alike.

The decision runs in the server's adaptation loop (`adapt.supervisor.Adapter.tick`), not at
feedback time: a pooled decision reads every user's log, which a user's call must not wait on,
and the service never imports adaptation. Promotion is an install as a round's: under the
namespace's versions lock, only if the trial's version is not retired (a forget retires it,
`serve.storage.versions.retire_derived`), the namespace is the life the trial opened on, and (per user)
every episode the version's fit read is still remembered; then `current.json` names it."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

from automemo.adapt.config import POOLED
from automemo.adapt.history import still_live
from automemo.serve.storage.recall_log import RECALLS, RecallLog
from automemo.serve.storage.state_folder import StateFolder, incarnation
from automemo.serve.storage.trials import TrialCounts, TrialPointer, trial_counts
from automemo.serve.storage.versions import NamespaceGone, NamespaceVersions, now

MIN_DECIDED = 20
"""Decided (non-tie) recalls before a trial may be promoted or retired as losing: fewer, and the
sign test's normal approximation is rough and one user's few questions would decide."""
MAX_TRIAL_RECALLS = 200
"""Interleaved recalls after which an undecided trial is retired."""
TRIALS_LOG = "trials.jsonl"   # users/<key>/versions/trials.jsonl; pooled: STATE/adapt-trials.jsonl

PROMOTED = "promoted"
RETIRED = "retired"


@dataclass(frozen=True)
class TrialDecision:
    trial: str
    source: str
    verdict: str            # PROMOTED or RETIRED
    reason: str
    counts: TrialCounts     # summed over every user of the trial
    users: int              # how many namespaces it acted on

    def to_dict(self) -> dict:
        return {**asdict(self), "at": now()}


def verdict(counts: TrialCounts, z: float) -> tuple[str, str] | None:
    """(PROMOTED or RETIRED, why), or None while the trial goes on."""
    n, lead = counts.decided, counts.wins - counts.losses
    bar = z * math.sqrt(n)
    said = f"{counts.wins} wins, {counts.losses} losses, {counts.ties} ties in {counts.recalls} recalls"
    if n >= MIN_DECIDED and lead > bar:
        return PROMOTED, f"{said}: wins − losses {lead} > {z:g}·√{n} = {bar:.1f}"
    if n >= MIN_DECIDED and -lead > bar:
        return RETIRED, f"{said}: losing, losses − wins {-lead} > {z:g}·√{n} = {bar:.1f}"
    if counts.recalls >= MAX_TRIAL_RECALLS:
        return RETIRED, f"{said}: undecided after {MAX_TRIAL_RECALLS} recalls"
    return None


def open_trials(state: StateFolder) -> dict[str, list[tuple[Path, TrialPointer]]]:
    """Trial id -> (namespace folder, pointer) of every namespace it is open in."""
    out: dict[str, list[tuple[Path, TrialPointer]]] = {}
    for user in state.users():
        folder = state.user_dir(user)
        pointer = TrialPointer.read(NamespaceVersions(folder).root)
        if pointer is not None:
            out.setdefault(pointer.trial, []).append((folder, pointer))
    return out


def counts_of(folder: Path, pointer: TrialPointer) -> TrialCounts:
    return trial_counts(RecallLog(folder / RECALLS).entries(), pointer.trial)


def decide_trials(state: StateFolder, z: float) -> list[TrialDecision]:
    """Decide every open trial that can be decided; returns the decisions made (each logged)."""
    decisions = []
    for trial, where in open_trials(state).items():
        total = sum((counts_of(folder, pointer) for folder, pointer in where), TrialCounts())
        decided = verdict(total, z)
        if decided is None:
            continue
        outcome, reason = decided
        acted = sum(_promote(folder, pointer) if outcome == PROMOTED else _retire(folder, pointer, reason)
                    for folder, pointer in where)
        decision = TrialDecision(trial, where[0][1].source, outcome, reason, total, acted)
        _log(state, where, decision)
        decisions.append(decision)
    return decisions


def _promote(folder: Path, pointer: TrialPointer) -> bool:
    """Serve the trial's version in this namespace, when it may still be installed (else the
    trial ends there, retired)."""
    versions = NamespaceVersions(folder)
    try:
        with versions.locked():
            record = versions.record(pointer.version)
            if TrialPointer.read(versions.root) != pointer or record is None or record.retired:
                return False
            fit_read = record.used.get(folder.name) if record.source != POOLED else ()
            alive = incarnation(folder) == pointer.incarnation and \
                (fit_read is None or still_live(folder, [int(s) for s in fit_read], pointer.incarnation))
            if alive:
                versions.set_current(pointer.version)
                TrialPointer.remove(versions.root)
                return True
    except (OSError, NamespaceGone):
        return False  # the namespace was forgotten whole meanwhile
    _retire(folder, pointer, "won its trial, but an episode it read was forgotten meanwhile")
    return False


def _retire(folder: Path, pointer: TrialPointer, reason: str) -> bool:
    versions = NamespaceVersions(folder)
    try:
        retired = versions.retire(lambda r: r.version == pointer.version, f"its trial ended: {reason}")
        if TrialPointer.read(versions.root) == pointer:
            TrialPointer.remove(versions.root)
    except (OSError, NamespaceGone):
        return False
    return bool(retired)


def _log(state: StateFolder, where: list[tuple[Path, TrialPointer]], decision: TrialDecision) -> None:
    """A pooled decision into STATE/adapt-trials.jsonl (numbers only, no user); a user's into
    the user's own versions folder (it leaves with a forget all)."""
    if decision.source == POOLED:
        paths = [state.root / f"adapt-{TRIALS_LOG}"]
    else:
        paths = [NamespaceVersions(folder).root / TRIALS_LOG for folder, _ in where]
    for path in paths:
        try:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(decision.to_dict(), default=str) + "\n")
        except OSError:
            pass  # a user forgotten whole meanwhile
