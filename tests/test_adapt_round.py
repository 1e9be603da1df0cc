"""One adaptation round (automemo/adapt/round.py): a winner is installed only on a paired win and
the server follows it; per-user and pooled rounds carry no user's words into another's memory;
forgetting retires what was derived; a history too short is skipped; an operator's config reaches
the round. Real processes, bubblewrap, MiniLM."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from adapttools import ROOT, chat_sessions, files_holding, served_state
from automemo.adapt import privacy
from automemo.adapt.config import AdaptConfig
from automemo.adapt.round import Served, adapt_pooled, adapt_user
from automemo.adapt.round_log import Outcome
from automemo.deploy import read_manifest
from automemo.serve.storage.versions import NamespaceVersions
from servetools import Server, call

SECRET = "zqxpelicanword"
FAST = AdaptConfig(steps=1, race_draws=1)  # one draw: the tests check the rules, not the power


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
    assert set(result.versions) == {state.user_dir(u).name for u in users}   # by folder key, never a user id
    keys = {state.user_dir(u).name for u in names}
    for user in names[1:]:
        assert files_holding(state.user_dir(user), SECRET) == []
        assert files_holding(state.user_dir(user), "anaq7") == []  # nor her id, nor her turns' words
        versions = NamespaceVersions(state.user_dir(user))
        evidence = versions.evidence(1)
        assert set(evidence) == {"race"} and "per_question" not in evidence["race"]
        # no node summary (it can quote a stage fitted on the users' questions) in the manifest
        manifest = read_manifest(versions.program_folder(1))
        assert manifest["node"]["summary"] == "" and "summary" not in manifest["adapted"]
        # no other user's key or sequence numbers: keyed tags only
        record = json.dumps(versions.record(1).to_dict())
        assert not any(key in record for key in keys) and '"used": {}' not in record
    # what the round left outside her own folder holds none of her words
    assert [p for p in files_holding(state.root, SECRET) if state.user_dir("anaq7") not in p.parents] == []
    assert [p for p in files_holding(state.root, "anaq7") if state.user_dir("anaq7") not in p.parents] == []


def test_a_candidate_carrying_a_users_words_is_refused_for_pooling():
    live = (ROOT / "seeds" / "hybrid_rag.py").read_text()
    assert privacy.refusal(live, live) is None                                  # the live program
    assert privacy.refusal((ROOT / "seeds" / "murag.py").read_text(), live) is None   # a seed, transplanted
    retuned = live.replace("= 10", "= 17", 1)
    assert retuned != live and privacy.refusal(retuned, live) is None           # numbers changed only
    # every place a user's words could hide that the old vocabulary check let through
    hidden = [live + "\n# Ana Kowalczyk PIN 8317 lives at Rua Xyzzy\n",       # a comment
              live + '\nNOTE = b"ana kowalczyk"\n',                           # a bytes constant
              live + "\nAGES = {34: 0.5, 71: 0.25}\n",                        # int dict keys (ages)
              live + '\nINITIALS = {"ak": 0.5}\n',                            # two-letter keys
              live + "\nkowalczyk = 1\n",                                     # an identifier
              live + '\nWORDS = ["diagnosis", "sister", "bank", "address"]\n',  # words the package uses
              live.replace("= 10", "= 8317", 1).replace('"""', '"""diagnosis ', 1)]
    for candidate in hidden:
        assert privacy.refusal(candidate, live) is not None, candidate[-80:]


def test_a_pooled_recipe_carries_no_router_ranker_or_routes_and_a_crossover_only_such_parents():
    from automemo.meta.offline.crossover import crossover_source
    from automemo.meta.source.recipe import Recipe, render_recipe

    live = (ROOT / "seeds" / "hybrid_rag.py").read_text()
    recipe = render_recipe(Recipe())
    assert privacy.refusal(recipe, live) is None
    routed = render_recipe(Recipe(routes={"temporal": {"window": 1}}, router={"labels": ["temporal"], "ak": 0.5}))
    assert privacy.refusal(routed, live) is not None        # a router's features are words
    crossed = crossover_source(live, recipe, name_a="node 1", name_b="node 4", weight_a=0.6)
    assert privacy.refusal(crossed, live) is None
    tainted = crossover_source(live + "\n# Ana Kowalczyk\n", recipe, name_a="node 1", name_b="node 4")
    assert privacy.refusal(tainted, live) is not None
    assert privacy.refusal(crossed.replace("node 1", "Ana Kowalczyk", 1), live) is not None


def test_a_pooled_round_runs_the_offline_meta_agent_and_a_shared_cache_is_refused(tmp_path):
    from automemo.adapt.config import AdaptConfigRefused
    from automemo.adapt.search_race import round_config

    export, _ = served_state(tmp_path, {})
    toml = tmp_path / "adapt.toml"
    toml.write_text('[llm.meta]\nmodel = "qwen2.5-coder"\nbase_url = "http://127.0.0.1:9/v1"\n')
    pooled = round_config(tmp_path / "s.jsonl", read_manifest(export), replace(FAST, run_config=toml), blocks=3,
                          sandbox="bwrap", pooled=True)
    assert pooled.llm.meta.model == "" and pooled.benchmark.questions == "self"  # no LLM shown users' turns
    shared = tmp_path / "shared.toml"
    shared.write_text('[embeddings]\ncache_path = "/var/cache/automemo/vectors.sqlite"\n')
    with pytest.raises(AdaptConfigRefused, match="no forget cleans"):
        replace(FAST, run_config=shared)
    done = subprocess.run([sys.executable, "-m", "automemo", "serve", str(export), "--state", str(tmp_path / "st"),
                           "--port", "1", "--adapt", "--adapt-run-config", str(shared)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "--adapt-run-config" in done.stderr and "no forget cleans" in done.stderr


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
    written = round_config(sessions, manifest, replace(FAST, run_config=toml), blocks=3, sandbox="bwrap",
                           root=export / "program.py")
    assert written.benchmark.questions == "llm" and written.benchmark.pseudo.max_questions == 50
    assert written.search.root == str(export / "program.py") and written.search.steps == FAST.steps


def test_a_versions_rebuild_store_is_inside_its_staging_folder_and_leaves_before_install(tmp_path, monkeypatch):
    """A killed round must leave no copy of a user's images or vectors where no forget looks (the
    machine's temporary folder): the rebuild's private store is in the staging folder."""
    from automemo.adapt import version_build
    from automemo.adapt.history import read_history

    export, state = served_state(tmp_path, {"ana": chat_sessions("ana", sessions=2, turns=2)})
    staged = NamespaceVersions(state.user_dir("ana")).stage()
    seen = {}

    class Memory:
        def update(self, episode, checked):
            pass

        def snapshot(self):
            return b"state"

        def close(self):
            pass

    def load_memory(folder, *, store_dir, **kw):
        seen["store"] = store_dir
        assert store_dir.is_dir()
        return Memory()

    monkeypatch.setattr(version_build, "load_memory", load_memory)
    version_build.prebuild_snapshot(staged, read_history(state.user_dir("ana")), sandbox="bwrap",
                                    shared_experience=False, program_sha256="x")
    assert staged in seen["store"].parents and not seen["store"].exists()
    assert (staged / "snapshot.bin").read_bytes() == b"state"


def test_a_forget_removes_a_version_being_built_and_its_round_installs_nothing(tmp_path):
    from automemo.serve.user_memory import UserMemory

    export, state = served_state(tmp_path, {"ana": chat_sessions("ana", sessions=3, turns=2)})
    versions = NamespaceVersions(state.user_dir("ana"))
    staged = versions.stage()
    (staged / "snapshot.bin").write_bytes(b"a pickled memory holding session 1")
    assert UserMemory("ana", state, None).forget("ana-session-1") == 1
    assert not staged.exists()


def test_the_discovered_default_may_be_pooled_as_shipped_or_retuned_and_not_with_a_word_added():
    from automemo.programs import discovered_path

    shipped = discovered_path().read_text()
    live = (privacy.SEEDS_DIR / "hybrid_rag.py").read_text()
    assert privacy.refusal(shipped, live) is None
    retuned = shipped.replace("RRF_K = 60", "RRF_K = 61", 1)
    assert retuned != shipped and privacy.refusal(retuned, live) is None
    assert privacy.refusal(shipped + "\n# Ana Kowalczyk lives at Rua Xyzzy\n", live) is not None
