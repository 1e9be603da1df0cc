"""Ontology memory: a typed triple graph with promotion, a dense store and a profile, fused.

Stores:
- triples (head, relation, tail) extracted per episode by rules (web: intent ON_HOST host,
  host HAS_WIDGET widget, intent SOLVED_BY action signature on success, host TRAP error on
  failure, entity ATTR value from the final answer; conversation: speaker/entity relations such
  as "my sister ... is a vet" -> (sister, IS, vet), and MENTIONS for named entities), each with a
  confidence = logistic(extractor agreement, reward, value specificity). Triples above CONFIDENCE
  enter a networkx multigraph with provenance (unit ids) and a weight; the rest stay dense-only.
- promotion: a (head, relation, tail) pattern seen in >= 3 distinct episodes with
  p_lift = logistic(support, mean confidence, success rate, diversity) > 0.7 becomes a
  promoted concept, shown first in the payload;
- alias merging: an entity whose name embeds within ALIAS cosine (0.85) of a known entity is
  merged into it;
- edge weights: + eta for triples of successful episodes, - lambda * eta for failures, then
  L2-renormalised;
- dense store: every unit's text (MiniLM) in faiss; profile: per-host/intent success rates.

Retrieves: the query is enriched with its host and the entities it names; a budget-aware router
picks graph-first (40 graph candidates, 24 dense) when the query hits a known entity or a
promoted concept, else dense-first (24 graph, 40 dense), both scaled down when the character
budget is small. Candidates (units) are scored 0.55 s_graph + 0.35 s_dense + 0.10 s_profile,
where s_graph is the best path weight (product of edge weights, halved per hop, <= 3 hops) from
a query entity to an entity of the unit. If the top-10 scores are flat (spread <= 0.3 of the
best) or the graph and dense top-5 share nothing, one x1.5 expansion (one more hop, more
candidates) is made, once. Payload: promoted facts/strategies, traps as "avoid", the top-10 units with provenance,
and up to the image budget of the provenance images.

Follows: Ontology-guided long-term memory. Approximates: the BIO
tagger and relation classifier by rules, the trained promotion gate and router by fixed
logistics and context bits, the counterfactual feedback by outcome-signed updates.
"""

from __future__ import annotations

import math
import re

import numpy as np

from automemo.contract import EpisodeRecorder, MemoProgram, MemoryPayload, PartialRecorder
from automemo.toolkit import memolib

W_GRAPH, W_DENSE, W_PROFILE = 0.55, 0.35, 0.10  # the paper's fixed linear combiner
PROMOTE_SUPPORT = 3  # the paper's support gate
PROMOTE_P = 0.7  # the paper's lift-probability gate
ALIAS = 0.85  # tunable: float 0.6..1.0
CONFIDENCE = 0.5  # tunable: float 0.1..0.9
ETA = 0.01  # tunable: float 0.0..0.2
FAILURE_LAMBDA = 1.0  # tunable: float 0.0..3.0
MAX_HOPS = 3  # tunable: int 1..4
TOP_ITEMS = 10  # tunable: int 1..30
BACKOFF_SPREAD = 0.3  # tunable: float 0.0..1.0
ROUTER = "auto"  # tunable: choice auto|graph|dense

_WIDGETS = ("search", "filter", "datepicker", "date", "dropdown", "menu", "checkbox", "login", "cart", "sort")
_RELATION = re.compile(
    r"\b(?:[Mm]y) ([a-z]+(?: [a-z]+)?)(?: [A-Z][a-z]+)? (?:is|was|works as|just started working as|lives in|is based in|loves|likes|prefers)"
    r" (?:a |an |the |in )?([A-Za-z][\w-]*(?: [A-Z][\w-]*)?)")
_NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.dim = toolkit.embedding_dims()["text"]
        self.graph = toolkit.graph(directed=True)
        self.dense = memolib.ScopedIndex(toolkit.vector_index, self.dim)
        self.units: list[tuple[memolib.Unit, str, bool, str]] = []  # (unit, host, success, scope)
        self.scopes: set[str] = set()
        self.unit_entities: list[set[str]] = []
        self.entity_names: list[str] = []
        self.entity_vecs = np.zeros((0, self.dim), dtype=np.float32)
        self.patterns: dict[tuple, dict] = {}
        self.promoted: dict[tuple, float] = {}
        self.profile: dict[str, list[int]] = {}  # key -> [successes, episodes]

    # --- update ------------------------------------------------------------------------------

    def update(self, episode: EpisodeRecorder) -> None:
        units = [u for u in memolib.units(episode) if u.text.strip()]
        host = memolib.host_of(episode.initial_observation, *(u.text for u in units[:2]))
        first = len(self.units)
        if units:
            self.dense.add(memolib.as_matrix(self.toolkit.embed_text([u.text[:1000] for u in units]), self.dim),
                           memolib.scope_of(episode))
        self.units += [(u, host, episode.success, memolib.scope_of(episode)) for u in units]
        self.scopes.add(memolib.scope_of(episode))
        self.unit_entities += [set() for _ in units]
        for key in (f"host:{host}", f"intent:{self._intent(episode.instruction)}"):
            counts = self.profile.setdefault(key, [0, 0])
            counts[0] += int(episode.success)
            counts[1] += 1
        facts = [(head, relation, tail, unit_idx, self._confidence(agreement, episode.reward, tail))
                 for head, relation, tail, unit_idx, agreement in self._extract(episode, units, host)]
        facts = [f for f in facts if f[4] >= CONFIDENCE]  # low-confidence facts stay in the dense store only
        # The episode's new names are embedded in one call (one by one, a conversation's hundreds
        # of names cost a model call each); they are then merged in order, as before.
        fresh = list(dict.fromkeys(n for f in facts for n in (f[0].strip().lower(), f[2].strip().lower())
                                   if not self.graph.has_node(n)))
        vectors = dict(zip(fresh, memolib.as_matrix(self.toolkit.embed_text(fresh), self.dim))) if fresh else {}
        for head, relation, tail, unit_idx, confidence in facts:
            h, t = self._entity(head, vectors), self._entity(tail, vectors)
            row = first + unit_idx
            self.unit_entities[row].update((h, t))
            self._add_edge(h, relation, t, row, episode, confidence)
        self._renormalise()

    @staticmethod
    def _intent(instruction: str) -> str:
        words = memolib.tokens(memolib.generalise(instruction))
        return " ".join(words[:2]) or "task"

    def _extract(self, episode, units, host):
        """(head, relation, tail, unit index, extractor agreement 0..1) triples by rule."""
        out = []
        if memolib.is_conversation(episode):
            for i, u in enumerate(units):
                speaker = u.text.split(":", 1)[0].strip() if ":" in u.text[:40] else "user"
                body = u.text.split(":", 1)[-1]
                for who, value in _RELATION.findall(body):
                    out.append((f"{speaker} {who}", "IS", value.lower(), i, 1.0))
                for name in _NAME.findall(body):
                    out.append((name.lower(), "MENTIONED_BY", speaker.lower(), i, 0.6))
                if u.images:
                    out.append((speaker.lower(), "SHOWED", (u.images[0].caption or "a picture").lower()[:60], i, 0.8))
            return out
        intent = self._intent(episode.instruction)
        if host:
            out.append((intent, "ON_HOST", host, 0, 1.0))
        for i, u in enumerate(units):
            low = u.text.lower()
            for widget in _WIDGETS:
                if widget in low and host:
                    out.append((host, "HAS_WIDGET", widget, i, 0.7))
            if u.error and host:
                out.append((host, "TRAP", memolib.clip(memolib.generalise(u.error), 60).lower(), i, 0.9))
        if episode.success and units:
            signature = " -> ".join(memolib.action_type(u.action) for u in units if u.action)
            out.append((intent, "SOLVED_BY", signature, len(units) - 1, 1.0))
        if episode.final_answer:
            out.append((intent, "ANSWER", memolib.clip(episode.final_answer, 60).lower(), len(units) - 1 if units else 0, 0.8))
        return out

    @staticmethod
    def _confidence(agreement: float, reward: float, tail: str) -> float:
        specificity = min(1.0, len(memolib.tokens(tail)) / 3)
        return _sigmoid(3.0 * agreement + 1.0 * reward + 1.0 * specificity - 2.5)

    def _entity(self, name: str, vectors: dict | None = None) -> str:
        """The canonical entity for `name`, merging aliases at cosine >= ALIAS (`vectors`: names'
        embeddings computed beforehand; a name not among them is embedded here)."""
        name = name.strip().lower()
        if self.graph.has_node(name):
            return name
        known = (vectors or {}).get(name)
        vec = known[None, :] if known is not None else memolib.as_matrix(self.toolkit.embed_text([name]), self.dim)
        if len(self.entity_names):
            best = memolib.cosine_top_k(vec[0], self.entity_vecs, 1)
            if best and best[0][1] >= ALIAS:
                return self.entity_names[best[0][0]]
        self.entity_names.append(name)
        self.entity_vecs = np.vstack([self.entity_vecs, vec])
        self.graph.add_node(name)
        return name

    def _add_edge(self, h, relation, t, row, episode, confidence):
        if self.graph.has_edge(h, t):
            data = self.graph.edges[h, t]
        else:
            self.graph.add_edge(h, t, relation=relation, weight=1.0, rows=[])
            data = self.graph.edges[h, t]
        data["rows"].append(row)
        data["weight"] += ETA if episode.success else -FAILURE_LAMBDA * ETA
        pattern = self.patterns.setdefault((h, relation, t), {"episodes": set(), "conf": [], "wins": 0, "hosts": set()})
        if episode.task_id not in pattern["episodes"]:
            pattern["episodes"].add(episode.task_id)
            pattern["wins"] += int(episode.success)
        pattern["conf"].append(confidence)
        pattern["hosts"].add(memolib.scope_of(episode) or self.units[row][1])
        support = len(pattern["episodes"])
        p_lift = _sigmoid(0.8 * (support - PROMOTE_SUPPORT) + 2.0 * float(np.mean(pattern["conf"]))
                          + 1.5 * pattern["wins"] / support + 0.3 * len(pattern["hosts"]) - 1.5)
        if support >= PROMOTE_SUPPORT and p_lift > PROMOTE_P:
            self.promoted[(h, relation, t)] = p_lift

    def _renormalise(self):
        # w <- w / sqrt(sum w^2), scaled so the mean edge keeps weight ~1 (paths stay comparable)
        weights = [max(0.0, d["weight"]) for _, _, d in self.graph.edges(data=True)]
        norm = math.sqrt(sum(w * w for w in weights)) or 1.0
        scale = math.sqrt(len(weights)) / norm if weights else 1.0
        for _, _, d in self.graph.edges(data=True):
            d["weight"] = max(0.0, d["weight"]) * scale

    # --- retrieve ----------------------------------------------------------------------------

    def route(self, query_entities: list[str], budget_chars: int) -> tuple[str, int, int]:
        """(plan, graph candidates, dense candidates): graph-first when the query touches the
        graph, dense-first otherwise; fewer candidates under a small character budget."""
        touches = any(self.graph.has_node(e) for e in query_entities) or any(
            k[0] in query_entities or k[2] in query_entities for k in self.promoted)
        plan = ROUTER if ROUTER != "auto" else ("graph" if touches else "dense")
        graph_k, dense_k = (40, 24) if plan == "graph" else (24, 40)
        if budget_chars < 5000:  # payload guard: a small budget cannot show many candidates
            graph_k, dense_k = graph_k // 2, dense_k // 2
        return plan, graph_k, dense_k

    def _query_entities(self, task):
        text = re.sub(r"'s\b", "", memolib.query_text(task))  # "Ben's sister" -> "Ben sister"
        names = [n.lower() for n in _NAME.findall(text)]
        words = memolib.tokens(text)
        host = memolib.host_of(task.initial_observation, task.instruction)
        candidates = memolib.dedupe([host, self._intent(task.instruction)] + names + words
                                    + [f"{a} {b}" for a, b in zip(words, words[1:])])
        return [c for c in candidates if c and self.graph.has_node(c)]

    def _graph_scores(self, seeds, hops):
        """Best path weight from any seed entity to each entity within `hops`, halved per hop."""
        best = {s: 1.0 for s in seeds}
        frontier = dict(best)
        for _ in range(hops):
            nxt = {}
            for node, value in frontier.items():
                for _, other, d in list(self.graph.out_edges(node, data=True)) + [
                        (n, o, d) for o, n, d in self.graph.in_edges(node, data=True)]:
                    v = value * min(1.0, d["weight"]) * 0.5
                    if v > best.get(other, 0.0):
                        best[other] = nxt[other] = v
            frontier = nxt
        return best

    def retrieve(self, task: PartialRecorder) -> MemoryPayload:
        budget = memolib.budget_of(task)
        if not self.units:
            return memolib.make_payload([], budget=budget)
        seeds = self._query_entities(task)
        plan, graph_k, dense_k = self.route(seeds, budget.max_chars)
        q = memolib.as_matrix(self.toolkit.embed_text([memolib.query_text(task)]), self.dim)[0]
        ranked, info = self._rank(task, q, seeds, MAX_HOPS - 1, graph_k, dense_k)
        scores = [s for _, s in ranked[:TOP_ITEMS]]
        flat = bool(scores) and max(scores) - min(scores) <= BACKOFF_SPREAD * max(scores)
        if flat or info["disagree"]:
            ranked, info = self._rank(task, q, seeds, MAX_HOPS, int(graph_k * 1.5), int(dense_k * 1.5))
            info["backoff"] = True
        return self._payload(ranked[:TOP_ITEMS], seeds, budget, plan, info)

    def _rank(self, task, q, seeds, hops, graph_k, dense_k):
        dense = dict(self.dense.search(q, dense_k, memolib.scope_of(task)))
        reach = self._graph_scores(seeds, hops) if seeds else {}
        graph = {}
        for entity, value in reach.items():
            for _, _, d in list(self.graph.out_edges(entity, data=True)) + list(self.graph.in_edges(entity, data=True)):
                for row in d["rows"][-graph_k:]:  # the newest provenance of a hub edge is enough
                    graph[row] = max(graph.get(row, 0.0), value)
        scope = memolib.scope_of(task)
        scoped = scope in self.scopes and scope != ""
        graph_rows = [r for r in sorted(graph, key=lambda r: -graph[r])
                      if not scoped or self.units[r][3] == scope][:graph_k]
        rows = memolib.dedupe(list(dense) + graph_rows)
        scored = []
        for row in rows:
            unit, host, _, _ = self.units[row]
            wins, seen = self.profile.get(f"host:{host}", (0, 0))
            s_profile = wins / seen if seen else 0.0
            s = W_GRAPH * graph.get(row, 0.0) + W_DENSE * max(0.0, dense.get(row, 0.0)) + W_PROFILE * s_profile
            scored.append((row, s))
        scored.sort(key=lambda rs: (-rs[1], rs[0]))
        top_dense = set(sorted(dense, key=lambda r: -dense[r])[:5])
        disagree = bool(top_dense) and bool(graph_rows) and not top_dense & set(graph_rows[:5])
        return scored, {"disagree": disagree, "backoff": False}

    def _payload(self, ranked, seeds, budget, plan, info):
        sections = []
        facts = [k for k in self.promoted if k[0] in seeds or k[2] in seeds] or list(self.promoted)[:5]
        keep = [k for k in facts if k[1] != "TRAP"]
        traps = [k for k in facts if k[1] == "TRAP"]
        if keep:
            sections.append("Established facts and strategies:\n" + "\n".join(
                f"- {h} {r} {t} (seen in {len(self.patterns[(h, r, t)]['episodes'])} episodes)" for h, r, t in keep))
        if traps:
            sections.append("Avoid:\n" + "\n".join(f"- on {h}: {t}" for h, _, t in traps))
        lines, images = [], []
        for row, score in ranked:
            unit = self.units[row][0]
            lines.append(f"- [{', '.join(unit.evidence)}] {memolib.clip(unit.text, 500)}")
            images += list(unit.images)
        sections.append("Evidence:\n" + "\n".join(lines))
        evidence = memolib.citations([self.units[row][0] for row, _ in ranked])
        return memolib.make_payload(sections, budget=budget, images=images, evidence=evidence,
                                    extra={"router": plan, "backoff": info["backoff"]})
