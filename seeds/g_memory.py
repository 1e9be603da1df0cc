"""G-Memory: a three-level graph of insights, task (query) records and interaction traces.

Stores: a networkx graph with three node levels:
- interaction nodes: one per web step / dialogue round (condensed text, embedding, cited ids);
- query nodes: one per episode (instruction, outcome, embedding = the instruction's for web
  episodes, the mean of its rounds' for conversations), linked to their interactions and to
  earlier query nodes with cosine >= QUERY_EDGE (at most QUERY_DEGREE links);
- insight nodes: when a query node joins a neighbourhood of >= INSIGHT_GROUP similar queries,
  an insight is (re)written for that neighbourhood and linked to its queries: by the memo LLM
  when configured, else by rule (success rate, the generalised actions of successes, the errors
  of failures; for conversations, the recurring topics).

Retrieves: the QUERY_K query nodes most similar to the task, expanded HOPS steps along
query-query edges; the insights attached to them; their query-level records; and, among their
interaction nodes, the TRACE_K most similar to the task as condensed traces, cited by id. All
linearised as text; a task naming its user only sees that user's graph. No images.

Follows: G-Memory as adapted in the AutoMMemo paper (Appendix E).
Approximates: the LLM-built insight graph by a similarity neighbourhood and rule-written
insights when no memo LLM is configured.
"""

from __future__ import annotations

import collections

import numpy as np

from automemo.contract import EpisodeRecorder, MemoProgram, MemoryPayload, PartialRecorder
from automemo.toolkit import memolib

QUERY_K = 3  # tunable: int 1..10
HOPS = 1  # tunable: int 0..3
QUERY_EDGE = 0.5  # tunable: float 0.2..0.95
QUERY_DEGREE = 4  # tunable: int 1..12
INSIGHT_GROUP = 3  # tunable: int 2..10
TRACE_K = 10  # tunable: int 1..30

INSIGHT_PROMPT = """These tasks are similar. From their outcomes, write ONE short, general insight
(at most 3 sentences) that would help an agent on the next similar task.
{records}
"""


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.dim = toolkit.embedding_dims()["text"]
        self.use_llm = toolkit.has_llm()
        self.graph = toolkit.graph()
        self.queries = memolib.ScopedIndex(toolkit.vector_index, self.dim)
        self.query_nodes: list[str] = []  # row of `queries` -> node name

    # --- update ------------------------------------------------------------------------------

    def update(self, episode: EpisodeRecorder) -> None:
        units = [u for u in memolib.units(episode) if u.text.strip()]
        conversation = memolib.is_conversation(episode)
        texts = [memolib.clip(u.text, 300) for u in units]  # condensed, as the graph shows them
        # Embedded whole (the encoder reads its window): the same vectors the dense seeds compute,
        # so the run's cache holds each turn once, whichever program embedded it first.
        vectors = memolib.as_matrix(self.toolkit.embed_text([episode.instruction] + [u.text for u in units]), self.dim)
        query_vec = vectors[1:].mean(axis=0) if conversation and units else vectors[0]
        query_vec = memolib.as_matrix([query_vec], self.dim)
        qnode = f"q:{len(self.query_nodes)}"
        outcome = "conversation" if conversation else ("success" if episode.success else "failure")
        self.graph.add_node(qnode, level="query", text=episode.instruction, outcome=outcome,
                            vec=query_vec[0], actions=[memolib.generalise(u.action) for u in units if u.action],
                            errors=[u.error for u in units if u.error], words=memolib.tokens(" ".join(texts)))
        for i, (unit, vec) in enumerate(zip(units, vectors[1:])):
            inode = f"{qnode}:i{i}"
            self.graph.add_node(inode, level="interaction", text=texts[i], vec=vec,
                                evidence=list(unit.evidence), position=unit.position)
            self.graph.add_edge(qnode, inode, kind="contains")
        scope = memolib.scope_of(episode)
        for row, score in self.queries.search(query_vec[0], QUERY_DEGREE, scope):
            if score >= QUERY_EDGE:
                self.graph.add_edge(qnode, self.query_nodes[row], kind="similar", weight=score)
        self.queries.add(query_vec, scope)
        self.query_nodes.append(qnode)
        group = [qnode] + self._query_neighbours(qnode)
        if len(group) >= INSIGHT_GROUP:
            self._write_insight(group)

    def _query_neighbours(self, qnode):
        return [n for n in self.graph.neighbors(qnode) if self.graph.nodes[n]["level"] == "query"]

    def _write_insight(self, group):
        name = "insight:" + min(group)  # one insight per neighbourhood, rewritten as it grows
        nodes = [self.graph.nodes[q] for q in group]
        text = self._llm_insight(nodes) if self.use_llm else ""
        self.graph.add_node(name, level="insight", text=text or self._rule_insight(nodes))
        for q in group:
            self.graph.add_edge(name, q, kind="derived")

    def _llm_insight(self, nodes):
        records = "\n".join(f"- {n['text']} -> {n['outcome']}; actions: {' -> '.join(n['actions'][:8])}" for n in nodes)
        return self.toolkit.llm(INSIGHT_PROMPT.format(records=records), max_tokens=200,
                                purpose="g_memory insight").strip()

    @staticmethod
    def _rule_insight(nodes):
        if all(n["outcome"] == "conversation" for n in nodes):
            words = collections.Counter(w for n in nodes for w in set(n["words"]))
            common = [w for w, c in words.most_common(8) if c > 1]
            return f"Recurring topics across {len(nodes)} related sessions: {', '.join(common) or 'none'}."
        wins = [n for n in nodes if n["outcome"] == "success"]
        parts = [f"{len(wins)}/{len(nodes)} similar tasks succeeded."]
        if wins:
            parts.append("What worked: " + " -> ".join(max(wins, key=lambda n: -len(n["actions"]))["actions"][:8]) + ".")
        errors = memolib.dedupe(e for n in nodes for e in n["errors"])[:3]
        if errors:
            parts.append("Watch out for: " + "; ".join(memolib.clip(e, 80) for e in errors) + ".")
        return " ".join(parts)

    # --- retrieve ----------------------------------------------------------------------------

    def retrieve(self, task: PartialRecorder) -> MemoryPayload:
        budget = memolib.budget_of(task)
        q = memolib.as_matrix(self.toolkit.embed_text([memolib.query_text(task)]), self.dim)[0]
        seeds = [self.query_nodes[row] for row, _ in self.queries.search(q, QUERY_K, memolib.scope_of(task))]
        if not seeds:
            return memolib.make_payload([], budget=budget)
        matched = list(seeds)
        frontier = list(seeds)
        for _ in range(HOPS):
            frontier = [n for f in frontier for n in self._query_neighbours(f) if n not in matched]
            matched += memolib.dedupe(frontier)
        insights = memolib.dedupe(n for m in matched for n in self.graph.neighbors(m)
                                  if self.graph.nodes[n]["level"] == "insight")
        traces = [n for m in matched for n in self.graph.neighbors(m) if self.graph.nodes[n]["level"] == "interaction"]
        if traces:
            scores = np.stack([self.graph.nodes[n]["vec"] for n in traces]) @ q
            traces = [traces[i] for i in memolib.top_indices(scores, TRACE_K)]
        sections = []
        if insights:
            sections.append("Insights:\n" + "\n".join(f"- {self.graph.nodes[n]['text']}" for n in insights))
        sections.append("Related tasks:\n" + "\n".join(
            f"- {self.graph.nodes[m]['text']} ({self.graph.nodes[m]['outcome']})" for m in matched))
        if traces:
            sections.append("Relevant interactions:\n" + "\n".join(
                f"- [{', '.join(self.graph.nodes[n]['evidence'])}] {self.graph.nodes[n]['text']}" for n in traces))
        evidence = memolib.citations([self.graph.nodes[n]["evidence"] for n in traces])
        return memolib.make_payload(sections, budget=budget, evidence=evidence)
