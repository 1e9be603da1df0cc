"""memolib.UnitStore: rows as an index numbers them, episode order, and rows per scope."""

from __future__ import annotations

from automemo.toolkit.memolib import Unit, UnitStore


def test_rows_orders_and_scopes():
    store = UnitStore()
    assert store.add_episode([Unit("a", 0, "x", scope="ann"), Unit("a", 1, "y", scope="ann")]) == [0, 1]
    assert store.add_episode([Unit("b", 0, "z", scope="ben")]) == [2]
    assert len(store) == 3 and store.episodes == 2
    assert store.allowed("ann") == [0, 1] and store.allowed("ben") == [2]
    assert store.allowed("") is None and store.allowed("cleo") is None  # unknown: search every row
    assert [(u.text, order) for u, order in store.ranked([2, 0])] == [("z", 1), ("x", 0)]
