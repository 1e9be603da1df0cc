"""How a matrix crosses the session channel, which carries JSON: `{"shape": [rows, cols],
"<dtype>": <base64 of the little-endian bytes>}`, the key naming the element type.

- `embed_text`'s vectors go as "float32": the encoder's values bit for bit. As JSON lists, 64
  MiniLM vectors are ~480 KB of decimal floats that cost the host ~12 ms to write and the guest
  ~8 ms to read (docs/benchmarks.md, "longmemeval: cost"); as base64 they are 131 KB, copied
  rather than formatted.
- `embed_tokens`' token matrices go as "float16": as JSON floats one would take about five
  times the bytes (a round of 200 word pieces is 77,000 floats).

The host (`MemoServices`) packs, the guest (`Toolkit`) unpacks. numpy is imported on use, so a
guest that never asks for a matrix never imports it here.
"""

from __future__ import annotations

import base64
from typing import Any, Mapping

DTYPES = {"float16": "<f2", "float32": "<f4"}


def pack(matrix: Any, dtype: str) -> dict[str, Any]:
    """`matrix` (rows x cols) as `dtype`, one of `DTYPES`."""
    import numpy as np

    m = np.ascontiguousarray(np.asarray(matrix, dtype=DTYPES[dtype]))
    if m.ndim != 2:
        raise ValueError(f"a matrix to send is 2-D (rows x cols), got shape {m.shape}")
    return {"shape": [int(m.shape[0]), int(m.shape[1])], dtype: base64.b64encode(m.tobytes()).decode("ascii")}


def unpack(packed: Mapping[str, Any]) -> Any:
    """The matrix `pack` was given, in the element type it was packed as."""
    import numpy as np

    dtype = next((d for d in DTYPES if d in packed), None)
    if dtype is None:
        raise ValueError(f"a packed matrix names its element type, one of {', '.join(DTYPES)}; got keys {sorted(packed)}")
    rows, cols = (int(x) for x in packed["shape"])
    data = base64.b64decode(packed[dtype])
    width = np.dtype(DTYPES[dtype]).itemsize
    if len(data) != rows * cols * width:
        raise ValueError(f"a {dtype} matrix of shape {rows}x{cols} carries {len(data)} bytes, expected {rows * cols * width}")
    return np.frombuffer(data, dtype=DTYPES[dtype]).reshape(rows, cols)
