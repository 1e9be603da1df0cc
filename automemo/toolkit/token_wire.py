"""How token matrices cross the session channel: per text `{"shape": [tokens, dim], "float16":
<base64 of the little-endian float16 bytes>}`; and pooled vectors, when the guest asks for them
so (`embed_text` with `"wire": "float32"`): `{"shape": [texts, dim], "float32": <base64 of the
little-endian float32 bytes>}`, the encoder's own values bit for bit (JSON floats carried them
exactly too, but encoding them cost the host about 20 CPU s of a 30-step dev-data search).

The channel carries JSON; a token matrix as JSON floats would take about five times the bytes of
its float16 form in base64 (a round of 200 word pieces is 77,000 floats). Both the host
(`MemoServices`) and the guest (`Toolkit.embed_tokens`) use these two functions. numpy is
imported on use, so a guest that never asks for tokens never imports it here.
"""

from __future__ import annotations

import base64
from typing import Any, Mapping


def pack(matrix: Any) -> dict[str, Any]:
    import numpy as np

    m = np.ascontiguousarray(np.asarray(matrix, dtype="<f2"))
    if m.ndim != 2:
        raise ValueError(f"a token matrix is 2-D (tokens x dim), got shape {m.shape}")
    return {"shape": [int(m.shape[0]), int(m.shape[1])], "float16": base64.b64encode(m.tobytes()).decode("ascii")}


def unpack(packed: Mapping[str, Any]) -> Any:
    import numpy as np

    rows, dim = (int(x) for x in packed["shape"])
    data = base64.b64decode(packed["float16"])
    if len(data) != rows * dim * 2:
        raise ValueError(f"token matrix of shape {rows}x{dim} carries {len(data)} bytes, expected {rows * dim * 2}")
    return np.frombuffer(data, dtype="<f2").reshape(rows, dim)


VECTORS = "float32"
"""The `wire` an `embed_text` call names to get its vectors packed (`pack_rows`)."""


def pack_rows(matrix: Any) -> dict[str, Any]:
    import numpy as np

    m = np.ascontiguousarray(np.asarray(matrix, dtype="<f4"))
    if m.ndim != 2:
        raise ValueError(f"vectors are 2-D (texts x dim), got shape {m.shape}")
    return {"shape": [int(m.shape[0]), int(m.shape[1])], VECTORS: base64.b64encode(m.tobytes()).decode("ascii")}


def unpack_rows(packed: Mapping[str, Any]) -> list[list[float]]:
    """The vectors as lists of floats (what `toolkit.embed_text` returns)."""
    import numpy as np

    rows, dim = (int(x) for x in packed["shape"])
    data = base64.b64decode(packed[VECTORS])
    if len(data) != rows * dim * 4:
        raise ValueError(f"vectors of shape {rows}x{dim} carry {len(data)} bytes, expected {rows * dim * 4}")
    return np.frombuffer(data, dtype="<f4").reshape(rows, dim).tolist()
