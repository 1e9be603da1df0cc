"""Trajectory Retrieval: whole past episodes returned as reference cases (text only).

Stores: one textual record per episode in a sqlite table (`records`): the instruction, the
important observations (the first one, those followed by an error, the last one), the action
sequence with intermediate thoughts, the final answer and the outcome. The record's text is
embedded (MiniLM) into a faiss index whose row number is the record id.

Retrieves: the task (instruction + start of the initial observation) is the query; the TOP_K most
similar records are returned as demonstrations, best first, each cut to an equal share of the
character budget. Evidence cites the matched episodes' steps/rounds, best record first, and inside
a record the units with the most query words first; every cited unit's own id comes before the
picture ids they carry (`memolib.citations`). A task that names its user searches only
that user's records. No images (a text-only baseline).

Follows: Trajectory Retrieval as adapted in the AutoMMemo paper (Appendix E; Park et al. 2023,
Xu et al. 2023). Approximates: "important observations" by a rule (first, error,
last) instead of a model's choice.
"""

from __future__ import annotations

import json

from automemo.contract import EpisodeRecorder, MemoProgram, MemoryPayload, PartialRecorder
from automemo.toolkit import memolib

TOP_K = 3  # tunable: int 1..10
OBSERVATION_CHARS = 300  # tunable: int 50..2000
SUCCESS_ONLY = False  # tunable: bool
UNITS_CITED_PER_RECORD = 4  # tunable: int 1..10


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.dim = toolkit.embedding_dims()["text"]
        self.index = memolib.ScopedIndex(toolkit.vector_index, self.dim)
        self.db = toolkit.db("trajectories")
        self.records = self.db["records"]

    def update(self, episode: EpisodeRecorder) -> None:
        if SUCCESS_ONLY and not episode.success and not memolib.is_conversation(episode):
            return
        record = self._record_text(episode)
        units = memolib.units(episode)
        self.records.insert({
            "id": self.index.size,
            "task_id": episode.task_id,
            "text": record,
            "success": episode.success,
            "units": json.dumps([[list(u.evidence), u.text] for u in units]),
        }, pk="id")
        vec = memolib.as_matrix(self.toolkit.embed_text([record]), self.dim)
        self.index.add(vec, memolib.scope_of(episode))

    def _record_text(self, episode: EpisodeRecorder) -> str:
        if memolib.is_conversation(episode):
            lines = [f"Conversation {episode.task_id}:"]
            lines += [f"[{', '.join(u.evidence)}] {u.text}" for u in memolib.units(episode)]
            return "\n".join(lines)
        lines = [f"TASK: {episode.instruction}"]
        if episode.initial_observation:
            lines.append("START: " + memolib.clip(episode.initial_observation, OBSERVATION_CHARS))
        last = len(episode.steps) - 1
        for i, step in enumerate(episode.steps):
            important = i == 0 or i == last or step.error or (
                i + 1 <= last and episode.steps[i + 1].error)
            if important and step.observation:
                lines.append(f"  OBS {step.index}: " + memolib.clip(step.observation, OBSERVATION_CHARS))
            if step.thought:
                lines.append(f"  THOUGHT {step.index}: " + memolib.clip(step.thought, 200))
            lines.append(f"  ACTION {step.index}: {step.action}" + (f"  -> ERROR {step.error}" if step.error else ""))
        if episode.final_answer:
            lines.append(f"ANSWER: {episode.final_answer}")
        outcome = "SUCCESS" if episode.success else "FAILURE"
        lines.append(f"OUTCOME: {outcome} (reward {episode.reward:.2f})"
                     + (f"; judge: {episode.judge_feedback}" if episode.judge_feedback else ""))
        return "\n".join(lines)

    def retrieve(self, task: PartialRecorder) -> MemoryPayload:
        budget = memolib.budget_of(task)
        query = memolib.query_text(task)
        q = memolib.as_matrix(self.toolkit.embed_text([query]), self.dim)[0]
        hits = self.index.search(q, TOP_K, memolib.scope_of(task))
        if not hits:
            return memolib.make_payload([], budget=budget)
        share = max(200, budget.max_chars // (len(hits) + 1))
        q_tokens = memolib.tokens(query)
        sections = ["Reference cases from earlier episodes (most similar first):"]
        cited = []  # each cited unit's ids, own id first
        for rank, (row_id, score) in enumerate(hits, 1):
            row = self.records.get(row_id)
            sections.append(memolib.fit_sections([f"### Case {rank} (similarity {score:.2f})\n{row['text']}"], share))
            cited += self._cited_units(json.loads(row["units"]), q_tokens)
        return memolib.make_payload(sections, budget=budget, evidence=memolib.citations(cited))

    @staticmethod
    def _cited_units(units, q_tokens):
        # A record is one block of text to the agent, but a scorer wants the rounds that answer:
        # cite the record's units with the most query words, ties in order.
        ranked = sorted(enumerate(units), key=lambda iu: (-memolib.overlap(q_tokens, memolib.tokens(iu[1][1])), iu[0]))
        return [ids for _, (ids, _) in ranked[:UNITS_CITED_PER_RECORD]]
