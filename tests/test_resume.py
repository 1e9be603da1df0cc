"""`automemo search --resume` after `kill -9` at several points — during the root's evaluation,
in the middle of a step, and in the middle of the final confirmation — ends with the same node
ids, scores, actions and final.json as an uninterrupted run with the same seed.

The meta agent is the offline parameter mutator and Mini-Gallery's retrieval scoring is
deterministic, so the two runs must agree exactly. The sandbox is real bubblewrap (started with
--die-with-parent, so a killed search leaves no guest behind)."""

from __future__ import annotations

import pytest

from automemo.runs import RunDir
from tests.killtools import kill_when as kill_process_when
from tests.searchtools import outcome, run_search, search_command, search_env, write_config

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]


def kill_when(args: list[str], condition, timeout: float = 300) -> None:
    """Start a search and kill it (and its guests) as soon as `condition()` holds."""
    kill_process_when(search_command(*args), condition, env=search_env(), timeout=timeout)


def committed(run_path) -> int | None:
    if not (run_path / "tree.db").exists():
        return None
    try:
        return RunDir.open(run_path).last_step()
    except Exception:  # the schema is being created this very moment
        return None


def test_resume_rejects_config_flags_and_non_runs(tmp_path):
    result = run_search("--resume", str(tmp_path), "--seed", "3")
    assert result.returncode == 2 and "drop --seed" in result.stderr
    result = run_search("--resume", str(tmp_path))
    assert result.returncode == 2 and "not a run directory" in result.stderr


def test_resume_after_kill_9_matches_an_uninterrupted_run(tmp_path):
    """Killed during the root's evaluation (nothing committed), in the middle of a step and in the
    middle of the final confirmation, with samples that grow (search.question_budget): the resumed
    run asks the same questions, scores and selects the same as an uninterrupted one."""
    steps = 3
    budget = "question_budget = 150\nsample_questions = 4\n"
    config = write_config(tmp_path / "search.toml", steps=steps, backend="bwrap", seed=7, search=budget)
    runs = tmp_path / "runs"
    whole = run_search("--config", str(config), "--runs-dir", str(runs), "--run-id", "whole")
    assert whole.returncode == 0, whole.stderr[-3000:]
    assert "warning" not in whole.stderr, whole.stderr[-3000:]
    reference = outcome(runs / "whole")
    kinds = [a[1] for a in reference["actions"]]
    assert "generate" in kinds and "confirm" in kinds
    assert reference["final"]["questions"]["scored"] <= 150

    args = ["--config", str(config), "--runs-dir", str(runs), "--run-id", "killed"]
    path = runs / "killed"
    resume = ["--resume", str(path)]
    # 1. in the middle of the root's evaluation: nothing is committed yet
    kill_when(args, lambda: (path / ".pending" / "step-0" / "nodes" / "0" / "evaluations").exists())
    assert committed(path) is None
    # 2. in the middle of step 2, once its scratch folder holds files
    mid = path / ".pending" / "step-2"
    kill_when(resume, lambda: mid.exists() and any(mid.iterdir()))
    assert committed(path) == 1 and mid.exists()
    # 3. in the middle of the final confirmation
    confirming = path / ".pending" / f"step-{steps + 1}"
    kill_when(resume, lambda: confirming.exists() and any(confirming.iterdir()))
    assert (committed(path) or 0) <= steps
    # the last resume runs to the end
    done = run_search(*resume)
    assert done.returncode == 0, done.stderr[-3000:]

    assert outcome(path) == reference
    assert not (path / ".pending").exists()
    events = [e["kind"] for e in RunDir.open(path).events()]
    assert events.count("resumed") == 3
