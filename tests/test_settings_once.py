"""Configuration read once (issue: scores you can trust): every command resolves embedding
settings through `assembly.embedding_config`, the exam command of a run uses that run's
settings, the rule-based diagnosis measures payloads by the run's budget, the active image
encoder is recorded and told, and a deployment serves the memo LLM it was searched with when the
environment holds its key (else says so once)."""

from __future__ import annotations

import json

from automemo.assembly import embedding_config, memo_services, record_image_encoder, task_description
from automemo.cli.exam_cmd import run_settings
from automemo.contract import Budget, MemoryPayload
from automemo.deploy import memo_llm
from automemo.evaluation.result import EvaluationResult, TaskResult
from automemo.meta import build_meta_agent
from automemo.meta.base import ParentView
from automemo.meta.context import GenerationContext
from automemo.meta.rule_diagnosis import rule_based_diagnosis
from automemo.runs import RunDir
from automemo.toolkit.embedding import EmbeddingConfig

CLIP = {"image": "auto", "clip_model": "ViT-B-32", "clip_pretrained": "laion2b_s34b_b79k"}


class _Bench:
    name, family = "facts", "conversation"

    def describe(self):
        return {"name": self.name}


def test_the_exam_of_a_run_uses_the_runs_embedding_settings(tmp_path):
    run = RunDir.create(tmp_path, {"embeddings": {**CLIP, "cache_path": "/elsewhere/cache.sqlite"}}, "r")
    section = run_settings(run.path)["embeddings"]
    assert section["clip_pretrained"] == "laion2b_s34b_b79k"
    assert "cache_path" not in section  # a run's own cache file is never borrowed
    assert embedding_config({"cache_path": "/elsewhere/cache.sqlite"}).cache_path == ""
    services = memo_services(section, run.store_root, persistent=False)
    assert services.encoders.image.name == "open_clip:ViT-B-32:laion2b_s34b_b79k"  # named, not loaded
    assert run_settings(tmp_path) == {}  # a bare episode store: the defaults


def test_the_active_image_encoder_is_recorded_and_told_to_the_meta_agent(tmp_path):
    run = RunDir.create(tmp_path, {"embeddings": {"image": "auto"}}, "r")
    record_image_encoder(run, EmbeddingConfig())
    assert run.config()["embeddings"]["image"] == "perceptual"
    told = task_description(_Bench(), EmbeddingConfig())
    assert "toolkit.embed_image uses the perceptual fallback (no CLIP weights configured)" in told
    clip = task_description(_Bench(), embedding_config(CLIP))
    assert "CLIP (open_clip ViT-B-32, weights laion2b_s34b_b79k)" in clip


def test_the_rule_based_diagnosis_measures_payloads_by_the_runs_budget():
    budget = Budget(max_chars=1000, max_images=1)
    task = TaskResult("t1", "cat", 0.5, payload=MemoryPayload(text="x" * 500))
    evaluation = EvaluationResult(mean=0.5, n_scored=1, per_category={"cat": 0.5}, metrics={}, tasks=(task,))
    parent = ParentView(node_id=0, source="", score=0.5, n_evals=1, evaluation=evaluation)
    diagnosis = rule_based_diagnosis(parent, {"summary": "s", "kind": "perturb"}, seed=0, budget=budget)
    assert any("(50% of the 1000-char budget)" in issue for issue in diagnosis["content_issues"])
    # the offline agent's diagnosis reads the budget its generation context carries
    told = build_meta_agent(None).propose(GenerationContext.build(parent, node_id=1, seed=0, budget=budget))
    assert any("(50% of the 1000-char budget)" in issue for issue in told.diagnosis["content_issues"])


def test_a_deployment_serves_the_memo_llm_it_was_searched_with_or_says_why_not(monkeypatch, capsys):
    manifest = {"config": {"llm": {"memo": {"model": "small-memo", "base_url": "http://127.0.0.1:9/v1",
                                            "api_key_env": "AUTOMEMO_TEST_MEMO_KEY"}}}}
    monkeypatch.delenv("AUTOMEMO_TEST_MEMO_KEY", raising=False)
    assert memo_llm(manifest) is None
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'small-memo'" in err and "$AUTOMEMO_TEST_MEMO_KEY is not set" in err
    monkeypatch.setenv("AUTOMEMO_TEST_MEMO_KEY", "k")
    client = memo_llm(manifest)
    assert client is not None and client.configured("memo")
    assert client.config.memo.model == "small-memo"
    assert memo_llm({"config": {"llm": {}}}) is None and capsys.readouterr().err == ""
    json.dumps(manifest)


def test_a_run_config_from_before_the_time_limits_moved_still_resumes():
    from automemo.config import build_run_config

    config = build_run_config({"evaluation": {"retrieve_timeout_s": 7.0, "update_timeout_s": 9.0}})
    assert config.sandbox.limits.retrieve_timeout_s == 7.0 == config.evaluation.limits.retrieve_timeout_s
    assert config.evaluation.limits.timeout("update") == 9.0
