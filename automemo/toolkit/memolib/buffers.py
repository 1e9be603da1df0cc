"""Growing numpy buffers: rows appended at amortised O(1) cost, read as a view without copying.

A served memory adds a few units before every query for years. A numpy array rebuilt or
concatenated after each add costs O(n) per add (and per query, when the copy is made lazily at
the first search after an add); a buffer that doubles its capacity when full copies each row
O(1) times on average, and `view` is the filled part of the buffer, shared, not copied.

A buffer pickles as its filled rows only (a snapshot carries no spare capacity), and a buffer of
vectors at least half of which are all zero as the others and their row numbers."""

from __future__ import annotations

from typing import Any

import numpy as np


class GrowingArray:
    """Rows of `dtype` (scalars, or vectors of `width` when given) appended in order.
    `view` is valid until the next append (a growth moves the buffer); do not keep it."""

    def __init__(self, dtype: Any, width: int | None = None, capacity: int = 16) -> None:
        self.dtype, self.width = np.dtype(dtype), width
        self._data = np.zeros(self._shape(max(1, capacity)), dtype=self.dtype)
        self._size = 0

    def _shape(self, rows: int) -> tuple[int, ...]:
        return (rows,) if self.width is None else (rows, self.width)

    def __len__(self) -> int:
        return self._size

    @property
    def view(self) -> np.ndarray:
        """The filled rows, shape (n,) or (n, width): a view of the buffer, no copy."""
        return self._data[: self._size]

    def _reserve(self, rows: int) -> None:
        if rows > self._data.shape[0]:
            grown = np.zeros(self._shape(max(rows, 2 * self._data.shape[0])), dtype=self.dtype)
            grown[: self._size] = self._data[: self._size]
            self._data = grown

    def append(self, value: Any) -> int:
        """Add one row; returns its index."""
        self._reserve(self._size + 1)
        self._data[self._size] = value
        self._size += 1
        return self._size - 1

    def extend(self, values: Any) -> range:
        """Add rows (an array or sequence of rows); returns their indices."""
        block = np.asarray(values, dtype=self.dtype)
        count = block.shape[0] if block.ndim else 1
        self._reserve(self._size + count)
        self._data[self._size: self._size + count] = block
        self._size += count
        return range(self._size - count, self._size)

    def __getstate__(self) -> dict[str, Any]:
        rows = self.view
        state = {"dtype": self.dtype.str, "width": self.width, "size": self._size}
        if self.width is not None and self.dtype != object and self._size:
            # vectors mostly zero (e.g. the image view of units that have no image): only the others
            nonzero = np.flatnonzero(rows.any(axis=1))
            if len(nonzero) <= self._size // 2:
                return {**state, "nonzero": nonzero, "rows": rows[nonzero].copy()}
        return {**state, "rows": np.array(rows)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.dtype, self.width = np.dtype(state["dtype"]), state["width"]
        rows = state["rows"]
        self._size = state.get("size", rows.shape[0])
        self._data = np.zeros(self._shape(max(16, self._size)), dtype=self.dtype)
        if "nonzero" in state:
            self._data[state["nonzero"]] = rows
        else:
            self._data[: rows.shape[0]] = rows
