"""A user's memory under its lease (`automemo.serve.leased_namespace`), as two replicas of the Ray
engine hold it, without Ray: two `LeasedNamespace` objects on one state folder, real programs
(unsandboxed, for speed), real files and locks."""

from __future__ import annotations

import asyncio
import fcntl
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from servetools import make_export
from automemo.contract import EpisodeRecorder, Step
from automemo.serve.episode_log import EpisodeLog
from automemo.serve.leased_namespace import Evicted, LeasedNamespace, NotOwner
from automemo.serve.ray_engine import prepare
from automemo.serve.state_folder import LOG, user_key


def _episode(task_id: str, text: str) -> EpisodeRecorder:
    return EpisodeRecorder(task_id=task_id, benchmark="minigallery", instruction=text,
                           steps=(Step(index=0, observation=text, action="note"),), metadata={"user": "ana"})


@pytest.fixture()
def prepared(tmp_path):
    export = make_export(tmp_path / "export")
    return prepare(export, tmp_path / "state", sandbox="unsafe", unsafe=True, snapshot_every=100)


def test_a_replica_that_lost_its_lease_refuses_and_drops_what_it_did_not_log(prepared):
    root, program = prepared.state_root, prepared.program
    threads = ThreadPoolExecutor(2)

    def opened(holder: str) -> LeasedNamespace:
        return LeasedNamespace("ana", root, program, holder, notice=print, wait_seconds=0.0)

    def remember(namespace: LeasedNamespace, task_id: str, text: str):
        return asyncio.run(namespace.call(lambda memory: memory.remember(_episode(task_id, text)), threads))[0]

    def recall(namespace: LeasedNamespace, text: str) -> str:
        return asyncio.run(namespace.call(lambda memory: memory.recall(text, (), ""), threads))[0].text

    a = opened("replica-a")
    assert remember(a, "t1", "the boat is red")[0].seq == 1
    with pytest.raises(NotOwner, match="replica-a"):
        opened("replica-b")
    fcntl.flock(a.lease._lock_fh, fcntl.LOCK_UN)  # a's lock is lost behind its back
    b = opened("replica-b")
    assert "boat is red" in recall(b, "boat")  # b opened from the log a wrote
    assert remember(b, "t2", "the kite is blue")[0].seq == 2
    with pytest.raises(NotOwner, match="lost the lease"):
        remember(a, "t3", "the stale write")
    assert not a.memory.is_open  # its program held an episode the log refused: gone, not snapshotted
    entries = EpisodeLog(root / "users" / user_key("ana") / LOG).read()
    assert [(e.seq, e.task_id) for e in entries] == [(1, "t1"), (2, "t2")]
    with pytest.raises(NotOwner):  # b still holds it: a cannot take it back
        recall(a, "boat")

    b.close()  # the replica's eviction: a snapshot under the lease, then the lease goes
    with pytest.raises(Evicted):
        recall(b, "kite")
    snapshot_seq = json.loads((root / "users" / user_key("ana") / "snapshot.json").read_text())["seq"]
    assert snapshot_seq == 2
    assert "kite is blue" in recall(a, "kite")  # free again: a takes it with a new token
    assert a.lease.token == 3
    a.close()
    threads.shutdown()
