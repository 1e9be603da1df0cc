"""ACGM: adaptive cross-modal graph memory, collapsed to cross-episode one-shot retrieval.

Stores: one node per web step / dialogue round with three views: text (MiniLM of observation +
action), visual (image embedding of its screenshot/picture, if any) and "knowledge" (a hashed
one-hot vector of structured fields: action type, host, outcome, speaker/kind); its position in
its episode and the episode's update order and reward.
- Edge gate g: a small numpy logistic model over pair features [cos_text, cos_visual,
  cos_knowledge, same host, both have images, position gap], trained in update (lazily, before the
  first retrieve) with BCE on weak labels y = 1[same action type and cos_text > 0.6], each pair
  weighted by its episodes' reward minus an EMA baseline (gamma 0.99): successful experience
  counts more, a stand-in for ACGM's REINFORCE stage.
- Sparse relevance graph: inside each index leaf, an edge where P(relevant) > 0.5, at most
  EDGE_DEGREE per node.
- Two-tier index: the RECENT most recently added nodes in a flat tier; the rest in a 4-ary tree
  built top-down by k-means (leaves of about LEAF_SIZE nodes, i.e. K = N/LEAF_SIZE prototypes);
  one such index per memory owner (a user's sessions are that user's history), built at the
  first retrieve. Served, it grows online (online k-means): a node added later enters the
  recent tier, and the one it pushes out descends the tree to the closest centroid's leaf,
  moving the centroids on its path (running means); the leaf is re-linked, and split by k-means
  past 2 * LEAF_SIZE. The gate is retrained whenever the memory has doubled since it was last
  trained (edges linked earlier keep the old gate's choice). An update costs O(depth + LEAF_SIZE^2
  + RECENT), never a rebuild, and a retrieve costs the beam, not the memory.

Retrieves: the query node is the task (instruction + captions, its images, its host). Candidates
= recent tier + the leaves reached by beam search (width BEAM) down the tree, + their graph
neighbours; kept if the gate gives P > 0.5 (all kept when it passes none, so a cold memory
still answers). Each candidate gets per-modality attention alpha_m = softmax(s_m / tau -
lambda_m * dt) with tau = 0.1 and lambda_v 0.47, lambda_x 0.11, lambda_k 0.23; the final score is
sum_m beta_m alpha_m. The top-10 nodes are grouped by episode: instruction, outcome and the
steps within +-2 of each hit; at most the image budget of screenshots from the nodes with the
highest visual attention; evidence cited in score order.

Follows: ACGM. Approximates: the learned 512-d projections and
W_q/W_k by cosine on the frozen encoders, the MLP edge predictor and REINFORCE by the
reward-weighted logistic gate, online k-means by a top-down build at the first retrieve, then greedy online insertion, and
the "current step" of dt by DECAY_CLOCK (position in episode, or episode age), scaled by
DECAY_UNIT. The readout embedding m_t is dropped: a prompted agent cannot use it.
"""

from __future__ import annotations

import hashlib

import numpy as np

from automemo.contract import EpisodeRecorder, MemoProgram, MemoryPayload, PartialRecorder
from automemo.toolkit import memolib

LAMBDA = {"visual": 0.47, "text": 0.11, "knowledge": 0.23}  # the paper's annotated decay rates
TAU = 0.1  # the paper's attention temperature
TOP_NODES = 10  # tunable: int 1..30
BEAM = 2  # tunable: int 1..8
LEAF_SIZE = 10  # tunable: int 4..64
RECENT = 20  # tunable: int 0..200
EDGE_DEGREE = 3  # tunable: int 1..10
GATE = 0.5  # tunable: float 0.1..0.9
DECAY_CLOCK = "position"  # tunable: choice position|age
DECAY_UNIT = 1.0  # tunable: float 0.0..2.0
BETA_VISUAL = 0.33  # tunable: float 0.0..1.0
BETA_TEXT = 0.34  # tunable: float 0.0..1.0
BETA_KNOWLEDGE = 0.33  # tunable: float 0.0..1.0
SNIPPET = 2  # tunable: int 0..5
KNOWLEDGE_DIM = 64
WEAK_LABEL_COS = 0.6  # ACGM's weak-label similarity threshold (Eq. 9)
EMA_GAMMA = 0.99


def knowledge_vector(fields: list[str]) -> np.ndarray:
    """Hashed one-hot of structured fields (a fixed projection instead of a learned one)."""
    vec = np.zeros(KNOWLEDGE_DIM, dtype=np.float32)
    for f in fields:
        if f:
            vec[int(hashlib.sha1(f.encode()).hexdigest(), 16) % KNOWLEDGE_DIM] = 1.0
    return vec / (np.linalg.norm(vec) or 1.0)


class EdgeGate:
    """Logistic P(relevant | pair features), trained by reward-weighted BCE on weak labels."""

    def __init__(self) -> None:
        self.w = np.array([4.0, 1.0, 1.0, 0.5, 0.0, -0.1], dtype=np.float32)  # prior: cosine matters
        self.b = -2.0

    def prob(self, feats: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-(feats @ self.w + self.b)))

    def fit(self, feats: np.ndarray, labels: np.ndarray, weights: np.ndarray, steps: int = 300, lr: float = 0.5):
        if len(labels) == 0 or labels.min() == labels.max():
            return  # one class only: nothing to separate, keep the prior
        weights = weights / weights.mean()
        for _ in range(steps):
            err = (self.prob(feats) - labels) * weights
            self.w -= lr * (feats.T @ err) / len(labels)
            self.b -= lr * float(err.mean())


def pair_features(a: dict, b_text, b_img, b_know, b_host, b_has_img, b_pos) -> np.ndarray:
    """Features of one node `a` against many nodes b (arrays): [cos_text, cos_visual,
    cos_knowledge, same host, both have images, position gap / 10]."""
    both = a["has_img"] * b_has_img
    return np.stack([
        b_text @ a["text"],
        (b_img @ a["img"]) * both,
        b_know @ a["know"],
        (b_host == a["host"]).astype(np.float32) * (a["host"] != ""),
        both,
        np.abs(b_pos - a["pos"]) / 10.0,
    ], axis=1).astype(np.float32)


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        dims = toolkit.embedding_dims()
        self.text_dim, self.image_dim = dims["text"], dims["image"]
        self.nodes: list[dict] = []  # each node's fields; its vectors live in `columns`, by row
        self.columns = self._new_columns()
        self.episodes: dict[str, dict] = {}
        self.gate = EdgeGate()
        self.baseline = None
        self.built = None  # the gate and tiers, built at the first retrieve and grown online since

    # --- update ------------------------------------------------------------------------------

    def update(self, episode: EpisodeRecorder) -> None:
        units = [u for u in memolib.units(episode) if u.text.strip()]
        if not units:
            return
        host = memolib.host_of(episode.initial_observation, *(u.text for u in units[:2]))
        order = len(self.episodes)
        self.episodes[episode.task_id] = {"instruction": episode.instruction, "reward": episode.reward,
                                          "units": units, "order": order, "conversation": memolib.is_conversation(episode)}
        self.baseline = episode.reward if self.baseline is None else EMA_GAMMA * self.baseline + (1 - EMA_GAMMA) * episode.reward
        text = memolib.as_matrix(self.toolkit.embed_text([u.text[:1000] for u in units]), self.text_dim)
        img = np.zeros((len(units), self.image_dim), dtype=np.float32)
        with_img = [i for i, u in enumerate(units) if u.images]
        if with_img:
            img[with_img] = memolib.as_matrix(self.toolkit.embed_image([units[i].images[0] for i in with_img]), self.image_dim)
        outcome = "success" if episode.success else "failure"
        for i, u in enumerate(units):
            kind = memolib.action_type(u.action) or (u.text.split(":")[0].lower() if ":" in u.text[:30] else "round")
            node = {"episode": episode.task_id, "unit": i, "pos": float(u.position), "order": order,
                    "has_img": float(i in with_img), "host": host, "atype": kind, "reward": episode.reward,
                    "scope": memolib.scope_of(episode)}
            vectors = {"text": text[i], "img": img[i],
                       "know": knowledge_vector([f"act:{kind}", f"host:{host}", f"out:{outcome}", f"img:{bool(u.images)}"])}
            self.nodes.append(node)
            for key, column in self.columns.items():
                column.append(vectors[key] if key in vectors else node[key])
            if self.built is not None:
                self._insert(len(self.nodes) - 1)

    # --- index -------------------------------------------------------------------------------

    def _new_columns(self) -> dict:
        """Every node's vectors and fields as growing arrays, by row (what the index reads)."""
        columns = {"text": memolib.GrowingArray(np.float32, self.text_dim), "img": memolib.GrowingArray(np.float32, self.image_dim),
                   "know": memolib.GrowingArray(np.float32, KNOWLEDGE_DIM)}
        columns.update({k: memolib.GrowingArray(np.float64) for k in ("has_img", "pos", "reward")})
        columns["order"] = memolib.GrowingArray(np.int64)
        columns.update({k: memolib.GrowingArray(object) for k in ("host", "atype", "scope")})
        return columns

    def _arrays(self) -> dict:
        return {k: column.view for k, column in self.columns.items()}

    def _build(self):
        """Train the gate on the whole memory and build each owner's tier."""
        arrays = self._arrays()
        self.built = {"tiers": {}, "size": len(self.nodes), "scopes": set(arrays["scope"])}
        self._train_gate(arrays, np.random.default_rng(0))
        for scope in sorted(self.built["scopes"] - {""}):  # per-owner indexes now, not mid-query
            self._tier(scope)

    def _insert(self, i):
        """Node `i`, added after the build, into its tiers; the gate retrained once memory doubled."""
        if len(self.nodes) >= 2 * self.built["size"]:
            self.built["size"] = len(self.nodes)
            self.gate = EdgeGate()
            self._train_gate(self._arrays(), np.random.default_rng(len(self.nodes)))
        scope = self.nodes[i]["scope"]
        self.built["scopes"].add(scope)
        arrays = self._arrays()
        if scope and scope not in self.built["tiers"]:
            self._tier(scope)  # a new owner: their tier starts now, with this one node
            return
        for name in memolib.dedupe((scope, "")):
            tier = self.built["tiers"].get(name)
            if tier is None:
                continue  # the all-owners tier is built from every node when first asked
            tier["recent"].append(i)
            if len(tier["recent"]) > RECENT:
                self._descend_insert(tier, tier["recent"].pop(0), arrays)
            self._link_pairs(np.array(tier["recent"], dtype=int), arrays, tier["edges"])

    def _descend_insert(self, tier, i, arrays):
        """Online k-means step: node `i` joins the leaf whose centroids it is closest to, greedily
        from the root; the leaf's centroid follows, and a leaf past 2 * LEAF_SIZE is split."""
        vec = arrays["text"][i]
        if tier["tree"] is None:
            tier["tree"] = {"centroid": vec.copy(), "ids": np.array([i]), "count": 1}
            return
        node = tier["tree"]
        while True:
            node["count"] = node.get("count", 0) + 1
            node["centroid"] = node["centroid"] + (vec - node["centroid"]) / node["count"]
            if "children" not in node:
                break
            # by cosine: a raw dot product favours small clusters (their means are longer) and
            # would pile every new node into the newest split, a chain instead of a tree
            centres = np.stack([c["centroid"] for c in node["children"]])
            norms = np.linalg.norm(centres, axis=1)
            node = node["children"][int(np.argmax(centres @ vec / np.where(norms > 0, norms, 1.0)))]
        node["ids"] = np.append(node["ids"], i)
        if len(node["ids"]) > 2 * LEAF_SIZE:
            split = self._split(node["ids"], arrays["text"], np.random.default_rng(i))
            node.clear()
            node.update(split)
        for leaf in self._leaves(node):
            self._link_pairs(leaf, arrays, tier["edges"])

    def _tier(self, scope: str) -> dict:
        """The two-tier index over one owner's nodes ("" = every node, built on first use):
        ACGM indexes one history; a user's memory is that user's history."""
        tiers = self.built["tiers"]
        if scope not in tiers:
            arrays = self._arrays()
            ids = np.flatnonzero(arrays["scope"] == scope) if scope else np.arange(len(self.nodes))
            recent, older = ids[len(ids) - min(RECENT, len(ids)):], ids[: len(ids) - min(RECENT, len(ids))]
            tree = self._split(older, arrays["text"], np.random.default_rng(0)) if len(older) else None
            tier = {"recent": [int(i) for i in recent], "tree": tree, "edges": {}}
            for leaf in self._leaves(tree) + [recent]:
                self._link(leaf, arrays, tier["edges"])
            tiers[scope] = tier
        return tiers[scope]

    def _split(self, ids, vectors, rng):
        """A 4-ary tree node: {"centroid", "children"} or a leaf {"centroid", "ids"}, with the
        number of nodes under it ("count": online insertion moves centroids as running means)."""
        rows = vectors[ids]  # gathered once: each k-means round reads them
        centroid = rows.mean(axis=0)
        if len(ids) <= LEAF_SIZE:
            return {"centroid": centroid, "ids": ids, "count": len(ids)}
        k = 4
        centres = vectors[rng.choice(ids, size=k, replace=False)]
        assign = None
        for _ in range(8):
            closest = np.argmax(rows @ centres.T, axis=1)
            if assign is not None and np.array_equal(closest, assign):
                break  # converged: the same centres again, so every later round repeats this one
            assign = closest
            centres = np.stack([rows[assign == c].mean(axis=0) if np.any(assign == c) else centres[c] for c in range(k)])
        groups = [ids[assign == c] for c in range(k) if np.any(assign == c)]
        if len(groups) == 1:  # identical vectors: split by order so the tree still shrinks
            groups = np.array_split(ids, k)
        return {"centroid": centroid, "children": [self._split(g, vectors, rng) for g in groups], "count": len(ids)}

    def _leaves(self, tree):
        if tree is None:
            return []
        if "ids" in tree:
            return [tree["ids"]]
        return [leaf for child in tree["children"] for leaf in self._leaves(child)]

    def _train_gate(self, arrays, rng):
        n = len(self.nodes)
        if n < 4:
            return
        a_idx = rng.integers(0, n, size=min(4000, n * 4))
        b_idx = rng.integers(0, n, size=len(a_idx))
        # half of the pairs are near neighbours (within a sample, to bound the cost), so that
        # positives exist at all
        pool = rng.choice(n, size=min(n, 2000), replace=False)
        sims = arrays["text"][a_idx[: len(a_idx) // 2]] @ arrays["text"][pool].T
        sims[pool[None, :] == a_idx[: len(a_idx) // 2, None]] = -np.inf
        b_idx[: sims.shape[0]] = pool[np.argmax(sims, axis=1)]
        feats = self._paired_features(a_idx, b_idx, arrays)
        cos = feats[:, 0]
        labels = ((arrays["atype"][a_idx] == arrays["atype"][b_idx]) & (cos > WEAK_LABEL_COS)).astype(np.float32)
        advantage = (arrays["reward"][a_idx] + arrays["reward"][b_idx]) / 2 - (self.baseline or 0.0)
        self.gate.fit(feats, labels, np.clip(1.0 + advantage, 0.1, None).astype(np.float32))

    @staticmethod
    def _paired_features(a_idx, b_idx, arrays) -> np.ndarray:
        """`pair_features` of node a_idx[k] against node b_idx[k], for every k at once."""
        has_a, has_b = arrays["has_img"][a_idx], arrays["has_img"][b_idx]
        host_a = arrays["host"][a_idx]
        both = has_a * has_b

        def cosines(view):
            return np.einsum("ij,ij->i", arrays[view][b_idx], arrays[view][a_idx])

        return np.stack([
            cosines("text"),
            cosines("img") * both,
            cosines("know"),
            (arrays["host"][b_idx] == host_a).astype(np.float32) * (host_a != ""),
            both,
            np.abs(arrays["pos"][b_idx] - arrays["pos"][a_idx]) / 10.0,
        ], axis=1).astype(np.float32)

    def _link(self, ids, arrays, edges):
        """Each node's EDGE_DEGREE most probable neighbours among `ids` (gate P > GATE). Every
        pair's features come from one matrix product per view, not one `pair_features` call per
        node: building a large memory's tiers (one call per node) took 30 s at 10^4 episodes."""
        if len(ids) < 2:
            return
        ids = np.asarray(ids)
        feats = self._pairwise_features(ids, arrays)
        for row, i in enumerate(ids):
            mask = ids != i
            others = ids[mask]
            p = self.gate.prob(feats[row, mask])
            keep = [int(others[j]) for j in np.argsort(-p)[:EDGE_DEGREE] if p[j] > GATE]
            edges[int(i)] = keep

    @staticmethod
    def _pairwise_features(ids, arrays) -> np.ndarray:
        """`pair_features` of every node of `ids` against every other, shape (n, n, 6): row r
        holds node ids[r] as `a`."""
        text, img, know = arrays["text"][ids], arrays["img"][ids], arrays["know"][ids]
        has_img, host, pos = arrays["has_img"][ids], arrays["host"][ids], arrays["pos"][ids]
        both = np.outer(has_img, has_img)
        return np.stack([
            text @ text.T,
            (img @ img.T) * both,
            know @ know.T,
            (host[None, :] == host[:, None]).astype(np.float32) * (host != "")[:, None],
            both,
            np.abs(pos[None, :] - pos[:, None]) / 10.0,
        ], axis=2).astype(np.float32)

    def _link_pairs(self, ids, arrays, edges):
        """`_link` with every pair's features at once (they are symmetric): what an online
        insertion re-links (the recent tier, one leaf) for a small fraction of `_link`'s cost."""
        if len(ids) < 2:
            return
        text, img, know = arrays["text"][ids], arrays["img"][ids], arrays["know"][ids]
        has_img, host, pos = arrays["has_img"][ids], arrays["host"][ids], arrays["pos"][ids]
        both = np.outer(has_img, has_img)
        same_host = (host[:, None] == host[None, :]) & (host != "")[:, None]
        w = self.gate.w
        logits = (w[0] * (text @ text.T) + w[1] * (img @ img.T) * both + w[2] * (know @ know.T) + w[3] * same_host
                  + w[4] * both + w[5] * np.abs(pos[:, None] - pos[None, :]) / 10.0 + self.gate.b)
        p = 1.0 / (1.0 + np.exp(-logits))
        np.fill_diagonal(p, -np.inf)
        best = np.argsort(-p, axis=1)[:, :EDGE_DEGREE]
        passed = np.take_along_axis(p, best, axis=1) > GATE
        for i, row, keep in zip(ids.tolist(), best.tolist(), passed.tolist()):
            edges[i] = [int(ids[j]) for j, ok in zip(row, keep) if ok]

    def _beam(self, tree, q_text):
        if tree is None:
            return []
        frontier = [tree]
        while any("children" in t for t in frontier):
            children = [c for t in frontier for c in (t.get("children") or [t])]
            scores = np.array([c["centroid"] @ q_text for c in children])
            frontier = [children[i] for i in np.argsort(-scores)[:BEAM]]
        return [int(i) for t in frontier for i in t["ids"]]

    # --- retrieve ----------------------------------------------------------------------------

    def retrieve(self, task: PartialRecorder) -> MemoryPayload:
        budget = memolib.budget_of(task)
        if not self.nodes:
            return memolib.make_payload([], budget=budget)
        if self.built is None:
            self._build()
        arrays = self._arrays()
        query = self._query_node(task)
        scope = memolib.scope_of(task)
        tier = self._tier(scope if scope and scope in self.built["scopes"] else "")
        cands = memolib.dedupe(tier["recent"] + self._beam(tier["tree"], query["text"]))
        cands = np.array(memolib.dedupe(cands + [j for i in cands for j in tier["edges"].get(i, [])]), dtype=int)
        feats = pair_features(query, arrays["text"][cands], arrays["img"][cands], arrays["know"][cands],
                              arrays["host"][cands], arrays["has_img"][cands], arrays["pos"][cands])
        passed = self.gate.prob(feats) > GATE
        if passed.any():
            cands, feats = cands[passed], feats[passed]
        score, alpha_v = self._attention(cands, feats, arrays)
        top = [int(cands[i]) for i in memolib.top_indices(score, TOP_NODES)]
        by_visual = [int(cands[i]) for i in memolib.top_indices(alpha_v, len(cands)) if alpha_v[i] > 0]
        # a task without images gives no visual attention: show the best text hits' screenshots
        by_visual = by_visual or top
        return self._payload(top, by_visual, budget)

    def _query_node(self, task):
        text = memolib.as_matrix(self.toolkit.embed_text([memolib.query_text(task)]), self.text_dim)[0]
        images = memolib.task_images(task)
        img = np.zeros(self.image_dim, dtype=np.float32)
        if images:
            img = memolib.as_matrix(self.toolkit.embed_image(images), self.image_dim).mean(axis=0)
            img /= np.linalg.norm(img) or 1.0
        host = memolib.host_of(task.initial_observation, task.instruction)
        return {"text": text, "img": img, "has_img": float(bool(images)), "host": host, "pos": 0.0,
                "know": knowledge_vector(["act:instruction", f"host:{host}", "out:success", f"img:{bool(images)}"])}

    def _attention(self, cands, feats, arrays):
        """Eq. 4 per modality over the candidate set, then the beta-weighted sum (Eq. 5)."""
        if DECAY_CLOCK == "age":
            dt = (arrays["order"].max() - arrays["order"][cands]).astype(np.float32)
        else:
            dt = arrays["pos"][cands].astype(np.float32)
        dt = dt * DECAY_UNIT
        sims = {"text": feats[:, 0], "visual": np.where(feats[:, 4] > 0, feats[:, 1], -np.inf), "knowledge": feats[:, 2]}
        betas = {"visual": BETA_VISUAL, "text": BETA_TEXT, "knowledge": BETA_KNOWLEDGE}
        total = np.zeros(len(cands), dtype=np.float64)
        alphas = {}
        for m, s in sims.items():
            logits = s / TAU - LAMBDA[m] * dt
            if not np.isfinite(logits).any():
                alphas[m] = np.zeros(len(cands))
                continue
            logits = logits - logits[np.isfinite(logits)].max()
            e = np.where(np.isfinite(logits), np.exp(logits), 0.0)
            alphas[m] = e / e.sum()
            total += betas[m] * alphas[m]
        return total, alphas["visual"]

    def _payload(self, top, by_visual, budget):
        groups: dict[str, list[int]] = {}
        for i in top:
            groups.setdefault(self.nodes[i]["episode"], []).append(self.nodes[i]["unit"])
        sections = []
        for episode_id, hits in groups.items():
            ep = self.episodes[episode_id]
            window = sorted({j for h in hits for j in range(max(0, h - SNIPPET), min(len(ep["units"]), h + SNIPPET + 1))})
            outcome = "" if ep["conversation"] else f" (outcome: reward {ep['reward']:.2f})"
            lines = [f"### {ep['instruction']}{outcome}"]
            lines += [("* " if j in hits else "  ") + f"[{', '.join(ep['units'][j].evidence)}] {memolib.clip(ep['units'][j].text, 400)}" for j in window]
            sections.append("\n".join(lines))
        images = [img for i in by_visual for img in self.episodes[self.nodes[i]["episode"]]["units"][self.nodes[i]["unit"]].images]
        evidence = memolib.citations([self.episodes[self.nodes[i]["episode"]]["units"][self.nodes[i]["unit"]] for i in top])
        return memolib.make_payload(["Relevant past observations (* = retrieved, others are context):"] + sections,
                                    budget=budget, images=images, evidence=evidence)
