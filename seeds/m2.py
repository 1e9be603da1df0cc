"""M2 (external memory only): an insight bank keyed by the task embedding, top-5 at task start.

Stores: for every successful web episode one entry {instruction, host, MiniLM key of the
instruction, topic-tagged insights, "[page state] -> [action]" summary chain, first screenshot}.
Insights come from the memo LLM with an abstractor prompt over M2's three dimensions (Search &
Filter Strategy, Navigation Efficiency, State Validation) when one is configured, else from rule
mining over the action sequence with values generalised ("<target item>", "<number>"). Failed
episodes are ignored, as in M2. A conversation round becomes an entry of its own whose single
insight is the round (a "[Fact]"), keyed by the round's text.

Retrieves: cosine between the task key (instruction + captions of the initial visual context) and
every entry key, plus IMAGE_FUSION times the cosine of the initial screenshot with the entry's
first screenshot; top TOP_I (5, M2's best) entries; their insights deduplicated and grouped by tag
as "Defensive Hints" to verify against the screen (at most MAX_HINTS); the shortest successful
summary chain of the matches as a plan sketch; up to the image budget of the matches' first
screenshots; the entries' ids cited best first, every entry's own id before the picture ids they
carry (`memolib.citations`). A task that names its user only sees that user's entries.

Follows: M2 (dual memory for web agents) as the AutoMMemo paper adapts it:
the insight bank only, test-time summarisation off. Approximates: the VLM abstractor by rules
when no LLM is configured, and the initial visual context by caption text + image cosine.
"""

from __future__ import annotations

import numpy as np

from automemo.contract import EpisodeRecorder, MemoProgram, MemoryPayload, PartialRecorder
from automemo.toolkit import memolib

TOP_I = 5  # tunable: int 1..15
MAX_HINTS = 15  # tunable: int 3..40
IMAGE_FUSION = 0.2  # tunable: float 0.0..1.0
INSIGHTS_PER_EPISODE = 8  # tunable: int 1..20

# The prompt is part of the program (the meta agent may rewrite it), so it lives here.
ABSTRACTOR_PROMPT = """You distil a successful web-agent trajectory into High-Leverage Interaction Rules.
Write 3 to {limit} rules, one per line, each starting with one tag:
[Search Strategy] (input logic: keywords, exact-match operators, filters),
[Navigation Efficiency] (click logic: anchor elements such as advanced search or breadcrumbs),
[State Validation] (wait/check logic: verify the page changed, fall back when there are no results).
No URL manipulation, no trivial actions; generalise specific values (write "target item").

Task: {instruction}
Trajectory:
{chain}
"""

_TAGS = {
    "Search Strategy": ("type", "fill", "input", "search", "enter", "press", "select", "filter", "sort"),
    "State Validation": ("wait", "check", "verify", "answer", "submit", "done", "stop", "finish", "scroll"),
}


def _tag_of(verb: str) -> str:
    for tag, verbs in _TAGS.items():
        if verb in verbs:
            return tag
    return "Navigation Efficiency"


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        dims = toolkit.embedding_dims()
        self.text_dim, self.image_dim = dims["text"], dims["image"]
        self.use_llm = toolkit.has_llm()
        # M2 searches its bank by brute-force cosine: the keys in a faiss flat index per owner
        # (exact; a served memory adds to it in place), the screenshots in a growing buffer.
        self.keys = memolib.ScopedIndex(toolkit.vector_index, self.text_dim)
        self.shots = memolib.GrowingArray(np.float32, width=self.image_dim)
        self.scope_rows: dict[str, memolib.GrowingArray] = {}  # the entry rows of each owner
        self.entries: list[dict] = []

    # --- update ------------------------------------------------------------------------------

    def update(self, episode: EpisodeRecorder) -> None:
        if memolib.is_conversation(episode):
            entries = [
                {"key": u.text, "insights": [f"[Fact] {memolib.clip(u.text, 400)}"], "chain": [],
                 "evidence": list(u.evidence), "shot": u.images[0] if u.images else None,
                 "success": True}
                for u in memolib.units(episode)
            ]
        elif episode.success:
            chain = self._summary_chain(episode)
            shots = memolib.task_images(episode) + [s.screenshot for s in episode.steps if s.screenshot]
            entries = [{
                "key": episode.instruction, "insights": self._insights(episode, chain),
                "chain": chain, "evidence": memolib.episode_evidence(episode)[:3],
                "shot": shots[0] if shots else None, "success": True,
            }]
        else:
            return  # M2 learns from successes only
        rows = self.keys.add(memolib.as_matrix(self.toolkit.embed_text([e["key"] for e in entries]), self.text_dim),
                             memolib.scope_of(episode))
        shots = np.zeros((len(entries), self.image_dim), dtype=np.float32)
        with_shot = [i for i, e in enumerate(entries) if e["shot"] is not None]
        if with_shot:
            embedded = self.toolkit.embed_image([entries[i]["shot"] for i in with_shot])
            shots[with_shot] = memolib.as_matrix(embedded, self.image_dim)
        self.shots.extend(shots)
        self.entries += entries
        self.scope_rows.setdefault(memolib.scope_of(episode), memolib.GrowingArray(np.int64)).extend(rows)

    @staticmethod
    def _summary_chain(episode: EpisodeRecorder) -> list[str]:
        chain = []
        for step in episode.steps:
            state = memolib.clip(step.observation.splitlines()[0] if step.observation else "page", 80)
            chain.append(f"[{state}] -> [{memolib.clip(step.action, 80)}]")
        return chain

    def _insights(self, episode: EpisodeRecorder, chain: list[str]) -> list[str]:
        if self.use_llm:
            reply = self.toolkit.llm(
                ABSTRACTOR_PROMPT.format(limit=INSIGHTS_PER_EPISODE, instruction=episode.instruction,
                                         chain="\n".join(chain)),
                max_tokens=400, purpose="m2 insight abstractor",
            )
            lines = [line.strip(" -*\t") for line in reply.splitlines()]
            tagged = [line for line in lines if line.startswith("[") and "]" in line]
            if tagged:
                return tagged[:INSIGHTS_PER_EPISODE]
        return self._mined_insights(episode)[:INSIGHTS_PER_EPISODE]

    @staticmethod
    def _mined_insights(episode: EpisodeRecorder) -> list[str]:
        # Rule mining over consecutive actions: each step says what worked after what, with
        # values generalised so it transfers to the next task on the same site.
        out, previous = [], ""
        for step in episode.steps:
            if not step.action:
                continue
            action = memolib.clip(memolib.generalise(step.action), 100)
            verb = memolib.action_type(step.action)
            after = f" (after {memolib.clip(memolib.generalise(previous), 60)})" if previous else " first"
            out.append(f"[{_tag_of(verb)}] {action}{after}")
            previous = step.action
        return memolib.dedupe(out)

    # --- retrieve ----------------------------------------------------------------------------

    def retrieve(self, task: PartialRecorder) -> MemoryPayload:
        budget = memolib.budget_of(task)
        if not self.entries:
            return memolib.make_payload([], budget=budget)
        top = self._top(task)
        chosen = [self.entries[i] for i in top]
        hints = memolib.dedupe(h for e in chosen for h in e["insights"])[:MAX_HINTS]
        grouped: dict[str, list[str]] = {}
        for hint in hints:
            tag, _, body = hint[1:].partition("]")
            grouped.setdefault(tag, []).append(body.strip())
        sections = ["Defensive Hints (verify each against the current screen before relying on it):"]
        sections += [f"[{tag}]\n" + "\n".join(f"- {b}" for b in bodies) for tag, bodies in grouped.items()]
        chains = [e["chain"] for e in chosen if e["chain"]]
        if chains:
            sections.append("Plan sketch from the closest successful task:\n" + "\n".join(min(chains, key=len)))
        images = [e["shot"] for e in chosen if e["shot"] is not None]
        return memolib.make_payload(sections, budget=budget, images=images,
                                    evidence=memolib.citations([e["evidence"] for e in chosen]))

    def _top(self, task: PartialRecorder) -> list[int]:
        """The TOP_I best entries' rows (ties by row), from the task's user's entries if known."""
        q = memolib.as_matrix(self.toolkit.embed_text([memolib.query_text(task)]), self.text_dim)[0]
        scope = memolib.scope_of(task)
        images = memolib.task_images(task)
        if not (IMAGE_FUSION and images):  # text only: the index's own (scoped) search
            hits = sorted(self.keys.search(q, TOP_I + 16, scope), key=lambda h: (-h[1], h[0]))
            return [row for row, _ in hits[:TOP_I]]
        # with the screenshot: both views scored over the (scoped) rows in numpy
        mine = self.scope_rows[scope].view if scope and scope in self.scope_rows else None
        keys, shots = self.keys.matrix, self.shots.view
        qi = memolib.as_matrix(self.toolkit.embed_image(images[-1:]), self.image_dim)[0]
        if mine is None:
            scores = keys @ q + IMAGE_FUSION * (shots @ qi)
            return memolib.top_indices(scores, TOP_I)
        scores = keys[mine] @ q + IMAGE_FUSION * (shots[mine] @ qi)
        return [int(mine[i]) for i in memolib.top_indices(scores, TOP_I)]
