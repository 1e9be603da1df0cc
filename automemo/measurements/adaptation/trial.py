"""The trial phase of `automemo bench adapt --feedback` (docs/serve.md, "Trials"): after the
rounds, the newer part of each user's asked questions goes through recall (interleaved for a
user with a trial open) with the agent's feedback; the bench then waits for the server's
adaptation loop to decide the trial and reports it, numbers read from the state folder."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

from automemo.adapt.trial import TRIALS_LOG, open_trials
from automemo.measurements.adaptation.agent_feedback import FeedbackNoise, play
from automemo.serve.storage.recall_log import RECALLS, RecallLog
from automemo.serve.storage.state_folder import StateFolder
from automemo.serve.storage.trials import TrialCounts, trial_counts
from automemo.serve.storage.versions import NamespaceVersions

LOOK_EVERY_S = 2.0


def run_trial_phase(url: str, state: Path, users: dict[str, list[dict]], asked: Sequence[tuple[str, Any]],
                    noise: FeedbackNoise, post: Callable[[str, Any], tuple[int, dict]], *,
                    timeout: float) -> dict[str, Any]:
    folder = StateFolder(state)
    opened = {trial: len(where) for trial, where in open_trials(folder).items()}
    latencies: list[float] = []

    def timed(path: str, body: Any) -> tuple[int, dict]:
        started = time.perf_counter()
        answer = post(url + path, body)
        if path == "/v1/recall":
            latencies.append((time.perf_counter() - started) * 1000)
        return answer

    # its own seed: the agent's noise on these recalls is not a replay of the first part's
    played = play(timed, asked, replace(noise, seed=noise.seed + 1))
    deadline = time.monotonic() + timeout
    while opened and open_trials(folder) and time.monotonic() < deadline:
        time.sleep(LOOK_EVERY_S)
    counts: dict[str, TrialCounts] = {}
    for user in users:
        entries = RecallLog(folder.user_dir(user) / RECALLS).entries()
        for trial in opened:
            counts[trial] = counts.get(trial, TrialCounts()) + trial_counts(entries, trial)
    decisions = _decisions(folder, users)
    still_open = set(open_trials(folder))
    return {
        "opened": len(opened), "users_in_trial": sum(opened.values()),
        "asked": played.recalls, "recalls_with_feedback": played.with_feedback,
        "trials": [{"recalls": c.recalls, "wins": c.wins, "losses": c.losses, "ties": c.ties,
                    "state": "open" if t in still_open else _verdict(decisions, t)} for t, c in counts.items()],
        "promoted": sum(1 for t in counts if _verdict(decisions, t) == "promoted"),
        "recall_p95_trial_ms": sorted(latencies)[int(0.95 * (len(latencies) - 1))] if latencies else None,
    }


def _decisions(folder: StateFolder, users: dict[str, list[dict]]) -> list[dict[str, Any]]:
    files = [folder.root / f"adapt-{TRIALS_LOG}"] + [NamespaceVersions(folder.user_dir(u)).root / TRIALS_LOG
                                                    for u in users]
    return [json.loads(line) for f in files if f.is_file() for line in f.read_text().splitlines() if line.strip()]


def _verdict(decisions: list[dict[str, Any]], trial: str) -> str:
    said = [d["verdict"] for d in decisions if d.get("trial") == trial]
    return said[-1] if said else "undecided"
