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

from automemo.evaluation.result import EvaluationResult
from automemo.meta.base import MetaAgent, MetaError, Proposal
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

    def evaluate(self, source, *, split="train", evidence_dir=None, node_id=None):
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

    def propose(self, parent, improvements, *, node_id, seed):
        source = self.script.pop(0)
        if source == "META_ERROR":
            raise MetaError("invalid JSON twice")
        return Proposal(source=source, summary=f"child {node_id}", diagnosis={"parent": parent.node_id})

    def repair(self, source, exam_report, attempt, *, node_id, seed):
        self.repairs += 1
        fixed = source.replace("BROKEN", "FIXED") if self.repairable else source
        return Proposal(source=fixed, summary=f"repair {attempt}")

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
    meta = ScriptedMeta(["SCORE = 0.9", "SCORE = 0.3", "SCORE = 0.95", "SCORE = 0.2", "SCORE = 0.2"])
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
