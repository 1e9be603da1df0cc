"""Ontology memory seed: confidence gating, promotion (support >= 3, p > 0.7), alias merging,
signed edge weights with L2 renormalisation, the budget-aware router and the one backoff."""

from __future__ import annotations

import math

from seedtools import conversation, load_seed, question, toolkit, web_episode, web_task

SHOP = "https://shop.example.com/"


def _shop_memory(tmp_path, n_success, **overrides):
    memo = load_seed("ontology_memory", **overrides).Memo(toolkit(tmp_path))
    for i in range(n_success):
        memo.update(web_episode(f"ok{i}", f"Buy umbrella model {i}", ['type "umbrella" in search', "click result"], url=SHOP))
    return memo


def test_pattern_is_promoted_at_three_supporting_episodes_not_two(tmp_path):
    memo = _shop_memory(tmp_path, 2)
    assert not any(r == "SOLVED_BY" for _, r, _ in memo.promoted)
    memo = _shop_memory(tmp_path / "b", 3)
    promoted = [k for k in memo.promoted if k[1] == "SOLVED_BY"]
    assert promoted == [("buy umbrella", "SOLVED_BY", "type -> click")]
    assert memo.promoted[promoted[0]] > 0.7
    text = memo.retrieve(web_task("Buy umbrella model 9", SHOP)).text
    assert "Established facts and strategies" in text and "SOLVED_BY type -> click" in text


def test_confidence_gate_keeps_weak_triples_out_of_the_graph(tmp_path):
    memo = _shop_memory(tmp_path, 1, CONFIDENCE=0.99)
    assert memo.graph.number_of_edges() == 0
    assert memo.dense.size == 2  # the steps are still in the dense store
    memo = _shop_memory(tmp_path / "b", 1, CONFIDENCE=0.5)
    assert memo.graph.number_of_edges() > 0


def test_alias_merging_follows_the_threshold(tmp_path):
    memo = load_seed("ontology_memory", ALIAS=0.85).Memo(toolkit(tmp_path))
    first = memo._entity("new york city")
    assert memo._entity("New York City ") == first  # same name after normalising
    assert memo._entity("banana bread") != first
    merge_all = load_seed("ontology_memory", ALIAS=0.6).Memo(toolkit(tmp_path / "b"))
    merge_all._entity("new york city")
    assert merge_all._entity("new york") == "new york city"
    strict = load_seed("ontology_memory", ALIAS=1.0).Memo(toolkit(tmp_path / "c"))
    strict._entity("new york city")
    assert strict._entity("new york") == "new york"


def test_success_edges_outweigh_failure_edges_after_l2_renormalisation(tmp_path):
    memo = load_seed("ontology_memory", ETA=0.1, FAILURE_LAMBDA=2.0).Memo(toolkit(tmp_path))
    memo.update(web_episode("ok", "Buy a lamp", ["click search"], url=SHOP))
    memo.update(web_episode("bad", "Rent a car", ["click search"], url="https://cars.example.net/", reward=0.0,
                            errors={0: "login wall"}))
    weights = {(h, t): d["weight"] for h, t, d in memo.graph.edges(data=True)}
    assert weights[("buy lamp", "shop.example.com")] > weights[("rent car", "cars.example.net")]
    squares = sum(w * w for w in weights.values())
    assert math.isclose(squares, len(weights), rel_tol=1e-6)  # L2-normalised, mean weight ~1


def test_router_is_graph_first_on_known_entities_and_budget_aware(tmp_path):
    memo = load_seed("ontology_memory").Memo(toolkit(tmp_path))
    memo.update(conversation("s", [("R1", "Ben: My sister is a veterinarian in Lyon."),
                                   ("R2", "Ben: Lunch was fine.")]))
    assert memo.route(["ben sister"], 50_000) == ("graph", 40, 24)
    assert memo.route(["nobody"], 50_000) == ("dense", 24, 40)
    assert memo.route(["ben sister"], 1_000) == ("graph", 20, 12)
    payload = memo.retrieve(question("What does Ben's sister do for a living? Ben"))
    assert payload.metadata["evidence"][0] == "R1"
    forced = load_seed("ontology_memory", ROUTER="dense").Memo(toolkit(tmp_path / "b"))
    forced.update(conversation("s", [("R1", "Ben: My sister is a veterinarian in Lyon.")]))
    assert forced.retrieve(question("Ben sister job")).metadata["router"] == "dense"


def test_flat_scores_trigger_exactly_one_backoff(tmp_path):
    memo = _shop_memory(tmp_path, 3, BACKOFF_SPREAD=1.0)
    payload = memo.retrieve(web_task("Buy umbrella", SHOP))
    assert payload.metadata["backoff"] is True
    calm = _shop_memory(tmp_path / "b", 3, BACKOFF_SPREAD=0.0)
    calls = []
    original = calm._rank
    calm._rank = lambda *a: calls.append(a) or original(*a)
    calm.retrieve(web_task("Buy umbrella", SHOP))
    assert 1 <= len(calls) <= 2
