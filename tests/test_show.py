"""`automemo show RUN NODE`: the diagnosis is read as a person reads it (move, issues,
suggestions by priority, memory per task), not dumped as JSON, and a transplant shows the seed
it came from instead of a diff between two unrelated programs."""

from __future__ import annotations

import json

from automemo.cli import main
from automemo.measurements.stand_ins.synthetic_run import write_synthetic_run


def test_the_diagnosis_reads_as_text(tmp_path, capsys):
    run = write_synthetic_run(tmp_path, nodes=3, tasks_per_eval=2, screenshots_per_task=0, run_id="s")
    assert main(["show", str(run.path), "1"]) == 0
    out = capsys.readouterr().out
    assert "move: perturb TOP_K 5→8" in out
    assert "  - retrieval misses the round that holds the answer" in out
    assert "  1. raise TOP_K so the answer round is reached (the answer round ranks 7th)" in out
    assert out.index("  1. raise TOP_K") < out.index("  2. cite image ids")
    assert "  q-3: missing (nothing was retrieved and the task failed)" in out
    assert "meta LLM calls: 2" in out
    assert '"content_issues"' not in out and '"suggestions"' not in out
    assert "+++ node 1" in out  # a perturbation shows its diff


def test_a_transplant_names_its_seed_instead_of_a_diff(tmp_path, capsys):
    run = write_synthetic_run(tmp_path, nodes=3, tasks_per_eval=2, screenshots_per_task=0, run_id="s")
    path = run.node_dir(1) / "diagnosis.json"
    data = json.loads(path.read_text())
    data["diagnosis"]["mutation"] = {"kind": "transplant", "seed": "murag", "summary": "transplant seed murag",
                                     "why": "murag leads on VS, the parent's weakest type"}
    data["usage"] = {}
    path.write_text(json.dumps(data))
    assert main(["show", str(run.path), "1"]) == 0
    out = capsys.readouterr().out
    assert "move: transplant seed murag (murag leads on VS, the parent's weakest type)" in out
    assert "transplanted seed murag (" in out and "seeds/murag.py" in out
    assert "+++ node 1" not in out and "meta LLM calls: none (offline mutator)" in out
