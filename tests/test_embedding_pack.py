"""Precomputed embeddings shipped with a data set: used when they agree with the encoder and the
data they were made from, recomputed (with a warning) when they do not. The real MiniLM encoder
computes the vectors on both paths."""

from __future__ import annotations

import json

import numpy as np
import pytest

from automemo.paths import SHIPPED_DATA_DIR
from automemo.toolkit.embedding import CachedTextEncoder
from automemo.toolkit.embedding_cache import EmbeddingCache, content_key
from automemo.toolkit.embedding_pack import pack_name, read_pack, shipped_vectors, write_pack
from automemo.toolkit.text_encoders import MINILM_DIM, MiniLMEncoder

TEXTS = ["Alice: my sister adopted a white cat last May.", "Bob: we moved to Oslo in the winter.",
         "What colour is the cat Alice's sister adopted?"]


class CountingEncoder:
    """The real MiniLM, counting the texts it is asked to compute."""

    def __init__(self, name: str = MiniLMEncoder.name) -> None:
        self.inner = MiniLMEncoder()
        self.name, self.dim = name, MINILM_DIM
        self.computed: list[str] = []

    def encode(self, texts, *, node=None):
        self.computed += list(texts)
        return self.inner.encode(texts)


@pytest.fixture
def shipped(tmp_path):
    """A shipped-data root with one data set whose pack holds TEXTS' real MiniLM vectors."""
    folder = tmp_path / "data" / "tiny"
    folder.mkdir(parents=True)
    (folder / "alice.json").write_text(json.dumps({"turns": TEXTS[:2]}))
    made = CachedTextEncoder(CountingEncoder(), EmbeddingCache(tmp_path / "cache.sqlite"), shipped=None)
    live = made.embed(TEXTS)
    write_pack(tmp_path / "cache.sqlite", folder, MiniLMEncoder.name, MINILM_DIM)
    shipped_vectors.cache_clear()
    yield tmp_path / "data", live
    shipped_vectors.cache_clear()


def test_a_matching_pack_answers_without_the_encoder(shipped):
    root, live = shipped
    encoder = CountingEncoder()
    vectors = CachedTextEncoder(encoder, EmbeddingCache(), shipped=root).embed(TEXTS + ["a text the pack lacks"])
    assert encoder.computed == ["a text the pack lacks"]  # only what the pack does not hold
    assert np.allclose(vectors[:3], live, atol=2e-3)  # float16 storage
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (np.argsort(-(vectors[:3] @ live[2])) == np.argsort(-(live @ live[2]))).all()


def test_edited_data_means_the_pack_is_ignored_and_the_texts_recomputed(shipped, capsys):
    root, live = shipped
    (root / "tiny" / "alice.json").write_text(json.dumps({"turns": ["something else"]}))
    encoder = CountingEncoder()
    vectors = CachedTextEncoder(encoder, EmbeddingCache(), shipped=root).embed(TEXTS)
    assert encoder.computed == TEXTS and np.allclose(vectors, live, atol=1e-5)
    assert "changed since it was made" in capsys.readouterr().err


def test_another_encoder_name_or_a_damaged_file_is_refused(shipped, capsys):
    root, _ = shipped
    pack = root / "tiny" / pack_name(MiniLMEncoder.name)
    assert read_pack(pack, "all-mpnet-base-v2", MINILM_DIM) == {}
    assert "made with 'all-MiniLM-L6-v2', this run embeds with 'all-mpnet-base-v2'" in capsys.readouterr().err
    assert read_pack(pack, MiniLMEncoder.name, 768) == {}
    with np.load(pack) as data:
        parts = dict(data)
    parts["keys"] = parts["keys"].copy()
    parts["keys"][0, 0] ^= 0xFF  # a key that no longer matches the recorded hash
    with pack.open("wb") as f:
        np.savez(f, **parts)
    assert read_pack(pack, MiniLMEncoder.name, MINILM_DIM) == {}
    assert "damaged" in capsys.readouterr().err
    pack.write_bytes(b"not a zip")
    assert read_pack(pack, MiniLMEncoder.name, MINILM_DIM) == {}
    assert "cannot be read" in capsys.readouterr().err


def test_an_encoder_without_a_pack_never_looks(tmp_path):
    encoder = CountingEncoder(name="openai:text-embedding-3-small")
    assert CachedTextEncoder(encoder, EmbeddingCache(), shipped=SHIPPED_DATA_DIR).shipped is None


def test_the_sample_ships_a_pack_that_agrees_with_minilm(tmp_path):
    """The shipped pack of @mem-gallery-sample holds its questions' vectors as MiniLM computes them."""
    from automemo.benchmarks import load
    from automemo.episode_store import EpisodeStore
    from automemo.evaluation.query_warmup import question_texts

    pack = read_pack(SHIPPED_DATA_DIR / "mem-gallery-sample" / pack_name(MiniLMEncoder.name),
                     MiniLMEncoder.name, MINILM_DIM)
    assert len(pack) > 1000
    bench = load("memgallery", {"path": "@mem-gallery-sample", "mode": "retrieval"})
    store = EpisodeStore(tmp_path / "store")
    questions = question_texts([bench.partial(t, store) for t in bench.split("test").retrieve[:3]])
    keys = [content_key(MiniLMEncoder.name, q.encode()) for q in questions]
    assert all(k in pack for k in keys)
    live = MiniLMEncoder().encode(questions)
    assert np.allclose(np.stack([pack[k] for k in keys]), live, atol=2e-3)
