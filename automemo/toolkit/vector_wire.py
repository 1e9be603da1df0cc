"""How text vectors cross the session channel: `{"shape": [n, dim], "float32": <base64 of the
little-endian float32 bytes>}` for the n vectors of one `embed_text` call.

The channel carries JSON. As JSON lists, 64 MiniLM vectors are ~480 KB of decimal floats that
cost the host ~12 ms to write and the guest ~8 ms to read (docs/benchmarks.md, "longmemeval:
cost"); as base64 they are 131 KB, copied rather than formatted, and arrive bit-identical. The
host (`MemoServices`) packs, the guest (`Toolkit.embed_text`) unpacks; numpy is imported on use.
"""

from __future__ import annotations

import base64
from typing import Any, Mapping


def pack(rows: Any) -> dict[str, Any]:
    import numpy as np

    m = np.ascontiguousarray(np.asarray(rows, dtype="<f4"))
    if m.ndim != 2:
        raise ValueError(f"vectors are 2-D (n x dim), got shape {m.shape}")
    return {"shape": [int(m.shape[0]), int(m.shape[1])], "float32": base64.b64encode(m.tobytes()).decode("ascii")}


def unpack(packed: Mapping[str, Any]) -> Any:
    """The float32 matrix (n x dim) `pack` was given."""
    import numpy as np

    n, dim = (int(x) for x in packed["shape"])
    data = base64.b64decode(packed["float32"])
    if len(data) != n * dim * 4:
        raise ValueError(f"vectors of shape {n}x{dim} carry {len(data)} bytes, expected {n * dim * 4}")
    return np.frombuffer(data, dtype="<f4").reshape(n, dim)
