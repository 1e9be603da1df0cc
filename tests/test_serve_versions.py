"""A namespace's program versions on disk (automemo/serve/storage/versions.py): installed whole and
served by one pointer; a rollback refuses what does not exist; retiring keeps the record, drops
everything derived, and falls back along the parents; forgetting retires across namespaces."""

from __future__ import annotations

import json

import pytest

from automemo.serve.storage.versions import (SHIPPED, NamespaceGone, NamespaceVersions, VersionError, VersionRecord, now,
                                     pooled_used, retire_derived)


def _tag(text: str) -> str:
    return f"tag({text})"


def _install(versions: NamespaceVersions, parent: int, used: dict[str, tuple[int, ...]], source: str = "per-user") -> int:
    versions.user_dir.mkdir(parents=True, exist_ok=True)
    staged = versions.stage()
    (staged / "program").mkdir()
    (staged / "program" / "program.py").write_text("# a program\n")
    (staged / "snapshot.bin").write_bytes(b"state")
    with versions.locked():
        record = VersionRecord(version=versions.next_version(), created=now(), program_sha256="abc",
                               source=source, parent=parent, used=used, race={"won": True})
        return versions.install(staged, record, {"questions": {"q1": "what did we say about the kayak"}})


def test_install_serves_the_new_version_and_moves_the_stamp(tmp_path):
    versions = NamespaceVersions(tmp_path / "ana")
    assert versions.current() == SHIPPED and versions.stamp() is None
    first = _install(versions, SHIPPED, {"ana": (1, 2)})
    stamp = versions.stamp()
    second = _install(versions, first, {"ana": (1, 2, 3)})
    assert (first, second) == (1, 2) and versions.current() == 2 and versions.stamp() != stamp
    assert [r.version for r in versions.records()] == [1, 2]
    assert versions.record(2).used == {"ana": (1, 2, 3)}
    assert versions.evidence(2)["questions"]["q1"].startswith("what did")
    assert not list(versions.root.glob(".staging-*"))


def test_set_current_refuses_an_unknown_or_retired_version(tmp_path):
    versions = NamespaceVersions(tmp_path / "ana")
    _install(versions, SHIPPED, {"ana": (1,)})
    with pytest.raises(VersionError, match="no version 5"):
        versions.set_current(5)
    versions.retire(lambda r: r.version == 1, "a test retired it")
    with pytest.raises(VersionError, match="retired"):
        versions.set_current(1)
    versions.set_current(SHIPPED)
    assert versions.current() == SHIPPED


def test_retiring_the_serving_version_falls_back_to_its_nearest_live_ancestor(tmp_path):
    versions = NamespaceVersions(tmp_path / "ana")
    one = _install(versions, SHIPPED, {"ana": (1,)})
    two = _install(versions, one, {"ana": (1, 2)})
    three = _install(versions, two, {"ana": (1, 2, 3)})
    assert versions.current() == three
    retired = versions.retire(lambda r: 3 in r.used["ana"] or r.version == two, "an episode was forgotten")
    assert retired == [two, three] and versions.current() == one
    record = versions.record(three)
    assert record.retired == "an episode was forgotten" and record.race == {}
    assert sorted(p.name for p in (versions.root / str(three)).iterdir()) == ["version.json"]


def test_forgetting_retires_what_any_namespace_derived_from_the_episode(tmp_path):
    users = tmp_path / "users"
    ana, bob = NamespaceVersions(users / "ana"), NamespaceVersions(users / "bob")
    _install(ana, SHIPPED, {"ana": (1, 2)})
    # pooled: it read ana's episodes too, and names them only by keyed tags
    _install(bob, SHIPPED, pooled_used(_tag, {"ana": (1, 2), "bob": (1,)}), source="pooled")
    assert "ana" not in json.dumps({k: v for k, v in bob.record(1).used.items()}).replace("tag(ana", "")
    _install(bob, 1, {"bob": (1, 2)})                        # per user: bob's alone
    assert retire_derived(users, "ana", [2], "ana forgot an episode", tag=_tag) == [("ana", 1), ("bob", 1)]
    assert bob.record(1).used == {}  # a retired record keeps nothing of what it read
    assert bob.current() == 2 and bob.record(2).retired is None
    assert retire_derived(users, "ana", [7], "not read by any version", tag=_tag) == []
    assert retire_derived(users, "bob", None, "bob was forgotten", tag=_tag) == [("bob", 2)]
    assert bob.current() == SHIPPED
    assert json.loads((bob.root / "current.json").read_text())["version"] == SHIPPED


def test_a_round_cannot_make_again_the_folder_of_a_user_forgotten_whole(tmp_path):
    versions = NamespaceVersions(tmp_path / "users" / "gone")
    with pytest.raises(NamespaceGone, match="forgotten"):
        versions.stage()
    with pytest.raises(NamespaceGone):
        with versions.locked():
            pass
    assert not (tmp_path / "users").exists()


def test_a_forget_sweeps_every_staging_folder_a_start_sweeps_the_dead(tmp_path):
    versions = NamespaceVersions(tmp_path / "ana")
    versions.user_dir.mkdir()
    live = versions.stage()   # this process is alive: only `every` sweeps it
    versions.sweep_staging()
    assert live.is_dir()
    versions.sweep_staging(every=True)
    assert not live.exists()
