"""The state folder of a served memory, on disk: tombstones, the log rewrite that makes forgetting
leave the disk, snapshots that vouch for their data, whole-user deletion, and the adoption of a
state folder written before users had their own memory."""

from __future__ import annotations

import json

import pytest

from automemo.assembly import EMBEDDING_CACHE
from automemo.contract import EpisodeRecorder, Step
from automemo.episode_store import EpisodeStore
from automemo.serve.storage.episode_log import EpisodeLog, live_episodes
from automemo.serve.storage.state_folder import LOG, STORE, SnapshotMeta, StateError, StateFolder
from automemo.serve.user_memory import UserMemory
from servetools import PNG

MANIFEST = {"files": {"program.py": "abc"}, "node": {"id": 1}, "benchmark": {"name": "memgallery"}}


def episode(task_id: str, user: str, text: str, picture=None) -> EpisodeRecorder:
    return EpisodeRecorder(task_id=task_id, benchmark="memgallery", instruction=text,
                           steps=(Step(index=0, observation=text, screenshot=picture),),
                           metadata={"user": user} if user else {})


def test_a_tombstone_forgets_only_what_was_logged_before_it(tmp_path):
    log = EpisodeLog(tmp_path / LOG)
    log.append_episode({"task_id": "a"}, 0.0)
    log.append_episode({"task_id": "b"}, 0.0)
    log.append_forget("a", 0.0)
    log.append_episode({"task_id": "a"}, 0.0)  # remembered again under the same id
    assert [(e.seq, e.task_id) for e in live_episodes(log.read())] == [(2, "b"), (4, "a")]


def test_forgetting_on_disk_removes_text_images_cache_and_snapshot(tmp_path):
    state = StateFolder(tmp_path / "state")
    held = state.lock(MANIFEST)
    folder = state.claim("ana")
    picture = EpisodeStore(folder / STORE).put_image(PNG)
    memory = UserMemory("ana", state, None)
    memory.add_logged([episode("locker", "ana", "my locker code is 5521", picture),
                       episode("bike", "ana", "my bike is red")])
    (folder / STORE / EMBEDDING_CACHE).write_bytes(b"vectors of everything")
    state.write_snapshot(folder, b"state with 5521", SnapshotMeta(2, "x", 15, "abc", 0.1))
    assert state.read_snapshot(folder, "abc") is not None
    assert memory.forget("locker") == 1 and memory.forget("locker") == 0
    assert b"5521" not in (folder / LOG).read_bytes()
    assert [e.task_id for e in memory.episodes()] == ["bike"]
    assert not (folder / STORE / picture.path).exists()
    assert state.read_snapshot(folder, "abc") is None
    assert not (folder / STORE / EMBEDDING_CACHE).exists()
    lines = [json.loads(x) for x in (folder / LOG).read_text().splitlines()]
    assert [x.get("forget") or x["episode"]["task_id"] for x in lines] == ["bike", "locker"]  # the tombstone stays
    held.close()


def test_a_snapshot_of_another_program_or_a_torn_one_is_no_snapshot(tmp_path):
    folder = tmp_path / "u"
    StateFolder.write_snapshot(folder, b"12345", SnapshotMeta(3, "x", 5, "abc", 0.0))
    assert StateFolder.read_snapshot(folder, "abc")[0].seq == 3
    assert StateFolder.read_snapshot(folder, "other program") is None
    (folder / "snapshot.bin").write_bytes(b"123")  # a kill between the data and its meta
    assert StateFolder.read_snapshot(folder, "abc") is None


def test_a_whole_user_is_dropped_and_the_trash_is_emptied(tmp_path):
    state = StateFolder(tmp_path / "state")
    held = state.lock(MANIFEST)
    UserMemory("bob", state, None).add_logged([episode("t", "bob", "bob's secret")])
    assert state.users() == ["bob"] and state.drop("bob") and state.users() == []
    assert not state.drop("bob")
    held.close()
    trash = state.root / "users" / ".forgotten-leftover"
    trash.mkdir()  # a kill between the rename and the deletion
    state.lock(MANIFEST).close()
    assert not trash.exists()


def test_a_state_folder_from_before_users_is_adopted_by_user(tmp_path):
    root = tmp_path / "state"
    old_store = EpisodeStore(root / STORE)
    picture = old_store.put_image(PNG)
    (root / "program.json").write_text(json.dumps({"program_sha256": "abc"}))
    with open(root / LOG, "w") as fh:
        for seq, ep in enumerate([episode("a1", "ana", "ana one", picture), episode("n1", "", "nobody's"),
                                  episode("b1", "bob", "bob one"), episode("a2", "ana", "ana two")], 1):
            fh.write(json.dumps({"seq": seq, "received": 0, "episode": ep.to_dict()}) + "\n")
    state = StateFolder(root)
    # its users started from the shipped episodes: served without the flag it would lose them
    with pytest.raises(StateError, match="with --shared-experience"):
        state.lock(MANIFEST)
    state.lock(MANIFEST, shared_experience=True).close()
    assert state.users() == ["ana", "bob", "default"]  # an episode of no user is the default namespace's
    assert [e.task_id for e in UserMemory("ana", state, None).episodes()] == ["a1", "a2"]
    assert (state.user_dir("ana") / STORE / picture.path).read_bytes() == PNG
    assert not (root / LOG).exists() and not (root / STORE).exists()  # no copy outlives a forget


def test_what_an_earlier_adoption_kept_at_the_root_is_deleted_on_start(tmp_path):
    """An adoption before this one renamed the old log to episodes.jsonl.adopted and kept the root
    store: both hold what their users may since have forgotten."""
    root = tmp_path / "state"
    EpisodeStore(root / STORE).put_image(PNG)
    (root / "program.json").write_text(json.dumps({"program_sha256": "abc"}))
    (root / (LOG + ".adopted")).write_text(json.dumps({"seq": 1, "received": 0, "episode": {}}) + "\n")
    StateFolder(root).lock(MANIFEST, shared_experience=True).close()
    assert sorted(p.name for p in root.iterdir()) == [".lock", "program.json"]


def test_an_exported_image_keeps_its_own_type():
    import io

    from PIL import Image

    from automemo.serve.transfer import data_url

    for kind, mime in (("GIF", "gif"), ("WEBP", "webp"), ("PNG", "png"), ("JPEG", "jpeg")):
        buffer = io.BytesIO()
        Image.new("RGB", (2, 2)).save(buffer, format=kind)
        assert data_url(buffer.getvalue()).startswith(f"data:image/{mime};base64,")
