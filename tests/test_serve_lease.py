"""The lease with a fencing token that keeps one writer per namespace on a shared state folder
(`automemo.serve.lease`, `automemo.serve.fenced`), in isolation: real files, real `flock`, a real
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

from automemo.serve.episode_log import EpisodeLog, LogEntry
from automemo.serve.fenced import FencedEpisodeLog, FencedStateFolder
from automemo.serve.lease import LeaseHeld, LeaseLost, NamespaceLease
from automemo.serve.state_folder import SnapshotMeta

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
    log_a = FencedEpisodeLog(tmp_path / "episodes.jsonl", a)
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
    log_b = FencedEpisodeLog(tmp_path / "episodes.jsonl", b)
    log_b.read()
    log_b.append_episode({"task_id": "t2"}, received=3.0)
    entries = EpisodeLog(tmp_path / "episodes.jsonl").read()
    assert [(e.seq, e.task_id) for e in entries] == [(1, "t1"), (2, "t2")]
    assert (log_a.appended, log_b.appended) == (1, 1)


def test_fenced_state_folder_refuses_snapshots_and_drops_without_the_lease(tmp_path):
    lease = NamespaceLease(tmp_path, "k", "a")
    state = FencedStateFolder(tmp_path, lease)
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
        [sys.executable, "-c", "import sys, time\nfrom automemo.serve.lease import NamespaceLease\n"
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
    log = FencedEpisodeLog(path, holder)
    log.read()
    log.append_episode({"task_id": "t1"}, received=1.0)
    in_flight = _line_of(2, "t2")
    with open(path, "ab") as fh:
        fh.write(in_flight[:12])
    size = path.stat().st_size
    stale = FencedEpisodeLog(path, NamespaceLease(tmp_path, "k", "b"))  # no lease
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
    log = FencedEpisodeLog(path, successor)
    assert [e.task_id for e in log.read()] == ["t1", "t2"]
    log.append_episode({"task_id": "t4"}, received=4.0)  # the torn tail is cut first
    assert [e.task_id for e in EpisodeLog(path).read()] == ["t1", "t2", "t4"]
    assert path.read_bytes().count(b"\n") == 3
