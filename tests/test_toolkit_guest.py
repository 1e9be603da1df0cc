"""The guest toolkit: host methods over `call_host`, local primitives on real faiss, networkx,
sqlite and PIL, in process and inside the real sandboxes."""

from __future__ import annotations

import os
import textwrap

import numpy as np
import pytest
from PIL import Image

from automemo.contract import EpisodeRecorder, ImageRef, PartialRecorder
from automemo.episode_store import EpisodeStore
from automemo.toolkit.api import ToolkitUnavailable
from automemo.toolkit.guest import Toolkit
from sandboxtools import ISOLATING, sandbox


class Host:
    """Stands in for the session channel: records calls and answers like HostServices."""

    def __init__(self, answers=None):
        self.calls = []
        self.answers = answers or {}

    def __call__(self, method, params):
        self.calls.append((method, params))
        answer = self.answers.get(method)
        if isinstance(answer, Exception):
            raise answer
        return answer(params) if callable(answer) else answer


@pytest.fixture
def store(tmp_path):
    return EpisodeStore(tmp_path / "store")


@pytest.fixture
def state(tmp_path):
    path = tmp_path / "state"
    path.mkdir()
    return path


def test_llm_sends_prompt_images_and_options(store, state):
    host = Host({"llm": lambda p: f"answer to {p['prompt']}"})
    toolkit = Toolkit(state, store.root, host)
    ref = ImageRef(path="images/x.png", sha256="x")
    assert toolkit.llm("hi", images=[ref], max_tokens=7, purpose="summary") == "answer to hi"
    assert host.calls == [("llm", {"prompt": "hi", "images": [ref.to_dict()], "max_tokens": 7,
                                   "temperature": 0.0, "purpose": "summary"})]


def test_host_answer_of_wrong_type_is_an_error(store, state):
    toolkit = Toolkit(state, store.root, Host({"llm": 42, "embed_text": "nope"}))
    with pytest.raises(RuntimeError, match="'llm' answered int, expected str"):
        toolkit.llm("hi")
    with pytest.raises(RuntimeError, match="'embed_text' answered str"):
        toolkit.embed_text(["a"])


def test_unavailable_service_surfaces_as_toolkit_unavailable(store, state):
    toolkit = Toolkit(state, store.root, Host({"llm": ToolkitUnavailable("no memo model")}))
    with pytest.raises(ToolkitUnavailable, match="no memo model"):
        toolkit.llm("hi")


def test_embed_text_checks_its_input_and_skips_empty_calls(store, state):
    host = Host({"embed_text": lambda p: [[1.0, 0.0]] * len(p["texts"])})
    toolkit = Toolkit(state, store.root, host)
    with pytest.raises(TypeError, match="list of strings, not one string"):
        toolkit.embed_text("one string")
    with pytest.raises(TypeError, match=r"texts\[1\] is int"):
        toolkit.embed_text(["a", 3])
    assert toolkit.embed_text([]) == [] and host.calls == []
    assert toolkit.embed_text(("a", "b")) == [[1.0, 0.0], [1.0, 0.0]]
    assert host.calls == [("embed_text", {"texts": ["a", "b"], "packed": True})]  # a list answer still reads


def test_embed_image_sends_refs_as_dicts(store, state):
    host = Host({"embed_image": lambda p: [[0.5] * 3 for _ in p["refs"]],
                 "embedding_dims": {"text": 384, "image": 3}, "has_llm": False})
    toolkit = Toolkit(state, store.root, host)
    ref = ImageRef(path="images/a.png", sha256="a", caption="cat")
    assert toolkit.embed_image([ref, ref.to_dict()]) == [[0.5] * 3] * 2
    assert host.calls[0] == ("embed_image", {"refs": [ref.to_dict(), ref.to_dict()]})
    assert toolkit.embedding_dims() == {"text": 384, "image": 3}
    assert toolkit.has_llm() is False


def test_image_opens_store_files_as_rgb(store, state):
    ref = store.put_image(Image.new("RGBA", (3, 2), (10, 20, 30, 128)))
    img = Toolkit(state, store.root, Host()).image(ref)
    assert img.mode == "RGB" and img.size == (3, 2) and img.getpixel((1, 1)) == (10, 20, 30)


def test_image_refuses_a_symlink_out_of_the_store(store, state, tmp_path):
    secret = tmp_path / "secret.png"
    Image.new("RGB", (1, 1)).save(secret)
    os.symlink(secret, store.root / "images" / "link.png")
    with pytest.raises(ValueError, match="outside the episode store"):
        Toolkit(state, store.root, Host()).image(ImageRef(path="images/link.png", sha256="x"))


def test_vector_index_is_faiss_inner_product(store, state):
    index = Toolkit(state, store.root, Host()).vector_index(3)
    vectors = np.eye(3, dtype="float32")
    index.add(vectors)
    scores, ids = index.search(np.array([[0.1, 0.9, 0.0]], dtype="float32"), 2)
    assert ids[0].tolist() == [1, 0]
    assert scores[0][0] == pytest.approx(0.9)
    with pytest.raises(ValueError, match="positive int"):
        Toolkit(state, store.root, Host()).vector_index(0)


def test_graph_and_db(store, state):
    toolkit = Toolkit(state, store.root, Host())
    g = toolkit.graph()
    g.add_edge("a", "b")
    assert g.has_edge("b", "a")
    d = toolkit.graph(directed=True)
    d.add_edge("a", "b")
    assert not d.has_edge("b", "a")
    toolkit.db("notes")["rows"].insert_all([{"id": 1}, {"id": 2}])
    assert (state / "notes.db").exists()
    assert toolkit.db("notes")["rows"].count == 2
    for bad in ("../escape", "/abs", "a/b", ""):
        with pytest.raises(ValueError, match="toolkit.db: name"):
            toolkit.db(bad)


@pytest.mark.parametrize("backend_name", ISOLATING)
def test_toolkit_primitives_work_inside_the_sandbox(backend_name, store):
    ref = store.put_image(Image.new("RGB", (8, 8), (0, 255, 0)))
    source = textwrap.dedent("""
        import numpy as np
        from automemo.contract import MemoProgram, MemoryPayload
        class Memo(MemoProgram):
            def __init__(self, toolkit):
                self.toolkit = toolkit
                self.index = toolkit.vector_index(2)
                self.graph = toolkit.graph()
                self.ids = []
            def update(self, episode):
                img = np.asarray(self.toolkit.image(episode.task_images[0]), dtype="float32")
                vec = img.mean(axis=(0, 1))[:2]
                vec = vec / (np.linalg.norm(vec) or 1.0)
                self.index.add(vec.reshape(1, -1).astype("float32"))
                self.ids.append(episode.task_id)
                self.graph.add_edge(episode.task_id, "green")
                self.toolkit.db("mem")["seen"].insert({"id": episode.task_id})
            def retrieve(self, task):
                _, ids = self.index.search(np.array([[0.0, 1.0]], dtype="float32"), 1)
                return MemoryPayload(text=self.ids[int(ids[0][0])],
                                     metadata={"degree": self.graph.degree("green"),
                                               "rows": self.toolkit.db("mem")["seen"].count})
    """)
    episode = EpisodeRecorder(task_id="g1", benchmark="t", instruction="i", task_images=(ref,))
    with sandbox(backend_name).open(source, store_root=store.root) as session:
        session.call("update", {"episode": episode.to_dict()})
        result = session.call("retrieve", {"task": PartialRecorder(
            task_id="q", benchmark="t", instruction="i").to_dict()})
    assert result["text"] == "g1"
    assert result["metadata"] == {"degree": 1, "rows": 1}
