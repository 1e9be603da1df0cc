"""What a node's page shows, gathered through `RunDir` and the evaluation's evidence reader.

Everything on a node page is optional except the program: a failed generation has no
evaluation, the root has no diagnosis or parent, a node of a running search may not have been
evaluated yet, and an evaluation written by an older harness may lack per-task evidence.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from automemo.contract import ContractError, EpisodeRecorder, ImageRef
from automemo.evaluation.breakdown import metric_breakdown
from automemo.evaluation.evidence import Evidence, TaskEvidence, read_evidence, result_from_dict
from automemo.evaluation.result import EvaluationResult, TaskResult
from automemo.programs import DISCOVERED
from automemo.report.config import ReportConfig
from automemo.report.diffs import DiffRow, DiffStats, diff_stats, side_by_side
from automemo.report.media import ImageSink, Thumb
from automemo.runs import RunDir
from automemo.runs.records import DiagnosisRecord
from automemo.search.view import RunView


@dataclass(frozen=True)
class ExamAttemptView:
    attempt: int                 # 0 = the proposal, 1.. = repairs
    passed: bool
    failed_check: str
    error: str
    traceback_tail: str
    failing_input: str           # JSON text, "" when the report names none
    summary: str


@dataclass(frozen=True)
class Suggestion:
    priority: int
    change: str
    rationale: str


@dataclass(frozen=True)
class Relevance:
    task_id: str
    label: str                   # helpful / irrelevant / missing / harmful
    reason: str


@dataclass(frozen=True)
class DiagnosisView:
    """diagnosis.json read for people: what was wrong with the parent, what to change, and the
    move the meta agent made. Whatever the file holds beyond that stays in `raw`."""

    summary: str
    issues: tuple[str, ...]      # content and structural issues, in that order
    suggestions: tuple[Suggestion, ...]
    relevance: tuple[Relevance, ...]
    move: str                    # e.g. "perturb TOP_K 5→8", "transplant seed murag"
    move_why: str
    repair_of: str               # a repair's failed check, "" for a proposal
    calls: int                   # meta LLM calls it took (0: the offline mutator)
    swept: bool                  # a seed the seed sweep transplanted: no meta agent was asked
    raw: str                     # the whole file as JSON, for the curious


@dataclass(frozen=True)
class Transplant:
    seed: str
    why: str
    seed_path: str               # where the run keeps that seed, relative to the run folder
    discovered: bool = False     # the discovered default, not a hand design (kept with the package)


@dataclass(frozen=True)
class TaskRow:
    task_id: str
    category: str
    score: float
    counted: bool
    excluded: bool
    error: str
    feedback: str                # the scorer's note: gold evidence, missed clues, why not counted
    steps: int
    tokens: int
    wall_s: float


@dataclass(frozen=True)
class EvaluationView:
    k: int
    step: int
    mean: float
    n_scored: int
    metrics: Mapping[str, float]
    per_category: Mapping[str, float]
    errors: Mapping[str, Any]
    tokens: int
    wall_s: float
    update_s: float
    tasks: tuple[TaskRow, ...]   # empty when the evaluation left no per-task result
    # Every metric per category, over all questions and all but the adversarial ones
    # (automemo.evaluation.breakdown): row -> {"questions": n, metric: mean}; empty without tasks.
    breakdown: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class Sample:
    """One retrieve task of the latest evaluation: what the memory gave and what happened."""

    task_id: str
    category: str
    score: float
    instruction: str
    payload_text: str
    payload_truncated: bool
    payload_metadata: str        # JSON text
    payload_images: tuple[Thumb, ...]
    screenshots: tuple[Thumb, ...]
    final_answer: str
    error: str
    feedback: str                # the scorer's note (gold evidence, missed clues)
    metrics: Mapping[str, float]
    agent_steps: tuple[str, ...]  # the agent's actions, one line each ("" episode: no agent)


@dataclass(frozen=True)
class NodeDetail:
    id: int
    parent: int | None
    lineage: tuple[int, ...]     # root first, this node last
    children: tuple[int, ...]
    source: str
    diff: tuple[DiffRow, ...]
    diff_stats: DiffStats | None  # None for the root
    diagnosis: DiagnosisView | None  # None for the root (and nodes written without one)
    transplant: Transplant | None  # set when the program is a seed put in place of the parent's
    exam: tuple[ExamAttemptView, ...]
    evaluations: tuple[EvaluationView, ...]
    samples: tuple[Sample, ...]


def gather_node(view: RunView, node_id: int, sink: ImageSink, config: ReportConfig) -> NodeDetail:
    run, node = view.run, view.node(node_id)
    source = _read_text(run.path / node.program_path) if node.program_path else ""
    parent = node.parent
    parent_source = run.program_source(parent) if parent is not None else None
    evaluations, latest = _evaluations(view, node_id)
    raw_diagnosis = run.node_json(node_id, "diagnosis.json")
    return NodeDetail(
        id=node_id,
        parent=parent,
        lineage=tuple(n.id for n in view.lineage(node_id)),
        children=tuple(c.id for c in view.children(node_id)),
        source=source,
        diff=tuple(side_by_side(parent_source, source, context=config.diff_context))
        if parent_source is not None
        else (),
        diff_stats=diff_stats(parent_source, source) if parent_source is not None else None,
        diagnosis=diagnosis_view(raw_diagnosis) if raw_diagnosis else None,
        transplant=transplant_of(raw_diagnosis),
        exam=tuple(_exam_attempt(a) for a in (run.node_json(node_id, "exam.json") or [])),
        evaluations=evaluations,
        samples=_samples(latest, run.store_root, sink, config) if latest else (),
    )


def diagnosis_view(data: Mapping[str, Any]) -> DiagnosisView:
    """Read diagnosis.json (a `DiagnosisRecord`; its diagnosis in the shape of the LLM analysis or
    of the offline mutator's rules) into what a page shows."""
    record = _diagnosis_record(data)
    d = record.diagnosis
    mutation = d.get("mutation") or {}
    return DiagnosisView(
        summary=str(d.get("summary") or ""),
        issues=tuple(str(i) for i in [*(d.get("content_issues") or ()), *(d.get("structural_issues") or ())]),
        suggestions=tuple(
            Suggestion(int(x.get("priority") or 0), str(x.get("change") or ""), str(x.get("rationale") or ""))
            for x in d.get("suggestions") or () if isinstance(x, Mapping)
        ),
        relevance=tuple(
            Relevance(str(x.get("task_id") or ""), str(x.get("label") or ""), str(x.get("reason") or ""))
            for x in d.get("memory_relevance") or () if isinstance(x, Mapping)
        ),
        move=str(mutation.get("summary") or record.summary or ""),
        move_why=str(mutation.get("why") or ""),
        repair_of=str(d.get("repair_of") or ""),
        calls=_meta_calls(record.usage),
        swept=bool(mutation.get("sweep")),
        raw=json.dumps(dict(data), indent=2, ensure_ascii=False, sort_keys=True),
    )


def _diagnosis_record(data: Mapping[str, Any]) -> DiagnosisRecord:
    record = DiagnosisRecord.from_dict({"summary": "", **data})
    # null sections (hand-edited or older files) read as empty
    return dataclasses.replace(record, diagnosis=record.diagnosis or {}, usage=record.usage or {})


def _meta_calls(usage: Any) -> int:
    """LLM calls in diagnosis.json's usage: {"calls": [one tally per attempt, each with its own
    "calls" count]} as the search writes it, or a single tally."""
    calls = usage.get("calls") if isinstance(usage, Mapping) else None
    if isinstance(calls, list):
        return sum(_meta_calls(c) for c in calls)
    return int(calls) if isinstance(calls, (int, float)) else 0


def transplant_of(data: Mapping[str, Any] | None) -> Transplant | None:
    """The seed a transplant child was copied from (diagnosis.json), None for any other move."""
    if not data:
        return None
    mutation = _diagnosis_record(data).diagnosis.get("mutation") or {}
    if mutation.get("kind") != "transplant" or not mutation.get("seed"):
        return None
    seed = str(mutation["seed"])
    if seed == DISCOVERED:
        return Transplant(seed=seed, why=str(mutation.get("why") or ""), seed_path="", discovered=True)
    return Transplant(seed=seed, why=str(mutation.get("why") or ""), seed_path=f"seeds/{seed}.py")


def _read_text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as exc:
        return f"# program not readable: {exc}\n"


def _exam_attempt(entry: Mapping[str, Any]) -> ExamAttemptView:
    report = entry.get("report") or {}
    failing = report.get("failing_input")
    return ExamAttemptView(
        attempt=int(entry.get("attempt", 0)),
        passed=bool(entry.get("passed", report.get("passed", False))),
        failed_check=report.get("failed_check") or "",
        error=report.get("error") or "",
        traceback_tail=report.get("traceback_tail") or "",
        failing_input=json.dumps(failing, indent=2, ensure_ascii=False)[:4000] if failing else "",
        summary=entry.get("summary") or "",
    )


# --- evaluations and their evidence -------------------------------------------------------------


def _evaluations(view: RunView, node_id: int) -> tuple[tuple[EvaluationView, ...], Evidence | None]:
    run = view.run
    views, latest = [], None
    for ev in view.evaluations_of(node_id):
        evidence = _evidence(run, ev)
        result = evidence.result if evidence else _result_only(run, node_id, ev.k)
        if evidence is not None:
            latest = evidence
        views.append(
            EvaluationView(
                k=ev.k,
                step=ev.step,
                mean=ev.mean,
                n_scored=ev.n_scored or 0,
                metrics=dict(ev.metrics),
                per_category=dict(ev.per_category),
                errors=dict(ev.errors),
                tokens=ev.tokens or 0,
                wall_s=ev.wall_s or 0.0,
                update_s=ev.update_s or 0.0,
                tasks=tuple(_task_row(t) for t in result.tasks) if result else (),
                breakdown=metric_breakdown(result).to_dict() if result and result.tasks else {},
            )
        )
    return tuple(views), latest


def _evidence(run: RunDir, ev: Mapping[str, Any]) -> Evidence | None:
    folder = run.path / (ev.evidence_dir or run.evaluation_dir(ev.node_id, ev.k))
    try:
        return read_evidence(folder)
    except (FileNotFoundError, ContractError, KeyError, TypeError, ValueError):
        return None


def _result_only(run: RunDir, node_id: int, k: int) -> EvaluationResult | None:
    """The evaluation's result.json when no per-task evidence was written next to it."""
    data = run.evaluation_result(node_id, k)
    if not data:
        return None
    try:
        return result_from_dict(data)
    except (ContractError, KeyError, TypeError, ValueError):
        return None


def _task_row(t: TaskResult) -> TaskRow:
    return TaskRow(
        task_id=t.task_id,
        category=t.category,
        score=t.score,
        counted=t.counted,
        excluded=t.excluded,
        error=t.error or "",
        feedback=t.feedback or "",
        steps=t.steps,
        tokens=t.tokens,
        wall_s=t.wall_s,
    )


def _samples(
    evidence: Evidence, store_root: Path, sink: ImageSink, config: ReportConfig
) -> tuple[Sample, ...]:
    scored = sorted(
        (t for t in evidence.tasks if t.result.counted and not t.result.excluded),
        key=lambda t: (-t.result.score, t.result.task_id),
    )
    top = config.samples_per_node - config.samples_per_node // 2
    picked = scored[:top] + [t for t in scored[top:][::-1][: config.samples_per_node // 2]]
    roots = [store_root] + ([evidence.store_root] if evidence.store_root else [])
    return tuple(_sample(t, roots, sink, config) for t in picked)


def _sample(t: TaskEvidence, roots: list[Path], sink: ImageSink, config: ReportConfig) -> Sample:
    payload = t.result.payload
    episode: EpisodeRecorder | None = t.episode
    text = payload.text if payload else ""
    shots: list[ImageRef] = []
    if episode is not None:
        every = ([episode.initial_screenshot] if episode.initial_screenshot else []) + [
            s.screenshot for s in episode.steps if s.screenshot
        ]
        n = config.screenshots_per_sample
        shots = every if len(every) <= n else every[: n - 1] + every[-1:] if n > 1 else every[:n]
    return Sample(
        task_id=t.result.task_id,
        category=t.result.category,
        score=t.result.score,
        instruction=episode.instruction if episode else "",
        payload_text=text[: config.payload_chars],
        payload_truncated=len(text) > config.payload_chars,
        payload_metadata=json.dumps(dict(payload.metadata), indent=2, ensure_ascii=False)[:2000]
        if payload and payload.metadata
        else "",
        payload_images=_thumbs(payload.images if payload else (), roots, sink),
        screenshots=_thumbs(shots, roots, sink),
        final_answer=(episode.final_answer or "") if episode else "",
        error=t.result.error or "",
        feedback=t.result.feedback or "",
        metrics=dict(t.result.metrics),
        agent_steps=tuple(_step_line(s) for s in episode.steps[: config.agent_steps_per_sample])
        if episode is not None
        else (),
    )


def _step_line(step: Any) -> str:
    action = str(getattr(step, "action", "") or "")
    thought = str(getattr(step, "thought", "") or "")
    error = str(getattr(step, "error", "") or "")
    line = action + (f" — {thought}" if thought else "")
    return (line + (f" (error: {error})" if error else ""))[:300]


def _thumbs(refs, roots: list[Path], sink: ImageSink) -> tuple[Thumb, ...]:
    out = []
    for ref in refs:
        path = next((r / ref.path for r in roots if (r / ref.path).exists()), None)
        thumb = sink.add(path, ref.caption or "") if path else None
        if thumb is not None:
            out.append(thumb)
    return tuple(out)
