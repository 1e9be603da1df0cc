"""ReasoningBank: every episode, success or failure, distilled into reusable reasoning items.

Stores: memory items {title, description, content, kind, provenance ids} in a sqlite table, each
embedded (MiniLM) on "task description + title + description" into a faiss index. With the memo
LLM an episode is distilled by prompt into 1-3 items (strategies from successes; failure patterns
and corrective lessons from failures). Without it, deterministic distillation:
- success -> a "strategy" item: the generalised action sequence that worked;
- failure -> a "failure pattern" item per error (what was tried, what went wrong) and a
  "corrective lesson" item naming the step to change;
- conversation round -> a "fact" item holding the round, so user facts become decision rules
  ("remember: ...") cited by round id.

Retrieves: the TOP_K items most similar to the task, successes' strategies and failures' lessons
both kept (ReasoningBank learns from both), formatted as textual guidance, cited best first with
every item's own id before the picture ids they carry (`memolib.citations`); a task naming its
user sees that user's items only. No images (a text-only baseline).

Follows: ReasoningBank as adapted in the AutoMMemo paper (Appendix E).
Approximates: the LLM-as-judge self-assessment of success by the recorded reward, and the
LLM distillation by the rules above when no memo LLM is configured.
"""

from __future__ import annotations

import json

from automemo.contract import EpisodeRecorder, MemoProgram, MemoryPayload, PartialRecorder
from automemo.toolkit import memolib

TOP_K = 6  # tunable: int 1..20
FAILURE_LESSONS = True  # tunable: bool
MAX_ITEMS_PER_EPISODE = 3  # tunable: int 1..8

# The prompt is part of the program (the meta agent may rewrite it), so it lives here.
DISTILL_PROMPT = """You maintain a bank of reusable reasoning strategies for a web/visual agent.
The trajectory below {outcome}. Extract at most {limit} memory items that would help on
*different* future tasks: {focus}. Generalise away task-specific values.
Answer with a JSON list of objects with keys "title", "description", "content".

Task: {instruction}
Trajectory:
{trajectory}
"""


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.dim = toolkit.embedding_dims()["text"]
        self.use_llm = toolkit.has_llm()
        self.index = memolib.ScopedIndex(toolkit.vector_index, self.dim)
        self.items = toolkit.db("reasoning_bank")["items"]

    # --- update ------------------------------------------------------------------------------

    def update(self, episode: EpisodeRecorder) -> None:
        items = self._distil(episode)
        if not items:
            return
        keys = [f"{episode.instruction}\n{i['title']}: {i['description']}" if i["kind"] != "fact"
                else i["content"] for i in items]
        vectors = memolib.as_matrix(self.toolkit.embed_text(keys), self.dim)
        rows = self.index.add(vectors, memolib.scope_of(episode))
        self.items.insert_all(
            [{"id": row, **item, "evidence": json.dumps(item["evidence"])} for row, item in zip(rows, items)],
            pk="id",
        )

    def _distil(self, episode: EpisodeRecorder) -> list[dict]:
        units = memolib.units(episode)
        if memolib.is_conversation(episode):
            return [{"kind": "fact", "title": f"User fact ({u.time or episode.task_id})",
                     "description": memolib.clip(u.text, 120), "content": u.text,
                     "evidence": list(u.evidence)} for u in units if u.text.strip()]
        if not episode.success and not FAILURE_LESSONS:
            return []
        cited = memolib.episode_evidence(episode)[:3]
        if self.use_llm:
            items = self._llm_items(episode, units)
            if items:
                return [{**i, "evidence": cited} for i in items]
        return [{**i, "evidence": cited} for i in self._rule_items(episode, units)][:MAX_ITEMS_PER_EPISODE]

    def _llm_items(self, episode, units) -> list[dict]:
        success = episode.success
        prompt = DISTILL_PROMPT.format(
            outcome="succeeded" if success else "failed",
            limit=MAX_ITEMS_PER_EPISODE,
            focus="the strategies that made it work" if success else
                  "the failure pattern and the corrective lesson (what to do instead)",
            instruction=episode.instruction,
            trajectory="\n".join(memolib.clip(u.text, 300) for u in units),
        )
        reply = self.toolkit.llm(prompt, max_tokens=600, purpose="reasoning_bank distill")
        start, end = reply.find("["), reply.rfind("]")
        try:
            raw = json.loads(reply[start:end + 1]) if start >= 0 else []
        except json.JSONDecodeError:
            return []  # an unparseable reply falls back to the rules, it does not lose the episode
        kind = "strategy" if success else "lesson"
        return [
            {"kind": kind, "title": str(r.get("title", ""))[:200],
             "description": str(r.get("description", ""))[:400], "content": str(r.get("content", ""))[:1500]}
            for r in raw if isinstance(r, dict) and r.get("title")
        ][:MAX_ITEMS_PER_EPISODE]

    @staticmethod
    def _rule_items(episode: EpisodeRecorder, units) -> list[dict]:
        actions = [memolib.generalise(u.action) for u in units if u.action]
        host = memolib.host_of(episode.initial_observation, *(u.text for u in units[:1])) or "this site"
        if episode.success:
            return [{
                "kind": "strategy",
                "title": f"Working approach on {host}",
                "description": f"A sequence that completed a task like: {memolib.clip(memolib.generalise(episode.instruction), 120)}",
                "content": "Steps that worked: " + " -> ".join(actions[:12]),
            }]
        items = []
        for i, unit in enumerate(units):
            if unit.error:
                items.append({
                    "kind": "failure",
                    "title": f"Pitfall on {host}: {memolib.clip(unit.error, 60)}",
                    "description": f"{memolib.clip(memolib.generalise(unit.action), 80)} led to: {memolib.clip(unit.error, 120)}",
                    "content": f"After {' -> '.join(actions[max(0, i - 2):i]) or 'the start'}, "
                               f"'{memolib.generalise(unit.action)}' failed ({unit.error}). Check the page state first.",
                })
        last = actions[-1] if actions else "the first action"
        feedback = episode.judge_feedback or "the task was not completed"
        items.append({
            "kind": "lesson",
            "title": f"Corrective lesson on {host}",
            "description": f"A task like '{memolib.clip(memolib.generalise(episode.instruction), 100)}' failed: {memolib.clip(feedback, 100)}",
            "content": f"Do not repeat: {' -> '.join(actions[-4:]) or 'nothing was done'}. "
                       f"Verify the goal before '{last}' and try another route (site search, filters, menus).",
        })
        return items

    # --- retrieve ----------------------------------------------------------------------------

    def retrieve(self, task: PartialRecorder) -> MemoryPayload:
        budget = memolib.budget_of(task)
        q = memolib.as_matrix(self.toolkit.embed_text([memolib.query_text(task)]), self.dim)[0]
        hits = self.index.search(q, TOP_K, memolib.scope_of(task))
        if not hits:
            return memolib.make_payload([], budget=budget)
        rows = [self.items.get(row) for row, _ in hits]
        headers = {"strategy": "Strategy", "lesson": "Lesson from a failure", "failure": "Pitfall", "fact": "Remember"}
        lines = [f"- [{headers[r['kind']]}] {r['title']}: {r['description']}\n  {r['content']}" for r in rows]
        evidence = memolib.citations([json.loads(r["evidence"]) for r in rows])
        return memolib.make_payload(["Reasoning memory (verify against the current task):\n" + "\n".join(lines)],
                                    budget=budget, evidence=evidence)
