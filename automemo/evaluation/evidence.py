"""Evaluation evidence on disk: written by the harness, read by the meta agent.

Layout of an evidence directory:

    summary.json                 the EvaluationResult, the episode store root, update failures
    tasks/<task>/result.json     score, metrics, error + traceback, tokens, steps, wall time,
                                 retrieve time, infrastructure attempts
    tasks/<task>/payload.json    the payload as given to the agent (after budget truncation)
    tasks/<task>/episode.json    the retrieve-time trajectory; its screenshots and the payload's
                                 images are ImageRefs into the episode store (not copied)

Images stay in the content-addressed store so that evidence costs bytes of JSON, not pixels;
`Evidence.image_path` resolves them.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from automemo.contract import EpisodeRecorder, ImageRef, MemoryPayload
from automemo.episode_store import atomic_write
from automemo.failures import FailureKind
from automemo.evaluation.result import EvaluationResult, TaskResult

SUCCESS_THRESHOLD = 0.5
"""A task scoring at least this counts as a success when picking examples for the meta agent:
binary rewards split at it, and graded ones (recall, F1) read 'mostly right'."""


@dataclass(frozen=True)
class TaskEvidence:
    """Everything recorded about one retrieve task."""

    result: TaskResult
    episode: EpisodeRecorder | None = None
    traceback: str = ""
    retrieve_s: float = 0.0
    attempts: int = 1                       # episode runs, retries after infrastructure errors included
    infra_errors: tuple[str, ...] = ()      # the infrastructure errors met, in order

    @property
    def success(self) -> bool:
        r = self.result
        return r.counted and not r.excluded and r.error is None and r.score >= SUCCESS_THRESHOLD

    @property
    def failure(self) -> bool:
        r = self.result
        return r.counted and not r.excluded and not self.success


@dataclass(frozen=True)
class Evidence:
    directory: Path
    result: EvaluationResult
    store_root: Path | None
    tasks: tuple[TaskEvidence, ...]
    update_failures: tuple[Mapping[str, Any], ...] = field(default_factory=tuple)

    def image_path(self, ref: ImageRef) -> Path:
        if self.store_root is None:
            raise FileNotFoundError(
                f"evidence in {self.directory} records no episode store, so image {ref.path} "
                f"cannot be found"
            )
        return self.store_root / ref.path


# --- (de)serialisation of results ---------------------------------------------------------------


def task_result_to_dict(result: TaskResult) -> dict[str, Any]:
    return dict(
        task_id=result.task_id,
        category=result.category,
        score=result.score,
        metrics=dict(result.metrics),
        counted=result.counted,
        excluded=result.excluded,
        error=result.error,
        payload=result.payload.to_dict() if result.payload is not None else None,
        episode_path=result.episode_path,
        feedback=result.feedback,
        steps=result.steps,
        tokens=result.tokens,
        wall_s=result.wall_s,
        failure=result.failure.value if result.failure is not None else None,
    )


def task_result_from_dict(data: Mapping[str, Any]) -> TaskResult:
    data = dict(data)
    payload = data.pop("payload", None)
    failure = data.pop("failure", None)
    return TaskResult(
        **data, payload=MemoryPayload.from_dict(payload) if payload is not None else None,
        failure=FailureKind(failure) if failure else None,
    )


def result_to_dict(result: EvaluationResult) -> dict[str, Any]:
    return dict(
        mean=result.mean,
        n_scored=result.n_scored,
        per_category=dict(result.per_category),
        metrics=dict(result.metrics),
        tasks=[task_result_to_dict(t) for t in result.tasks],
        excluded=list(result.excluded),
        update_s=result.update_s,
        wall_s=result.wall_s,
        tokens=result.tokens,
        errors=dict(result.errors),
        info=dict(result.info),
        exact=result.exact,
        cost=dict(result.cost),
    )


def result_from_dict(data: Mapping[str, Any]) -> EvaluationResult:
    data = dict(data)
    tasks = tuple(task_result_from_dict(t) for t in data.pop("tasks", []))
    return EvaluationResult(**{**data, "tasks": tasks, "excluded": tuple(data.get("excluded", ()))})


# --- writing ------------------------------------------------------------------------------------


def task_dir_name(task_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in task_id)


def episode_rel_path(task_id: str) -> str:
    return f"tasks/{task_dir_name(task_id)}/episode.json"


def write_task(directory: Path, record: TaskEvidence) -> None:
    folder = directory / "tasks" / task_dir_name(record.result.task_id)
    summary = task_result_to_dict(record.result)
    summary.pop("payload")
    summary.update(
        traceback=record.traceback,
        retrieve_s=record.retrieve_s,
        attempts=record.attempts,
        infra_errors=list(record.infra_errors),
    )
    _write_json(folder / "result.json", summary)
    if record.result.payload is not None:
        _write_json(folder / "payload.json", record.result.payload.to_dict())
    if record.episode is not None:
        atomic_write(folder / "episode.json", record.episode.to_json().encode())


def write_summary(
    directory: Path,
    result: EvaluationResult,
    *,
    store_root: Path | None,
    update_failures: Sequence[Mapping[str, Any]] = (),
) -> Path:
    path = directory / "summary.json"
    _write_json(
        path,
        {
            "result": result_to_dict(result),
            "store_root": str(store_root) if store_root is not None else None,
            "update_failures": [dict(f) for f in update_failures],
        },
    )
    return path


def _write_json(path: Path, value: Any) -> None:
    atomic_write(path, json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True).encode())


# --- reading ------------------------------------------------------------------------------------


def read_evidence(directory: str | Path) -> Evidence:
    directory = Path(directory)
    summary_path = directory / "summary.json"
    if not summary_path.exists():
        raise FileNotFoundError(
            f"{directory} holds no evaluation evidence (no summary.json); pass the evidence_dir "
            f"an evaluation wrote"
        )
    summary = json.loads(summary_path.read_text())
    result = result_from_dict(summary["result"])
    tasks = tuple(_read_task(directory, t) for t in result.tasks)
    store_root = summary.get("store_root")
    return Evidence(
        directory=directory,
        result=result,
        store_root=Path(store_root) if store_root else None,
        tasks=tasks,
        update_failures=tuple(summary.get("update_failures", ())),
    )


def _read_task(directory: Path, result: TaskResult) -> TaskEvidence:
    folder = directory / "tasks" / task_dir_name(result.task_id)
    extra = json.loads((folder / "result.json").read_text()) if (folder / "result.json").exists() else {}
    episode_file = folder / "episode.json"
    episode = EpisodeRecorder.from_json(episode_file.read_text()) if episode_file.exists() else None
    return TaskEvidence(
        result=result,
        episode=episode,
        traceback=extra.get("traceback", ""),
        retrieve_s=extra.get("retrieve_s", 0.0),
        attempts=extra.get("attempts", 1),
        infra_errors=tuple(extra.get("infra_errors", ())),
    )


def pick_examples(
    evidence: Evidence, *, n_success: int = 2, n_failure: int = 2, seed: int = 0
) -> tuple[list[TaskEvidence], list[TaskEvidence]]:
    """Successes and failures for the meta agent's analysis (2 + 2 in the paper), sampled with
    `seed` so that successive reflections on one node see different tasks. Up to half of the
    failures are ones where the program itself broke (an error: the most actionable), the rest
    plain low scores (what the memory failed to help with); either kind fills in for the other."""
    rng = random.Random(seed)
    successes = [t for t in evidence.tasks if t.success]
    failures = [t for t in evidence.tasks if t.failure]
    crashed = [t for t in failures if t.result.error is not None]
    plain = [t for t in failures if t.result.error is None]
    picked = _sample(rng, crashed, (n_failure + 1) // 2)
    picked += _sample(rng, plain, n_failure - len(picked))
    picked += _sample(rng, [t for t in crashed if t not in picked], n_failure - len(picked))
    return _sample(rng, successes, n_success), picked


def _sample(rng: random.Random, items: list[TaskEvidence], n: int) -> list[TaskEvidence]:
    if n <= 0:
        return []
    return rng.sample(items, min(n, len(items)))
