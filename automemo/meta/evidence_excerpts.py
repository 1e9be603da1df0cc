"""What the analysis prompt sees of a parent's evaluation.

From the parent's latest `EvaluationResult` and its evidence directory: 2 successful and 2 failed
retrieve-time trajectories, chosen deterministically from a seed; for each, an observation
summary of at most 50,000 characters and 4 images, and the retrieved payload cut to 20,000
characters and 2 images. The caps are the paper's; they keep one analysis call inside a
model's context whatever the benchmark's episodes look like.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from automemo.contract import EpisodeRecorder, ImageRef, MemoryPayload
from automemo.evaluation.evidence import Evidence as RecordedEvidence
from automemo.evaluation.evidence import TaskEvidence, pick_examples, read_evidence
from automemo.evaluation.result import EvaluationResult
from automemo.meta.config import MetaConfig

_CUT = "\n…[truncated to {n} characters]"


@dataclass(frozen=True)
class EvidenceImage:
    path: Path          # the image file, resolved on the host
    label: str          # how the prompt refers to it, e.g. "task t3, step 2 screenshot"


@dataclass(frozen=True)
class Trajectory:
    task_id: str
    category: str
    outcome: str                                  # "success" | "failure"
    score: float
    error: str | None
    feedback: str
    observation: str                              # bounded observation summary
    observation_images: tuple[EvidenceImage, ...]
    payload: str                                  # bounded payload text + metadata
    payload_images: tuple[EvidenceImage, ...]

    def to_prompt(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "category": self.category,
            "outcome": self.outcome,
            "score": round(self.score, 4),
            "error": self.error,
            "feedback": self.feedback,
            "observation": self.observation,
            "observation_images": [i.label for i in self.observation_images],
            "payload": self.payload,
            "payload_images": [i.label for i in self.payload_images],
        }


@dataclass(frozen=True)
class Evidence:
    """The parent's evaluation, summarised for the analysis prompt."""

    score: float
    n_scored: int
    per_category: Mapping[str, float]
    metrics: Mapping[str, float]
    errors: Mapping[str, int]
    n_successes: int                 # among all scored tasks, not only the ones shown
    n_failures: int
    trajectories: tuple[Trajectory, ...]

    def images(self) -> list[EvidenceImage]:
        """Every image, in the order the prompt lists them (attached to the analysis call)."""
        out: list[EvidenceImage] = []
        for t in self.trajectories:
            out += [*t.observation_images, *t.payload_images]
        return out

    def to_prompt(self) -> dict[str, Any]:
        return {
            "score": round(self.score, 4),
            "n_scored": self.n_scored,
            "per_category": {k: round(v, 4) for k, v in sorted(self.per_category.items())},
            "metrics": {k: round(v, 4) for k, v in sorted(self.metrics.items())},
            "errors": dict(sorted(self.errors.items())),
            "n_successes": self.n_successes,
            "n_failures": self.n_failures,
            "trajectories": [t.to_prompt() for t in self.trajectories],
        }


EMPTY = Evidence(0.0, 0, {}, {}, {}, 0, 0, ())


def clip(text: str, limit: int) -> str:
    """`text` cut so that, marker included, it is at most `limit` characters."""
    if len(text) <= limit:
        return text
    marker = _CUT.format(n=limit)
    return text[: max(0, limit - len(marker))] + marker[: limit]


def select_evidence(
    evaluation: EvaluationResult | None,
    evidence_dir: str | Path | None,
    *,
    seed: int,
    config: MetaConfig = MetaConfig(),
    image_roots: Sequence[Path] = (),
) -> Evidence:
    """The bounded evidence of one evaluation. The trajectories are picked by the evaluation's
    own `pick_examples` (one selection policy for the whole tool, seeded); images resolve in
    the episode store the evidence records, then in `image_roots`."""
    if evaluation is None:
        return EMPTY
    recorded = _recorded(evaluation, evidence_dir)
    roots = ([recorded.store_root] if recorded.store_root else []) + [Path(r) for r in image_roots]
    wins, losses = pick_examples(
        recorded, n_success=config.n_successes, n_failure=config.n_failures, seed=seed
    )
    trajectories = tuple(
        _trajectory(t, outcome, roots, config)
        for outcome, group in (("success", wins), ("failure", losses))
        for t in group
    )
    return Evidence(
        score=evaluation.mean,
        n_scored=evaluation.n_scored,
        per_category=dict(evaluation.per_category),
        metrics=dict(evaluation.metrics),
        errors=dict(evaluation.errors),
        n_successes=sum(1 for t in recorded.tasks if t.success),
        n_failures=sum(1 for t in recorded.tasks if t.failure),
        trajectories=trajectories,
    )


def _recorded(evaluation: EvaluationResult, evidence_dir: str | Path | None) -> RecordedEvidence:
    """The evaluation's evidence on disk, or (none recorded) its task results alone: the meta
    agent then sees scores and payloads without trajectories rather than nothing."""
    if evidence_dir is not None and (Path(evidence_dir) / "summary.json").is_file():
        recorded = read_evidence(evidence_dir)
        # The tasks on disk are the same evaluation's; the scores come from the caller's result.
        return RecordedEvidence(
            directory=recorded.directory,
            result=evaluation,
            store_root=recorded.store_root,
            tasks=recorded.tasks,
        )
    return RecordedEvidence(
        directory=Path(evidence_dir or "."),
        result=evaluation,
        store_root=None,
        tasks=tuple(TaskEvidence(result=t) for t in evaluation.tasks),
    )


def _trajectory(
    task: TaskEvidence, outcome: str, roots: list[Path], config: MetaConfig
) -> Trajectory:
    result, episode = task.result, task.episode
    observation = observation_summary(episode) if episode else "(no trajectory was recorded)"
    if task.traceback:
        # Ahead of the trajectory, so that cutting a long trajectory never loses it.
        observation = f"program traceback:\n{clip(task.traceback, 4_000)}\n---\n{observation}"
    obs_images = _pick_spread(episode.images() if episode else [], config.observation_images)
    payload = result.payload or MemoryPayload()
    return Trajectory(
        task_id=result.task_id,
        category=result.category,
        outcome=outcome,
        score=result.score,
        error=result.error,
        feedback=clip(result.feedback, 2_000),
        observation=clip(observation, config.observation_chars),
        observation_images=_resolve(obs_images, roots, f"task {result.task_id}, observation"),
        payload=clip(payload_summary(payload), config.payload_chars),
        payload_images=_resolve(
            payload.images[: config.payload_images], roots, f"task {result.task_id}, memory"
        ),
    )


def observation_summary(episode: EpisodeRecorder) -> str:
    """A plain-text account of a trajectory: what the agent was asked and saw, each step's
    thought, action, observation and error, and how it ended."""
    lines = [f"instruction: {episode.instruction}"]
    if episode.initial_observation:
        lines.append(f"initial observation:\n{episode.initial_observation}")
    for step in episode.steps:
        lines.append(f"--- step {step.index}")
        if step.thought:
            lines.append(f"thought: {step.thought}")
        if step.action:
            lines.append(f"action: {step.action}")
        if step.observation:
            lines.append(f"observation: {step.observation}")
        if step.error:
            lines.append(f"error: {step.error}")
    lines.append(f"final answer: {episode.final_answer}")
    lines.append(f"reward: {episode.reward}  success: {episode.success}")
    if episode.judge_feedback:
        lines.append(f"judge: {episode.judge_feedback}")
    return "\n".join(lines)


def payload_summary(payload: MemoryPayload) -> str:
    if not payload.text and not payload.metadata and not payload.images:
        return "(empty payload: the program retrieved nothing)"
    parts = [payload.text or "(no text)"]
    if payload.metadata:
        parts.append("metadata: " + json.dumps(payload.metadata, ensure_ascii=False, sort_keys=True))
    return "\n".join(parts)


def _pick_spread(images: list[ImageRef], k: int) -> list[ImageRef]:
    """At most `k` images spread over the episode, first and last kept: the task's own image
    and the final screen say most about what went right or wrong."""
    if len(images) <= k:
        return images
    if k <= 1:
        return images[:k]
    step = (len(images) - 1) / (k - 1)
    return [images[round(i * step)] for i in range(k)]


def _resolve(refs: Sequence[ImageRef], roots: list[Path], label: str) -> tuple[EvidenceImage, ...]:
    out = []
    for i, ref in enumerate(refs, 1):
        for root in roots:
            path = root / ref.path
            if path.is_file():
                out.append(EvidenceImage(path=path, label=f"{label} image {i}"))
                break
    return tuple(out)
