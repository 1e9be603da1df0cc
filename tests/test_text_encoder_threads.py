"""Small MiniLM calls (a question, an entity name) run on one torch thread, batches on the
default: a sentence split over two threads of a busy 2-core machine waits on itself."""

from __future__ import annotations

import numpy as np
import pytest

from automemo.toolkit.text_encoders import ONE_THREAD_TEXTS, _torch_threads

torch = pytest.importorskip("torch")


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def test_a_small_call_runs_on_one_thread_and_a_batch_on_the_default(two_threads):
    seen = []
    for n_texts in (1, ONE_THREAD_TEXTS, ONE_THREAD_TEXTS + 1):
        with _torch_threads(n_texts):
            seen.append(torch.get_num_threads())
    assert seen == [1, 1, 2]
    assert torch.get_num_threads() == 2


def test_the_thread_count_is_restored_when_the_call_fails(two_threads):
    with pytest.raises(RuntimeError):
        with _torch_threads(1):
            raise RuntimeError("encoder failed")
    assert torch.get_num_threads() == 2


def test_a_batch_is_split_over_streams_each_on_one_thread_in_order():
    from automemo.toolkit.encoder_streams import in_streams, split

    assert split(10, 2) == [(0, 5), (5, 10)] and split(3, 4) == [(0, 1), (1, 2), (2, 3)]
    seen = []

    def encode_part(copy, texts):
        seen.append((copy, tuple(texts), torch.get_num_threads()))
        return np.array([[float(t)] for t in texts], dtype=np.float32)

    before = torch.get_num_threads()
    rows = in_streams([str(i) for i in range(9)], 2, encode_part)
    assert rows[:, 0].tolist() == list(range(9))  # row i is text i's
    assert sorted(seen) == [(0, tuple("0123"), 1), (1, tuple("45678"), 1)]  # own model copy, one thread each
    assert torch.get_num_threads() == before


def test_minilm_streams_give_the_vectors_of_one_pass(torch_cpu_shim, monkeypatch):
    from automemo.toolkit.text_encoders import MiniLMEncoder

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    texts = [f"note {i}: the {w} was left by the door" for i, w in enumerate("umbrella bike key parcel lamp dog kettle map chair book".split())]
    one, two = MiniLMEncoder(fast=True), MiniLMEncoder(fast=True, streams=2)
    a, b = one.encode(texts), two.encode(texts)
    assert len(texts) > ONE_THREAD_TEXTS and b.shape == a.shape
    assert np.allclose(a, b, atol=2e-2) and ((a * b).sum(axis=1) > 0.999).all()


def test_streams_below_one_are_refused():
    from automemo.configtools import ConfigError
    from automemo.toolkit.embedding import EmbeddingConfig, default_encoders

    with pytest.raises(ConfigError, match="streams must be 1 or more"):
        default_encoders(EmbeddingConfig(streams=0))
    assert default_encoders(EmbeddingConfig(streams=3)).text.encoder.streams == 3
