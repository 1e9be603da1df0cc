"""Embeddings: the real MiniLM model, the perceptual image feature, a tiny open_clip model round
trip, the OpenAI endpoint encoder against the fake server, and the content-hash cache."""

from __future__ import annotations

import os

import json

import numpy as np
import pytest
from PIL import Image, ImageDraw

from automemo.configtools import ConfigError
from automemo.llm import LLMClient, LLMConfig, RoleConfig
from automemo.toolkit.embedding import (
    EmbeddingCache, EmbeddingConfig, MiniLMEncoder, OpenClipEncoder, PerceptualImageEncoder,
    default_encoders,
)


def _png(tmp_path, name, draw):
    img = Image.new("RGB", (64, 48), "white")
    draw(ImageDraw.Draw(img))
    path = tmp_path / f"{name}.png"
    img.save(path)
    return path


def test_minilm_puts_similar_sentences_closer_than_unrelated(torch_cpu_shim):
    vectors = MiniLMEncoder().encode([
        "How do I reset my account password?",
        "I forgot my password and need to change it.",
        "The recipe needs two cups of flour and an egg.",
    ])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similar, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert similar > unrelated + 0.3


def test_a_minilm_vector_is_bit_for_bit_the_same_whatever_it_is_encoded_with(torch_cpu_shim):
    # Lengths from 3 to ~90 word pieces: padded to the batch's longest, the short ones would move.
    texts = ["Yes.", "We booked the trip to Kyoto for the temple visit on Friday morning.",
             " ".join(f"word{i}" for i in range(40)), "The dentist is on Monday; buy milk on the way home."]
    for encoder in (MiniLMEncoder(), MiniLMEncoder(fast=True), MiniLMEncoder(batch_size=2)):
        together = encoder.encode(texts)
        alone = np.vstack([encoder.encode([t]) for t in texts])
        reversed_ = encoder.encode(texts[::-1])[::-1]
        assert np.array_equal(together, alone) and np.array_equal(together, reversed_)


def test_minilm_is_the_sentence_transformers_pipeline_the_model_ships_for(torch_cpu_shim):
    """Our BERT + mean pooling (text_encoders.MiniLMModel, which skips importing the library) gives
    the library's vectors, token matrices and word pieces, plain and cut at the fast window."""
    import torch
    from sentence_transformers import SentenceTransformer

    from automemo.toolkit.text_encoders import minilm_model_dir

    texts = ["hello world", "  surrounded by spaces  ", "", "Ünïcödé, ça va? 東京に行きます", "word " * 400,
             "The quick brown fox jumps over the lazy dog. " * 7, "What did Ann bake on 2024-05-03?"]
    reference = SentenceTransformer(minilm_model_dir(), device="cpu", local_files_only=True)
    for encoder in (MiniLMEncoder(), MiniLMEncoder(fast=True)):
        reference.max_seq_length = encoder.max_tokens if encoder.fast else 256
        if encoder.bf16:
            reference = reference.to(torch.bfloat16)
        atol = 1e-2 if encoder.bf16 else 1e-6
        expected = reference.encode(texts, batch_size=1, normalize_embeddings=True)  # each padded to itself
        assert np.allclose(encoder.encode(texts), expected, atol=atol)
        tokens = reference.encode(texts, batch_size=1, output_value="token_embeddings")
        for ours, theirs in zip(encoder.encode_tokens(texts), tokens):
            theirs = theirs.float().numpy()
            assert np.allclose(ours, theirs / np.linalg.norm(theirs, axis=1, keepdims=True), atol=atol)
        cut = (getattr(reference, "preprocess", None) or reference.tokenize)(texts)
        ours = encoder._tokenizer().tokenize(texts)
        assert np.array_equal(ours["input_ids"], cut["input_ids"].numpy())
        assert np.array_equal(ours["attention_mask"], cut["attention_mask"].numpy())


def test_cached_text_encoder_embeds_each_text_once_and_persists(torch_cpu_shim, tmp_path):
    cfg = EmbeddingConfig(cache_path=str(tmp_path / "cache.db"))
    encoders = default_encoders(cfg)
    first = encoders.text.embed(["alpha", "beta", "alpha"])
    cache = encoders.text.cache
    assert len(cache) == 2 and cache.misses == 2  # "alpha" twice in one call: encoded once
    again = encoders.text.embed(["beta", "alpha"])
    assert np.array_equal(again, first[[1, 0]]) and cache.hits == 2
    reopened = default_encoders(cfg).text
    assert np.array_equal(reopened.embed(["alpha"])[0], first[0]) and reopened.cache.hits == 1


@pytest.mark.parametrize("text", ["minilm", "minilm_fast"])
def test_a_long_text_cut_past_the_window_shares_the_whole_texts_vector(torch_cpu_shim, tmp_path, text):
    """The encoder reads a long text's first pieces only: the same text whole and cut at another
    length past the window is one encoding, with the very vector of the whole text; a text the
    window does not cut keeps its own vector."""
    encoders = default_encoders(EmbeddingConfig(text=text, cache_path=str(tmp_path / "cache.db")))
    long = " ".join(f"the {i}th turn speaks of gardens, trains and a blue umbrella" for i in range(80))
    assert len(long) > 3000
    calls: list[int] = []
    encode = encoders.text.encoder.encode
    encoders.text.encoder.encode = lambda texts, **kw: calls.append(len(texts)) or encode(texts, **kw)
    whole = encoders.text.embed([long])[0]
    cut = encoders.text.embed([long[:2000], long[:2500]])
    assert calls == [1] and np.array_equal(cut[0], whole) and np.array_equal(cut[1], whole)
    short = encoders.text.embed([long[:40], long[:60]])
    assert calls == [1, 2] and not np.allclose(short[0], short[1])
    reopened = default_encoders(EmbeddingConfig(text=text, cache_path=str(tmp_path / "cache.db"))).text
    reopened.encoder.encode = lambda texts, **kw: pytest.fail("a cut text's reading is in the cache file")
    assert np.array_equal(reopened.embed([long[:3000]])[0], whole)


def test_perceptual_feature_is_deterministic_and_separates_images(tmp_path):
    encoder = PerceptualImageEncoder()
    red_box = Image.new("RGB", (80, 60), "white")
    ImageDraw.Draw(red_box).rectangle([10, 10, 40, 40], fill="red")
    red_box_moved = Image.new("RGB", (80, 60), "white")
    ImageDraw.Draw(red_box_moved).rectangle([12, 12, 42, 42], fill="red")
    blue_stripes = Image.new("RGB", (80, 60), "navy")
    ImageDraw.Draw(blue_stripes).rectangle([0, 0, 79, 20], fill="yellow")
    vectors = encoder.encode([red_box, red_box_moved, blue_stripes, red_box.copy()])
    assert vectors.shape == (4, encoder.dim) == (4, 320)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vectors[0], vectors[3])
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3
    flat = encoder.encode([Image.new("RGB", (8, 8), "gray")])[0]
    assert np.isfinite(flat).all() and abs(np.linalg.norm(flat) - 1) < 1e-5


def test_default_encoders_fall_back_to_perceptual_and_say_so(tmp_path):
    encoders = default_encoders(EmbeddingConfig())
    described = encoders.describe()
    assert described["image_fallback"] is True and "perceptual" in described["note"]
    assert described["text"] == "all-MiniLM-L6-v2"
    path = _png(tmp_path, "a", lambda d: d.ellipse([5, 5, 30, 30], fill="green"))
    first = encoders.image.embed_files([path, path])
    assert first.shape == (2, 320) and np.array_equal(first[0], first[1])
    assert encoders.image.cache.misses == 1


def test_bad_embedding_configs_fail_fast():
    with pytest.raises(ConfigError, match="clip_pretrained"):
        default_encoders(EmbeddingConfig(image="open_clip"))
    with pytest.raises(ConfigError, match="memo LLM role"):
        default_encoders(EmbeddingConfig(text="openai"))


def test_openai_encoder_goes_through_the_client_and_ledger(fake_llm):
    client = LLMClient(LLMConfig(memo=RoleConfig(model="chat-model", base_url=fake_llm.base_url)))
    encoders = default_encoders(EmbeddingConfig(text="openai", openai_model="emb-1"), llm=client)
    vectors = encoders.text.embed(["x", "y"], node=5)
    assert vectors.shape == (2, fake_llm.embedding_dim) and encoders.text.dim == 64
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    rows = client.ledger.rows(kind="embed", node=5)
    assert len(rows) == 1 and rows[0]["model"] == "emb-1" and rows[0]["role"] == "memo"


def test_cache_survives_reopen_with_exact_vectors(tmp_path):
    cache = EmbeddingCache(tmp_path / "c.db")
    vector = np.array([0.1, -0.2, 0.3], dtype=np.float32)
    cache.put_many({"k": vector})
    found = EmbeddingCache(tmp_path / "c.db").get_many(["k", "missing"])
    assert list(found) == ["k"] and np.array_equal(found["k"], vector)


def test_the_cache_records_what_a_block_asked_for_keeps_transient_vectors_out_of_the_file_and_drops_keys(tmp_path):
    cache = EmbeddingCache(tmp_path / "c.db")
    one, two = np.ones(3, dtype=np.float32), np.zeros(3, dtype=np.float32)
    cache.put_many({"old": one})
    with cache.recording() as asked:
        cache.get_many(["old", "new"])
        cache.put_many({"new": two})
    assert asked == {"old", "new"}
    with cache.transient():
        cache.put_many({"question": one})
    assert list(cache.get_many(["question"])) == ["question"]  # this process still has it
    assert cache.stored_keys() == {"old", "new"}  # the file never did
    cache.drop({"old", "question"})
    assert cache.stored_keys() == {"new"} and not cache.get_many(["old", "question"])
    cache.close()
    assert EmbeddingCache(tmp_path / "c.db").stored_keys() == {"new"}


TINY_CLIP = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
    "text_cfg": {"context_length": 8, "vocab_size": 64, "width": 16, "heads": 1, "layers": 1},
}


def test_open_clip_loads_a_checkpoint_and_encodes(torch_cpu_shim, tmp_path):
    import open_clip
    import torch

    config_path = tmp_path / "tiny-test-clip.json"
    config_path.write_text(json.dumps(TINY_CLIP))
    open_clip.add_model_config(str(config_path))
    torch.manual_seed(0)
    reference, _, preprocess = open_clip.create_model_and_transforms("tiny-test-clip")
    reference.eval()
    checkpoint = tmp_path / "tiny.pt"
    torch.save(reference.state_dict(), checkpoint)

    encoders = default_encoders(EmbeddingConfig(
        clip_model="tiny-test-clip", clip_pretrained=str(checkpoint), clip_model_config=str(config_path)
    ))
    assert isinstance(encoders.image.encoder, OpenClipEncoder) and not encoders.describe()["image_fallback"]
    red = _png(tmp_path, "red", lambda d: d.rectangle([0, 0, 30, 30], fill="red"))
    blue = _png(tmp_path, "blue", lambda d: d.rectangle([20, 10, 60, 40], fill="blue"))
    vectors = encoders.image.embed_files([red, blue, red])
    assert vectors.shape == (3, 16) and encoders.dims()["image"] == 16
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vectors[0], vectors[2]) and not np.allclose(vectors[0], vectors[1])
    with torch.no_grad():  # the encoder used the saved weights, not a fresh random model
        expected = reference.encode_image(preprocess(Image.open(red).convert("RGB")).unsqueeze(0))[0].numpy()
    assert np.allclose(vectors[0], expected / np.linalg.norm(expected), atol=1e-5)


def test_open_clip_without_weights_is_a_clear_error():
    with pytest.raises(ValueError, match="needs weights"):
        OpenClipEncoder("ViT-B-32", "")


@pytest.mark.slow
def test_minilm_loads_in_a_fresh_process_without_the_test_shim():
    """The product path: no torchvision op schemas defined. A broken optional torchvision (the
    CUDA wheel next to CPU torch on these machines) must not stop the text encoder."""
    import subprocess
    import sys

    code = (
        "import os\n"
        "from automemo.toolkit.text_encoders import MiniLMEncoder\n"
        "v = MiniLMEncoder().encode(['a red umbrella', 'an umbrella that is red', 'tax forms'])\n"
        "print(round(float(v[0] @ v[1]), 3), round(float(v[0] @ v[2]), 3), os.environ.get('HF_HUB_OFFLINE', '-'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    close, far, offline = out.stdout.split()
    assert float(close) > float(far) + 0.3
    # Loading MiniLM (offline, from its package) decides nothing for the rest of the process: a
    # CLIP tag loaded afterwards may still be fetched, as it would be had CLIP loaded first.
    assert offline == "-"
