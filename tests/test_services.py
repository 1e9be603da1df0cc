"""MemoServices: the host side of toolkit calls, driven through the guest Toolkit in-process and
against the real fake LLM server."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from PIL import Image

from automemo.episode_store import EpisodeStore
from automemo.llm import LLMClient, LLMConfig, RoleConfig
from automemo.toolkit.api import ToolkitUnavailable
from automemo.toolkit.embedding import EmbeddingConfig, default_encoders
from automemo.toolkit.guest import Toolkit
from automemo.toolkit.services import MemoQuota, MemoServices, QuotaExceeded, ServiceError


@pytest.fixture
def store(tmp_path):
    store = EpisodeStore(tmp_path / "store")
    store.red = store.put_image(Image.new("RGB", (16, 16), "red"))
    store.blue = store.put_image(Image.new("RGB", (16, 16), "blue"))
    return store


@pytest.fixture(scope="module")
def encoders():
    return default_encoders(EmbeddingConfig())


def _services(encoders, store, client=None, **quota):
    return MemoServices(encoders, client, store.root, node=12, quota=MemoQuota(**quota))


def _client(fake):
    return LLMClient(LLMConfig(memo=RoleConfig(model="gpt-4o-mini", base_url=fake.base_url)))


def test_llm_goes_to_the_memo_role_with_node_and_images(fake_llm, encoders, store, tmp_path):
    client = _client(fake_llm)
    services = _services(encoders, store, client)
    toolkit = Toolkit(tmp_path / "state", store.root, services.handle)
    fake_llm.script(["a red square"])
    assert toolkit.has_llm() is True
    answer = toolkit.llm("describe", images=[store.red], max_tokens=20, purpose="caption")
    assert answer == "a red square"
    request = fake_llm.requests[0]
    assert request["max_tokens"] == 20
    parts = request["messages"][-1]["content"]
    assert parts[0]["text"] == "describe" and parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    (row,) = client.ledger.rows()
    assert (row["role"], row["node"], row["purpose"]) == ("memo", "12", "memo:caption")


def test_message_lists_are_accepted_but_image_urls_inside_them_are_not(fake_llm, encoders, store):
    services = _services(encoders, store, _client(fake_llm))
    messages = [{"role": "system", "content": "terse"}, {"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert services.handle("llm", {"prompt": messages}) == "hi"
    smuggled = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://example.invalid/x"}}]}]
    with pytest.raises(ServiceError, match="images= argument"):
        services.handle("llm", {"prompt": smuggled})
    assert len(fake_llm.requests) == 1


def test_without_a_memo_model_llm_is_unavailable(encoders, store, tmp_path):
    toolkit = Toolkit(tmp_path / "state", store.root, _services(encoders, store).handle)
    assert toolkit.has_llm() is False
    with pytest.raises(ToolkitUnavailable, match="no memo LLM"):
        toolkit.llm("hello")


def test_llm_quota_is_per_session(fake_llm, encoders, store):
    client = _client(fake_llm)
    services = _services(encoders, store, client, max_llm_calls=2)
    services.handle("llm", {"prompt": "1"})
    services.handle("llm", {"prompt": "2"})
    with pytest.raises(QuotaExceeded, match="2 toolkit.llm calls used.*limit is 2"):
        services.handle("llm", {"prompt": "3"})
    assert len(fake_llm.requests) == 2
    fresh = _services(encoders, store, client, max_llm_calls=2)  # a new session starts at 0
    assert fresh.handle("llm", {"prompt": "4"}) == "4"


@pytest.mark.parametrize("params, message", [
    ({"prompt": 3}, "prompt must be a string"),
    ({"prompt": "x", "max_tokens": 0}, "max_tokens must be an int"),
    ({"prompt": "x", "max_tokens": 10**6}, "max_tokens must be an int"),
    ({"prompt": "x", "temperature": "hot"}, "temperature must be a number"),
    ({"prompt": "x", "colour": 1}, r"unknown parameter\(s\) \['colour'\]"),
    ({"prompt": [{"role": "robot", "content": "x"}]}, "role system|user|assistant"),
    ({"prompt": "x", "images": [{"path": "images/none.png", "sha256": "0"}]}, "no image at"),
])
def test_llm_parameters_are_validated_before_any_call(fake_llm, encoders, store, params, message):
    services = _services(encoders, store, _client(fake_llm))
    with pytest.raises(ServiceError, match=message):
        services.handle("llm", params)
    assert fake_llm.requests == []


def test_embed_image_reads_the_store_and_refuses_escapes(encoders, store, tmp_path):
    services = _services(encoders, store)
    vectors = np.asarray(services.handle("embed_image", {"refs": [store.red.to_dict(), store.blue.to_dict()]}))
    assert vectors.shape == (2, 320) and not np.allclose(vectors[0], vectors[1])
    outside = tmp_path / "secret.png"
    Image.new("RGB", (4, 4)).save(outside)
    os.symlink(outside, store.root / "images" / "link.png")
    with pytest.raises(ServiceError, match="outside the episode store"):
        services.handle("embed_image", {"refs": [{"path": "images/link.png", "sha256": "x"}]})
    with pytest.raises(ServiceError, match="stay inside"):
        services.handle("embed_image", {"refs": [{"path": "../secret.png", "sha256": "x"}]})
    (store.root / "images" / "broken.png").write_bytes(b"not a png")
    with pytest.raises(ServiceError, match="not a readable image"):
        services.handle("embed_image", {"refs": [{"path": "images/broken.png", "sha256": "x"}]})


def test_embed_text_and_dims_and_item_quota(torch_cpu_shim, encoders, store, tmp_path):
    services = _services(encoders, store, max_embed_items=3)
    toolkit = Toolkit(tmp_path / "state", store.root, services.handle)
    vectors = toolkit.embed_text(["a cat (quota test)", "a kitten (quota test)"])
    assert np.asarray(vectors).shape == (2, 384)
    assert toolkit.embedding_dims() == {"text": 384, "image": 320}
    with pytest.raises(QuotaExceeded, match="embedded items"):
        toolkit.embed_text(["one (quota test)", "two (quota test)"])
    with pytest.raises(ServiceError, match="list of strings"):
        services.handle("embed_text", {"texts": "not a list"})
    assert services.usage() == {"llm_calls": 0, "embed_items": 2}


def test_the_item_quota_counts_only_texts_the_encoder_computes(torch_cpu_shim, encoders, store, tmp_path):
    """A cached text costs a lookup, not the encoder: the same turns asked for again (a session
    shared by many LongMemEval haystacks) spend nothing of the quota."""
    services = _services(encoders, store, max_embed_items=3)
    toolkit = Toolkit(tmp_path / "state", store.root, services.handle)
    first = toolkit.embed_text(["a red umbrella (cached)", "tax forms (cached)"])
    for _ in range(5):
        again = toolkit.embed_text(["tax forms (cached)", "a red umbrella (cached)", "tax forms (cached)"])
        assert np.allclose(again[1], first[0])
    assert services.usage()["embed_items"] == 2
    toolkit.embed_text(["a red umbrella (cached)", "a third text (cached)"])
    assert services.usage()["embed_items"] == 3
    with pytest.raises(QuotaExceeded, match="3 embedded items used, this call asks 1 more"):
        toolkit.embed_text(["a fourth text (cached)", "tax forms (cached)"])


def test_unknown_method_names_the_known_ones(encoders, store):
    with pytest.raises(ServiceError, match="unknown toolkit host method 'shell'.*embed_text"):
        _services(encoders, store).handle("shell", {})


def test_packed_vectors_are_the_json_floats_bit_for_bit(torch_cpu_shim, encoders, store, tmp_path):
    """The guest asks for its vectors packed (float32 bytes, not JSON floats): the values a
    program reads are the same either way, and a host that answers lists still serves it."""
    services = _services(encoders, store)
    texts = ["a cat on a mat (wire)", "tax forms due in April (wire)"]
    plain = services.handle("embed_text", {"texts": texts})
    packed = services.handle("embed_text", {"texts": texts, "wire": "float32"})
    assert isinstance(packed, dict) and set(packed) == {"shape", "float32"}
    toolkit = Toolkit(tmp_path / "state", store.root, services.handle)
    assert toolkit.embed_text(texts) == plain == json.loads(json.dumps(plain))
    lists_only = Toolkit(tmp_path / "state2", store.root,
                         lambda method, params: services.handle(method, {k: v for k, v in params.items() if k != "wire"}))
    assert lists_only.embed_text(texts) == plain
    with pytest.raises(ServiceError, match="wire"):
        services.handle("embed_text", {"texts": texts, "wire": "float64"})
