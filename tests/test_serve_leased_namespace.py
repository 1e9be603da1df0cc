"""A user's memory under its lease (`automemo.serve.cluster.leased_memory`), as two replicas of the Ray
engine hold it, without Ray: two `LeasedUserMemory` objects on one state folder, real programs
(unsandboxed, for speed), real files and locks."""

from __future__ import annotations

import asyncio
import fcntl
import io
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from servetools import PNG, data_url, make_export
from automemo.contract import EpisodeRecorder, Step
from automemo.deploy import DeployError
from automemo.serve.access import LOCAL, namespace_for
from automemo.serve.cluster.engine import prepare
from automemo.serve.cluster.lease import LeaseLost
from automemo.serve.cluster.leased_memory import Evicted, LeasedUserMemory, LeasedUserMemoryPool, NotOwner
from automemo.serve.defaults import DEFAULT_USER
from automemo.serve.requests import RecallRequest, RequestLimits, remember_request
from automemo.serve.service import MemoryService, ServiceError
from automemo.serve.storage.episode_log import EpisodeLog
from automemo.serve.storage.state_folder import LOG, STORE, StateFolder
from automemo.serve.transfer import read_lines
from automemo.serve.user_memory import Quota
from automemo.toolkit.embedding_cache import EmbeddingCache


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

    def opened(holder: str) -> LeasedUserMemory:
        return LeasedUserMemory("ana", root, program, holder, notice=print, wait_seconds=0.0)

    def remember(namespace: LeasedUserMemory, task_id: str, text: str):
        return asyncio.run(namespace.call(lambda memory: memory.remember(_episode(task_id, text)), threads))[0]

    def recall(namespace: LeasedUserMemory, text: str) -> str:
        return asyncio.run(namespace.call(lambda memory: memory.recall(text, (), "")[0], threads))[0].text

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
    entries = EpisodeLog(root / "users" / StateFolder(root).key("ana") / LOG).read()
    assert [(e.seq, e.task_id) for e in entries] == [(1, "t1"), (2, "t2")]
    with pytest.raises(NotOwner):  # b still holds it: a cannot take it back
        recall(a, "boat")

    b.close()  # the replica's eviction: a snapshot under the lease, then the lease goes
    with pytest.raises(Evicted):
        recall(b, "kite")
    snapshot_seq = json.loads((root / "users" / StateFolder(root).key("ana") / "snapshot.json").read_text())["seq"]
    assert snapshot_seq == 2
    assert "kite is blue" in recall(a, "kite")  # free again: a takes it with a new token
    assert a.lease.token == 3
    a.close()
    threads.shutdown()


def test_a_replica_without_the_lease_writes_no_image_no_cache_entry_and_no_log_line(tmp_path):
    """The write paths the hardened server added (a remember's images, the embedding cache an
    update fills, a recall's question image, a forget's removals), each called on the memory of a
    replica whose lease another took: refused before a byte is written."""
    from PIL import Image
    from test_serve_tenancy import EMBEDDING_MEMORY, services_for

    export = make_export(tmp_path / "export", program=EMBEDDING_MEMORY)
    prepared = prepare(export, tmp_path / "state", sandbox="unsafe", unsafe=True, services_for=services_for,
                       notice=lambda message: None)
    threads = ThreadPoolExecutor(2)
    a = LeasedUserMemory("ana", prepared.state_root, prepared.program, "replica-a", notice=print, wait_seconds=0.0)
    folder = a.memory.folder
    asyncio.run(a.call(lambda memory: memory.remember(_draft("t1", "my locker code is 5521", PNG)), threads))

    def on_disk() -> tuple:
        images = sorted(str(p.relative_to(folder)) for p in (folder / STORE / "images").rglob("*") if p.is_file())
        cache = EmbeddingCache(folder / STORE / "embeddings.sqlite")
        try:
            return images, cache.stored_keys(), (folder / LOG).read_bytes()
        finally:
            cache.close()
    before = on_disk()
    assert len(before[0]) == 1 and len(before[1]) == 1

    fcntl.flock(a.lease._lock_fh, fcntl.LOCK_UN)  # a's lock is lost behind its back; b takes the lease
    b = LeasedUserMemory("ana", prepared.state_root, prepared.program, "replica-b", notice=print, wait_seconds=0.0)
    other = io.BytesIO()
    Image.new("RGB", (2, 2), "green").save(other, format="PNG")
    stale_writes = {
        "an image file": lambda: a.memory.remember(_draft("t2", "my bike is red", other.getvalue())),
        "a cache entry": lambda: a.memory.remember(_draft("t3", "my kite is blue")),
        "a question's image": lambda: a.memory.recall("what is my locker code", (other.getvalue(),), ""),
        "a forget's removals": lambda: a.memory.forget("t1"),
    }
    for what, write in stale_writes.items():
        with pytest.raises(LeaseLost):
            write()
        assert on_disk() == before, what
    with pytest.raises(NotOwner):  # through the replica's own path: refused, and a's program is dropped
        asyncio.run(a.call(lambda memory: memory.remember(_draft("t4", "my hat is grey", other.getvalue())),
                           threads))
    assert on_disk() == before and not a.memory.is_open

    text = asyncio.run(b.call(lambda memory: memory.recall("what is my locker code", (), "")[0], threads))[0].text
    assert "5521" in text and "bike" not in text and "kite" not in text
    b.close()
    a.close()
    threads.shutdown()


def _draft(task_id: str, text: str, image: bytes | None = None):
    body = {"content": text, "user": "ana", "task_id": task_id, **({"images": [data_url(image)]} if image else {})}
    return remember_request(body, RequestLimits(), "minigallery", allow_paths=False,
                            user_for=lambda named: named).draft


def test_a_replicas_user_starts_empty_unless_the_shipped_episodes_are_shared(tmp_path):
    """`serve --engine ray [--shared-experience]`: the driver prepares the base as chosen, holds the
    folder with that choice (a folder prepared the other way is refused), and a replica's
    namespace starts from it."""
    from test_serve_tenancy import EMBEDDING_MEMORY, services_for

    export = make_export(tmp_path / "export", program=EMBEDDING_MEMORY)
    threads = ThreadPoolExecutor(1)
    for shared, shipped_rows in ((False, 0), (True, 3)):
        prepared = prepare(export, tmp_path / f"state-{shared}", sandbox="unsafe", unsafe=True,
                           services_for=services_for, notice=lambda message: None, shared_experience=shared)
        assert prepared.served.shared_experience is shared
        prepared.lock().close()
        with pytest.raises(DeployError, match="--shared-experience"):
            prepare(export, prepared.state_root, sandbox="unsafe", unsafe=True, services_for=services_for,
                    notice=lambda message: None, shared_experience=not shared)
        namespace = LeasedUserMemory("ana", prepared.state_root, prepared.program, "replica", notice=print,
                                    wait_seconds=0.0)
        payload = asyncio.run(namespace.call(lambda memory: memory.recall("shipped colour", (), "")[0], threads))[0]
        assert payload.metadata["n_memories"] == shipped_rows
        assert "" not in payload.metadata["users"]  # the program never sees an empty user
        namespace.close()
    threads.shutdown()


def test_a_replicas_service_is_memoryservices_calls_quotas_and_whole_imports_included(tmp_path):
    """What a replica runs (`MemoryService.over` a `LeasedUserMemoryPool`), without Ray: a call naming no
    user reaches "default"; a user's quota refuses a remember with 429 and an import that does not
    fit whole, storing nothing."""
    export = make_export(tmp_path / "export")
    prepared = prepare(export, tmp_path / "state", sandbox="unsafe", unsafe=True, notice=lambda message: None,
                       quota=Quota(episodes=2, bytes=10_000_000))
    threads = ThreadPoolExecutor(2)
    opened: dict[str, LeasedUserMemory] = {}

    async def load(user: str) -> LeasedUserMemory:
        if user not in opened:
            opened[user] = LeasedUserMemory(user, prepared.state_root, prepared.program, "replica", notice=print,
                                           wait_seconds=0.0)
        return opened[user]
    service = MemoryService.over(prepared.served, LeasedUserMemoryPool(load, threads))

    def remember(body: dict) -> dict:
        asked = remember_request(body, RequestLimits(), service.benchmark, allow_paths=False,
                                 user_for=lambda named: namespace_for(LOCAL, named))
        return asyncio.run(service.remember(asked.user, asked.draft))

    assert remember({"content": "the spare key is under the pot", "task_id": "d1"})["user"] == DEFAULT_USER
    answer = asyncio.run(service.recall(RecallRequest(instruction="spare key", scope=DEFAULT_USER)))
    assert "spare key" in answer["text"]
    remember({"content": "my bike is red", "user": "ana", "task_id": "a1"})
    lines = [json.dumps({"task_id": f"i{i}", "instruction": f"fact {i}", "steps": []}) for i in range(2)]
    drafts = read_lines("\n".join(lines), RequestLimits(), service.benchmark, user="ana").episodes
    with pytest.raises(ServiceError, match="quota") as refused:
        asyncio.run(service.import_episodes("ana", drafts))
    assert refused.value.status == 429
    remember({"content": "my kite is blue", "user": "ana", "task_id": "a2"})
    with pytest.raises(ServiceError, match="quota") as refused:
        remember({"content": "my hat is grey", "user": "ana", "task_id": "a3"})
    assert refused.value.status == 429
    assert [e.task_id for e in opened["ana"].memory.episodes()] == ["a1", "a2"]
    for namespace in opened.values():
        namespace.close()
    threads.shutdown()
