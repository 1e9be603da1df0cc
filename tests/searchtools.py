"""Helpers shared by the search tests that run `automemo search` in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from automemo.runs import RunDir

SHIM_SITE = Path(__file__).resolve().parent / "torch_shim_site"

# Small Mini-Gallery: every question type, a few seconds per full evaluation.
SMALL_GALLERY = {"mode": "retrieval", "users_per_split": 2, "sessions_per_user": 2,
                 "rounds_per_session": 24}


def write_config(path: Path, *, steps: int, backend: str, seed: int = 0, root: str = "no_memory",
                 extra: str = "", sweep: bool = False, search: str = "") -> Path:
    """`search`: more lines of the [search] table (e.g. "question_budget = 60\n")."""
    options = ", ".join(f"{k} = {json.dumps(v)}" for k, v in SMALL_GALLERY.items())
    path.write_text(
        f'[benchmark]\nname = "minigallery"\noptions = {{ {options} }}\n\n'
        f'[sandbox]\nbackend = "{backend}"\n\n'
        f'[search]\nsteps = {steps}\nseed = {seed}\nroot = "{root}"\n'
        f'seed_sweep = {str(sweep).lower()}\n{search}\n'
        f"[evaluation]\nconcurrency = 2\n\n{extra}"
    )
    return path


def search_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SHIM_SITE), env.get("PYTHONPATH", "")]))
    env["HF_HUB_OFFLINE"] = "1"
    return env


def search_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "automemo", "search", "--quiet", *args]


def run_search(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(search_command(*args), env=search_env(), capture_output=True,
                          text=True, timeout=timeout)


def outcome(run_path: Path) -> dict:
    """What must be identical between an interrupted-and-resumed run and an uninterrupted one."""
    run = RunDir.open(run_path)
    node_keys = ("id", "parent", "step", "action", "status", "summary", "program_sha256",
                 "parent_snapshot", "repair_attempts", "failure")
    return {
        "nodes": [{k: n[k] for k in node_keys} for n in run.nodes()],
        "evaluations": [(e["node_id"], e["k"], e["step"], e["mean"], e["questions"])
                        for e in run.evaluations()],
        "actions": [(a["step"], a["kind"], a["node_id"], a["child_id"], a["outcome"],
                     a["policy_score"]) for a in run.actions()],
        "final": _without_measurements(run.final()),
        "node_dirs": sorted(int(p.name) for p in (run.path / "nodes").iterdir()),
    }


MEASURED = frozenset({"cost", "cost_front"})
"""final.json's keys that hold what was measured, not chosen: a program's CPU and latency (the
guest's CPU differs from one process to the next); with no cost bound they decide nothing."""


def _without_measurements(value):
    if isinstance(value, dict):
        return {k: _without_measurements(v) for k, v in value.items() if k not in MEASURED}
    if isinstance(value, list):
        return [_without_measurements(v) for v in value]
    return value


def committed_root_run(runs_root: Path, *, steps: int = 1, events: int = 0) -> RunDir:
    """A run directory with only the root committed (a program and one evaluation row), as a
    search leaves it after step 0; no final.json. `events` pads the database to many pages."""
    from automemo.runs.journal import StepJournal
    from automemo.runs.records import ActionRecord, EvaluationRecord, NodeRecord, Outcome

    run = RunDir.create(runs_root, {"search": {"steps": steps}}, "r")
    step = StepJournal(run, 0)
    (step.node_dir(0) / "program.py").write_text("class Memo: pass\n")
    (step.evaluation_dir(0, 0) / "summary.json").write_text(json.dumps({"mean": 0.25}))
    step.add_node(NodeRecord(id=0, parent=None, action="root", status="evaluated",
                             summary="no memory", program_path="nodes/0/program.py"))
    step.add_evaluation(EvaluationRecord(node_id=0, k=0, mean=0.25, n_scored=4, metrics={},
                                         evidence_dir="nodes/0/evaluations/0"))
    for i in range(events):
        step.add_event(f"e{i}", "x" * 400)
    step.commit(ActionRecord(step=0, kind="evaluate_root", node_id=0, outcome=Outcome.EVALUATED))
    return run
