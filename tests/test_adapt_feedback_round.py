"""A per-user round that learns from what the agent used (docs/serve.md, "Feedback"): with enough recalls carrying
feedback in the user's recall log, the round's search is scored on the older ones and its
candidate raced on the newer ones (split by time), the pseudo kinds guarding; without, it
searches without labels as before. Real processes, bubblewrap, MiniLM."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from adapttools import ROOT, chat_sessions, served_state
from automemo.adapt.config import AdaptConfig
from automemo.adapt.feedback_questions import MIN_FEEDBACK
from automemo.adapt.round import Served, adapt_user
from automemo.adapt.round_log import Outcome
from automemo.serve.storage.recall_log import RECALLS, RecallLog
from automemo.serve.storage.trials import TrialPointer
from automemo.serve.storage.versions import NamespaceVersions

# one step and no sweep: the tests check where the questions come from and how they are split
FAST = AdaptConfig(steps=1, race_draws=1, feedback_sweep=False)


def _log_feedback(folder, history, n):
    """n recalls, one a day, each asking for one turn by its rare word and shown it with two
    others; the agent used the asked turn."""
    log = RecallLog(folder / RECALLS)
    turns = [(step.ref, step.observation.split()[2]) for episode in history for step in episode.steps][::5][:n]
    for day, (ref, word) in enumerate(turns):
        others = [r for r, _ in turns if r != ref][:2]
        rid = f"r{day:03d}"
        log.record(rid, f"what did we say about {word}", [others[0], ref, others[1]], date=f"2024-07-{1 + day % 28:02d}T{day:02d}:00")
        log.feedback(rid, [ref], [others[0]])
    return turns


@pytest.mark.slow
def test_a_round_fits_on_older_feedback_and_races_on_newer(tmp_path):
    histories = {"ana": chat_sessions("ana")}
    export, state = served_state(tmp_path, histories)
    folder = state.user_dir("ana")
    asked = _log_feedback(folder, histories["ana"], MIN_FEEDBACK + 4)
    said = []
    result = adapt_user(state, Served(export, "bwrap", False), "ana", FAST, say=said.append)
    assert any("on the agent's feedback" in line for line in said), said
    # on feedback the candidate is not installed: it opens a trial beside the live program
    # (docs/serve.md, "Trials"), and current.json does not move
    assert result.outcome is Outcome.TRIAL, result.reason
    # raced on the newer half (12 of 24), by time: the last questions asked
    assert result.race["questions"] == (MIN_FEEDBACK + 4) // 2
    versions = NamespaceVersions(folder)
    pointer = TrialPointer.read(versions.root)
    assert versions.current() == 0 and pointer is not None and pointer.version == 1 and pointer.source == "per-user"
    assert not versions.record(1).retired
    listed = subprocess.run([sys.executable, "-m", "automemo", "memory", "versions", str(state.root), "--user", "ana"],
                            cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("* 0") and "\n~ 1\t" in listed.stdout and "~ version 1 is on trial" in listed.stdout
    evidence = json.loads((versions.root / "1" / "evidence.json").read_text())
    raced = set(evidence["questions"].values())
    newest = {f"what did we say about {word}" for _, word in asked[len(asked) // 2:]}
    assert raced == newest


@pytest.mark.slow
def test_too_little_feedback_leaves_the_round_label_free(tmp_path):
    histories = {"ana": chat_sessions("ana")}
    export, state = served_state(tmp_path, histories)
    _log_feedback(state.user_dir("ana"), histories["ana"], MIN_FEEDBACK - 1)
    said = []
    adapt_user(state, Served(export, "bwrap", False), "ana", FAST, say=said.append)
    assert any("without labels" in line for line in said), said


def test_on_feedback_the_first_candidate_goes_on_trial_whatever_its_offline_race_said(tmp_path, monkeypatch):
    """The offline gates cannot credit what only a candidate shows (on the development data they
    vetoed a candidate the trial then promoted, +0.072): on feedback the race is recorded, the
    trial decides. Without feedback a lost race still keeps the live program."""
    from automemo.adapt import round as round_module
    from automemo.adapt.search_race import Proposal, Race

    lost = Race(0.7, 0.6, -0.1, 0.02, 40, 1.0, False, {}, {}, {"difference": -0.2, "se": 0.05, "holds": False})
    monkeypatch.setattr(round_module, "race", lambda *a, **k: lost)
    proposals = [Proposal("class Memo: pass\n", n, f"node {n}", {}) for n in (3, 4)]
    said = []
    chosen, run, why = round_module._first_winner(tmp_path, proposals, ([], []), "live", FAST, said.append,
                                                   on_trial=True)
    assert chosen is proposals[0] and run is lost and why == "" and "for the record" in said[0]
    chosen, run, why = round_module._first_winner(tmp_path, proposals, ([], []), "live", FAST, said.append)
    assert chosen is None and "no candidate won its race (2 raced)" in why
    # a candidate that answers every raced question as the live program does is no trial's
    copy = Race(0.7, 0.7, 0.0, 0.0, 2, 1.0, False, {"a": (1.0, 1.0), "b": (0.5, 0.5)}, {}, {"difference": 0.0, "se": 0.0})
    races = iter([copy, lost])
    monkeypatch.setattr(round_module, "race", lambda *a, **k: next(races))
    chosen, run, why = round_module._first_winner(tmp_path, proposals, ([], []), "live", FAST, said.append,
                                                   on_trial=True)
    assert copy.same_answers and not lost.same_answers and chosen is proposals[1] and run is lost
