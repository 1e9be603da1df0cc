"""`automemo eval seeds/no_memory.py --benchmark miniwob`, run exactly as docs/miniwob.md tells
a new user to: the installed console script in a subprocess, the agent's OpenAI-compatible
endpoint given by flags (or by the standard OPENAI_* variables), default output locations.
The endpoint is the fake server, scripted to solve click-button and fail enter-text, so the
printed table and the JSON must show one solved and one failed task type."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from automemo.cli import main
from automemo.measurements.stand_ins.fakellm import FakeLLM
from automemo.paths import seed_path

from webpolicy import solves_clicks_only

pytestmark = [pytest.mark.browser, pytest.mark.docker]

# The small split of docs/miniwob.md's first-run command: 2 update and 2 test episodes.
SMALL = [
    "--option", 'tasks=["click-button","enter-text"]',
    "--option", "train_episodes_per_task=2",
    "--option", "test_episodes_per_task=1",
    "--option", "unseen_task_fraction=0",
    "--repeats", "1", "--concurrency", "2",
]


@pytest.fixture(scope="module")
def server():
    with FakeLLM() as fake:
        fake.set_handler(solves_clicks_only)
        yield fake


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory) -> Path:
    """The user's working directory: a checkout's `seeds/no_memory.py` (copied, so that the
    default `runs/` folder lands here and not in the repository)."""
    home = tmp_path_factory.mktemp("user")
    (home / "seeds").mkdir()
    shutil.copy(seed_path("no_memory"), home / "seeds" / "no_memory.py")
    return home


def _automemo(user_dir: Path, *argv: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AUTOMEMO_"))}
    # The default episode store lives under AUTOMEMO_CACHE (~/.cache/automemo otherwise).
    clean["AUTOMEMO_CACHE"] = str(user_dir / "cache")
    return subprocess.run(
        ["automemo", "eval", "seeds/no_memory.py", "--benchmark", "miniwob", *argv, *SMALL],
        cwd=user_dir, env={**clean, **env}, capture_output=True, text=True, timeout=300,
    )


def _row(stdout: str, name: str) -> str:
    match = re.search(rf"^│ {re.escape(name)}\s+│\s+(.+?)\s+│$", stdout, re.MULTILINE)
    assert match, f"no row {name!r} in:\n{stdout}"
    return match.group(1)


def test_eval_with_agent_flags_prints_the_table_and_writes_json(server, user_dir):
    before = len(server.requests)
    run = _automemo(
        user_dir, "--agent-model", "my-model", "--agent-base-url", server.base_url,
        OPENAI_API_KEY="sk-local-placeholder",
    )
    assert run.returncode == 0, run.stderr

    out = run.stdout
    assert "no_memory on miniwob (test split, 1 repeat)" in out
    assert _row(out, "score") == "0.500 ± 0.000"
    assert _row(out, "category click-button") == "1.000 ± 0.000"
    assert _row(out, "category enter-text") == "0.000 ± 0.000"
    assert _row(out, "tasks scored") == "2.0 ± 0.0"
    assert _row(out, "tasks excluded (infrastructure)") == "0.0 ± 0.0"
    assert "program failures" not in out
    written = re.search(r"^results written to (\S+); evidence in (\S+)$", out, re.MULTILINE)
    results, workdir = user_dir / written.group(1), user_dir / written.group(2)
    assert results == workdir / "results.json" and workdir.parent == user_dir / "evals"
    assert workdir.name.endswith("-no_memory")

    doc = json.loads(results.read_text())
    assert doc["program"] == "seeds/no_memory.py" and doc["split"] == "test"
    assert doc["sandbox"] == "docker"  # --sandbox auto takes the running engine
    assert doc["benchmark"]["name"] == "miniwob" and doc["benchmark"]["seen_tasks"] == ["click-button", "enter-text"]
    table = doc["table"]
    assert table["score"]["mean"] == 0.5 and table["n_scored"]["mean"] == 2 and table["excluded"]["mean"] == 0
    assert {c: s["mean"] for c, s in table["per_category"].items()} == {"click-button": 1.0, "enter-text": 0.0}
    assert table["errors"] == {} and table["tokens"]["mean"] > 0
    (evaluation,) = doc["evaluations"]
    assert evaluation["info"]["n_update"] == evaluation["info"]["n_update_applied"] == 2

    # Per-task evidence: the failed task says why (the page's own reward), the solved one clicked.
    tasks = user_dir / evaluation["evidence_dir"] / "tasks"  # paths are as printed: relative to where it ran
    failed = json.loads((tasks / "enter-text_test0" / "result.json").read_text())
    solved = json.loads((tasks / "click-button_test0" / "episode.json").read_text())
    assert failed["score"] == 0.0 and failed["error"] is None and "environment reward -1" in failed["feedback"]
    assert solved["success"] and solved["steps"][0]["action"].startswith("click [")

    # Every agent call went to the given endpoint with the given model: 2 update episodes
    # collected without memory, then the 2 test tasks.
    chats = server.requests[before:]
    assert {r["model"] for r in chats} == {"my-model"} and len(chats) == 4


def test_standard_openai_variables_and_the_shared_store(server, user_dir):
    """OPENAI_BASE_URL / OPENAI_API_KEY select the endpoint when no --agent-base-url is given.
    The default store keeps the update episodes: the same model at the same endpoint reuses
    them and only runs the test tasks; another model plays the update tasks itself."""
    key = {"OPENAI_API_KEY": "sk-local-placeholder"}
    _automemo(user_dir, "--agent-model", "my-model", "--agent-base-url", server.base_url, **key)

    before = len(server.requests)
    same = _automemo(user_dir, "--agent-model", "my-model", OPENAI_BASE_URL=server.base_url, **key)
    assert same.returncode == 0, same.stderr
    assert _row(same.stdout, "score") == "0.500 ± 0.000"
    assert [r["model"] for r in server.requests[before:]] == ["my-model"] * 2

    before = len(server.requests)
    other = _automemo(user_dir, "--agent-model", "other-model", OPENAI_BASE_URL=server.base_url, **key)
    assert other.returncode == 0, other.stderr
    assert [r["model"] for r in server.requests[before:]] == ["other-model"] * 4


def test_no_agent_is_a_clear_error_before_any_browser_starts(user_dir):
    run = _automemo(user_dir)
    assert run.returncode == 2
    assert run.stderr.startswith("automemo: error: miniwob (as configured) needs an LLM web agent")
    assert "--agent-model" in run.stderr and "OPENAI_API_KEY" in run.stderr


@pytest.mark.parametrize(
    "argv, env, message",
    [
        (["--agent-model", "gpt-4o"], {}, "$OPENAI_API_KEY is empty: export the key, or pass --agent-base-url URL"),
        (
            ["--agent-model", "m", "--agent-base-url", "http://127.0.0.1:9/v1"],
            {"MINIWOB_CHROME_BINARY": "/nonexistent/chromium"},
            "chromium not found at /nonexistent/chromium: install Debian's chromium package",
        ),
    ],
    ids=["no-key-for-openai", "no-chromium"],
)
def test_setup_mistakes_are_clear_errors(argv, env, message, monkeypatch, tmp_path, capsys):
    """Not tracebacks, and not a run where every task is quietly excluded."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code = main(["eval", "no_memory", "--benchmark", "miniwob", *argv,
                 "--store", str(tmp_path / "store"), "--workdir", str(tmp_path / "work")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("automemo: error: ") and message in err, err
    assert not (tmp_path / "work").exists()
