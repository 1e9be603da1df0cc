"""Output piped to a file: one line per event, no hard wrapping, no trailing spaces, no progress
bars (ours or a model library's), no leading blank lines, with or without --quiet."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from automemo.measurements.stand_ins.synthetic_run import write_synthetic_run
from automemo.search.display import SearchDisplay

SHIM_SITE = Path(__file__).resolve().parent / "torch_shim_site"
SMALL = ["--option", "users_per_split=1", "--option", "sessions_per_user=3", "--option", "rounds_per_session=16"]


def _automemo(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(SHIM_SITE), os.environ.get("PYTHONPATH", "")])}
    for var in ("HF_HUB_DISABLE_PROGRESS_BARS", "TQDM_DISABLE"):
        env.pop(var, None)
    return subprocess.run([sys.executable, "-m", "automemo", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def _clean(text: str, *, blank_runs: bool = False) -> None:
    assert "\r" not in text
    lines = text.splitlines()
    assert not lines or lines[0].strip(), "output starts with a blank line"
    assert [l for l in lines if l != l.rstrip()] == [], "lines with trailing spaces"
    if not blank_runs:  # (a program's source, as `show` prints it, may hold two blank lines)
        assert "\n\n\n" not in text, "runs of empty lines"


@pytest.mark.parametrize("quiet", [False, True])
def test_eval_piped_to_a_file_is_clean(tmp_path, quiet):
    # A fresh store: the encoder's weights are loaded, which is where a model library draws a bar.
    done = _automemo("eval", "murag", "--benchmark", "minigallery", *SMALL, "--sandbox", "unsafe",
                     "--store", str(tmp_path / "store"), "--workdir", str(tmp_path / "w"),
                     *(["--quiet"] if quiet else []), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    _clean(done.stdout)
    _clean(done.stderr)
    assert "Loading weights" not in done.stderr and "it/s" not in done.stderr
    assert done.stdout.startswith("murag on minigallery")


def test_show_and_tree_piped_to_a_file_have_no_trailing_spaces(tmp_path):
    run = write_synthetic_run(tmp_path, nodes=3, tasks_per_eval=3, screenshots_per_task=1, run_id="s")
    for argv in (["show", str(run.path), "1"], ["tree", str(run.path)]):
        done = _automemo(*argv, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        _clean(done.stdout, blank_runs=True)


def test_search_log_lines_are_not_wrapped_when_piped(capsys):
    display = SearchDisplay()
    outcome = "evaluated " + "a very long outcome that goes on " * 6
    display.step_done(3, 20, outcome, {"node_id": 4, "mean": 0.5, "n": 2, "lcb": 0.25}, {"tokens": 10, "usd": 0.0})
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and outcome.strip() in err


def test_tree_piped_keeps_whole_change_summaries(tmp_path, capsys):
    import json as _json

    from automemo.cli import main
    from automemo.runs import RunDir
    from automemo.runs.journal import StepJournal
    from automemo.runs.records import ActionRecord, EvaluationRecord, NodeRecord, Outcome

    summary = "retrieve by caption and image vector, then rerank with " + "a long explanation " * 10 + "END"
    run = RunDir.create(tmp_path, {"search": {"steps": 1}}, "r")
    step = StepJournal(run, 0)
    (step.node_dir(0) / "program.py").write_text("class Memo: pass\n")
    (step.evaluation_dir(0, 0) / "summary.json").write_text(_json.dumps({"mean": 0.25}))
    step.add_node(NodeRecord(id=0, parent=None, action="root", status="evaluated", summary=summary,
                             program_path="nodes/0/program.py"))
    step.add_evaluation(EvaluationRecord(node_id=0, k=0, mean=0.25, n_scored=4, metrics={},
                                         evidence_dir="nodes/0/evaluations/0"))
    step.commit(ActionRecord(step=0, kind="evaluate_root", node_id=0, outcome=Outcome.EVALUATED))
    assert main(["tree", str(run.path)]) == 0
    out = capsys.readouterr().out
    assert any(line.endswith(summary) for line in out.splitlines()), out
