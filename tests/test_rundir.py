"""Run directory: schema, read API, step commits and recovery from an interrupted step."""

import json
import sqlite3

import pytest

from automemo.llm.ledger import Ledger, LedgerEntry
from automemo.runs import RunDir, RunDirError
from automemo.runs.journal import StepJournal, record_event, recover
from automemo.runs.records import ActionRecord, EvaluationRecord, NodeRecord, Outcome
from automemo.search.tree import Tree
from automemo.search.view import RunView


def _ledger_row(run, role="meta", usd=0.01):
    # The real ledger, on the run's own database, as the LLM client writes it.
    ledger = Ledger(run.db_path)
    ledger.record(LedgerEntry(role=role, model="m", status="ok", node="0", prompt_tokens=10,
                              completion_tokens=5, usd=usd))
    ledger.close()


def _spend(run):
    return {r.role: (r.calls, r.tokens, r.usd) for r in RunView.load(run).spend if r.calls}


def _commit_root(run):
    step = StepJournal(run, 0)
    folder = step.node_dir(0)
    (folder / "program.py").write_text("class Memo: pass\n")
    ev = step.evaluation_dir(0, 0)
    (ev / "summary.json").write_text(json.dumps({"mean": 0.25}))
    step.add_node(NodeRecord(id=0, parent=None, action="root", status="evaluated",
                             summary="no memory", program_path="nodes/0/program.py"))
    step.add_evaluation(EvaluationRecord(node_id=0, k=0, mean=0.25, n_scored=4,
                                         metrics={"recall@10": 0.25}, evidence_dir="nodes/0/evaluations/0"))
    step.commit(ActionRecord(step=0, kind="evaluate_root", node_id=0, outcome=Outcome.EVALUATED))


def test_create_writes_config_and_refuses_to_overwrite(tmp_path):
    run = RunDir.create(tmp_path, {"search": {"steps": 3}, "llm": {"api_key_env": "KEY"}}, "r1")
    assert run.config()["search"]["steps"] == 3
    assert RunDir.open(tmp_path / "r1").config() == run.config()
    assert run.nodes() == [] and run.actions() == [] and run.final() is None
    assert run.last_step() is None
    with pytest.raises(RunDirError, match="already exists"):
        RunDir.create(tmp_path, {}, "r1")
    with pytest.raises(RunDirError, match="not a run directory"):
        RunDir.open(tmp_path)


def test_committed_step_is_readable_with_decoded_json(tmp_path):
    run = RunDir.create(tmp_path, {}, "r")
    _ledger_row(run)
    _commit_root(run)
    assert run.last_step() == 0
    assert run.node(0)["summary"] == "no memory" and run.node(0)["step"] == 0
    assert run.program_source(0) == "class Memo: pass\n"
    (ev,) = run.evaluations(0)
    assert ev["metrics"] == {"recall@10": 0.25} and ev["k"] == 0
    assert run.evaluation_result(0, 0) == {"mean": 0.25}
    (action,) = run.actions()
    assert action["kind"] == "evaluate_root" and action["ledger_rowid"] == 1
    assert _spend(run) == {"meta": (1, 15, 0.01)}
    assert RunView.load(run).outcome_counts == {Outcome.EVALUATED: 1}
    tree = Tree.from_rundir(run)
    assert tree.root.scores == (0.25,) and tree.total_evaluations == 1
    with pytest.raises(KeyError, match="no node 7"):
        run.node(7)


def test_recover_discards_an_uncommitted_step_but_keeps_its_spend_marked(tmp_path):
    run = RunDir.create(tmp_path, {}, "r")
    _commit_root(run)
    # step 1 stages a child and a re-evaluation of the root, spends on the LLM, then "crashes"
    step = StepJournal(run, 1)
    (step.node_dir(1) / "program.py").write_text("x")
    (step.evaluation_dir(0, 1) / "summary.json").write_text("{}")
    step.add_node(NodeRecord(id=1, parent=0, action="generate", status="evaluated", summary="s",
                             program_path="nodes/1/program.py"))
    _ledger_row(run)
    # ... and, worse, a crash between moving the files in and writing the rows
    (run.node_dir(1)).mkdir()
    (run.evaluation_dir(0, 1)).mkdir(parents=True)
    assert recover(run) == 0
    assert not run.pending_dir.exists()
    assert not run.node_dir(1).exists() and not run.evaluation_dir(0, 1).exists()
    assert run.evaluation_dir(0, 0).exists()
    # its spend was real: kept, marked as interrupted, and counted by a resumed client's caps
    assert _spend(run) == {"meta": (1, 15, 0.01)}
    assert [r["interrupted"] for r in Ledger(run.db_path).rows()] == [1]
    assert Ledger(run.db_path).spent() == (15, pytest.approx(0.01))
    assert [n["id"] for n in run.nodes()] == [0]
    # the step can now be redone and committed
    step = StepJournal(run, 1)
    (step.evaluation_dir(0, 1) / "summary.json").write_text("{}")
    step.add_evaluation(EvaluationRecord(node_id=0, k=1, mean=0.5))
    step.commit(ActionRecord(step=1, kind="evaluate", node_id=0, outcome=Outcome.EVALUATED))
    assert [e["k"] for e in run.evaluations(0)] == [0, 1]
    assert Tree.from_rundir(run).root.mean == pytest.approx(0.375)


def test_failed_commit_writes_no_row(tmp_path):
    run = RunDir.create(tmp_path, {}, "r")
    _commit_root(run)
    step = StepJournal(run, 1)
    step.add_evaluation(EvaluationRecord(node_id=0, k=0, mean=0.9))  # duplicate (node, k): rejected
    with pytest.raises(sqlite3.IntegrityError):
        step.commit(ActionRecord(step=1, kind="evaluate", node_id=0, outcome=Outcome.EVALUATED))
    assert run.last_step() == 0 and len(run.evaluations(0)) == 1


def test_budget_stop_event_keeps_spent_ledger_rows(tmp_path):
    run = RunDir.create(tmp_path, {}, "r")
    _commit_root(run)
    _ledger_row(run, usd=0.5)
    record_event(run, "stopped", "budget", {"reason": "usd"}, keep_ledger=True)
    recover(run)
    assert _spend(run)["meta"][2] == 0.5
    assert run.events()[-1]["data"] == {"reason": "usd"} and run.events()[-1]["step"] == 0
