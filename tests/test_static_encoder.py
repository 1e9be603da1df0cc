"""The static encoder (`embeddings.text = "minilm_static"`): a word-piece table distilled once
from the shipped MiniLM (Model2Vec's method), read from disk afterwards. Deterministic, cached
under its own name, reads whole texts."""

from __future__ import annotations

import numpy as np
import pytest
from automemo.toolkit import static_encoder
from automemo.toolkit.embedding import EmbeddingConfig, default_encoders
from automemo.toolkit.static_encoder import FIRST_PIECE, STATIC_DIM, StaticMiniLMEncoder, pca, zipf_weights
from automemo.toolkit.text_encoders import MiniLMEncoder

TEXTS = ["a red umbrella", "an umbrella that is red", "the quarterly tax forms are due in April",
         "assistant: Here are three ideas for a birthday dinner: a picnic, a cooking class, or tapas."]


@pytest.fixture
def encoder(torch_cpu_shim):
    return StaticMiniLMEncoder()  # the user cache folder: distilled there once (~1 CPU minute)


def test_vectors_are_normalised_and_tell_meanings_apart(encoder):
    v = encoder.encode(TEXTS)
    assert v.shape == (4, STATIC_DIM) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_deterministic_across_calls_and_fresh_loads_from_disk(encoder, monkeypatch):
    first = encoder.encode(TEXTS)
    assert encoder.encode(TEXTS).tobytes() == first.tobytes()
    assert encoder.encode(TEXTS[::-1])[::-1].tobytes() == first.tobytes()  # batch order does not matter
    monkeypatch.setattr(static_encoder, "_TABLES", {})  # as a new process: the table read back from disk
    assert StaticMiniLMEncoder().encode(TEXTS).tobytes() == first.tobytes()


def test_reads_the_whole_text(encoder):
    head = " ".join(["the weather was mild and the garden was quiet"] * 30)  # ~300 pieces, past MiniLM's windows
    a, b = encoder.encode([head + " tax forms", head + " volcano eruption footage"])
    assert a @ b < 0.9999


def test_text_without_pieces_is_a_zero_vector(encoder):
    v = encoder.encode(["", "[UNK]"])
    assert not np.isnan(v).any() and not v.any()


def test_cached_under_its_own_name(encoder, tmp_path):
    assert encoder.name not in (MiniLMEncoder.name, MiniLMEncoder(fast=True).name)
    cache = str(tmp_path / "embeddings.sqlite")
    static_run = default_encoders(EmbeddingConfig(text="minilm_static", cache_path=cache))
    assert static_run.describe()["text"] == encoder.name and static_run.dims()["text"] == STATIC_DIM
    fake = type("Other", (), {"name": MiniLMEncoder.name, "dim": 3, "encode": lambda self, t, node=None: np.ones((len(t), 3), np.float32)})()
    from automemo.toolkit.embedding import CachedTextEncoder

    shared = static_run.text.cache
    CachedTextEncoder(fake, shared, shipped=None).embed(TEXTS[:2])  # another encoder's entries, same texts
    got = static_run.text.embed(TEXTS[:2])
    assert shared.misses == 4 and got.shape == (2, STATIC_DIM)  # none of the other's vectors reused
    assert np.array_equal(got, encoder.encode(TEXTS[:2]))


def test_distillation_is_deterministic_and_weights_frequent_pieces_less(monkeypatch):
    rows = np.random.default_rng(0).standard_normal((400, 32)).astype(np.float32)
    monkeypatch.setattr(static_encoder, "piece_vectors", lambda model, ids: rows[: len(ids)])
    a = static_encoder.distill(None, FIRST_PIECE + 400, dim=8)
    b = static_encoder.distill(None, FIRST_PIECE + 400, dim=8)
    assert a.tobytes() == b.tobytes() and a.shape == (FIRST_PIECE + 400, 8)
    assert not a[:FIRST_PIECE].any()  # specials and [unused] slots carry nothing
    w = zipf_weights(400)
    assert (np.diff(w) > 0).all() and w[-1] < 1.0
    projected = pca(rows, 8)
    assert np.allclose(projected.mean(axis=0), 0, atol=1e-4)
    centred = rows - rows.mean(axis=0)
    loadings = np.linalg.lstsq(centred, projected, rcond=None)[0].T  # each output's component
    assert (loadings[np.arange(8), np.abs(loadings).argmax(axis=1)] > 0).all()  # its largest loading positive
