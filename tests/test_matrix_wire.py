"""embed_text's vectors cross the session channel as float32 bytes (`matrix_wire`): bit-identical
to the host encoder's rows, far smaller than JSON lists, and checked on arrival."""

from __future__ import annotations

import json

import numpy as np
import pytest

from automemo.sandbox import protocol
from automemo.toolkit import matrix_wire
from automemo.toolkit.embedding import CachedTextEncoder, Encoders
from automemo.toolkit.embedding_cache import EmbeddingCache
from automemo.toolkit.guest import Toolkit
from automemo.toolkit.image_encoders import PerceptualImageEncoder
from automemo.toolkit.embedding import CachedImageEncoder
from automemo.toolkit.services import MemoServices, ServiceError


class AwkwardEncoder:
    """Vectors whose floats do not survive a careless decimal round trip (subnormals, 1/3)."""

    name = "awkward"
    dim = 5

    def encode(self, texts, *, node=None):
        rows = [[1 / 3, -0.1, 1e-40, 7.0, len(t) / 7] for t in texts]
        return np.asarray(rows, dtype=np.float32)


def _services(tmp_path):
    cache = EmbeddingCache()
    encoders = Encoders(CachedTextEncoder(AwkwardEncoder(), cache, shipped=None),
                        CachedImageEncoder(PerceptualImageEncoder(), cache))
    return MemoServices(encoders, None, tmp_path)


def _through_channel(services):
    """The host's answer framed and read back as the session channel does."""
    def call_host(method, params):
        frame = protocol.encode({"id": "g1", "result": services.handle(method, params)})
        return json.loads(frame[protocol.HEADER.size:])["result"]
    return call_host


def test_guest_vectors_are_bit_identical_to_the_encoders(tmp_path):
    services = _services(tmp_path)
    toolkit = Toolkit(tmp_path, tmp_path, _through_channel(services))
    texts = ["a", "bb", "a", "ccc dd"]
    got = toolkit.embed_text(texts)
    assert isinstance(got, list) and all(isinstance(r, list) for r in got)  # the API's lists of floats
    expected = AwkwardEncoder().encode(texts)
    assert np.asarray(got, dtype=np.float32).tobytes() == expected.tobytes()
    assert np.asarray(got, dtype=np.float32)[0, 2] != 0  # the subnormal arrived, not flushed


def test_packed_answer_is_a_fraction_of_the_json_lists(tmp_path):
    services = _services(tmp_path)
    texts = [f"text {i}" for i in range(64)]
    packed = services.handle("embed_text", {"texts": texts, "packed": True})
    lists = services.handle("embed_text", {"texts": texts})
    assert set(packed) == {"shape", "float32"} and packed["shape"] == [64, 5]
    assert np.array_equal(matrix_wire.unpack(packed), np.asarray(lists, dtype=np.float32))
    assert len(protocol.encode({"result": packed})) < len(protocol.encode({"result": lists})) / 2


def test_packed_must_be_a_bool(tmp_path):
    with pytest.raises(ServiceError, match="packed must be true or false"):
        _services(tmp_path).handle("embed_text", {"texts": ["a"], "packed": "yes"})


def test_unpack_refuses_a_truncated_payload():
    packed = matrix_wire.pack(np.ones((3, 4), np.float32), "float32")
    packed["shape"] = [4, 4]
    with pytest.raises(ValueError, match="carries 48 bytes, expected 64"):
        matrix_wire.unpack(packed)
    with pytest.raises(ValueError, match="2-D"):
        matrix_wire.pack(np.ones(3, np.float32), "float32")


def test_an_unnamed_element_type_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="float16, float32"):
        matrix_wire.unpack({"shape": [1, 1], "int8": "AA=="})
