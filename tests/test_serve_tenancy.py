"""The served memory as tenants share it, in process (the program unsandboxed, for speed; the
embedding cache a real sqlite file behind a hashing encoder): users start empty and a call
naming no user acts on "default"; access fails closed; an episode lands in the user its call
names; forgetting leaves no file or cache entry behind, across an interrupted forget and a kill
mid-remember; quotas; the namespace tables stay bounded."""

from __future__ import annotations

import asyncio
import hashlib
import json

import numpy as np
import pytest

from automemo.serve.access import LOCAL, NamespaceRefused, namespace_for
from automemo.serve.mcp_face import build_mcp
from automemo.serve.requests import BadRequest, RecallRequest, RequestLimits, remember_request
from automemo.serve.service import MemoryService, ServiceError
from automemo.serve.storage.episode_log import EpisodeLog, live_episodes
from automemo.serve.storage.state_folder import LOG, SNAPSHOT, STORE, StateFolder
from automemo.serve.transfer import read_lines
from automemo.serve.user_memory import Quota
from automemo.toolkit.embedding import CachedImageEncoder, CachedTextEncoder, Encoders, PerceptualImageEncoder
from automemo.toolkit.embedding_cache import EmbeddingCache
from automemo.toolkit.services import MemoServices
from servetools import PNG, data_url, make_export

# Embeds every step in update (one batch) and the question in retrieve, and reports the users it
# was shown: the service, not the program, must keep "" away from it.
EMBEDDING_MEMORY = '''
from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.rows, self.users = [], set()

    def update(self, episode):
        self.users.add(episode.metadata.get("user"))
        texts = [s.observation for s in episode.steps]
        for text, vector, step in zip(texts, self.toolkit.embed_text(texts), episode.steps):
            self.rows.append((text, vector, step.ref or f"{episode.task_id}#{step.index}", step.screenshot))

    def retrieve(self, task):
        self.users.add(task.metadata.get("user"))
        query = self.toolkit.embed_text([task.instruction])[0]
        ranked = sorted(self.rows, key=lambda r: -sum(a * b for a, b in zip(r[1], query)))[:3]
        return MemoryPayload(text="\\n".join(r[0] for r in ranked),
                             images=tuple(r[3] for r in ranked if r[3])[:1],
                             metadata={"evidence": [r[2] for r in ranked], "n_memories": len(self.rows),
                                       "users": sorted(str(u) for u in self.users)})
'''


class HashingEncoder:
    """Bag of hashed words: deterministic, no model."""

    name, dim = "hashing-test", 64

    def encode(self, texts, *, node=None):
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                rows[i, int(hashlib.sha256(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)


def services_for(store):
    cache = EmbeddingCache(store / "embeddings.sqlite")
    return MemoServices(Encoders(CachedTextEncoder(HashingEncoder(), cache),
                                 CachedImageEncoder(PerceptualImageEncoder(), cache)), None, store)


def open_service(tmp_path, name="state", **options) -> MemoryService:
    export = tmp_path / "export"
    if not export.exists():
        make_export(export, program=EMBEDDING_MEMORY)
    return MemoryService(export, tmp_path / name, sandbox="unsafe", unsafe=True, services_for=services_for,
                         notice=lambda message: None, **options)


def remember(service, body, user_for=lambda named: namespace_for(LOCAL, named)):
    asked = remember_request(body, RequestLimits(), service.benchmark, allow_paths=False, user_for=user_for)
    return asyncio.run(service.remember(asked.user, asked.draft))


def recall(service, text, user="default", images=()):
    return asyncio.run(service.recall(RecallRequest(instruction=text, scope=user, images=tuple(images))))


def stored_files(folder) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and "images" in p.parts}


def test_users_start_empty_and_a_call_naming_no_user_acts_on_default(tmp_path):
    service = open_service(tmp_path)
    try:
        assert namespace_for(LOCAL, "") == "default"
        assert service.start.logged_episodes == 0 and not service.start.shared_experience
        found = recall(service, "what colour is shipped fact 1")
        assert found["metadata"]["n_memories"] == 0 and "teal" not in found["text"]  # nothing shipped
        remember(service, {"content": "my umbrella is yellow"})  # names no user
        found = recall(service, "what colour is my umbrella")
        assert "yellow" in found["text"] and found["metadata"]["users"] == ["default"]  # never ""
        assert service.public_manifest()["namespaces"] == "one memory per user, each starting empty"
    finally:
        service.close()
    shared = open_service(tmp_path, "shared", shared_experience=True)
    try:
        found = recall(shared, "the shipped colour 1")
        assert found["metadata"]["n_memories"] == 3 and "teal" in found["text"]
    finally:
        shared.close()
    with pytest.raises(Exception, match="without --shared-experience"):
        open_service(tmp_path, "state", shared_experience=True)  # the folder's users started empty


def test_mcp_remember_puts_an_episode_in_the_calls_user_and_refuses_a_conflict(tmp_path):
    service = open_service(tmp_path)
    try:
        local = build_mcp(service, RequestLimits(), allow_paths=True, caller=LOCAL)
        episode = {"task_id": "boat", "instruction": "note", "steps": [{"observation": "the boat is red"}]}
        answer = asyncio.run(local.call_tool("remember", {"episode": episode, "user_id": "kim"}))
        assert not answer.is_error and answer.structured_content["user"] == "kim"
        assert "red" in recall(service, "what colour is the boat", "kim")["text"]
        assert "red" not in recall(service, "what colour is the boat")["text"]  # not the default namespace
        clash = {**episode, "metadata": {"user": "lee"}}
        answer = asyncio.run(local.call_tool("remember", {"episode": clash, "user": "kim"}))
        assert answer.is_error and "'kim'" in answer.content[0].text and "'lee'" in answer.content[0].text
        assert "lee" not in StateFolder(service.state.root).users()

        # over HTTP a tool call without a request the guard saw acts for no one (it once acted
        # for every namespace)
        remote = build_mcp(service, RequestLimits(), allow_paths=False)
        for name, arguments in (("recall", {"query": "boat", "user": "kim"}), ("remember", {"content": "x"}),
                                ("forget", {"user": "kim", "all": True})):
            answer = asyncio.run(remote.call_tool(name, arguments))
            assert answer.is_error and "refused" in answer.content[0].text, name
        assert "red" in recall(service, "what colour is the boat", "kim")["text"]
        with pytest.raises(NamespaceRefused):
            namespace_for(None, "kim")
    finally:
        service.close()


def test_a_forget_naming_neither_an_episode_nor_all_is_refused_and_forgets_nothing(tmp_path):
    """An agent's `forget()` with no arguments once erased the whole namespace. Now every face and
    the Python API refuse it with a sentence naming `task_id` and `all`; `all: true` erases."""
    service = open_service(tmp_path)
    try:
        local = build_mcp(service, RequestLimits(), allow_paths=True, caller=LOCAL)
        remember(service, {"content": "my umbrella is yellow", "task_id": "umbrella"})
        for arguments in ({}, {"user": "default"}, {"all": False}):
            answer = asyncio.run(local.call_tool("forget", arguments))
            assert answer.is_error, arguments
            assert '"task_id"' in answer.content[0].text and '"all": true' in answer.content[0].text
        with pytest.raises(BadRequest, match="named neither"):
            asyncio.run(service.forget("default"))
        with pytest.raises(BadRequest, match="not both"):
            asyncio.run(service.forget("default", "umbrella", all=True))
        assert "yellow" in recall(service, "what colour is my umbrella")["text"]
        assert [e.task_id for e in service.pool.memory("default").episodes()] == ["umbrella"]
        answer = asyncio.run(local.call_tool("forget", {"all": True}))
        assert not answer.is_error and answer.structured_content["forgotten"] == "namespace"
        assert "yellow" not in recall(service, "what colour is my umbrella")["text"]
    finally:
        service.close()


def test_forgetting_leaves_no_image_or_cache_entry_and_recall_images_do_not_stay(tmp_path):
    service = open_service(tmp_path)
    folder = service.state.user_dir("ana")
    try:
        remember(service, {"content": "my locker code is 5521", "user": "ana", "task_id": "locker",
                           "images": [data_url(PNG)]})
        remember(service, {"content": "my bike is red", "user": "ana", "task_id": "bike"})
        cache = EmbeddingCache(folder / STORE / "embeddings.sqlite")
        before = cache.stored_keys()
        assert len(before) == 2 and len(stored_files(folder)) == 1

        from PIL import Image
        import io
        buffer = io.BytesIO()
        Image.new("RGB", (3, 3), "green").save(buffer, format="PNG")
        found = recall(service, "what is my locker code", "ana", images=[buffer.getvalue()])
        assert "5521" in found["text"]
        assert len(stored_files(folder)) == 1  # the question's picture left with its answer
        assert cache.stored_keys() == before  # the question's vector never reached the file

        assert asyncio.run(service.forget("ana", "locker"))["forgotten"] == 1
        assert stored_files(folder) == set()
        kept = cache.stored_keys()
        assert len(kept) == 1 and kept < before  # only the forgotten turn's entry left the cache
        logged = live_episodes(EpisodeLog(folder / LOG).read())
        assert {k for e in logged for k in e.keys} == kept  # every entry belongs to a live episode
        assert b"5521" not in (folder / LOG).read_bytes()
        assert "5521" not in recall(service, "what is my locker code", "ana")["text"]
        cache.close()
    finally:
        service.close()


def png_saying(text: str) -> bytes:
    """A PNG whose bytes hold `text` (a tEXt chunk), so a grep finds an image that stayed."""
    import io

    from PIL import Image
    from PIL.PngImagePlugin import PngInfo

    info, buffer = PngInfo(), io.BytesIO()
    info.add_text("note", text)
    Image.new("RGB", (2, 2), "white").save(buffer, format="PNG", pnginfo=info)
    return buffer.getvalue()


def holding(root, *secrets: bytes) -> list[str]:
    """Every file under `root` whose bytes hold one of `secrets`."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and any(s in p.read_bytes() for s in secrets))


def test_a_state_folder_from_before_users_keeps_no_copy_of_what_is_forgotten(tmp_path):
    """A folder from before users had their own memory (one log and one image store at its root) is
    adopted user by user on start. Nothing of it stays at the root: after a forget of an episode
    and of a whole user, and a restart, no file under the state folder holds their text."""
    from automemo.deploy import read_manifest
    from automemo.episode_store import EpisodeStore

    ana_secret, default_secret = b"QUOKKA-5521-ANA", b"WOMBAT-7788-DEFAULT"
    export = make_export(tmp_path / "export", program=EMBEDDING_MEMORY)
    root = tmp_path / "state"
    picture = EpisodeStore(root / STORE).put_image(png_saying(ana_secret.decode()))
    (root / "program.json").write_text(json.dumps({"program_sha256": read_manifest(export)["files"]["program.py"]}))
    episodes = [{"task_id": "locker", "instruction": "note", "metadata": {"user": "ana"},
                 "steps": [{"index": 0, "observation": f"my locker code is {ana_secret.decode()}",
                            "screenshot": picture.to_dict()}]},
                {"task_id": "bike", "instruction": "note", "metadata": {"user": "ana"},
                 "steps": [{"index": 0, "observation": "my bike is red"}]},
                {"task_id": "note", "instruction": "note",  # no user: the default namespace's
                 "steps": [{"index": 0, "observation": f"the alarm code is {default_secret.decode()}"}]}]
    with open(root / LOG, "w") as fh:
        for seq, episode in enumerate(episodes, 1):
            fh.write(json.dumps({"seq": seq, "received": 0, "episode": {"benchmark": "minigallery", **episode}}) + "\n")

    service = open_service(tmp_path, shared_experience=True)  # such a folder's users shared the base
    try:
        assert ana_secret.decode() in recall(service, "what is my locker code", "ana")["text"]
        assert default_secret.decode() in recall(service, "what is the alarm code")["text"]
        assert asyncio.run(service.forget("ana", "locker"))["forgotten"] == 1
        assert asyncio.run(service.forget("default", all=True))["forgotten"] == "namespace"
    finally:
        service.close()
    service = open_service(tmp_path, shared_experience=True)
    try:
        assert ana_secret.decode() not in recall(service, "what is my locker code", "ana")["text"]
        assert "bike is red" in recall(service, "what colour is my bike", "ana")["text"]
        assert default_secret.decode() not in recall(service, "what is the alarm code")["text"]
    finally:
        service.close()
    assert holding(root, ana_secret, default_secret) == []


def test_a_forgotten_episodes_vectors_leave_the_cache_files_bytes(tmp_path, monkeypatch):
    """Deleting a row leaves its bytes in the file's free space unless SQLite zeroes them
    (`PRAGMA secure_delete`). This machine's SQLite may be built to zero by default; every
    connection here starts from the upstream default, off, so the cache's own setting is tested."""
    import sqlite3

    connect = sqlite3.connect

    def upstream_default(*args, **kwargs):
        conn = connect(*args, **kwargs)
        conn.execute("PRAGMA secure_delete = OFF")
        return conn
    monkeypatch.setattr(sqlite3, "connect", upstream_default)

    text = "the vault phrase is glacier pumpkin orbit"
    service = open_service(tmp_path)
    folder = service.state.user_dir("ana")
    try:
        remember(service, {"content": text, "user": "ana", "task_id": "vault"})
        remember(service, {"content": "my bike is red", "user": "ana", "task_id": "bike"})
        keys = {e.task_id: e.keys for e in live_episodes(EpisodeLog(folder / LOG).read())}
        reader = connect(folder / STORE / "embeddings.sqlite")
        rows = dict(reader.execute("select key, vector from embeddings"))
        reader.close()
        vault = [key.encode() for key in keys["vault"]] + [rows[key] for key in keys["vault"]]
        assert len(vault) == 2 and rows[keys["bike"][0]]
        assert asyncio.run(service.forget("ana", "vault"))["forgotten"] == 1
        files = sorted((folder / STORE).glob("embeddings.sqlite*"))  # -wal and -journal too, if any
        assert [p.name for p in files if any(secret in p.read_bytes() for secret in [text.encode(), *vault])] == []
        assert rows[keys["bike"][0]] in files[0].read_bytes()  # the kept turn's vector stays
    finally:
        service.close()


def test_open_finishes_an_interrupted_forget_and_sweeps_images_no_log_line_names(tmp_path):
    service = open_service(tmp_path, snapshot_every=1)
    folder = service.state.user_dir("ana")
    remember(service, {"content": "my locker code is 5521", "user": "ana", "task_id": "locker",
                       "images": [data_url(PNG)]})
    remember(service, {"content": "my bike is red", "user": "ana", "task_id": "bike"})
    service.close()
    assert b"5521" in (folder / SNAPSHOT).read_bytes()  # the snapshot holds the text to forget
    # a kill right after the tombstone: the log still holds the text, the snapshot and image stay
    log = EpisodeLog(folder / LOG)
    log.read()
    log.append_forget("locker", received=0.0)
    log.close()
    # and a kill between storing a remember's image and logging it
    stray = folder / STORE / "images" / "ab" / ("ab" * 32 + ".png")
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(PNG + b"unlogged")
    cache = EmbeddingCache(folder / STORE / "embeddings.sqlite")  # and the vector its update embedded
    cache.put_many({"f" * 64: np.ones(64, dtype=np.float32)})
    cache.close()
    service = open_service(tmp_path)
    try:
        assert "5521" not in recall(service, "what is my locker code", "ana")["text"]
        assert b"5521" not in (folder / LOG).read_bytes()
        assert not (folder / SNAPSHOT).is_file() or b"5521" not in (folder / SNAPSHOT).read_bytes()
        assert stored_files(folder) == set()  # the forgotten episode's image and the unlogged one
        cache = EmbeddingCache(folder / STORE / "embeddings.sqlite")
        logged = live_episodes(EpisodeLog(folder / LOG).read())
        assert cache.stored_keys() == {k for e in logged for k in e.keys}
        cache.close()
    finally:
        service.close()


def test_an_offline_import_gets_its_cache_keys_when_replayed_so_a_forget_keeps_the_rest(tmp_path):
    from automemo.serve.user_memory import UserMemory

    service = open_service(tmp_path)
    remember(service, {"content": "my bike is red", "user": "ana", "task_id": "bike"})
    service.close()
    # `automemo memory import` while no server runs: logged, not applied, no keys recorded
    state = StateFolder(tmp_path / "state")
    offline = UserMemory("ana", state, program=None, notice=lambda message: None)
    offline.add_logged(read_lines("\n".join(json.dumps({"task_id": t, "instruction": t, "steps": [
        {"observation": text}]}) for t, text in (("locker", "my locker code is 5521"), ("boat", "the boat is blue"))),
        RequestLimits(), service.benchmark, user="ana").episodes)
    folder = state.user_dir("ana")
    assert [e.keys for e in live_episodes(EpisodeLog(folder / LOG).read())][1:] == [None, None]
    service = open_service(tmp_path)
    try:
        assert "5521" in recall(service, "what is my locker code", "ana")["text"]  # replayed, keys recorded
        logged = live_episodes(EpisodeLog(folder / LOG).read())
        assert all(e.keys for e in logged)
        cache = EmbeddingCache(folder / STORE / "embeddings.sqlite")
        assert cache.stored_keys() == {k for e in logged for k in e.keys}
        assert asyncio.run(service.forget("ana", "locker"))["forgotten"] == 1
        kept = cache.stored_keys()
        assert len(kept) == 2 and kept == {k for e in live_episodes(EpisodeLog(folder / LOG).read()) for k in e.keys}
        cache.close()
    finally:
        service.close()


DENSE_MEMORY = '''
from automemo.contract import MemoProgram, MemoryPayload
from automemo.toolkit.memolib import DenseIndex


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.index, self.texts = DenseIndex(toolkit.embed_text), []

    def update(self, episode):
        texts = [s.observation for s in episode.steps]
        self.index.add_many(texts)  # batched across updates: embedded later, unless flushed
        self.texts += texts

    def retrieve(self, task):
        rows = [row for row, _ in self.index.search(task.instruction, 2)]
        return MemoryPayload(text="\\n".join(self.texts[r] for r in rows))
'''


def test_a_served_update_embeds_its_own_turns_so_forgetting_it_drops_their_cache_entries(tmp_path):
    export = tmp_path / "export"
    make_export(export, program=DENSE_MEMORY)
    service = open_service(tmp_path)
    folder = service.state.user_dir("ana")
    try:
        remember(service, {"content": "my locker code is 5521", "user": "ana", "task_id": "locker"})
        remember(service, {"content": "my bike is red", "user": "ana", "task_id": "bike"})
        logged = live_episodes(EpisodeLog(folder / LOG).read())
        assert [len(e.keys) for e in logged] == [1, 1]  # each update embedded its own turn, not later
        cache = EmbeddingCache(folder / STORE / "embeddings.sqlite")
        assert cache.stored_keys() == set(logged[0].keys) | set(logged[1].keys)
        assert asyncio.run(service.forget("ana", "locker"))["forgotten"] == 1
        assert cache.stored_keys() == set(logged[1].keys)
        assert "red" in recall(service, "what colour is my bike", "ana")["text"]
        cache.close()
    finally:
        service.close()


def test_an_import_with_a_bad_later_line_is_refused_whole():
    good = json.dumps({"task_id": "a", "instruction": "x", "steps": [{"observation": "y",
                                                                        "screenshot": data_url(PNG)}]})
    with pytest.raises(BadRequest, match="line 2: .*nothing of this import was stored"):
        read_lines(good + "\n" + '{"messages": []}\n', RequestLimits(), "minigallery", user="ana")
    drafts = read_lines(good + "\n", RequestLimits(), "minigallery", user="ana").episodes
    assert drafts[0].images == (PNG,) and drafts[0].episode["metadata"]["user"] == "ana"  # checked, not stored


def test_quotas_refuse_with_429_and_413_and_store_nothing(tmp_path):
    service = open_service(tmp_path, quota=Quota(episodes=2, bytes=6_000))
    folder = service.state.user_dir("ana")
    try:
        for i in range(2):
            remember(service, {"content": f"note {i}", "user": "ana"})
        before = (folder / LOG).read_bytes()
        with pytest.raises(ServiceError, match="quota") as refused:
            remember(service, {"content": "one more", "user": "ana"})
        assert refused.value.status == 429
        remember(service, {"content": "bob's own", "user": "bob"})  # another user's quota is its own
        with pytest.raises(ServiceError, match="quota of 6000 bytes") as refused:
            remember(service, {"content": "x" * 7_000, "user": "bob"})
        assert refused.value.status == 413
        assert (folder / LOG).read_bytes() == before and stored_files(folder) == set()
        lines = read_lines("\n".join(json.dumps({"task_id": f"i{i}", "instruction": f"imported {i}"})
                                     for i in range(2)), RequestLimits(), "minigallery", user="bob").episodes
        with pytest.raises(ServiceError, match="quota is 2") as refused:
            asyncio.run(service.import_episodes("bob", lines))  # bob has one: two more do not fit
        assert refused.value.status == 429
        assert [e.task_id for e in service.pool.memory("bob").episodes()] != []  # bob's own stays
        assert not any(e.task_id.startswith("i") for e in service.pool.memory("bob").episodes())  # none of it
    finally:
        service.close()


def test_the_namespace_tables_are_pruned(tmp_path):
    service = open_service(tmp_path, max_open=1)
    service.pool.max_known = 2
    try:
        for user in ("u1", "u2", "u3", "u4", "u5"):
            recall(service, "anything", user)
        stats = service.pool.stats()
        assert stats["open"] == 1 and stats["known"] <= 2 and stats["locks"] <= 2
        assert recall(service, "anything", "u1")["metadata"]["n_memories"] == 0  # reopens as before
    finally:
        service.close()


def test_a_recalls_metadata_is_the_benchmarks_question_time_keys_only():
    def asked(metadata, keys=frozenset({"site"})):
        return recall_request_of({"query": "q", "metadata": metadata}, keys)

    assert asked({"site": "shop.example", "budget": {"max_chars": 100}}) == {
        "site": "shop.example", "budget": {"max_chars": 100}}
    for label in ({"category": "multi-hop"}, {"answer": "Miso"}, {"site": "x", "clue": ["D1:3"]}):
        with pytest.raises(BadRequest, match="known at question time") as refused:
            asked(label)
        assert "budget, site, time" in str(refused.value)
    with pytest.raises(BadRequest, match="the user is the call's"):
        asked({"user": "bob"})  # a namespace never comes through metadata
    with pytest.raises(BadRequest, match="known at question time"):
        asked({"site": "x"}, keys=frozenset())  # another benchmark's key


def recall_request_of(body, keys):
    from automemo.serve.requests import recall_request

    return recall_request(body, RequestLimits(), allow_paths=False, user_for=lambda named: "ana",
                          question_time_keys=keys).metadata
