"""MuRAG: multimodal dense retrieval over rounds/steps and their raw images (Mem-Gallery's best).

Stores: one memory unit per dialogue round or web step (its text, image captions, raw image
references, citation ids, session/time tag) and one unit per image (caption + the image itself).
Every unit gets a joint vector: the concatenation of its text embedding (MiniLM) and its image
embedding (CLIP when configured, else the perceptual feature), each weighted, in one faiss
inner-product index, so a unit's score is TEXT_WEIGHT·cos(text) + IMAGE_WEIGHT·cos(image).

Retrieves: embeds the question the same way (instruction + captions as text, question images /
initial screenshot as image), takes the top-K units by inner product (MIPS), returns their text in
chronological order with session/time tags, keeps up to the image budget of raw images from the
best image-bearing units, and cites the units' round/image ids ranked by score. A question
about one user searches only that user's memory (Mem-Gallery keeps one memory per conversation). Below a similarity
floor it adds an explicit "answer Not mentioned" guard (Mem-Gallery's refusal questions).

Follows: MuRAG as run in Mem-Gallery (Bai et al.).
Approximates: the joint vision-language encoder (GME-Qwen2-VL) by concatenating two separate
encoders, so text never matches pixels directly: a text query reaches an image through its
caption and the text of its round, an image query through the image half of the vector.
"""

from __future__ import annotations

import numpy as np

from automemo.contract import EpisodeRecorder, MemoProgram, MemoryPayload, PartialRecorder
from automemo.toolkit import memolib

TOP_K = 10  # tunable: int 1..30
TEXT_WEIGHT = 1.0  # tunable: float 0.0..1.0
IMAGE_WEIGHT = 0.7  # tunable: float 0.0..1.0
IMAGE_UNITS = True  # tunable: bool
ABSTAIN_BELOW = 0.25  # tunable: float 0.0..0.9


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        dims = toolkit.embedding_dims()
        self.text_dim, self.image_dim = dims["text"], dims["image"]
        self.index = memolib.ScopedIndex(toolkit.vector_index, self.text_dim + self.image_dim)
        self.units: list[tuple[memolib.Unit, int]] = []  # (unit, episode update order)
        self.episodes = 0

    # --- update ------------------------------------------------------------------------------

    def update(self, episode: EpisodeRecorder) -> None:
        order = self.episodes
        self.episodes += 1
        units = memolib.episode_units(episode)
        if IMAGE_UNITS:
            units += memolib.image_units(units)
        texts = [memolib.indexed_text(episode, u) for u in units]
        text_vecs = memolib.as_matrix(self.toolkit.embed_text(texts), self.text_dim)
        image_vecs = np.zeros((len(units), self.image_dim), dtype=np.float32)
        with_image = [i for i, u in enumerate(units) if u.images]
        if with_image:
            embedded = self.toolkit.embed_image([units[i].images[0] for i in with_image])
            image_vecs[with_image] = memolib.as_matrix(embedded, self.image_dim)
        joint = np.hstack([TEXT_WEIGHT * text_vecs, IMAGE_WEIGHT * image_vecs])
        self.index.add(joint, memolib.scope_of(episode))
        self.units += [(u, order) for u in units]

    # --- retrieve ----------------------------------------------------------------------------

    def retrieve(self, task: PartialRecorder) -> MemoryPayload:
        budget = memolib.budget_of(task)
        hits = self.index.search(self._query_vector(task), TOP_K, memolib.scope_of(task))
        if not hits:
            return memolib.make_payload([], budget=budget)
        ranked = [(self.units[i][0], self.units[i][1], score) for i, score in hits]
        evidence = memolib.citations([unit for unit, _, _ in ranked])
        images = [img for unit, _, _ in ranked for img in unit.images]
        sections = []
        if ranked[0][2] < ABSTAIN_BELOW:
            sections.append(
                "Memory guard: nothing stored matches this question closely. If the memories "
                "below do not contain the answer, answer \"Not mentioned.\""
            )
        sections.append(memolib.chronological([(unit, order) for unit, order, _ in ranked]))
        return memolib.make_payload(sections, budget=budget, images=images, evidence=evidence)

    def _query_vector(self, task):
        text = memolib.query_text(task)
        q_text = memolib.as_matrix(self.toolkit.embed_text([text]), self.text_dim)
        q_image = np.zeros((1, self.image_dim), dtype=np.float32)
        images = memolib.task_images(task)
        if images:
            vecs = memolib.as_matrix(self.toolkit.embed_image(images), self.image_dim)
            q_image = memolib.as_matrix([vecs.mean(axis=0)], self.image_dim)
        # The weights sit on the stored half only, so the inner product is
        # TEXT_WEIGHT * cos(text) + IMAGE_WEIGHT * cos(image): a unit without an image is not
        # diluted for a text-only question, and an image question adds the visual match.
        return np.hstack([q_text, q_image]).astype(np.float32)[0]
