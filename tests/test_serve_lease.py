"""The lease with a fencing token that keeps one writer per namespace on a shared state folder
(`automemo.serve.cluster.lease`, `automemo.serve.cluster.lease_checked_writes`), in isolation: real files, real `flock`, a real
process killed with SIGKILL; no Ray."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from automemo.serve.cluster.lease import LeaseHeld, LeaseLost, NamespaceLease
from automemo.serve.cluster.lease_checked_writes import LeaseCheckedEpisodeLog, LeaseCheckedStateFolder
from automemo.serve.storage.episode_log import EpisodeLog, LogEntry, current_writers
from automemo.serve.storage.state_folder import SnapshotMeta

ROOT = Path(__file__).resolve().parents[1]


def test_one_holder_at_a_time_and_tokens_only_grow(tmp_path):
    a, b = NamespaceLease(tmp_path, "k1", "replica-a"), NamespaceLease(tmp_path, "k1", "replica-b")
    assert a.acquire() == 1
    with pytest.raises(LeaseHeld, match="replica-a"):
        b.acquire()
    assert not b.held
    a.release()
    assert b.acquire() == 2
    b.release()
    assert a.acquire() == 3
    assert a.read().holder == "replica-a" and a.read().token == 3
    # another namespace has its own lease
    assert NamespaceLease(tmp_path, "k2", "replica-b").acquire() == 1


def test_a_waiting_acquire_gets_the_lease_when_its_holder_lets_go(tmp_path):
    a, b = NamespaceLease(tmp_path, "k", "a"), NamespaceLease(tmp_path, "k", "b")
    a.acquire()
    threading.Timer(0.2, a.release).start()
    started = time.monotonic()
    assert b.acquire(wait_seconds=5) == 2
    assert 0.1 < time.monotonic() - started < 4


def test_a_holder_whose_lock_was_broken_is_fenced_out(tmp_path):
    """A lock lost behind its holder's back (as on a shared file system that expired it): the new
    holder takes a larger token, and every write of the old one is refused before it is made."""
    a, b = NamespaceLease(tmp_path, "k", "a"), NamespaceLease(tmp_path, "k", "b")
    a.acquire()
    log_a = LeaseCheckedEpisodeLog(tmp_path / "episodes.jsonl", a)
    log_a.read()
    log_a.append_episode({"task_id": "t1"}, received=1.0)
    fcntl.flock(a._lock_fh, fcntl.LOCK_UN)  # the lock vanishes; `a` does not know
    assert b.acquire() == 2
    with pytest.raises(LeaseLost, match="moved to b"):
        a.check()
    with pytest.raises(LeaseLost):
        log_a.append_episode({"task_id": "t-stale"}, received=2.0)
    with pytest.raises(LeaseLost):
        log_a.rewrite([])
    log_b = LeaseCheckedEpisodeLog(tmp_path / "episodes.jsonl", b)
    log_b.read()
    log_b.append_episode({"task_id": "t2"}, received=3.0)
    entries = EpisodeLog(tmp_path / "episodes.jsonl").read()
    assert [(e.seq, e.task_id) for e in entries] == [(1, "t1"), (2, "t2")]
    assert (log_a.appended, log_b.appended) == (1, 1)


def test_fenced_state_folder_refuses_snapshots_and_drops_without_the_lease(tmp_path):
    lease = NamespaceLease(tmp_path, "k", "a")
    state = LeaseCheckedStateFolder(tmp_path, lease)
    with pytest.raises(LeaseLost, match="not held"):
        state.claim("ana")
    assert not state.user_dir("ana").exists()
    lease.acquire()
    folder = state.claim("ana")
    lease.release()
    meta = SnapshotMeta(seq=1, sha256="x", bytes=3, program_sha256="p", seconds=0.0)
    with pytest.raises(LeaseLost, match="not held"):
        state.write_snapshot(folder, b"abc", meta)
    lease.acquire()
    state.write_snapshot(folder, b"abc", meta)
    assert state.read_snapshot(folder, "p") is not None
    lease.release()
    with pytest.raises(LeaseLost):
        state.remove_snapshot(folder)
    with pytest.raises(LeaseLost):
        state.drop("ana")
    assert state.read_snapshot(folder, "p") is not None and folder.is_dir()


def test_the_lease_of_a_killed_process_can_be_taken_at_once(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom automemo.serve.cluster.lease import NamespaceLease\n"
         f"lease = NamespaceLease(sys.argv[1], 'k', 'child')\nlease.acquire()\nprint('held', flush=True)\ntime.sleep(60)\n",
         str(tmp_path)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        mine = NamespaceLease(tmp_path, "k", "me")
        with pytest.raises(LeaseHeld, match="child"):
            mine.acquire()
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        assert mine.acquire() == 2
    finally:
        holder.kill()
        holder.wait(10)


def test_an_unreadable_record_is_a_sentence(tmp_path):
    lease = NamespaceLease(tmp_path, "k", "a")
    lease.acquire()
    lease.record_path.write_text("{not json")
    with pytest.raises(LeaseLost, match="unreadable.*delete it"):
        lease.check()


def _line_of(seq: int, task_id: str) -> bytes:
    return json.dumps(LogEntry(seq=seq, received=float(seq), episode={"task_id": task_id}).to_dict()).encode() + b"\n"


def test_a_read_never_cuts_another_writers_append_and_only_the_holder_repairs_its_tail(tmp_path):
    """The holder is in the middle of an append (half its line on disk) while others read the log:
    a plain reader (an export, `automemo memory`) and a replica whose lease is gone. Neither may
    cut the half line, or the rest of it, written next, would be garbage. A torn tail a kill left
    is cut by the next holder, before its first append, never by a read."""
    path = tmp_path / "episodes.jsonl"
    holder = NamespaceLease(tmp_path, "k", "a")
    holder.acquire()
    log = LeaseCheckedEpisodeLog(path, holder)
    log.read()
    log.append_episode({"task_id": "t1"}, received=1.0)
    in_flight = _line_of(2, "t2")
    with open(path, "ab") as fh:
        fh.write(in_flight[:12])
    size = path.stat().st_size
    stale = LeaseCheckedEpisodeLog(path, NamespaceLease(tmp_path, "k", "b"))  # no lease
    for reader in (EpisodeLog(path), stale):
        assert [e.task_id for e in reader.read()] == ["t1"]
        assert path.stat().st_size == size
    with pytest.raises(LeaseLost):
        stale.append_episode({"task_id": "t-stale"}, received=9.0)
    assert path.stat().st_size == size
    with open(path, "ab") as fh:
        fh.write(in_flight[12:])  # the holder's append completes
    assert [e.task_id for e in EpisodeLog(path).read()] == ["t1", "t2"]

    with open(path, "ab") as fh:
        fh.write(_line_of(3, "t3")[:15])  # the holder is killed in the middle of its next append
    holder.release()
    successor = NamespaceLease(tmp_path, "k", "c")
    successor.acquire()
    log = LeaseCheckedEpisodeLog(path, successor)
    assert [e.task_id for e in log.read()] == ["t1", "t2"]
    log.append_episode({"task_id": "t4"}, received=4.0)  # the torn tail is cut first
    assert [e.task_id for e in EpisodeLog(path).read()] == ["t1", "t2", "t4"]
    assert path.read_bytes().count(b"\n") == 3


def test_a_former_holders_late_lines_are_dropped_and_a_handover_is_kept_whole(tmp_path):
    """a writes, the lease moves to b, b writes: all of it is kept. a, whose check passed just
    before the lease moved, then appends: its line carries its older token, a is told (LeaseLost,
    not an acknowledgement) and every reader drops the line."""
    path = tmp_path / "episodes.jsonl"
    a, b = NamespaceLease(tmp_path, "k", "a"), NamespaceLease(tmp_path, "k", "b")
    a.acquire()
    log_a = LeaseCheckedEpisodeLog(path, a)
    log_a.read()
    log_a.append_episode({"task_id": "a1"}, received=1.0)
    log_a.append_episode({"task_id": "a2"}, received=2.0)
    fcntl.flock(a._lock_fh, fcntl.LOCK_UN)  # a's lock is lost behind its back
    b.acquire()
    log_b = LeaseCheckedEpisodeLog(path, b)
    log_b.read()
    log_b.append_episode({"task_id": "b1"}, received=3.0)
    assert [(e.task_id, e.token) for e in EpisodeLog(path).read()] == [("a1", 1), ("a2", 1), ("b1", 2)]

    real_check, checks = a.check, iter([lambda: None])  # a's next check ran before the lease moved
    a.check = lambda: next(checks, real_check)()
    with pytest.raises(LeaseLost):
        log_a.append_episode({"task_id": "a-late"}, received=4.0)
    log_b.append_episode({"task_id": "b2"}, received=5.0)
    assert path.read_bytes().count(b"a-late") == 1  # on disk, and dropped by every reader
    assert [e.task_id for e in EpisodeLog(path).read()] == ["a1", "a2", "b1", "b2"]


def test_lines_without_a_token_are_always_kept():
    """Logs from before tokens, and the single-process server's lines between two Ray runs."""
    def entry(seq, token=None):
        return LogEntry(seq=seq, received=0.0, episode={"task_id": f"t{seq}"}, token=token)

    assert current_writers([entry(1), entry(2)]) == [entry(1), entry(2)]
    logged = [entry(1), entry(2, token=3), entry(3), entry(4, token=2), entry(5, token=4)]
    assert [e.seq for e in current_writers(logged)] == [1, 2, 3, 5]


def test_a_lease_record_that_began_again_is_advanced_past_the_logs_tokens(tmp_path):
    """The record deleted (the sentence for an unreadable one says to): the next holder's token
    starts at 1 again, below the log's, and readers would drop its every line. Its first append
    takes a token above the log's first."""
    import shutil

    path = tmp_path / "episodes.jsonl"
    first = NamespaceLease(tmp_path, "k", "a")
    for _ in range(3):
        first.acquire()
        first.release()
    first.acquire()
    log = LeaseCheckedEpisodeLog(path, first)
    log.read()
    log.append_episode({"task_id": "t1"}, received=1.0)
    first.release()
    shutil.rmtree(tmp_path / "leases")
    again = NamespaceLease(tmp_path, "k", "b")
    assert again.acquire() == 1
    log = LeaseCheckedEpisodeLog(path, again)
    log.read()
    log.append_episode({"task_id": "t2"}, received=2.0)
    assert again.token == again.read().token == 5
    assert [(e.task_id, e.token) for e in EpisodeLog(path).read()] == [("t1", 4), ("t2", 5)]
