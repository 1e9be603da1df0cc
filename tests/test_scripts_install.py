"""scripts/install.sh's two profiles: `all` (the tests, CI) and `search` (the quickstart). On a
machine the full install set up, the search profile finds everything it needs and installs
nothing (its packages and modules are a subset); an unknown profile is refused before anything
is installed. apt-get and pip are fakes on PATH that fail, so an attempted install shows."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("apt-get", "sudo"):
        (bin_dir / name).write_text(f"#!/bin/sh\necho 'fake {name} called' >&2\nexit 1\n")
        (bin_dir / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PIP_NO_INDEX": "1"}
    return subprocess.run(["bash", "scripts/install.sh", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_search_profile_needs_nothing_the_full_install_lacks(tmp_path):
    assert _run(tmp_path).returncode == 0  # the machine as the test command installed it
    search = _run(tmp_path, "search")
    assert search.returncode == 0, search.stderr
    assert search.stdout.strip() == "[install] ok" and "fake" not in search.stderr


def test_an_unknown_profile_is_refused_with_the_choices(tmp_path):
    result = _run(tmp_path, "everything")
    assert result.returncode == 2
    assert "unknown profile 'everything'" in result.stderr and "'search'" in result.stderr
    assert "fake" not in result.stderr
