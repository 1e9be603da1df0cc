"""scripts/test.sh stops only a Docker engine it started itself: with one already running (e.g.
from scripts/quickstart.sh, same pid file) it leaves it alone. Exercised with a fake engine and
client on PATH, never the machine's real Docker."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

FAKE_DOCKERD = """#!/bin/sh
touch "$FAKE_ENGINE_UP"
trap 'rm -f "$FAKE_ENGINE_UP"; exit 0' TERM
while :; do sleep 0.2; done
"""
FAKE_DOCKER = """#!/bin/sh
[ "$1" = info ] && [ -f "$FAKE_ENGINE_UP" ]
"""


def _env(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, text in (("dockerd", FAKE_DOCKERD), ("docker", FAKE_DOCKER)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "DOCKER": str(bin_dir / "docker"),
        "DOCKERD": str(bin_dir / "dockerd"),
        "FAKE_ENGINE_UP": str(tmp_path / "engine-up"),
        "DOCKERD_PIDFILE": str(tmp_path / "dockerd.pid"),
        "DOCKERD_LOG": str(tmp_path / "dockerd.log"),
        "DOCKERD_WAIT_S": "20",
    }


def _bash(script: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


# What scripts/test.sh does around the test run (its engine part, then exit).
TEST_RUN = "set -euo pipefail; source scripts/own-dockerd.sh; echo tests-ran"


def test_the_test_run_leaves_an_engine_it_did_not_start_running(tmp_path):
    env = _env(tmp_path)
    quickstart = _bash("bash scripts/start-dockerd.sh", env)  # as scripts/quickstart.sh does
    assert quickstart.returncode == 0, quickstart.stderr
    pid = int((tmp_path / "dockerd.pid").read_text())
    try:
        done = _bash(TEST_RUN, env)
        assert done.returncode == 0 and "tests-ran" in done.stdout, done.stderr
        assert "nothing to start" in done.stdout
        assert (tmp_path / "engine-up").exists()  # the quickstart's engine still answers
        os.kill(pid, 0)
    finally:
        _bash("bash scripts/stop-dockerd.sh", env)
    assert not (tmp_path / "engine-up").exists()


def test_the_test_run_stops_the_engine_it_started(tmp_path):
    env = _env(tmp_path)
    done = _bash(TEST_RUN, env)
    assert done.returncode == 0 and "tests-ran" in done.stdout, done.stderr
    assert "dockerd is up" in done.stdout and "stopped" in done.stdout
    assert not (tmp_path / "engine-up").exists() and not (tmp_path / "dockerd.pid").exists()
