"""A search whose meta endpoint is dead: refused by the preflight before anything is evaluated,
or (with the preflight skipped, or an endpoint that dies mid-run) stopped within 3 failed calls by
the circuit breaker. Either way it exits non-zero, prints the `--resume` command, and continues
once the server is up."""

from __future__ import annotations

import itertools
import json
import socket

import pytest

from automemo.measurements.stand_ins.fakellm import FakeLLM
from automemo.paths import SEEDS_DIR
from automemo.runs import RunDir
from tests.searchtools import run_search, write_config

ROOT = (SEEDS_DIR / "no_memory.py").read_text()
FEEDBACK = {"summary": "too many rounds", "memory_relevance": [], "content_issues": [],
            "structural_issues": [], "suggestions": [{"priority": 1, "change": "fewer", "rationale": "r"}]}


_COUNT = itertools.count(1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _meta(request: dict) -> str:
    text = json.dumps(request["messages"][-1]["content"])
    if "diagnose a memo program" in text:
        return "```json\n" + json.dumps(FEEDBACK) + "\n```"
    n = next(_COUNT)  # a different (cheap) child every time
    child = ROOT.replace("return MemoryPayload()", f'return MemoryPayload(text="hint {n}")')
    return f"SUMMARY: hint {n}\n```python\n{child}```\n"


def _dead_meta(port: int) -> str:
    return (f'[llm.meta]\nmodel = "local"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
            "max_retries = 1\nretry_backoff_s = 0.01\nretry_backoff_max_s = 0.02\n")


@pytest.mark.slow
def test_a_dead_meta_endpoint_fails_the_preflight_before_any_evaluation(tmp_path):
    # With the seed sweep on, the first meta call would come only after every seed's evaluation.
    port = _free_port()
    config = write_config(tmp_path / "s.toml", steps=2, backend="bwrap", extra=_dead_meta(port), sweep=True)
    runs = tmp_path / "runs"
    result = run_search("--config", str(config), "--runs-dir", str(runs), "--run-id", "pre")
    assert result.returncode == 1, result.stderr[-3000:]
    run_dir = runs / "pre"
    [error] = [line for line in result.stderr.splitlines() if line.startswith("automemo: error:")]
    assert error.startswith(f"automemo: error: the meta LLM endpoint http://127.0.0.1:{port}/v1 does not "
                            f"answer: no connection"), error
    assert f"automemo search --resume {run_dir}" in error
    run = RunDir.open(run_dir)
    from automemo.llm import Ledger

    assert run.evaluations() == [] and run.actions() == [] and run.nodes() == []
    assert Ledger(run.db_path).rows() == [] and run.final() is None

    run = _resume_with_a_live_endpoint(port, run_dir)
    assert [a["step"] for a in run.actions()] == [0, 1, 2]


def _resume_with_a_live_endpoint(port: int, run_dir) -> RunDir:
    """`--resume` once a meta server answers on the dead port: the run finishes its steps."""
    with FakeLLM(port=port) as fake:
        fake.set_handler(_meta)
        resumed = run_search("--resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    run = RunDir.open(run_dir)
    assert run.final()["stop_reason"] == "steps"
    return run


@pytest.mark.slow
def test_a_dead_meta_endpoint_stops_the_search_and_the_run_resumes(tmp_path):
    # The preflight skipped, the breaker is what stops the run (as for an endpoint dying mid-run).
    port = _free_port()
    config = write_config(tmp_path / "s.toml", steps=3, backend="bwrap", extra=_dead_meta(port))
    runs = tmp_path / "runs"
    result = run_search("--config", str(config), "--runs-dir", str(runs), "--run-id", "dead",
                        "--no-preflight")
    assert result.returncode == 1, result.stderr[-3000:]
    run_dir = runs / "dead"
    assert f"automemo search --resume {run_dir}" in result.stderr
    run = RunDir.open(run_dir)
    from automemo.llm import Ledger

    rows = Ledger(run.db_path).rows()
    assert {r["status"] for r in rows} == {"connection"}
    assert len({r["node"] for r in rows}) == 3 and len(rows) == 6, "3 failed calls of 2 attempts, no more"
    assert run.final()["stop_reason"] == "endpoint"
    assert [a["outcome"] for a in run.actions()] == ["evaluated", "meta_error", "meta_error"]

    run = _resume_with_a_live_endpoint(port, run_dir)
    assert [a["outcome"] for a in run.actions()][3:] == ["evaluated"]
