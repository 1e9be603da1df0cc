"""The search loop: step accounting, failed generations, the final choice, LLM caps.

The first tests drive the loop with small in-test doubles of the evaluator, meta agent and exam
(the parts that are NOT under test here) so that every branch of a step is reached on purpose;
the later ones run the real pieces: Mini-Gallery in retrieval mode, the offline parameter
mutator, a real sandbox, and the fake OpenAI-compatible server for the cap test.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest

from automemo.search.view import RunView

from automemo.evaluation.result import EvaluationResult
from automemo.evaluation import read_evidence
from automemo.meta.base import MetaAgent, MetaError, Proposal, ScoredTask
from automemo.runs import RunDir
from automemo.search.config import SearchConfig
from automemo.search.loop import Collaborators, SearchLoop
from automemo.search.tree import Tree

# --- doubles ----------------------------------------------------------------------------------


class _Store:
    def __init__(self, root):
        self.root = root


class ScoreFromSource:
    """Scores a program by the `SCORE = x` line in it: deterministic, no sandbox."""

    def __init__(self, root):
        self.store = _Store(root)
        self.calls = []

    def evaluate(self, source, *, split="train", evidence_dir=None, node_id=None, sample_seed=0):
        self.calls.append(node_id)
        m = re.search(r"SCORE = ([0-9.]+)", source)
        score = float(m.group(1)) if m else 0.1
        return EvaluationResult(mean=score, n_scored=4, per_category={}, metrics={}, tasks=())

    def sample_for_exam(self, n=5, seed=0):
        return [], []


@dataclass(frozen=True)
class _Report:
    passed: bool
    failed_check: str | None = None
    error: str = ""

    def to_dict(self):
        return {"passed": self.passed, "failed_check": self.failed_check, "error": self.error}


def exam_double(source, sandbox, episodes, partials, **kwargs):
    broken = "BROKEN" in source
    return _Report(not broken, "imports" if broken else None, "SyntaxError" if broken else "")


class ScriptedMeta(MetaAgent):
    """Proposes the sources of `script` in order; "META_ERROR" raises MetaError. Repairs replace
    BROKEN by a working line if `repairable`."""

    def __init__(self, script, repairable=False):
        self.script = list(script)
        self.repairable = repairable
        self.repairs = 0

    def propose(self, context):
        source = self.script.pop(0)
        if source == "META_ERROR":
            raise MetaError("invalid JSON twice")
        return Proposal(source=source, summary=f"child {context.node_id}",
                        diagnosis={"parent": context.parent.node_id})

    def repair(self, context):
        self.repairs += 1
        fixed = context.source.replace("BROKEN", "FIXED") if self.repairable else context.source
        return Proposal(source=fixed, summary=f"repair {context.attempt}")

    def initialize(self, task_description, *, node_id, seed):
        raise MetaError("not used")


def _loop(tmp_path, meta, steps, **config):
    run = RunDir.create(tmp_path / "runs", {"search": {"steps": steps}}, "r")
    evaluator = ScoreFromSource(run.store_root)
    parts = Collaborators(evaluator=evaluator, meta=meta, sandbox=None, exam=exam_double)
    cfg = SearchConfig(steps=steps, root="murag", **config)
    return run, evaluator, SearchLoop(run, cfg, parts, quiet=True)


def test_failed_generation_uses_its_step_but_no_evaluation(tmp_path):
    meta = ScriptedMeta(["SCORE = 0.5\nBROKEN", "META_ERROR", "SCORE = 0.6"])
    run, evaluator, loop = _loop(tmp_path, meta, steps=3)
    final = loop.run_search()
    # root, then 3 generations: broken (failed after 3 repairs), meta error, success
    assert [a["kind"] for a in run.actions()] == ["evaluate_root", "generate", "generate", "generate"]
    assert [a["outcome"] for a in run.actions()] == ["evaluated", "failed_exam", "meta_error", "evaluated"]
    assert evaluator.calls == [0, 3]  # only the root and the survivor were fully evaluated
    assert meta.repairs == 3
    nodes = {n["id"]: n for n in run.nodes()}
    assert nodes[1]["status"] == "failed" and nodes[1]["repair_attempts"] == 3
    assert nodes[2]["status"] == "failed" and nodes[2]["failure"].startswith("meta")
    exam_log = run.node_json(1, "exam.json")
    assert [a["attempt"] for a in exam_log] == [0, 1, 2, 3] and not any(a["passed"] for a in exam_log)
    tree = Tree.from_rundir(run)
    assert [v.id for v in tree.stats().nodes] == [0, 3]
    assert tree.node(3).parent_snapshot == pytest.approx(0.1)
    assert final["node_id"] == 3 and final["steps_done"] == 3 and final["stop_reason"] == "steps"
    assert json.loads((run.path / "final.json").read_text()) == final


def test_repair_that_fixes_the_program_lets_it_in(tmp_path):
    meta = ScriptedMeta(["SCORE = 0.4\nBROKEN"], repairable=True)
    run, evaluator, loop = _loop(tmp_path, meta, steps=1)
    loop.run_search()
    node = run.node(1)
    assert node["status"] == "evaluated" and node["repair_attempts"] == 1
    assert "FIXED" in run.program_source(1)
    assert [e["mean"] for e in run.evaluations(1)] == [0.4]


def test_policy_drives_reevaluation_and_final_selection(tmp_path):
    # Two children beat the root; after W = 2 children the policy re-evaluates / expands.
    meta = ScriptedMeta(["SCORE = 0.9", "SCORE = 0.3", "SCORE = 0.95", "SCORE = 0.2", "SCORE = 0.21"])
    run, evaluator, loop = _loop(tmp_path, meta, steps=5)
    final = loop.run_search()
    actions = run.actions()
    assert len(actions) == 6
    for a in actions[1:]:
        chosen = max(a["candidates"], key=lambda c: c["score"])
        assert a["policy_score"] == pytest.approx(chosen["score"])
    tree = Tree.from_rundir(run)
    assert tree.total_evaluations == sum(a["outcome"] == "evaluated" for a in actions)
    lcbs = {c["node_id"]: c["lcb"] for c in final["candidates"]}
    assert final["lcb"] == max(lcbs.values()) and lcbs[final["node_id"]] == final["lcb"]


# --- the real pieces ----------------------------------------------------------------------------

from automemo.config import run_config_to_dict  # noqa: E402
from automemo.resolution import load_run_config  # noqa: E402
from automemo.paths import seed_path  # noqa: E402
from automemo.assembly import build_search  # noqa: E402
from tests.searchtools import SMALL_GALLERY  # noqa: E402


def _real_search(tmp_path, overrides):
    config = load_run_config(overrides={
        "benchmark": {"name": "minigallery", "options": SMALL_GALLERY},
        "sandbox": {"backend": "bwrap"}, "evaluation": {"concurrency": 2}, **overrides,
    }, benchmark_defaults=False)
    run = RunDir.create(tmp_path / "runs", run_config_to_dict(config), "real")
    return run, build_search(run, config, quiet=True)


@pytest.mark.bwrap
def test_offline_search_on_minigallery_grows_the_tree(tmp_path, torch_cpu_shim):
    run, search = _real_search(tmp_path, {"search": {"steps": 3, "seed": 3}})
    try:
        final = search.loop.run_search()
    finally:
        search.close()
    actions = run.actions()
    assert [a["kind"] for a in actions] == ["evaluate_root", "generate", "generate", "generate"]
    nodes = run.nodes()
    root_children = [n for n in nodes if n["parent"] == 0]
    # the first child beats the no-memory root by far; widening still gives the root W children
    assert len(root_children) >= 2 and all(n["status"] == "evaluated" for n in nodes)
    means = {n: [e["mean"] for e in run.evaluations(n)] for n in (0, 1)}
    assert means[0] == [0.0] and means[1][0] > 0.3  # a memory finds the clues, no memory cannot
    lcbs = {c["node_id"]: c["lcb"] for c in final["candidates"]}
    assert final["node_id"] == max(lcbs, key=lambda k: (lcbs[k], -k)) and final["node_id"] != 0
    summary = run.evaluation_result(1, 0)
    assert summary is not None and run.node_json(1, "exam.json")[0]["passed"]
    # The meta agent sees each evaluated program's tasks, scored one by one, as its evidence holds them,
    # with their question text (on which a crossover fits its question router).
    scored = {p.node_id: p for p in search.loop.runner.context.scored_programs(Tree.from_rundir(run))}
    evidence = read_evidence(run.evaluation_dir(1, 0))
    assert scored[1].tasks == {t.result.task_id: ScoredTask(t.result.category, t.result.score, t.episode.instruction)
                               for t in evidence.tasks if t.result.counted}
    assert len(scored[1].tasks) == sum(t.result.counted for t in evidence.tasks) > 0


@pytest.mark.bwrap
def test_usd_cap_mid_step_stops_cleanly_and_selects_from_what_was_evaluated(
    tmp_path, torch_cpu_shim, fake_llm, monkeypatch
):
    murag = seed_path("murag").read_text()
    feedback = {"summary": "s", "memory_relevance": [], "content_issues": [], "structural_issues": [],
                "suggestions": [{"priority": 1, "change": "c", "rationale": "r"}]}

    def answer(request):
        prompt = request["messages"][-1]["content"]
        prompt = prompt if isinstance(prompt, str) else json.dumps(prompt)
        content = ("```json\n" + json.dumps(feedback) + "\n```" if "# Task: diagnose" in prompt
                   else "SUMMARY: dense retrieval\n```python\n" + murag + "```")
        # every call costs 2,000 tokens = $0.02 at the configured price
        return {"content": content, "usage": {"prompt_tokens": 1000, "completion_tokens": 1000}}

    fake_llm.set_handler(answer)
    monkeypatch.setenv("FAKE_META_KEY", "x")
    run, search = _real_search(tmp_path, {
        "search": {"steps": 5},
        "llm": {"meta": {"model": "fake-meta", "base_url": fake_llm.base_url, "api_key_env": "FAKE_META_KEY"},
                "max_usd": 0.05, "prices": {"fake-meta": [10.0, 10.0]}},
    })
    try:
        final = search.loop.run_search()
    finally:
        search.close()
    # step 1: analysis + generate ($0.04). Step 2 starts (under the cap), its analysis reaches
    # $0.06, and its generate call is refused: the step is abandoned, nothing more starts.
    assert [a["kind"] for a in run.actions()] == ["evaluate_root", "generate"]
    assert len(fake_llm.requests) == 3
    assert [n["id"] for n in run.nodes()] == [0, 1]
    assert not run.node_dir(2).exists() and not run.pending_dir.exists()
    assert final["stop_reason"] == "budget" and final["steps_done"] == 1
    assert final["node_id"] == 1 and {c["node_id"] for c in final["candidates"]} == {0, 1}
    assert {r.role: r for r in RunView.load(run).spend}["meta"].usd == pytest.approx(0.06)  # spent money stays on record
    assert run.events()[-1]["kind"] == "stopped" and "USD cap" in run.events()[-1]["message"]
