"""The fast MiniLM path (`embeddings.text = "minilm_fast"`): the same model truncated at 128
tokens, bfloat16 where the CPU has it. Its vectors agree with the plain encoder's on texts that
fit in 128 tokens, differ past them (the tail is not read), and are cached under their own name,
so neither encoder is ever handed the other's vectors."""

from __future__ import annotations

import numpy as np
import pytest

from automemo.toolkit.embedding import EmbeddingConfig, default_encoders
from automemo.toolkit.text_encoders import FAST_MAX_TOKENS, MiniLMEncoder, bf16_supported

SHORT = [
    "a red umbrella",
    "an umbrella that is red",
    "My favourite colour is teal, and I painted the kitchen in it last spring.",
    "assistant: Here are three ideas for a birthday dinner: a picnic, a cooking class, or tapas.",
]


def test_fast_vectors_agree_with_the_plain_ones_on_short_texts(torch_cpu_shim, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    plain, fast = MiniLMEncoder(), MiniLMEncoder(fast=True)
    a, b = plain.encode(SHORT), fast.encode(SHORT)
    assert b.shape == (len(SHORT), 384) and b.dtype == np.float32
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    assert ((a * b).sum(axis=1) >= 0.98).all()
    # what the plain encoder tells apart, the fast one tells apart too
    assert b[0] @ b[1] > b[0] @ b[2] + 0.2


def test_fast_reads_only_the_first_128_tokens(torch_cpu_shim, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    head = " ".join(["the weather was mild and the garden was quiet"] * 20)  # > 128 tokens
    fast = MiniLMEncoder(fast=True)
    a, b = fast.encode([head + " tax forms", head + " volcano eruption footage"])
    assert a @ b > 0.999  # the tails differ, past the cut
    plain = MiniLMEncoder().encode([head + " tax forms"])[0]
    assert plain @ a > 0.9  # still the same text for the plain reading of 256 tokens


def test_fast_has_its_own_name_and_cache_entries(torch_cpu_shim, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    fast = MiniLMEncoder(fast=True)
    assert fast.name != MiniLMEncoder().name == MiniLMEncoder.name == "all-MiniLM-L6-v2"
    assert fast.name == f"all-MiniLM-L6-v2@{FAST_MAX_TOKENS}" + ("-bf16" if bf16_supported() else "")
    cache = str(tmp_path / "embeddings.sqlite")
    plain_run = default_encoders(EmbeddingConfig(cache_path=cache))
    fast_run = default_encoders(EmbeddingConfig(text="minilm_fast", cache_path=cache))
    assert fast_run.describe()["text"] == fast.name
    plain_run.text.embed(SHORT[:2])
    fast_run.text.embed(SHORT[:2])
    assert fast_run.text.cache.misses == 2  # nothing of the plain run's was reused
    again = default_encoders(EmbeddingConfig(text="minilm_fast", cache_path=cache))
    again.text.embed(SHORT[:2])
    assert again.text.cache.misses == 0  # the fast vectors, read back under the fast name


def test_only_the_longmemeval_preset_selects_the_fast_path():
    from automemo.resolution import load_run_config

    assert load_run_config("longmemeval").embeddings.text == "minilm_fast"
    for preset in ("default", "minigallery", "miniwob", "memgallery-sample"):
        assert load_run_config(preset).embeddings.text == "minilm"


def test_a_shorter_window_reads_less_and_is_named_and_cached_apart(torch_cpu_shim, monkeypatch, tmp_path):
    from automemo.configtools import ConfigError

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    run = default_encoders(EmbeddingConfig(text="minilm_fast", fast_max_tokens=64, cache_path=str(tmp_path / "c.sqlite")))
    assert run.describe()["text"] == "all-MiniLM-L6-v2@64" + ("-bf16" if bf16_supported() else "")
    head = " ".join(["the weather was mild and the garden was quiet"] * 8)  # ~80 pieces: past 64, within 128
    a, b = run.text.embed([head + " tax forms", head + " volcano eruption footage"])
    assert a @ b > 0.999  # the tails are past 64 pieces
    c, d = MiniLMEncoder(fast=True).encode([head + " tax forms", head + " volcano eruption footage"])
    assert c @ d < 0.999  # the 128-piece window reads them
    with pytest.raises(ConfigError, match="fast_max_tokens must be 16..512"):
        default_encoders(EmbeddingConfig(text="minilm_fast", fast_max_tokens=4))
