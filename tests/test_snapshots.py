"""Snapshots: every seed and a generated recipe program, updated in a real session, saved, loaded
into a fresh session, must answer exactly as the original, and keep doing so after more updates
on both. memolib's components round-trip through pickle on their own. The runner refuses a
program whose `save_state` fails (ProgramError: a service replays instead) and a snapshot whose
archive reaches outside the state dir."""

from __future__ import annotations

import io
import pickle
import random
import tarfile

import numpy as np
import pytest

from automemo.measurements.seeds import FastEncoder, synthetic_episode, synthetic_task
from automemo.meta.source.recipe import Pipeline, Recipe, render_recipe
from automemo.paths import SEEDS_DIR
from automemo.sandbox import ProgramError, SandboxError, get_sandbox
from automemo.sandbox import snapshot
from automemo.sandbox.base import Limits
from automemo.sandbox.runner import SNAPSHOT_MAGIC, CallFailed, restore_state_dir
from automemo.toolkit import memolib
from automemo.toolkit.guest import Toolkit

from sandboxtools import sandbox as isolating_sandbox

SEEDS = sorted(p.stem for p in SEEDS_DIR.glob("*.py"))
RECIPE = render_recipe(Recipe(unit="multi", pipeline=Pipeline(window=1, mmr=True, recency=0.3, images=True)))


def _source(name: str) -> str:
    return RECIPE if name == "recipe" else (SEEDS_DIR / f"{name}.py").read_text()


def _retrieve_all(session, tasks) -> list:
    return [session.call("retrieve", {"task": t.to_dict()}) for t in tasks]


def _round_trip(backend, source: str, tmp_path) -> None:
    encoder, rng = FastEncoder(), random.Random(7)
    episodes = [synthetic_episode(i, rng) for i in range(14)]
    tasks = [synthetic_task(j, rng) for j in range(6)]
    with backend.open(source, Limits(), services=encoder, store_root=tmp_path) as original:
        for episode in episodes[:12]:
            original.call("update", {"episode": episode.to_dict()})
        before = _retrieve_all(original, tasks)  # also builds what a program builds lazily
        data = snapshot.save_state(original, Limits())
        with backend.open(source, Limits(), services=encoder, store_root=tmp_path) as restored:
            snapshot.load_state(restored, data, Limits())
            assert _retrieve_all(restored, tasks) == before
            for episode in episodes[12:]:  # the restored memory keeps learning, like the original
                original.call("update", {"episode": episode.to_dict()})
                restored.call("update", {"episode": episode.to_dict()})
            assert _retrieve_all(restored, tasks) == _retrieve_all(original, tasks)


@pytest.mark.parametrize("name", SEEDS + ["recipe"])
def test_every_seed_and_a_recipe_restore_from_a_snapshot(name, tmp_path):
    _round_trip(get_sandbox("unsafe"), _source(name), tmp_path)


@pytest.mark.bwrap
def test_a_snapshot_round_trips_through_the_bubblewrap_sandbox(tmp_path):
    _round_trip(isolating_sandbox("bwrap"), _source("hybrid_rag"), tmp_path)


def test_a_program_whose_save_state_fails_is_a_program_error(tmp_path):
    source = """
import os
from automemo.contract import MemoProgram, MemoryPayload
class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.handle = open(os.devnull)  # pickle cannot carry an open file
    def update(self, episode):
        pass
    def retrieve(self, task):
        return MemoryPayload()
"""
    with get_sandbox("unsafe").open(source, Limits(), store_root=tmp_path) as session:
        with pytest.raises(ProgramError, match="pickle|TextIOWrapper"):
            snapshot.save_state(session, Limits())
        assert session.call("retrieve", {"task": synthetic_task(1, random.Random(0)).to_dict()}) is not None


def _blob_with(name: str, memo_bytes: bytes = b"state") -> bytes:
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = 4
        tar.addfile(info, io.BytesIO(b"evil"))
    return SNAPSHOT_MAGIC + len(memo_bytes).to_bytes(8, "big") + memo_bytes + archive.getvalue()


def test_a_snapshot_entry_outside_the_state_dir_is_refused(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    with pytest.raises(CallFailed, match="outside the state dir"):
        restore_state_dir(_blob_with("../escaped.txt"), state)
    assert not (tmp_path / "escaped.txt").exists()
    assert restore_state_dir(_blob_with("inside.txt", b"memo"), state) == b"memo"
    assert (state / "inside.txt").read_bytes() == b"evil"
    with get_sandbox("unsafe").open(_source("no_memory"), Limits(), store_root=tmp_path) as session:
        with pytest.raises(SandboxError, match="outside the state dir"):
            snapshot.load_state(session, _blob_with("../../escaped.txt"), Limits())


# --- memolib components on their own ------------------------------------------------------------


def _embed(texts):
    return FastEncoder().handle("embed_text", {"texts": list(texts)})


def test_memolib_components_pickle_and_keep_growing(tmp_path):
    toolkit = Toolkit(tmp_path, tmp_path, call_host=FastEncoder().handle)
    texts = [f"my {w} and the {v} number {i}" for i, (w, v) in
             enumerate(zip("lamp sofa kettle tent boots lamp camera".split() * 3, "red blue green".split() * 7))]
    bm25, dense, store = memolib.BM25Index(), memolib.DenseIndex(_embed, 384), memolib.UnitStore()
    scoped = memolib.ScopedIndex(toolkit.vector_index, 384)
    for i, text in enumerate(texts[:15]):
        bm25.add(text)
        dense.add(text)
        store.add_episode([memolib.Unit(f"e{i}", 0, text, scope=f"U{i % 3}", time=f"2024-01-{1 + i:02d}")])
        scoped.add(dense.matrix[-1:], f"U{i % 3}")
    store.tag([3, 4], "image")
    copies = pickle.loads(pickle.dumps((bm25, dense, store, scoped)))
    for a, b in zip((bm25, dense, store, scoped), copies):
        assert type(a) is type(b)
    allowed = store.allowed_rows("U1", without="image")
    assert list(allowed) == [1, 7, 10, 13] and list(copies[2].allowed_rows("U1", without="image")) == list(allowed)
    for text in texts[15:]:  # both keep growing alike after the round trip
        for index in (bm25, dense, copies[0], copies[1]):
            index.add(text)
    query = "lamp red"
    assert copies[0].search(query, 5, allowed) == bm25.search(query, 5, allowed)
    assert copies[1].search(query, 5) == dense.search(query, 5)
    assert np.array_equal(copies[1].matrix, dense.matrix)
    assert copies[2].recency_of([0, 14]) == store.recency_of([0, 14]) == [0.0, 1.0]
    q = dense.matrix[2]
    assert copies[3].search(q, 3, "U2") == scoped.search(q, 3, "U2")


def test_growing_array_pickles_its_rows_only():
    rows = memolib.GrowingArray(np.float32, width=4, capacity=1024)
    rows.extend(np.ones((3, 4)))
    copy = pickle.loads(pickle.dumps(rows))
    assert np.array_equal(copy.view, rows.view) and len(pickle.dumps(rows)) < 1024
    copy.append(np.zeros(4))
    assert len(copy) == 4 and len(rows) == 3


def test_a_scoped_index_snapshot_holds_each_vector_once(tmp_path):
    toolkit = Toolkit(tmp_path, tmp_path, call_host=FastEncoder().handle)
    scoped = memolib.ScopedIndex(toolkit.vector_index, 64)
    vectors = memolib.as_matrix(np.random.default_rng(0).standard_normal((400, 64)), 64)
    for i in range(0, 400, 50):
        scoped.add(vectors[i:i + 50], f"U{i % 3}" if i % 100 else "")
    data = pickle.dumps(scoped)
    assert len(data) < 1.2 * vectors.nbytes  # not once in the all-rows index and again per scope
    copy = pickle.loads(data)
    for scope in ("", "U1", "U2", "nobody"):
        assert copy.search(vectors[77], 5, scope) == scoped.search(vectors[77], 5, scope)


def test_a_growing_array_of_mostly_zero_vectors_pickles_the_others_only():
    rows = memolib.GrowingArray(np.float32, width=32)
    block = np.zeros((100, 32), dtype=np.float32)
    block[[3, 70]] = 1.0
    rows.extend(block)
    data = pickle.dumps(rows)
    assert len(data) < block.nbytes // 10
    copy = pickle.loads(data)
    assert np.array_equal(copy.view, block) and len(copy) == 100
    copy.append(np.full(32, 2.0))
    assert len(copy) == 101 and copy.view[100, 0] == 2.0
