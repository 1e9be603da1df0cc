"""The meta agent's prompts and evidence: every template renders under StrictUndefined, the
evidence caps of the analysis prompt hold, and the right 2 + 2 trajectories are chosen."""

from __future__ import annotations

import json
from pathlib import Path

import jinja2
import pytest
from PIL import Image

from automemo.meta.config import LLMMetaConfig
from automemo.contract import EpisodeRecorder, MemoryPayload, Step
from automemo.episode_store import EpisodeStore
from automemo.evaluation.evidence import TaskEvidence, episode_rel_path, write_summary, write_task
from automemo.evaluation.result import EvaluationResult, TaskResult
from automemo.meta.llm.analysis import FEEDBACK_SCHEMA
from automemo.meta.base import Improvement
from automemo.meta.config import MetaConfig
from automemo.meta.evidence_excerpts import clip, select_evidence
from automemo.meta.llm.prompts import TEMPLATES, contract_context, improvements_context, render_meta
from automemo.prompting import render

PROGRAM = "class Memo:\n    pass\n"


def _image(store: EpisodeStore, shade: int):
    return store.put_image(Image.new("RGB", (8, 8), (shade, 255 - shade, 7)))


def _episode(store: EpisodeStore, task_id: str, n_steps: int, obs_chars: int) -> EpisodeRecorder:
    steps = [
        Step(index=i, observation=f"[{task_id} step {i}] " + "o" * obs_chars, action=f"click({i})",
             thought="t", screenshot=_image(store, (hash(task_id) + i) % 250))
        for i in range(n_steps)
    ]
    return EpisodeRecorder(
        task_id=task_id, benchmark="toy", instruction=f"do {task_id}",
        task_images=(_image(store, 251),), steps=tuple(steps), reward=0.0,
    )


@pytest.fixture
def evidence_dir(tmp_path: Path) -> tuple[Path, EvaluationResult]:
    """A real evidence directory (the evaluation harness's own writer) for 10 tasks: successes
    s0..s3, plain failures f0..f3, a crashed one c0, an excluded and an uncounted one."""
    store = EpisodeStore(tmp_path / "store")
    folder = tmp_path / "evidence"
    big_payload = "p" * 30_000
    images = tuple(_image(store, 100 + i) for i in range(4))
    spec = [(f"s{i}", 1.0, None) for i in range(4)] + [(f"f{i}", 0.2, None) for i in range(4)]
    spec += [("c0", 0.0, "timeout: retrieve ran past 30 s"), ("x0", 1.0, None), ("u0", 1.0, None)]
    results = []
    for task_id, score, error in spec:
        payload = MemoryPayload(text=big_payload, images=images, metadata={"evidence": ["r1", "r2"]})
        result = TaskResult(
            task_id, "A" if task_id[0] in "sx" else "B", score, payload=payload,
            episode_path=episode_rel_path(task_id), error=error,
            excluded=task_id == "x0", counted=task_id != "u0",
        )
        write_task(folder, TaskEvidence(result=result, episode=_episode(store, task_id, 9, 9_000),
                                        traceback="Traceback: boom" if error else ""))
        results.append(result)
    evaluation = EvaluationResult(
        mean=0.44, n_scored=9, per_category={"A": 1.0, "B": 0.16}, metrics={"recall@10": 0.5},
        tasks=tuple(results), errors={"timeout": 1},
    )
    write_summary(folder, evaluation, store_root=store.root)
    return folder, evaluation


def test_two_successes_and_two_failures_are_chosen_deterministically(evidence_dir):
    folder, evaluation = evidence_dir
    picks = {}
    for seed in range(12):
        ev = select_evidence(evaluation, folder, seed=seed)
        ids = [(t.outcome, t.task_id) for t in ev.trajectories]
        assert [o for o, _ in ids] == ["success", "success", "failure", "failure"]
        assert all(i.startswith("s") for o, i in ids if o == "success")
        failures = [i for o, i in ids if o == "failure"]
        # one failure slot goes to the crashed task, the other to a plain low score
        assert "c0" in failures and sum(i.startswith("f") for i in failures) == 1
        assert not {"x0", "u0"} & {i for _, i in ids}, "excluded/uncounted tasks say nothing"
        assert ev.to_prompt() == select_evidence(evaluation, folder, seed=seed).to_prompt()
        picks[seed] = tuple(ids)
    assert len(set(picks.values())) > 1, "different seeds show different tasks"
    ev = select_evidence(evaluation, folder, seed=0)
    assert (ev.n_successes, ev.n_failures) == (4, 5)


def test_evidence_caps_hold(evidence_dir):
    folder, evaluation = evidence_dir
    config = MetaConfig()
    ev = select_evidence(evaluation, folder, seed=3, config=config)
    for t in ev.trajectories:
        assert len(t.observation) <= 50_000 and "[truncated to 50000 characters]" in t.observation
        assert len(t.payload) <= 20_000 and "[truncated to 20000 characters]" in t.payload
        assert len(t.observation_images) == 4, "10 images per episode, spread to 4"
        assert len(t.payload_images) == 2
        assert all(img.path.is_file() for img in (*t.observation_images, *t.payload_images))
    crashed = next(t for t in ev.trajectories if t.task_id == "c0")
    assert crashed.error.startswith("timeout") and "Traceback: boom" in crashed.observation
    assert len(ev.images()) == 4 * 6
    small = MetaConfig(observation_chars=500, observation_images=1, payload_chars=100, payload_images=0)
    ev = select_evidence(evaluation, folder, seed=3, config=small)
    for t in ev.trajectories:
        assert len(t.observation) <= 500 and len(t.payload) <= 100
        assert len(t.observation_images) == 1 and t.payload_images == ()


def test_evidence_without_a_directory_uses_the_results_alone(evidence_dir):
    _, evaluation = evidence_dir
    ev = select_evidence(evaluation, None, seed=1)
    assert len(ev.trajectories) == 4
    assert all(t.observation.startswith("(no trajectory was recorded)") or t.error for t in ev.trajectories)
    assert ev.images() == [], "no evidence directory: nothing records where images are"
    assert select_evidence(None, None, seed=0).trajectories == ()


def test_clip_never_exceeds_its_limit():
    for limit in (0, 5, 40, 100):
        assert len(clip("x" * 1000, limit)) <= limit
    assert clip("short", 100) == "short"


def _render_all(evidence_prompt, images, improvements):
    ctx = contract_context()
    parent = {"node_id": 2, "score": 0.44, "n_evals": 2, "source": PROGRAM}
    feedback = {"summary": "s", "memory_relevance": [], "content_issues": [], "structural_issues": [],
                "suggestions": [{"priority": 1, "change": "c", "rationale": "r"}]}
    report = {"failed_check": "retrieve", "error": "KeyError: 'x'", "traceback_tail": "File ... line 3"}
    return {
        "meta_analysis": render_meta("meta_analysis", ctx, task_description="answer questions", parent=parent,
                                     evidence=evidence_prompt, image_labels=images, improvements=improvements,
                                     schema=FEEDBACK_SCHEMA),
        "meta_generate": render_meta("meta_generate", ctx, task_description="", parent=parent,
                                     feedback=feedback, improvements=improvements),
        "meta_initialize": render_meta("meta_initialize", ctx, task_description="answer questions"),
        "meta_repair": render_meta("meta_repair", ctx, source=PROGRAM, attempt=1, report=report,
                                   failing_input='{"episode": 1}'),
    }


def test_every_template_renders_and_says_what_it_must(evidence_dir):
    folder, evaluation = evidence_dir
    ev = select_evidence(evaluation, folder, seed=0)
    improvements = improvements_context(
        [Improvement(0, 1, 0.0, 0.3, "transplant murag", diff="+x\n" * 5000),
         Improvement(1, 2, 0.3, 0.35, "TOP_K 10->12"), Improvement(1, 3, 0.3, 0.31, "a"),
         Improvement(2, 4, 0.35, 0.37, "b")],
        MetaConfig(llm=LLMMetaConfig(max_improvements=3, improvement_diff_chars=1000)),
    )
    assert [i["child_id"] for i in improvements] == [1, 2, 4]
    assert len(improvements[0]["diff"]) < 1100
    prompts = _render_all(ev.to_prompt(), [i.label for i in ev.images()], improvements)
    assert set(prompts) == set(TEMPLATES)
    for name, text in prompts.items():
        assert "class Memo(MemoProgram)" in text, name                 # the contract fragment
        assert "def embed_text" in text, name                           # the toolkit API itself
        assert "50000 characters" in text and "2 images" in text, name  # the budget
        assert "# tunable: int 1..30" in text, name                     # the marker format
        assert "ToolkitUnavailable" in text, name                       # deterministic fallback
    analysis = prompts["meta_analysis"]
    for label in ("helpful", "missing", "irrelevant", "redundant", "misleading"):
        assert f'"{label}"' in analysis
    assert "Trajectory 3: task c0" in analysis and "timeout: retrieve ran past 30 s" in analysis
    assert "[24] task" in analysis, "every attached image is listed in order"
    assert "node 0 -> node 1" in analysis and "multimodal dense retrieval" in analysis
    assert "ONE fenced ```python block" in prompts["meta_generate"]
    assert "SUMMARY:" in prompts["meta_initialize"]
    assert "Failed check: retrieve" in prompts["meta_repair"] and "KeyError" in prompts["meta_repair"]
    retry = render("meta_format_retry", problem="no JSON", expected="json")
    assert "no JSON" in retry and "```json" in retry
    assert "```python" in render("meta_format_retry", problem="p", expected="program")


def test_a_missing_variable_is_an_error_not_an_empty_section():
    with pytest.raises(jinja2.UndefinedError):
        render_meta("meta_initialize", contract_context())  # no task_description
    with pytest.raises(jinja2.UndefinedError):
        render_meta("meta_repair", contract_context(), source=PROGRAM, attempt=1, report={})


def test_schema_is_valid_json_schema():
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(FEEDBACK_SCHEMA)
    assert json.loads(json.dumps(FEEDBACK_SCHEMA)) == FEEDBACK_SCHEMA
