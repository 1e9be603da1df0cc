from collections import Counter

import pytest

from automemo.benchmarks.splits import holdout, stratified_split

ITEMS = [(f"t{i}", cat) for i, cat in enumerate("aaaaaaaaaabbbbbcc" + "d")]


def _cat(item):
    return item[1]


def test_split_is_deterministic_for_a_seed_and_changes_with_it():
    first = stratified_split(ITEMS, _cat, 0.2, seed=1)
    assert first == stratified_split(ITEMS, _cat, 0.2, seed=1)
    assert any(stratified_split(ITEMS, _cat, 0.2, seed=s)[1] != first[1] for s in range(2, 6))


def test_split_is_a_partition_that_keeps_input_order():
    rest, taken = stratified_split(ITEMS, _cat, 0.3, seed=0)
    assert sorted(rest + taken) == sorted(ITEMS)
    assert not set(rest) & set(taken)
    assert rest == [i for i in ITEMS if i in rest] and taken == [i for i in ITEMS if i in taken]


def test_every_shareable_category_lands_on_both_sides_in_proportion():
    rest, taken = stratified_split(ITEMS, _cat, 0.2, seed=0)
    counts = Counter(c for _, c in taken)
    assert counts == {"a": 2, "b": 1, "c": 1}  # 10*0.2, 5*0.2, and at least one of c's two
    assert {c for _, c in rest} == {"a", "b", "c", "d"}  # d has one item: it stays


def test_adding_a_category_does_not_move_the_others():
    _, before = stratified_split(ITEMS, _cat, 0.4, seed=3)
    _, after = stratified_split(ITEMS + [("z1", "z"), ("z2", "z")], _cat, 0.4, seed=3)
    assert [i for i in after if i[1] != "z"] == before


def test_holdout_takes_whole_names_deterministically():
    names = [f"task-{i}" for i in range(10)]
    seen, unseen = holdout(names, 0.25, seed=0)
    assert len(unseen) == 2 and sorted(seen + unseen) == sorted(names)
    assert (seen, unseen) == holdout(names, 0.25, seed=0)
    assert holdout(["a", "b"], 0.1, seed=0)[1] != []


def test_bad_fraction_is_rejected():
    with pytest.raises(ValueError, match="within"):
        stratified_split(ITEMS, _cat, 1.5, seed=0)
