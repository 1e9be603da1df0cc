"""How many conversations the search gets: by default at least half of them (protocol "search"),
and the papers' 1:4 split, unchanged, with protocol "paper"."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from automemo.benchmarks.conversation.benchmark import ConversationOptions
from automemo.benchmarks.conversation.memgallery import MemGallery
from automemo.benchmarks.splits import stratified_split
from conversation_data import _scenario


def _release(root: Path, n: int, folders: int = 1) -> Path:
    """`n` scenario files spread over `folders` sub-folders (a folder is a stratum)."""
    for i in range(n):
        name = f"user{i:02d}"
        path = root / f"group{i % folders}" / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_scenario(name, "sister", "cat", "Lisbon", "white")))
    return root


def _train(bench: MemGallery) -> list[str]:
    return sorted(bench.describe()["conversations"]["train"])


@pytest.mark.parametrize("n,folders", [(2, 1), (3, 1), (5, 1), (9, 1), (10, 1), (10, 3), (7, 2)])
def test_the_default_gives_the_search_at_least_half_of_the_conversations(tmp_path, n, folders, capsys):
    bench = MemGallery(ConversationOptions(path=str(_release(tmp_path, n, folders))))
    train, test = bench.describe()["conversations"]["train"], bench.describe()["conversations"]["test"]
    assert len(train) >= math.ceil(n / 2) and len(train) + len(test) == n
    assert test, "a conversation stays held out for the test split"
    assert bench.train_fraction == 0.5


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n,folders", [(10, 1), (7, 1), (10, 3), (13, 2)])
def test_the_paper_protocol_reproduces_the_one_to_four_split_exactly(tmp_path, n, folders, seed, capsys):
    root = _release(tmp_path, n, folders)
    paper = MemGallery(ConversationOptions(path=str(root), protocol="paper", seed=seed))
    scopes = list(paper.data.scopes)
    # The split before the protocol option existed: train_fraction 0.2, rounded to the nearest.
    _, before = stratified_split(scopes, lambda s: paper.data.strata.get(s, ""), 0.2, seed,
                                 salt="memgallery-scopes")
    assert _train(paper) == sorted(before)
    assert paper.train_fraction == 0.2
    explicit = MemGallery(ConversationOptions(path=str(root), protocol="paper", train_fraction=0.2, seed=seed))
    assert _train(explicit) == sorted(before)


def test_ten_conversations_give_the_search_five_by_default_and_two_in_the_paper_protocol(tmp_path, capsys):
    root = _release(tmp_path, 10)
    assert len(_train(MemGallery(ConversationOptions(path=str(root))))) == 5
    assert len(_train(MemGallery(ConversationOptions(path=str(root), protocol="paper")))) == 2


def test_an_unknown_protocol_or_a_fraction_out_of_range_fails_fast(tmp_path, capsys):
    from automemo.benchmarks import checked_options

    root = str(_release(tmp_path, 4))
    with pytest.raises(ValueError):
        checked_options("memgallery", {"path": root, "protocol": "papers"})
    with pytest.raises(ValueError, match="train_fraction"):
        MemGallery(ConversationOptions(path=root, train_fraction=1.0))


def test_lone_conversations_round_up_but_one_stays_held_out(tmp_path, capsys):
    bench = MemGallery(ConversationOptions(path=str(_release(tmp_path, 4, folders=4))))
    assert len(bench.describe()["conversations"]["train"]) == 3  # each folder a stratum of one
    single = MemGallery(ConversationOptions(path=str(_release(tmp_path / "one", 1))))
    assert single.describe()["conversations"]["train"] == []  # nothing to hold out: train is empty


def test_rounding_up_never_takes_less_than_the_fraction_of_a_category():
    items = [(i, "a" if i < 5 else "b") for i in range(8)]
    _, nearest = stratified_split(items, lambda t: t[1], 0.5, 0)
    _, up = stratified_split(items, lambda t: t[1], 0.5, 0, round_up=True)
    assert sum(1 for t in nearest if t[1] == "a") == 2  # round(2.5) = 2: under half
    assert sum(1 for t in up if t[1] == "a") == 3 and sum(1 for t in up if t[1] == "b") == 2
