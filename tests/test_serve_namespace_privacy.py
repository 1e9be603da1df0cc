"""What a state folder and the open route say of who uses the service (issue 56): /healthz gives
counts only; a namespace's name on disk is keyed with the folder's secret (a bare hash of a user
id can be tested against a guess), and folders named the old way take the keyed name on start;
adopting a pre-namespace folder is safe to repeat after a kill; a former lease holder's twin line
does not keep a forgotten episode's text; a label-free benchmark describes nothing labelled."""

from __future__ import annotations

import hashlib
import json

import pytest

from automemo.episode_store import EpisodeStore
from automemo.serve.storage.episode_log import EpisodeLog, LogEntry
from automemo.serve.storage.state_folder import LOG, StateFolder
from automemo.serve.user_memory import UserMemory
from servetools import Server, call, make_export

MANIFEST = {"files": {"program.py": "abc"}, "node": {"id": 1}, "benchmark": {"name": "serve"}}


def _episode(task_id: str, text: str, user: str = "ana") -> dict:
    return {"task_id": task_id, "benchmark": "serve", "instruction": "", "reward": 1.0, "success": True,
            "steps": [{"index": 0, "observation": text}], "metadata": {"user": user}}


def test_healthz_gives_counts_and_names_no_user_not_even_by_a_digest(tmp_path):
    export = make_export(tmp_path / "export")
    server = Server(export, tmp_path / "state")
    try:
        for user in ("alice@example.com", "bob"):
            status, _ = call(server.url + "/v1/remember", {"user": user, "content": "the boat is red"})
            assert status == 200
        status, health = call(server.url + "/healthz")
    finally:
        server.stop()
    assert status == 200 and health["open_namespaces"] >= 2
    text = json.dumps(health)
    state = StateFolder(tmp_path / "state")
    for user in ("alice@example.com", "bob"):
        assert hashlib.sha256(user.encode()).hexdigest()[:32] not in text   # no bare digest to test a guess on
        assert state.user_dir(user).name not in text                          # nor the keyed name
    assert health["versions"] == {"0": health["open_namespaces"]}


def test_a_namespace_is_named_with_the_folders_secret_and_old_names_are_rekeyed(tmp_path):
    root = tmp_path / "state"
    root.mkdir()
    (root / "program.json").write_text(json.dumps({"program_sha256": "abc", "shared_experience": False}))
    bare = hashlib.sha256(b"ana").hexdigest()[:32]
    old = root / "users" / bare
    old.mkdir(parents=True)
    (old / "user.json").write_text(json.dumps({"user": "ana"}))
    EpisodeLog(old / LOG).append_episode(_episode("t1", "the boat is red"), received=1.0)
    (root / "leases").mkdir()
    (root / "leases" / f"{bare}.json").write_text(json.dumps({"token": 3}))
    state = StateFolder(root)
    state.lock(MANIFEST, shared_experience=False).close()
    assert state.user_dir("ana").name != bare and not old.exists()      # keyed, not a bare hash
    assert [e.task_id for e in UserMemory("ana", state, None).episodes()] == ["t1"]
    assert json.loads((root / "leases" / f"{state.user_dir('ana').name}.json").read_text())["token"] == 3
    assert (root / "namespace-secret").stat().st_mode & 0o077 == 0      # the owner's alone
    assert StateFolder(tmp_path / "other").key("ana") != state.key("ana")  # each folder its own secret


def test_adopting_a_pre_namespace_folder_again_after_a_kill_logs_nothing_twice(tmp_path, monkeypatch):
    root = tmp_path / "state"
    root.mkdir()
    (root / "program.json").write_text(json.dumps({"program_sha256": "abc", "shared_experience": False}))
    legacy = EpisodeLog(root / LOG)
    for i, user in enumerate(["ana", "ana", "bob"]):
        legacy.append_episode(_episode(f"t{i}", f"episode {i}", user), received=1.0)
    legacy.close()
    EpisodeStore(root / "store")
    real_unlink = type(root).unlink

    def killed(path, *a, **kw):  # the kill comes after every episode moved, before the old log goes
        if path.name == LOG and path.parent == root:
            raise KeyboardInterrupt("killed")
        return real_unlink(path, *a, **kw)

    monkeypatch.setattr(type(root), "unlink", killed)
    with pytest.raises(KeyboardInterrupt):
        StateFolder(root).lock(MANIFEST, shared_experience=False)
    monkeypatch.setattr(type(root), "unlink", real_unlink)
    state = StateFolder(root)
    state.lock(MANIFEST, shared_experience=False).close()
    assert [e.task_id for e in UserMemory("ana", state, None).episodes()] == ["t0", "t1"]
    assert [e.task_id for e in UserMemory("bob", state, None).episodes()] == ["t2"]


def test_forgetting_one_of_two_twin_lines_removes_its_text(tmp_path):
    """A former lease holder's late line kept before the new holder's first line can carry the
    same sequence number: forgetting it must take its text off the disk all the same."""
    state = StateFolder(tmp_path / "state")
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "program.json").write_text(json.dumps({"program_sha256": "abc", "shared_experience": False}))
    folder = state.claim("ana")
    log = EpisodeLog(folder / LOG)
    log._append(LogEntry(seq=1, received=1.0, episode=_episode("old", "the stale zqxtwinword"), token=1))
    log._append(LogEntry(seq=1, received=2.0, episode=_episode("new", "the kite is blue"), token=2))
    log.close()
    assert UserMemory("ana", state, None).forget("old") == 1
    assert b"zqxtwinword" not in (folder / LOG).read_bytes()
    assert [e.task_id for e in UserMemory("ana", state, None).episodes()] == ["new"]
