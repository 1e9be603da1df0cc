"""`automemo eval EXPORT` scores an exported program under the settings of the run that made it
(here a non-default retrieval budget of 2,000 chars and 1 image), says so, and lets flags
override them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from automemo.cli import main as cli_main
from automemo.evaluation.evidence import read_evidence
from automemo.export import export_node
from tests.searchtools import run_search, write_config

BUDGET = "[budget]\nmax_chars = 2000\nmax_images = 1\n"


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("eval-export")
    config = write_config(tmp / "run.toml", steps=1, backend="bwrap", extra=BUDGET)
    done = run_search("--config", str(config), "--runs-dir", str(tmp / "runs"), "--run-id", "r")
    assert done.returncode == 0, done.stderr[-3000:]
    # The offline mutator's first child is a memory seed: it cites evidence and fills payloads.
    return export_node(tmp / "runs" / "r", node_id=1, out_dir=tmp / "export")


def _evaluate(export_dir: Path, tmp_path: Path, *flags: str) -> tuple[dict, list]:
    out = tmp_path / "results.json"
    code = cli_main(["eval", str(export_dir), "--split", "test", "--repeats", "1", "--quiet",
                     "--sandbox", "bwrap", "--store", str(tmp_path / "store"),
                     "--workdir", str(tmp_path / "work"), "--out", str(out), *flags])
    assert code == 0
    tasks = read_evidence(tmp_path / "work" / "repeat-1").result.tasks
    return json.loads(out.read_text()), tasks


@pytest.mark.slow
@pytest.mark.bwrap
def test_eval_of_an_export_uses_the_runs_budget(export_dir, tmp_path, capsys):
    manifest = json.loads((export_dir / "manifest.json").read_text())
    assert manifest["config"]["budget"] == {"max_chars": 2000, "max_images": 1}
    document, tasks = _evaluate(export_dir, tmp_path)
    printed = capsys.readouterr().out
    assert "settings of the export: benchmark minigallery" in printed
    assert "budget max_chars=2000, max_images=1" in printed
    assert document["budget"] == {"max_chars": 2000, "max_images": 1}
    payloads = [t.payload for t in tasks if t.payload is not None]
    assert payloads and max(p.size_chars() for p in payloads) <= 2000
    assert max(len(p.images) for p in payloads) <= 1


@pytest.mark.bwrap
def test_flags_override_the_exports_settings(export_dir, tmp_path, capsys):
    document, tasks = _evaluate(export_dir, tmp_path, "--max-chars", "300")
    printed = capsys.readouterr().out
    assert "overridden by flags: budget max_chars=300" in printed
    assert document["budget"] == {"max_chars": 300, "max_images": 1}
    payloads = [t.payload for t in tasks if t.payload is not None]
    assert payloads and max(p.size_chars() for p in payloads) <= 300
