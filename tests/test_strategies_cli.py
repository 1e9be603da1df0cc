"""`automemo search --strategy alma` end to end: runs, resumes to the same outcome as an
uninterrupted run (its parent draws are seeded per step), records its strategy and selection
rule in final.json, and `automemo report` renders it. Offline mutator, small Mini-Gallery,
real bubblewrap sandbox."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.searchtools import outcome, run_search, search_env, write_config

pytestmark = [pytest.mark.bwrap, pytest.mark.slow]


def test_alma_search_runs_resumes_and_reports(tmp_path):
    config = write_config(tmp_path / "search.toml", steps=2, backend="bwrap", seed=4)
    runs = tmp_path / "runs"
    common = ["--config", str(config), "--runs-dir", str(runs), "--strategy", "alma"]
    whole = run_search(*common, "--run-id", "whole")
    assert whole.returncode == 0, whole.stderr[-3000:]
    part = run_search(*common, "--run-id", "part", "--steps", "1")
    assert part.returncode == 0, part.stderr[-3000:]
    resumed = run_search("--resume", str(runs / "part"), "--steps", "2")
    assert resumed.returncode == 0, resumed.stderr[-3000:]

    reference = outcome(runs / "whole")
    assert outcome(runs / "part") == reference
    assert [a[1] for a in reference["actions"]] == ["evaluate_root", "generate", "generate"]
    final = json.loads((runs / "whole" / "final.json").read_text())
    assert (final["strategy"], final["selection"]) == ("alma", "mean")
    best = max(final["candidates"], key=lambda c: (c["mean"], c["n"], -c["node_id"]))
    assert final["node_id"] == best["node_id"]

    report = subprocess.run([sys.executable, "-m", "automemo", "report", str(runs / "whole")],
                            env=search_env(), capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr[-3000:]
    assert (runs / "whole" / "report" / "index.html").is_file()


def test_an_unknown_strategy_is_refused_with_the_choices(tmp_path):
    result = run_search("--strategy", "beam", "--runs-dir", str(tmp_path))
    assert result.returncode == 2 and "invalid choice: 'beam'" in result.stderr
