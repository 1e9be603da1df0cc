"""toolkit.embed_tokens: MiniLM's token outputs, served by the host, cached by content as
float16 matrices, and carried compactly over the session channel to the guest."""

from __future__ import annotations

import json

import numpy as np
import pytest

from automemo.toolkit import matrix_wire
from automemo.toolkit.api import ToolkitUnavailable
from automemo.toolkit.embedding import CachedTextEncoder, EmbeddingConfig, default_encoders
from automemo.toolkit.embedding_cache import EmbeddingCache
from automemo.toolkit.guest import Toolkit
from automemo.toolkit.services import MemoServices


class WordEncoder:
    """A token encoder without a model: one row per word, a fixed random vector per word."""

    name = "words"
    dim = 8

    def __init__(self):
        self.calls = 0

    def _vector(self, word):
        v = np.random.default_rng(sum(map(ord, word))).standard_normal(self.dim)
        return v / np.linalg.norm(v)

    def encode(self, texts, *, node=None):
        return np.stack([sum(self._vector(w) for w in t.split()) for t in texts]).astype(np.float32)

    def encode_tokens(self, texts, *, node=None):
        self.calls += 1
        return [np.stack([self._vector(w) for w in t.split()]).astype(np.float32) for t in texts]


class CountingWordEncoder(WordEncoder):
    def __init__(self):
        super().__init__()
        self.batches: list[list[str]] = []

    def encode_tokens(self, texts, *, node=None):
        self.batches.append(list(texts))
        return super().encode_tokens(texts, node=node)


def test_expected_questions_wait_for_the_first_token_call_and_join_its_batch():
    encoder = CountingWordEncoder()
    cached = CachedTextEncoder(encoder, EmbeddingCache())
    cached.expect_tokens(["where is Rex", "what did Ann bake"])
    assert encoder.batches == []  # announced only: a run without late interaction pays nothing
    first = cached.embed_tokens(["a b c"])
    assert encoder.batches == [["a b c", "where is Rex", "what did Ann bake"]]  # one batch
    assert first[0].shape == (3, 8)
    assert cached.embed_tokens(["what did Ann bake"])[0].shape == (4, 8) and len(encoder.batches) == 1
    cached.expect_tokens(["where is Rex"])  # already cached: never computed again
    cached.embed_tokens(["new text"])
    assert encoder.batches[-1] == ["new text"]


def test_wire_format_round_trips_float16_and_is_smaller_than_json_floats():
    matrix = np.random.default_rng(0).standard_normal((37, 384)).astype(np.float16)
    packed = matrix_wire.pack(matrix, "float16")
    assert np.array_equal(matrix_wire.unpack(json.loads(json.dumps(packed))), matrix)
    assert len(json.dumps(packed)) * 3 < len(json.dumps(matrix.astype(float).tolist()))
    with pytest.raises(ValueError, match="expected"):
        matrix_wire.unpack({"shape": [2, 384], "float16": packed["float16"]})


def test_cache_keeps_variable_length_float16_matrices_and_persists(tmp_path):
    encoder = WordEncoder()
    cached = CachedTextEncoder(encoder, EmbeddingCache(tmp_path / "cache.db"))
    first = cached.embed_tokens(["a b c", "d e", "a b c"])
    assert [m.shape for m in first] == [(3, 8), (2, 8), (3, 8)] and first[0].dtype == np.float16
    assert encoder.calls == 1
    cached.embed_tokens(["d e"])
    assert encoder.calls == 1  # cached by content
    reopened = CachedTextEncoder(WordEncoder(), EmbeddingCache(tmp_path / "cache.db"))
    assert np.array_equal(reopened.embed_tokens(["d e"])[0], first[1]) and reopened.encoder.calls == 0


def test_services_and_guest_carry_token_matrices(tmp_path):
    from automemo.toolkit.embedding import Encoders

    encoders = default_encoders(EmbeddingConfig())
    services = MemoServices(Encoders(CachedTextEncoder(WordEncoder(), EmbeddingCache()), encoders.image),
                            None, tmp_path)
    toolkit = Toolkit(tmp_path, tmp_path, services.handle)
    out = toolkit.embed_tokens(["one two", "three"])
    assert [m.shape for m in out] == [(2, 8), (1, 8)]
    assert np.allclose(np.linalg.norm(out[0].astype(np.float32), axis=1), 1.0, atol=1e-2)
    assert toolkit.embed_tokens([]) == [] and services.usage()["embed_items"] == 2
    with pytest.raises(TypeError, match="not one string"):
        toolkit.embed_tokens("one")


def test_an_encoder_without_token_outputs_is_unavailable_not_a_host_failure(tmp_path):
    class Pooled:
        name, dim = "pooled", 4

        def encode(self, texts, *, node=None):
            return np.ones((len(texts), 4), np.float32)

    from automemo.toolkit.embedding import Encoders

    encoders = default_encoders(EmbeddingConfig())
    services = MemoServices(Encoders(CachedTextEncoder(Pooled(), EmbeddingCache()), encoders.image), None, tmp_path)
    with pytest.raises(ToolkitUnavailable, match="pooled vectors only"):
        services.handle("embed_tokens", {"texts": ["a"]})
    assert services.take_host_failures() == []


def test_minilm_token_embeddings_are_per_word_piece_and_normalised(torch_cpu_shim):
    encoders = default_encoders(EmbeddingConfig())
    short, longer = encoders.text.embed_tokens(["Maya baked bread", "Maya baked sourdough bread at the library"])
    assert short.shape[1] == 384 and longer.shape[0] > short.shape[0] >= 5  # [CLS] ... [SEP]
    assert np.allclose(np.linalg.norm(longer.astype(np.float32), axis=1), 1.0, atol=1e-2)
