"""Cost bounds on the final selection (search.max_ingest_ms_per_turn, max_recall_ms): only nodes
within them are selected, the best hand design the selection is held to included, and a run
whose hand designs are all over the bounds says so. Trees built by hand, as the run directory's
rows would build them (`Tree`), with each node's latest cost figures."""

from __future__ import annotations

import subprocess
import sys

import pytest

from automemo import configtools
from automemo.configtools import ConfigError
from automemo.evaluation.cost_bounds import CostBounds
from automemo.search.config import SearchConfig
from automemo.search.policy import confirm_final, reference, final_by_bound
from automemo.search.strategies import strategy_for
from automemo.search.tree import Node, Tree
from automemo.search.view import bounds_document, bounds_lines

TASKS = [f"q{i}" for i in range(8)]


def _node(i, parent, values, ingest, *, action="generate", recall=1.0):
    cost = {} if ingest is None else {"ingest_cpu_ms_per_turn": ingest, "recall_cpu_ms": recall}
    return Node(id=i, parent=parent, source_path=f"nodes/{i}/program.py", summary=f"#{i}",
                scores=(sum(values) / len(values),), parent_snapshot=0.0, action=action, ks=(0,),
                task_scores=dict(zip(TASKS, values)), exact=True, cost=cost)


def tree(bounds=CostBounds(), unmeasured=()) -> Tree:
    """root 0 (no memory, free); seed 1, expensive (60 ms a turn) and good; seed 2, cheap and
    weaker; child 3 of seed 1, expensive and best; child 4 of seed 2, cheap and clearly better
    than seed 2."""
    nodes = [
        _node(0, None, [0] * 8, 0.1, action="root"),
        _node(1, 0, [1, 1, 1, 0, 1, 1, 1, 0], 60.0, action="transplant"),
        _node(2, 0, [1, 0, 1, 0, 1, 0, 1, 0], 0.2, action="transplant"),
        _node(3, 1, [1, 1, 1, 1, 1, 1, 1, 1], 61.0),
        _node(4, 2, [1, 1, 1, 1, 1, 1, 1, 0], 0.3),
    ]
    nodes = [_node(n.id, n.parent, list(n.task_scores.values()), None, action=n.action) if n.id in unmeasured
             else n for n in nodes]
    return Tree(nodes, bounds=bounds)


def test_without_bounds_the_best_node_is_held_to_the_best_hand_design():
    stats = tree().stats()
    assert reference(stats).id == 1
    assert final_by_bound(stats, SearchConfig()).id == 3


def test_an_ingest_bound_selects_within_it_and_holds_it_to_the_best_hand_design_within_it():
    config = SearchConfig(max_ingest_ms_per_turn=10)
    stats = tree(CostBounds.from_search(config)).stats()
    assert {v.id for v in stats.nodes if v.outside} == {1, 3}
    assert stats.node(3).outside == "ingest 61.00 ms/turn > 10"
    assert reference(stats).id == 2
    confirmation = confirm_final(stats, config)
    assert [c.node_id for c in confirmation.candidates] == [4] and confirmation.chosen == 4
    document = bounds_document(stats, config, 4)
    assert document["chosen_fits"] and document["bar"] == 2 and document["bar_fits"] and not document["note"]
    assert document["outside"] == {"1": "ingest 60.00 ms/turn > 10", "3": "ingest 61.00 ms/turn > 10"}


def test_a_recall_bound_and_a_node_whose_cost_was_not_measured():
    bounds = CostBounds(max_recall_ms=5.0)
    stats = tree(bounds, unmeasured={4}).stats()
    assert stats.node(4).outside == "its cost was not measured"
    assert bounds.violations({"ingest_cpu_ms_per_turn": 1.0, "recall_cpu_ms": 7.5}) == ("recall 7.50 ms > 5",)
    assert not CostBounds().violations({})  # no bounds: everything fits, measured or not


def test_when_no_hand_design_fits_the_selection_says_so():
    config = SearchConfig(max_ingest_ms_per_turn=0.25)   # even the free root costs 0.1: only #2 and #0 fit
    stats = tree(CostBounds.from_search(config)).stats()
    assert reference(stats).id == 2 and final_by_bound(stats, config).id == 2  # #4 costs 0.3
    config = SearchConfig(max_ingest_ms_per_turn=0.05)   # nothing fits
    stats = tree(CostBounds.from_search(config)).stats()
    assert reference(stats).id == 1  # the best hand design of all, as without bounds
    chosen = final_by_bound(stats, config).id
    assert chosen == 1
    document = bounds_document(stats, config, chosen)
    assert not document["bar_fits"] and not document["chosen_fits"]
    assert "no hand design fits the bounds" in document["note"] and "over the bounds too" in document["note"]
    assert any("OUTSIDE" in line for line in bounds_lines(document))


def test_best_mean_strategies_select_within_the_bounds_but_still_expand_the_best():
    config = SearchConfig(strategy="greedy", max_ingest_ms_per_turn=10)
    stats = tree(CostBounds.from_search(config)).stats()
    strategy = strategy_for(config)
    assert strategy.select_final(stats).id == 4
    assert strategy.choose(stats, seed=0).node_id == 3  # a strong parent over the bound is still worth a child


def test_bounds_are_typed_config_keys():
    assert SearchConfig().max_ingest_ms_per_turn == 0.0 and SearchConfig().max_recall_ms == 0.0
    with pytest.raises(ConfigError, match="max_ingest_ms_per_turn must be >= 0"):
        SearchConfig(max_ingest_ms_per_turn=-1)
    with pytest.raises(ConfigError, match="max_ingest_ms"):
        configtools.build(SearchConfig, {"max_ingest_ms": 3})
    assert configtools.build(SearchConfig, {"max_recall_ms": 40}).max_recall_ms == 40


def test_the_flags_set_the_keys():
    out = subprocess.run([sys.executable, "-m", "automemo", "config", "show", "--benchmark", "minigallery",
                          "--max-ingest-ms-per-turn", "21", "--max-recall-ms", "40"],
                         capture_output=True, text=True, check=True).stdout
    lines = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.strip()}
    assert lines["search.max_ingest_ms_per_turn"][:2] == ["21.0", "flag"]
    assert lines["search.max_recall_ms"][:2] == ["40.0", "flag"]
