"""XSkill: action-level experiences grounded in what was on screen, plus task-level skills.

Stores:
- experiences: one per step of a successful episode (and, flagged "avoid", per failed step that
  raised an error) or per dialogue round: "situation -> action" text, its screenshot/picture,
  a joint vector [text embedding, VISUAL_WEIGHT * image embedding] in a faiss index;
- skills: one per successful web episode, the instruction with its generalised action workflow,
  keyed by the instruction's embedding; a new skill whose key is within SKILL_MERGE cosine of an
  existing one is merged into it (support + 1, the shorter workflow kept), so recurring task
  families become one skill with evidence of how often it worked.

Retrieves: skills by task text (top SKILL_K); experiences by text and visual context together
(task images / initial screenshot against each experience's screenshot; top EXPERIENCE_K);
returns skills as workflows, experiences as situation -> action hints, the best experiences'
images within the image budget, and cites the experiences' ids: every experience's own id
first, then the picture ids they carry (`memolib.citations`).

Follows: XSkill as adapted in the AutoMMemo paper (Appendix E).
Approximates: the MLLM's extraction of experiences and skills by one unit per step and one
workflow per success; visual grounding by image-embedding similarity.
"""

from __future__ import annotations

import numpy as np

from automemo.contract import EpisodeRecorder, MemoProgram, MemoryPayload, PartialRecorder
from automemo.toolkit import memolib

SKILL_K = 2  # tunable: int 0..8
EXPERIENCE_K = 8  # tunable: int 1..30
VISUAL_WEIGHT = 0.5  # tunable: float 0.0..1.0
SKILL_MERGE = 0.85  # tunable: float 0.5..1.0
KEEP_FAILED_STEPS = True  # tunable: bool


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        dims = toolkit.embedding_dims()
        self.text_dim, self.image_dim = dims["text"], dims["image"]
        self.experience_index = memolib.ScopedIndex(toolkit.vector_index, self.text_dim + self.image_dim)
        self.experiences: list[dict] = []
        self.skill_index = toolkit.vector_index(self.text_dim)
        self.skills: list[dict] = []

    # --- update ------------------------------------------------------------------------------

    def update(self, episode: EpisodeRecorder) -> None:
        conversation = memolib.is_conversation(episode)
        units = [u for u in memolib.units(episode) if u.text.strip()]
        kept = [u for u in units if conversation or episode.success or (KEEP_FAILED_STEPS and u.error)]
        if kept:
            self._add_experiences(episode, kept, conversation)
        if episode.success and not conversation and units:
            self._add_skill(episode, units)

    def _add_experiences(self, episode, units, conversation):
        entries = []
        for u in units:
            if conversation:
                text = u.text
            else:
                situation = memolib.clip(u.text.split("\nACTION:")[0], 200)
                text = f"{episode.instruction} | {situation} -> {u.action}"
            avoid = bool(u.error) and not episode.success
            entries.append({"text": text, "avoid": avoid, "image": u.images[0] if u.images else None,
                            "evidence": list(u.evidence)})
        text_vecs = memolib.as_matrix(self.toolkit.embed_text([e["text"] for e in entries]), self.text_dim)
        image_vecs = np.zeros((len(entries), self.image_dim), dtype=np.float32)
        with_image = [i for i, e in enumerate(entries) if e["image"] is not None]
        if with_image:
            embedded = self.toolkit.embed_image([entries[i]["image"] for i in with_image])
            image_vecs[with_image] = memolib.as_matrix(embedded, self.image_dim)
        self.experience_index.add(np.hstack([text_vecs, VISUAL_WEIGHT * image_vecs]), memolib.scope_of(episode))
        self.experiences += entries

    def _add_skill(self, episode, units):
        workflow = [memolib.generalise(u.action) for u in units if u.action]
        key = memolib.as_matrix(self.toolkit.embed_text([episode.instruction]), self.text_dim)
        best = memolib.faiss_search(self.skill_index, key[0], 1)
        if best and best[0][1] >= SKILL_MERGE:
            skill = self.skills[best[0][0]]
            skill["support"] += 1
            if len(workflow) < len(skill["workflow"]):
                skill["workflow"] = workflow
            return
        self.skill_index.add(key)
        self.skills.append({"task": memolib.generalise(episode.instruction), "workflow": workflow, "support": 1})

    # --- retrieve ----------------------------------------------------------------------------

    def retrieve(self, task: PartialRecorder) -> MemoryPayload:
        budget = memolib.budget_of(task)
        q_text = memolib.as_matrix(self.toolkit.embed_text([memolib.query_text(task)]), self.text_dim)[0]
        q_image = np.zeros(self.image_dim, dtype=np.float32)
        images = memolib.task_images(task)
        if images:
            q_image = memolib.as_matrix(self.toolkit.embed_image(images), self.image_dim).mean(axis=0)
            q_image /= np.linalg.norm(q_image) or 1.0
        sections = []
        skills = [self.skills[i] for i, _ in memolib.faiss_search(self.skill_index, q_text, SKILL_K)]
        if skills:
            sections.append("Skills (task-level workflows that worked):\n" + "\n".join(
                f"- {s['task']} (worked {s['support']}x): {' -> '.join(s['workflow'][:15])}" for s in skills))
        hits = self.experience_index.search(np.concatenate([q_text, q_image]), EXPERIENCE_K, memolib.scope_of(task))
        chosen = [self.experiences[i] for i, _ in hits]
        if chosen:
            sections.append("Experiences (situation -> action; check they match what you see):\n" + "\n".join(
                f"- {'AVOID: ' if e['avoid'] else ''}[{', '.join(e['evidence'])}] {e['text']}" for e in chosen))
        return memolib.make_payload(sections, budget=budget,
                                    images=[e["image"] for e in chosen if e["image"] is not None and not e["avoid"]],
                                    evidence=memolib.citations([e["evidence"] for e in chosen]))
