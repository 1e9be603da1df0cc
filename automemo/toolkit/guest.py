"""The toolkit a memo program receives inside the sandbox (implements `automemo.toolkit.api`).

Host methods (llm, embeddings) go through `call_host(method, params)`: inside the sandbox that
is the session channel to `HostServices`; in-process tests pass `services.handle`. Local methods
(images, faiss, networkx, sqlite) import their package on first use, so a program that never
touches numpy or faiss does not pay for importing them when its session opens.
"""

from __future__ import annotations

import copyreg
import re
from pathlib import Path
from typing import Any, Callable, Sequence

from automemo.contract import ImageRef
from automemo.toolkit.api import ToolkitUnavailable

CallHost = Callable[[str, dict], Any]
_DB_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")


class Toolkit:
    def __init__(self, state_dir: Path, store_root: Path, call_host: CallHost) -> None:
        self.state_dir = Path(state_dir)
        self.store_root = Path(store_root)
        self._call_host = call_host
        global _live
        _live = self

    def __reduce__(self) -> tuple:
        # A snapshot (`MemoProgram.save_state`) pickles the program's objects, and many hold the
        # toolkit or one of its bound methods (`memolib.ScopedIndex(toolkit.vector_index, ...)`).
        # The toolkit is the guest's live connection, not data: it pickles as a reference to the
        # toolkit of whichever session loads the snapshot.
        return (live_toolkit, ())

    # --- host services ------------------------------------------------------------------

    def llm(
        self,
        prompt: str | list[dict[str, Any]],
        *,
        images: Sequence[ImageRef] = (),
        max_tokens: int = 512,
        temperature: float = 0.0,
        purpose: str = "",
    ) -> str:
        if not isinstance(prompt, (str, list)):
            raise TypeError(f"toolkit.llm: prompt must be a string or a list of messages, "
                            f"got {type(prompt).__name__}")
        params = {
            "prompt": prompt,
            "images": [_ref(r).to_dict() for r in images],
            "max_tokens": int(max_tokens),
            "temperature": float(temperature),
            "purpose": str(purpose),
        }
        return _expect(self._host("llm", params), str, "llm")

    def embed_text(self, texts: Sequence[str]) -> list[list[float]]:
        texts = _texts(texts, "embed_text")
        if not texts:
            return []
        answer = self._host("embed_text", {"texts": texts, "packed": True})
        if isinstance(answer, dict):  # float32 bytes (`matrix_wire`), as the run's host sends them
            from automemo.toolkit import matrix_wire

            return matrix_wire.unpack(answer).tolist()
        return _expect(answer, list, "embed_text")  # a host that answers JSON lists

    def embed_tokens(self, texts: Sequence[str]) -> list[Any]:
        texts = _texts(texts, "embed_tokens")
        if not texts:
            return []
        from automemo.toolkit import matrix_wire

        packed = _expect(self._host("embed_tokens", {"texts": texts}), list, "embed_tokens")
        return [matrix_wire.unpack(p) for p in packed]

    def embed_image(self, refs: Sequence[ImageRef]) -> list[list[float]]:
        payload = [_ref(r).to_dict() for r in refs]
        if not payload:
            return []
        return _expect(self._host("embed_image", {"refs": payload}), list, "embed_image")

    def embedding_dims(self) -> dict[str, int]:
        return _expect(self._host("embedding_dims", {}), dict, "embedding_dims")

    def has_llm(self) -> bool:
        return bool(self._host("has_llm", {}))

    def _host(self, method: str, params: dict) -> Any:
        return self._call_host(method, params)

    # --- local primitives ---------------------------------------------------------------

    def image(self, ref: ImageRef) -> Any:
        from PIL import Image

        ref = _ref(ref)
        root = self.store_root.resolve()
        path = (root / ref.path).resolve()
        if root not in path.parents:
            raise ValueError(f"toolkit.image: {ref.path!r} resolves outside the episode store")
        with Image.open(path) as img:
            return img.convert("RGB")

    def vector_index(self, dim: int) -> Any:
        import faiss

        if isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0:
            raise ValueError(f"toolkit.vector_index: dim must be a positive int, got {dim!r}")
        return faiss.IndexFlatIP(dim)

    def graph(self, directed: bool = False) -> Any:
        import networkx

        return networkx.DiGraph() if directed else networkx.Graph()

    def db(self, name: str) -> Any:
        import sqlite_utils

        if not isinstance(name, str) or not _DB_NAME.match(name) or ".." in name:
            raise ValueError(
                f"toolkit.db: name must be letters, digits, '_', '-' or '.', got {name!r}"
            )
        copyreg.pickle(sqlite_utils.Database, _reduce_database)
        return sqlite_utils.Database(self.state_dir / f"{name}.db")


_live: Toolkit | None = None


def live_toolkit() -> Toolkit:
    """The toolkit of this guest's session (the one the loaded program was given)."""
    if _live is None:
        raise RuntimeError("no toolkit is live in this process: load a program first")
    return _live


def _reduce_database(db: Any) -> tuple:
    """A `toolkit.db` database pickles as its name: its file travels in the snapshot's copy of
    `state_dir`, and loading reopens it there."""
    path = Path(db.conn.execute("PRAGMA database_list").fetchone()[2])
    return (_reopen_database, (path.stem,))


def _reopen_database(name: str) -> Any:
    return live_toolkit().db(name)


def _texts(texts: Sequence[str], method: str) -> list[str]:
    """A program's list of texts to embed, checked before it crosses to the host."""
    if isinstance(texts, str):
        raise TypeError(f"toolkit.{method} takes a list of strings, not one string")
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"toolkit.{method}: texts[{i}] is {type(t).__name__}, not str")
    return texts


def _ref(value: Any) -> ImageRef:
    if isinstance(value, ImageRef):
        return value
    if isinstance(value, dict):
        return ImageRef.from_dict(value)
    raise TypeError(f"expected an ImageRef, got {type(value).__name__}")


def _expect(value: Any, kind: type, method: str) -> Any:
    if not isinstance(value, kind):
        raise RuntimeError(
            f"host service {method!r} answered {type(value).__name__}, expected {kind.__name__}"
        )
    return value


__all__ = ["Toolkit", "ToolkitUnavailable"]
