"""A search held to its root (`search.held_to = "root"`, a label-free search's default): the root
is the bar whatever a swept seed scores; a candidate, a seed included, replaces it only when it
wins on the scored questions by z paired SEs and loses on no guard by more than z
(`automemo.search.win_rule`, the rule a served memory's round applies too)."""

import dataclasses

import pytest

from automemo.search import win_rule
from automemo.search.config import SearchConfig
from automemo.search.policy import NodeStats, TreeStats, confirm_final, reference, final_by_bound
from automemo.search.tree_stats import PairedDifference

TASKS = ("a", "b", "c", "d")
CFG = SearchConfig(kappa=0.0)


def scores(*values):
    return dict(zip(TASKS, values))


def tree(root, seed, *generated, held_to_root=True, guards=None):
    """Root 0 (`root` task scores), a swept seed 1 and generated children 2.. under the root;
    `guards`: node id -> guard metric values per task."""
    guards = guards or {}

    children = 1 + len(generated)

    def node(i, values, parent, reference=False):
        mu = sum(values) / len(values)
        return NodeStats(id=i, parent=parent, mean=mu, n=1, m=children if parent is None else 0, first_score=mu,
                         parent_snapshot=None if parent is None else 0.0, task_scores=scores(*values),
                         guard_scores={"guard_recall@10": guards[i]} if i in guards else {},
                         exact=True, reference=reference)

    nodes = [node(0, root, None), node(1, seed, 0, reference=True)]
    nodes += [node(i, values, 0) for i, values in enumerate(generated, start=2)]
    return TreeStats(nodes=tuple(nodes), total_evaluations=len(nodes), held_to_root=held_to_root)


def test_the_root_is_the_bar_though_a_seed_scores_more():
    # The seed's μ (.75) is above the root's (.5), but its lead is one task: d = (1, 0, 0, 0) → mean .25,
    # SE .25: it does not clear by one paired SE, so the root is kept.
    t = tree((0.5, 0.5, 0.5, 0.5), (1.0, 0.5, 0.5, 0.5))
    assert reference(t).id == 0
    assert final_by_bound(t, CFG).id == 0
    # Held to the best hand design instead, the same seed is the bar and is selected.
    loose = dataclasses.replace(t, held_to_root=False)
    assert reference(loose).id == 1 and final_by_bound(loose, CFG).id == 1


def test_a_seed_that_wins_by_a_paired_se_replaces_the_root():
    t = tree((0.5, 0.5, 0.5, 0.5), (0.75, 0.75, 0.75, 0.75))
    confirmation = confirm_final(t, CFG)
    assert confirmation.bar == 0
    assert [c.node_id for c in confirmation.candidates] == [1]
    assert confirmation.chosen == 1


def test_a_candidate_that_loses_on_a_guard_kind_keeps_the_root():
    t = tree((0.5, 0.5, 0.5, 0.5), (0.0, 0.0, 0.0, 0.0), (0.75, 0.75, 0.75, 0.75),
             guards={0: scores(1, 1, 1, 1), 2: scores(0, 0, 0, 0)})
    confirmation = confirm_final(t, CFG)
    best = next(c for c in confirmation.candidates if c.node_id == 2)
    assert best.clears and not best.guards_hold
    assert confirmation.chosen == 0
    # Without the guard loss the same candidate replaces the root.
    t = tree((0.5, 0.5, 0.5, 0.5), (0.0, 0.0, 0.0, 0.0), (0.75, 0.75, 0.75, 0.75),
             guards={0: scores(1, 1, 1, 1), 2: scores(1, 1, 1, 1)})
    assert confirm_final(t, CFG).chosen == 2


def test_the_win_rule_by_hand():
    assert win_rule.clears(PairedDifference(0.1, 0.05, 100), z=1.0)
    assert not win_rule.clears(PairedDifference(0.05, 0.05, 100), z=1.0)   # a tie at the bound stays
    assert win_rule.holds(PairedDifference(-0.05, 0.05, 100), z=1.0)
    assert not win_rule.holds(PairedDifference(-0.06, 0.05, 100), z=1.0)


@pytest.mark.parametrize("difference, se, cleared", [(0.1, 0.05, True), (0.05, 0.05, False), (-0.1, 0.01, False)])
def test_the_adaptation_race_clears_by_the_same_rule(difference, se, cleared):
    from automemo.adapt.search_race import Race

    race = Race(0.5, 0.5 + difference, difference, se, 100, 1.0, cleared, {}, {})
    assert race.cleared is cleared is win_rule.clears(PairedDifference(difference, se, 100), 1.0)


@pytest.mark.parametrize("questions", ["self", "llm"])
def test_a_label_free_search_roots_at_the_discovered_default_held_to_it(questions):
    from automemo.resolution import data_layer, resolve

    data = {"benchmark": {"name": "memgallery", "questions": questions,
                          "options": {"path": "@mem-gallery-sample", "mode": "retrieval"}}}
    resolution = resolve([data_layer("flags", data)])
    assert resolution.config.search.root == "discovered"
    assert resolution.config.search.held_to == "root"
    assert resolution.source("search.root").startswith("label-free questions")
    # A root the user names wins; a labelled search keeps its defaults.
    named = resolve([data_layer("flags", {**data, "search": {"root": "bm25_rag"}})]).config
    assert (named.search.root, named.search.held_to) == ("bm25_rag", "root")
    labelled = resolve([data_layer("flags", {"benchmark": {**data["benchmark"], "questions": "benchmark"}})]).config
    assert (labelled.search.root, labelled.search.held_to) == ("no_memory", "best_hand_design")


def test_held_to_is_checked():
    from automemo.configtools import ConfigError

    with pytest.raises(ConfigError, match="search.held_to must be one of"):
        SearchConfig(held_to="best_seed")
