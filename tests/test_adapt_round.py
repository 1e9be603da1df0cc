"""One adaptation round (automemo/adapt/round.py): a winner is installed only on a paired win and
the server follows it; per-user and pooled rounds carry no user's words into another's memory;
forgetting retires what was derived; a history too short is skipped; an operator's config reaches
the round. Real processes, bubblewrap, MiniLM."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from adapttools import ROOT, chat_sessions, files_holding, served_state
from automemo.adapt import privacy
from automemo.adapt.config import AdaptConfig
from automemo.adapt.round import Outcome, Served, adapt_pooled, adapt_user
from automemo.deploy import read_manifest
from automemo.serve.versions import NamespaceVersions
from servetools import Server, call

SECRET = "zqxpelicanword"
FAST = AdaptConfig(steps=1, cpu_seconds=0, race_draws=1)  # one draw: the tests check the rules, not the power


def _recall(server: Server, user: str, text: str) -> dict:
    status, answer = call(server.url + "/v1/recall", {"user": user, "instruction": text})
    assert status == 200, answer
    return answer


@pytest.mark.slow
def test_a_winner_is_installed_followed_rolled_back_and_retired_by_a_forget(tmp_path):
    histories = {"ana": chat_sessions("ana", secret=SECRET), "bob": chat_sessions("bob")}
    export, state = served_state(tmp_path, histories)
    result = adapt_user(state, Served(export, "bwrap", False), "ana", FAST)
    assert result.outcome is Outcome.INSTALLED, result.reason
    assert result.race["won"] and result.race["candidate_mean"] > result.race["live_mean"] + 0.3
    versions = NamespaceVersions(state.user_dir("ana"))
    assert versions.current() == 1
    record = versions.record(1)
    assert record.parent == 0 and record.source == "per-user"
    assert set(record.used) == {state.user_dir("ana").name}  # fitted on ana's history alone
    read_manifest(versions.program_folder(1))  # a whole export, hashes and all
    assert not (state.user_dir("ana") / "adapt-work").exists() or not any((state.user_dir("ana") / "adapt-work").iterdir())
    # the per-user search read nothing of bob: no file outside ana's folder holds her secret
    assert [p for p in files_holding(state.root, SECRET) if state.user_dir("ana") not in p.parents] == []

    server = Server(export, state.root)
    try:
        word = histories["ana"][3].steps[4].observation.split()[2]  # a rare word of one of her turns
        answer = _recall(server, "ana", word)
        assert answer["version"] == 1 and answer["evidence"]  # the adapted program answers
        assert _recall(server, "bob", word)["version"] == 0  # bob still has the exported program

        rollback = subprocess.run([sys.executable, "-m", "automemo", "memory", "rollback", str(state.root),
                                   "--user", "ana", "--to", "0"], cwd=ROOT, capture_output=True, text=True,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert rollback.returncode == 0, rollback.stderr
        assert _recall(server, "ana", word)["version"] == 0
        refused = subprocess.run([sys.executable, "-m", "automemo", "memory", "rollback", str(state.root),
                                  "--user", "ana", "--to", "7"], cwd=ROOT, capture_output=True, text=True,
                                 env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert refused.returncode != 0 and "no version 7" in refused.stderr

        # forgetting the session that held the secret retires the version whose fit read it
        status, forgot = call(server.url + "/v1/forget", {"user": "ana", "task_id": "ana-session-1"})
        assert status == 200 and forgot["forgotten"] == 1
    finally:
        server.stop()
    retired = versions.record(1)
    assert retired.retired and "forgotten" in retired.retired
    assert [p.name for p in (versions.root / "1").iterdir()] == ["version.json"]
    assert files_holding(state.root, SECRET) == []  # its text, evidence and program state are gone


@pytest.mark.slow
def test_a_pooled_round_carries_no_users_words_into_another_users_memory(tmp_path):
    names = ("anaq7", "bobq7", "cydq7", "deeq7")
    users = {u: chat_sessions(u, secret=SECRET if u == "anaq7" else None) for u in names}
    export, state = served_state(tmp_path, users)
    result = adapt_pooled(state, Served(export, "bwrap", False), FAST)
    assert result.outcome is Outcome.INSTALLED, result.reason
    assert set(result.versions) == set(users)
    for user in names[1:]:
        assert files_holding(state.user_dir(user), SECRET) == []
        assert files_holding(state.user_dir(user), "anaq7") == []  # nor her id, nor her turns' words
        evidence = NamespaceVersions(state.user_dir(user)).evidence(1)
        assert set(evidence) == {"race"} and "per_question" not in evidence["race"]
    # what the round left outside her own folder holds none of her words
    assert [p for p in files_holding(state.root, SECRET) if state.user_dir("anaq7") not in p.parents] == []
    assert [p for p in files_holding(state.root, "anaq7") if state.user_dir("anaq7") not in p.parents] == []


def test_a_candidate_carrying_a_users_words_is_refused_for_pooling():
    live = (ROOT / "seeds" / "no_memory.py").read_text()
    clean = (ROOT / "seeds" / "bm25_rag.py").read_text()
    assert privacy.foreign_words(clean, live) == []
    fitted = clean + f'\nROUTES = {{"what is the {SECRET}": [0.2, 0.8]}}\n'
    assert privacy.foreign_words(fitted, live) == [SECRET]


def test_a_history_too_short_is_skipped_with_the_threshold(tmp_path):
    export, state = served_state(tmp_path, {"ana": chat_sessions("ana", sessions=3)})
    result = adapt_user(state, Served(export, "bwrap", False), "ana", FAST)
    assert result.outcome is Outcome.SKIPPED
    assert "3 sessions" in result.reason and f"{FAST.min_sessions} sessions" in result.reason
    assert NamespaceVersions(state.user_dir("ana")).current() == 0


def test_an_operator_config_with_the_question_role_has_the_llm_write_the_questions(tmp_path):
    from automemo.adapt.search_race import round_config

    export, _ = served_state(tmp_path, {})
    manifest = read_manifest(export)
    sessions = tmp_path / "sessions.jsonl"
    offline = round_config(sessions, manifest, FAST, blocks=3, sandbox="bwrap")
    assert offline.benchmark.questions == "self" and offline.benchmark.options["block_sessions"] == 3
    toml = tmp_path / "adapt.toml"
    toml.write_text('[llm.meta]\nmodel = "qwen2.5-coder"\nbase_url = "http://127.0.0.1:9/v1"\n'
                    '[benchmark.pseudo]\nmax_questions = 50\n')
    written = round_config(sessions, manifest, FAST, blocks=3, sandbox="bwrap", root=export / "program.py",
                           config_file=toml)
    assert written.benchmark.questions == "llm" and written.benchmark.pseudo.max_questions == 50
    assert written.search.root == str(export / "program.py") and written.search.steps == FAST.steps
