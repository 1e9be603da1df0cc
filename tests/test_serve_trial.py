"""An online trial over a real `automemo serve` process in bubblewrap (docs/serve.md, "Trials"):
while a user's trial is open, recalls answer with the team-draft interleave of the live and the
trial program, the log records each shown item's team, the agent's feedback credits the teams,
and the adaptation's decision promotes the trial (through the install path) or retires it; a
forget of an episode the trial read, or a trial program's failure, ends it."""

from __future__ import annotations

import json

import pytest

from automemo.adapt.trial import MAX_TRIAL_RECALLS, MIN_DECIDED, TRIALS_LOG, counts_of, decide_trials
from automemo.adapt.version_build import write_program
from automemo.serve.interleave import LIVE, TRIAL, team_draft
from automemo.serve.storage.recall_log import RECALLS, RecallLog
from automemo.serve.storage.state_folder import StateFolder, incarnation
from automemo.serve.storage.trials import TrialPointer
from automemo.serve.storage.versions import NamespaceVersions, VersionRecord, now
from servetools import WORD_MEMORY, Server, call, make_export

# The trial program: the live one's items in the reverse order (so the two teams differ)
REVERSED = WORD_MEMORY.replace('metadata={"evidence": [r for item in top for r in item[3]]',
                               'metadata={"evidence": [r for item in top for r in item[3]][::-1]')
BROKEN = WORD_MEMORY.replace("    def retrieve(self, task):\n", "    def retrieve(self, task):\n        raise RuntimeError('on trial and broken')\n")
WORDS = ["kayak", "violin", "orchid"]


@pytest.fixture()
def served(tmp_path):
    export = make_export(tmp_path / "export", n_shipped=0)
    server = Server(export, tmp_path / "state")
    try:
        yield server, export, StateFolder(tmp_path / "state")
    finally:
        server.stop()


def _remember(url, user, task_id, text):
    status, answer = call(url + "/v1/remember", {"user": user, "episode": {
        "task_id": task_id, "instruction": "chat", "steps": [{"index": 0, "observation": text}]}})
    assert status == 200, answer
    return answer["seq"]


def _history(url, user):
    """Three episodes sharing the word 'trip' (so every recall of it shows all three)."""
    return [_remember(url, user, f"{user}-{w}", f"our trip with the {w} was fun") for w in WORDS]


def _open_trial(state, export, user, seqs, *, source="per-user", trial="t1", program=REVERSED):
    """A trial version installed as a round installs one (the pointer, not current.json)."""
    folder = state.user_dir(user)
    versions = NamespaceVersions(folder)
    staged = versions.stage()
    sha = write_program(export, program, staged, {"source": source})
    with versions.locked():
        version = versions.next_version()
        used = {state.tag(folder.name): tuple(state.tag(f"{folder.name}/{s}") for s in seqs)} if source == "pooled" \
            else {folder.name: tuple(seqs)}
        versions.install(staged, VersionRecord(version=version, created=now(), program_sha256=sha, source=source,
                                               parent=0, used=used), {}, serve=False)
        TrialPointer(version, trial, source, incarnation(folder), now()).write(versions.root)
    return versions, version


def _recall(url, user, text="tell me about the trip"):
    status, answer = call(url + "/v1/recall", {"user": user, "query": text})
    assert status == 200, answer
    return answer


def _logged(state, user, recall_id):
    return next(e for e in RecallLog(state.user_dir(user) / RECALLS).entries() if e.recall_id == recall_id)


def _play(url, state, user, n, team):
    """n recalls; the agent uses the first item of `team` on each."""
    for _ in range(n):
        answer = _recall(url, user)
        logged = _logged(state, user, answer["recall_id"])
        used = [i for i, t in zip(logged.shown, logged.teams) if t == team][:1]
        status, reply = call(url + "/v1/feedback", {"user": user, "recall_id": answer["recall_id"], "used": used})
        assert status == 200, reply


def test_a_trial_recall_is_the_team_draft_interleave_and_the_log_keeps_its_teams(served):
    server, export, state = served
    seqs = _history(server.url, "ana")
    before = _recall(server.url, "ana")
    assert len(before["evidence"]) == 3 and not _logged(state, "ana", before["recall_id"]).teams
    live = before["evidence"]
    _, version = _open_trial(state, export, "ana", seqs)
    answer = _recall(server.url, "ana")
    assert answer["version"] == 0  # the live version still serves: the trial is beside it
    logged = _logged(state, "ana", answer["recall_id"])
    drafted = team_draft(live, live[::-1], len(live), answer["recall_id"])
    assert answer["evidence"] == list(drafted.items) == list(logged.shown)
    assert logged.teams == drafted.teams and logged.trial == "t1"
    assert set(logged.teams) == {LIVE, TRIAL}
    # the text is rendered from the user's log, one line per shown item in the shown order
    lines = answer["text"].splitlines()
    assert [line.split("]")[0][1:] for line in lines] == answer["evidence"]
    assert "teams" not in json.dumps(answer) and "trial" not in answer["metadata"]  # the agent is blind to teams
    # a remember reaches both programs: the new episode is found by the trial's team too
    _remember(server.url, "ana", "ana-new", "the trip to the glacier was cold")
    answer = _recall(server.url, "ana", "glacier trip")
    assert "ana-new#0" in answer["evidence"]
    assert NamespaceVersions(state.user_dir("ana")).current() == 0


def test_feedback_credits_the_teams_and_a_winning_trial_is_promoted(served):
    server, export, state = served
    seqs = _history(server.url, "ana")
    live = _recall(server.url, "ana")["evidence"]
    versions, version = _open_trial(state, export, "ana", seqs)
    _play(server.url, state, "ana", MIN_DECIDED - 1, TRIAL)
    pointer = TrialPointer.read(versions.root)
    counts = counts_of(state.user_dir("ana"), pointer)
    assert (counts.wins, counts.losses, counts.recalls) == (MIN_DECIDED - 1, 0, MIN_DECIDED - 1)
    assert decide_trials(state, 1.0) == []  # fewer than MIN_DECIDED decided recalls: the trial goes on
    _play(server.url, state, "ana", 1, TRIAL)
    [decision] = decide_trials(state, 1.0)
    assert decision.verdict == "promoted" and decision.users == 1 and decision.counts.wins == MIN_DECIDED
    assert versions.current() == version and TrialPointer.read(versions.root) is None
    answer = _recall(server.url, "ana")
    assert answer["version"] == version and not _logged(state, "ana", answer["recall_id"]).teams
    assert answer["evidence"] == live[::-1]  # the promoted program alone answers
    assert (versions.root / TRIALS_LOG).is_file()


def test_a_losing_trial_is_retired_and_the_live_program_answers_alone(served):
    server, export, state = served
    seqs = _history(server.url, "ana")
    versions, version = _open_trial(state, export, "ana", seqs)
    _play(server.url, state, "ana", MIN_DECIDED, LIVE)
    [decision] = decide_trials(state, 1.0)
    assert decision.verdict == "retired" and "losing" in decision.reason
    assert versions.current() == 0 and TrialPointer.read(versions.root) is None
    assert versions.record(version).retired
    answer = _recall(server.url, "ana")
    assert not _logged(state, "ana", answer["recall_id"]).teams


def test_ties_decide_nothing_and_an_undecided_trial_ends_after_its_recalls(served, monkeypatch):
    server, export, state = served
    seqs = _history(server.url, "ana")
    versions, version = _open_trial(state, export, "ana", seqs)
    for _ in range(4):  # one item of each team used: a tie
        answer = _recall(server.url, "ana")
        logged = _logged(state, "ana", answer["recall_id"])
        used = [logged.shown[logged.teams.index(LIVE)], logged.shown[logged.teams.index(TRIAL)]]
        assert call(server.url + "/v1/feedback", {"user": "ana", "recall_id": answer["recall_id"], "used": used})[0] == 200
    _recall(server.url, "ana")  # no feedback
    counts = counts_of(state.user_dir("ana"), TrialPointer.read(versions.root))
    assert (counts.recalls, counts.wins, counts.losses, counts.ties) == (5, 0, 0, 4)
    import automemo.adapt.trial as trial_module
    monkeypatch.setattr(trial_module, "MAX_TRIAL_RECALLS", 5)
    [decision] = decide_trials(state, 1.0)
    assert decision.verdict == "retired" and "undecided" in decision.reason
    assert MAX_TRIAL_RECALLS > MIN_DECIDED and versions.record(version).retired


def test_forgetting_an_episode_the_trial_read_retires_it(served):
    server, export, state = served
    seqs = _history(server.url, "ana")
    versions, version = _open_trial(state, export, "ana", seqs)
    assert _logged(state, "ana", _recall(server.url, "ana")["recall_id"]).teams
    status, answer = call(server.url + "/v1/forget", {"user": "ana", "task_id": "ana-kayak"})
    assert status == 200 and answer["forgotten"] == 1
    record = versions.record(version)
    assert record.retired and "forgotten" in record.retired
    assert TrialPointer.read(versions.root) is None and versions.current() == 0
    answer = _recall(server.url, "ana")
    assert not _logged(state, "ana", answer["recall_id"]).teams and "ana-kayak#0" not in answer["evidence"]


def test_a_failing_trial_program_ends_the_trial_never_the_call(served):
    server, export, state = served
    seqs = _history(server.url, "ana")
    versions, version = _open_trial(state, export, "ana", seqs, program=BROKEN)
    answer = _recall(server.url, "ana")
    assert len(answer["evidence"]) == 3 and not _logged(state, "ana", answer["recall_id"]).teams
    assert versions.record(version).retired and TrialPointer.read(versions.root) is None


def test_a_pooled_trial_is_decided_on_every_users_counts_and_logs_numbers_only(served):
    server, export, state = served
    half = MIN_DECIDED // 2
    pointers = {}
    for user in ("ana", "bob"):
        seqs = _history(server.url, user)
        pointers[user] = _open_trial(state, export, user, seqs, source="pooled", trial="pooled-1")
        _play(server.url, state, user, half, TRIAL)
    # each user alone has too few decided recalls; together they have MIN_DECIDED
    assert all(counts_of(state.user_dir(u), TrialPointer.read(v.root)).decided == half
               for u, (v, _) in pointers.items())
    [decision] = decide_trials(state, 1.0)
    assert decision.verdict == "promoted" and decision.users == 2 and decision.counts.decided == MIN_DECIDED
    assert all(v.current() == version for v, version in pointers.values())
    logged = (state.root / f"adapt-{TRIALS_LOG}").read_text()
    for user in ("ana", "bob"):
        assert user not in logged and state.user_dir(user).name not in logged
    assert "trip" not in logged and not any((state.user_dir(u) / "versions" / TRIALS_LOG).exists() for u in ("ana", "bob"))
