"""ACGM seed: modality-specific decay attention, the reward-weighted edge gate, the two-tier
index with beam search, and the grouped payload."""

from __future__ import annotations

import numpy as np

from automemo.episode_store import EpisodeStore

from seedtools import conversation, load_seed, question, solid_image, toolkit, web_episode, web_task

SHOP = "https://shop.example.com/"


def test_visual_attention_decays_faster_than_text_at_the_papers_rates():
    acgm = load_seed("acgm")
    assert acgm.LAMBDA == {"visual": 0.47, "text": 0.11, "knowledge": 0.23} and acgm.TAU == 0.1
    memo = acgm.Memo.__new__(acgm.Memo)
    # two candidates, equally similar in every view, one 5 steps later in its episode
    arrays = {"pos": np.array([0.0, 5.0]), "order": np.array([0, 0])}
    feats = np.array([[0.5, 0.5, 0.5, 0, 1, 0], [0.5, 0.5, 0.5, 0, 1, 0]], dtype=np.float32)
    _, alpha_v = memo._attention(np.array([0, 1]), feats, arrays)
    ratio_v = alpha_v[0] / alpha_v[1]
    assert np.isclose(ratio_v, np.exp(0.47 * 5))
    acgm.BETA_VISUAL, acgm.BETA_KNOWLEDGE = 0.0, 0.0  # text only
    total, _ = memo._attention(np.array([0, 1]), feats, arrays)
    assert np.isclose(total[0] / total[1], np.exp(0.11 * 5))


def test_edge_gate_learns_weak_labels_and_weights_them_by_reward():
    acgm = load_seed("acgm")
    rng = np.random.default_rng(1)
    cos = rng.uniform(0, 1, 400).astype(np.float32)
    feats = np.zeros((400, 6), dtype=np.float32)
    feats[:, 0] = cos
    labels = (cos > 0.6).astype(np.float32)
    gate = acgm.EdgeGate()
    gate.fit(feats, labels, np.ones(400, dtype=np.float32), steps=2000, lr=2.0)
    probe = np.zeros((2, 6), dtype=np.float32)
    probe[:, 0] = [0.3, 0.9]
    low, high = gate.prob(probe)
    assert low < 0.5 < high
    # the same features labelled both ways: the rewarded label wins
    feats2 = np.tile(probe[1:], (200, 1))
    labels2 = np.array([1.0] * 100 + [0.0] * 100, dtype=np.float32)
    weights = np.array([3.0] * 100 + [1.0] * 100, dtype=np.float32)
    gate2 = acgm.EdgeGate()
    gate2.fit(feats2, labels2, weights)
    assert gate2.prob(probe[1:])[0] > 0.7
    gate3 = acgm.EdgeGate()
    gate3.fit(feats2, labels2, weights[::-1].copy())
    assert gate3.prob(probe[1:])[0] < 0.3


def test_two_tier_index_leaves_and_beam_search(tmp_path):
    memo = load_seed("acgm", LEAF_SIZE=4, RECENT=3, BEAM=1).Memo(toolkit(tmp_path))
    topics = ["umbrella", "boots", "lamp", "sofa", "kettle", "bicycle"]
    for i, topic in enumerate(topics):
        memo.update(web_episode(f"e{i}", f"Buy a {topic}", [f"click {topic}", f"type {topic} size", "click buy"], url=SHOP))
    memo.retrieve(web_task("Buy a lamp", SHOP))
    tier = memo._tier("")
    leaves = memo._leaves(tier["tree"])
    assert all(len(leaf) <= 4 for leaf in leaves)
    assert sorted(int(i) for leaf in leaves for i in leaf) + tier["recent"] == list(range(len(memo.nodes)))
    q = memo._query_node(web_task("Buy a lamp", SHOP))["text"]
    narrow = memo._beam(tier["tree"], q)
    assert len(narrow) <= 4  # width 1: one leaf
    wide = load_seed("acgm", LEAF_SIZE=4, RECENT=3, BEAM=8).Memo(toolkit(tmp_path / "w"))
    wide.nodes, wide.columns, wide.episodes, wide.built = memo.nodes, memo.columns, memo.episodes, None
    wide.retrieve(web_task("Buy a lamp", SHOP))
    assert len(wide._beam(wide._tier("")["tree"], q)) > len(narrow)


def test_each_user_gets_an_index_over_their_own_history(tmp_path):
    memo = load_seed("acgm").Memo(toolkit(tmp_path))
    memo.update(conversation("a", [("A:R1", "My dog is called Rex.")], user="A"))
    memo.update(conversation("b", [("B:R1", "My dog is called Bolt.")], user="B"))
    assert memo.retrieve(question("What is my dog called?", user="B")).metadata["evidence"] == ["B:R1"]
    assert set(memo.built["tiers"]) == {"A", "B"}  # no index over everyone was needed


def test_sparse_graph_respects_degree_and_gate(tmp_path):
    memo = load_seed("acgm", EDGE_DEGREE=2, LEAF_SIZE=8).Memo(toolkit(tmp_path))
    for i in range(6):
        memo.update(web_episode(f"e{i}", "Buy an umbrella", ["click umbrella", "click buy"], url=SHOP))
    memo.retrieve(web_task("Buy an umbrella", SHOP))
    edges = memo._tier("")["edges"]
    assert edges and all(len(v) <= 2 for v in edges.values())
    assert any(edges.values())  # identical steps of equal action type are linked


def test_payload_groups_hits_by_episode_with_a_window_and_at_most_two_screenshots(tmp_path):
    store = EpisodeStore(tmp_path / "store")
    shots = {i: solid_image(store, (20 * i, 100, 200 - 20 * i)) for i in range(6)}
    memo = load_seed("acgm", SNIPPET=1, TOP_NODES=3).Memo(toolkit(tmp_path, store.root))
    memo.update(web_episode("long", "Book a table for two", [f"click step{i}" for i in range(6)], url=SHOP, screenshots=shots))
    payload = memo.retrieve(web_task("Book a table for two", SHOP))
    assert payload.text.count("### Book a table for two") == 1
    assert len(payload.images) <= 2 and payload.images
    assert len(payload.metadata["evidence"]) == 3
    hits = [line for line in payload.text.splitlines() if line.startswith("* ")]
    assert len(hits) == 3


def _memo_with_mixed_nodes(tmp_path):
    """Web steps with and without screenshots on two hosts, and a conversation: every feature
    of `pair_features` takes more than one value."""
    store = EpisodeStore(tmp_path / "store")
    shots = {i: solid_image(store, (40 * i, 90, 200 - 40 * i)) for i in range(3)}
    memo = load_seed("acgm").Memo(toolkit(tmp_path, store.root))
    memo.update(web_episode("w1", "Buy a lamp", ["click lamp", "type lamp size", "click buy"], url=SHOP, screenshots=shots))
    memo.update(web_episode("w2", "Find a hotel", ["click hotels", "type Paris"], url="https://travel.example.org/"))
    memo.update(conversation("c", [("U:R1", "My dog is called Rex."), ("U:R2", "Rex likes the lamp.")], user="U"))
    return memo


def _reference_features(memo, i, others):
    """`pair_features` of node i against `others`, one node at a time, as the seed computed them."""
    arrays = memo._arrays()
    a = {**memo.nodes[i], "text": arrays["text"][i], "img": arrays["img"][i], "know": arrays["know"][i]}
    return load_seed("acgm").pair_features(a, arrays["text"][others], arrays["img"][others], arrays["know"][others],
                                           arrays["host"][others], arrays["has_img"][others], arrays["pos"][others])


def test_batched_pair_features_equal_the_per_node_ones(tmp_path):
    memo = _memo_with_mixed_nodes(tmp_path)
    arrays, n = memo._arrays(), len(memo.nodes)
    ids = np.arange(n)
    pairwise = memo._pairwise_features(ids, arrays)
    assert pairwise.shape == (n, n, 6)
    for i in range(n):
        assert np.allclose(pairwise[i], _reference_features(memo, i, ids), atol=1e-6)
    a_idx, b_idx = np.array([0, 1, 3, n - 1]), np.array([2, 4, 0, 1])
    expected = np.concatenate([_reference_features(memo, int(a), np.array([b])) for a, b in zip(a_idx, b_idx)])
    assert np.allclose(memo._paired_features(a_idx, b_idx, arrays), expected, atol=1e-6)


def test_linking_a_leaf_at_once_keeps_each_nodes_edges(tmp_path):
    memo = _memo_with_mixed_nodes(tmp_path)
    memo.gate.b = 0.0  # a permissive gate, so that most nodes have edges to compare
    arrays, ids = memo._arrays(), np.arange(len(memo.nodes))
    edges = {}
    memo._link(ids, arrays, edges)
    acgm = load_seed("acgm")
    for i in ids:
        others = ids[ids != i]
        p = memo.gate.prob(_reference_features(memo, int(i), others))
        assert edges[int(i)] == [int(others[j]) for j in np.argsort(-p)[: acgm.EDGE_DEGREE] if p[j] > acgm.GATE]
    assert any(edges.values())
