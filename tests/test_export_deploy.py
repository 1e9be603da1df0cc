"""Export a node of a real (small) search run, then load it in a FRESH Python process with the
Docker sandbox, with the run itself moved away, and get a payload. Plus the clear errors of both
ends: missing run, failed or unevaluated node, a tampered folder, a foreign interface version."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from automemo.cli import main as cli_main
from automemo.deploy import DeployError, load_memory, read_manifest
from automemo.export import ExportError, export_node, sha256_file
from automemo.meta.source.fitted import deployable_source

TESTS = Path(__file__).resolve().parent


def _env() -> dict[str, str]:
    # The subprocess imports sentence-transformers: the test-only torchvision shim goes first.
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS / "torch_shim_site"), env.get("PYTHONPATH")) if p)
    return env


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A real run: Mini-Gallery retrieval mode, the offline mutator, the Docker sandbox, MiniLM;
    the root's evaluation plus one generate step."""
    runs = tmp_path_factory.mktemp("runs")
    cmd = [sys.executable, "-m", "automemo", "search", "--preset", "minigallery", "--steps", "1",
           "--runs-dir", str(runs), "--run-id", "r", "--sandbox", "docker", "--quiet"]
    done = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return runs / "r"


@pytest.mark.slow
@pytest.mark.docker
def test_export_writes_a_self_contained_verified_folder(run_dir, tmp_path):
    out = export_node(run_dir, out_dir=tmp_path / "best")
    final = json.loads((run_dir / "final.json").read_text())
    manifest = read_manifest(out)
    node = final["node_id"]
    assert manifest["node"]["id"] == node
    # The node's program in its deployable form (without cross-fitted tables; most programs have none).
    assert (out / "program.py").read_text() == deployable_source((run_dir / "nodes" / str(node) / "program.py").read_text())
    assert manifest["scores"]["n"] == final["n"]
    assert manifest["scores"]["mean"] == pytest.approx(final["mean"])
    assert manifest["scores"]["lcb"] == pytest.approx(final["lcb"])
    lineage = manifest["lineage"]
    assert lineage[0]["id"] == 0 and lineage[-1]["id"] == node
    if node != 0:  # the offline mutator's transplant beat the no-memory root
        assert lineage[-1]["mean"] > lineage[0]["mean"]
    assert manifest["budget"] == {"max_chars": 50_000, "max_images": 2}
    assert manifest["interface_version"] == "2" and manifest["embeddings"]["text"] == "minilm"
    # The active image encoder is on record: resolved in the run's config, named in the manifest.
    assert manifest["embeddings"]["image"] == "perceptual" == json.loads((run_dir / "config.json").read_text())["embeddings"]["image"]
    assert manifest["image_encoder"].startswith("the perceptual fallback (no CLIP weights configured)")
    assert set(manifest["models"]["configured"]) == {"meta", "agent", "judge", "memo"}

    # the experience: every update episode of the run's collection, in order, with its images
    group = manifest["experience"]["group"]
    collection = json.loads((run_dir / "episodes" / "collections" / f"{group}.json").read_text())
    shipped = [json.loads((out / rel).read_text())["task_id"] for rel in manifest["experience"]["episodes"]]
    assert shipped == collection["task_ids"] and shipped
    images = sorted(p.relative_to(out / "experience") for p in (out / "experience" / "images").rglob("*.png"))
    assert len(images) == manifest["experience"]["n_images"] > 0

    # every file is hashed; the manifest itself is not part of its own list
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.name != "manifest.json")
    assert sorted(manifest["files"]) == files
    assert all(manifest["files"][f] == sha256_file(out / f) for f in files)
    readme = (out / "README.md").read_text()
    assert "load_memory" in readme and f"node {node}" in readme

    # re-exporting into the same folder replaces the earlier export
    assert export_node(run_dir, 0, out) == out and read_manifest(out)["node"]["id"] == 0


@pytest.mark.docker
def test_load_memory_in_a_fresh_process_with_the_sandbox(run_dir, tmp_path):
    out = export_node(run_dir, out_dir=tmp_path / "exported")
    moved = run_dir.with_name("r-moved-away")
    script = textwrap.dedent(
        """
        import json, sys
        from automemo.contract import EpisodeRecorder, PartialRecorder, Step
        from automemo.deploy import load_memory

        question = "Which photo did I share when we talked about my trip?"
        with load_memory(sys.argv[1]) as memory:          # sandbox="auto": Docker here
            first = memory.retrieve(PartialRecorder(task_id="q1", benchmark="minigallery", instruction=question))
            memory.update(EpisodeRecorder(
                task_id="new-session", benchmark="minigallery", instruction="a new conversation",
                steps=(Step(index=0, observation="User: my trip was to the red lighthouse"),),
                metadata={"conversation": True}))
            second = memory.retrieve(PartialRecorder(task_id="q2", benchmark="minigallery", instruction=question))
            print(json.dumps({"first": first.to_dict(), "second": second.to_dict(),
                              "failures": memory.update_failures}))
        """
    )
    shutil.move(run_dir, moved)  # nothing of the run may be needed
    try:
        done = subprocess.run([sys.executable, "-c", script, str(out)], env=_env(), cwd=tmp_path,
                              capture_output=True, text=True, timeout=600)
    finally:
        shutil.move(moved, run_dir)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    first = result["first"]
    assert result["failures"] == []
    assert len(result["second"]["images"]) <= 2, "updates after loading keep the budget too"
    node = read_manifest(out)["node"]["id"]
    if node != 0:  # a memory program: the warm memory answers from the shipped experience
        assert first["text"] or first["metadata"].get("evidence")
        assert len(first["images"]) <= 2 and len(first["text"]) <= 50_000
        evidence = first["metadata"].get("evidence", [])
        episodes = {json.loads(p.read_text())["task_id"] for p in (out / "experience" / "episodes").rglob("*.json")}
        assert evidence and all(any(e.startswith(ep) for ep in episodes) for e in evidence[:3]), evidence


@pytest.mark.docker
def test_a_tampered_or_foreign_export_is_refused(run_dir, tmp_path):
    out = export_node(run_dir, out_dir=tmp_path / "e")
    program = out / "program.py"
    original = program.read_text()
    program.write_text(original + "\n# edited\n")
    with pytest.raises(DeployError, match=r"program.py was modified"):
        load_memory(out, unsafe=True)
    program.write_text(original)
    episode = next((out / "experience" / "episodes").rglob("*.json"))
    episode.unlink()
    with pytest.raises(DeployError, match=rf"{episode.name} is missing"):
        read_manifest(out)
    out = export_node(run_dir, out_dir=tmp_path / "e")
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**manifest, "interface_version": "0"}))
    with pytest.raises(DeployError, match=r"interface version '0', this automemo speaks version '2' \(and loads 1, 2\)"):
        load_memory(out, unsafe=True)
    with pytest.raises(DeployError, match="not an exported memo program"):
        load_memory(tmp_path)
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DeployError, match="unsafe=True in load_memory"):
        load_memory(out, sandbox="unsafe")


@pytest.mark.docker
def test_export_errors_say_what_is_wrong(run_dir, tmp_path, capsys):
    with pytest.raises(ExportError, match="run directory .*nope not found"):
        export_node(tmp_path / "nope", out_dir=tmp_path / "x")
    with pytest.raises(ExportError, match="has no node 99"):
        export_node(run_dir, 99, tmp_path / "x")
    broken = tmp_path / "broken-run"
    shutil.copytree(run_dir, broken)
    conn = sqlite3.connect(broken / "tree.db")
    with conn:
        conn.execute("UPDATE nodes SET status = 'failed', failure = 'exam: retrieve: boom' WHERE id = 1")
        conn.execute("DELETE FROM evaluations WHERE node_id = 0")
    conn.close()
    with pytest.raises(ExportError, match="node 1 .* failed generation \\(exam: retrieve: boom\\)"):
        export_node(broken, 1, tmp_path / "x")
    with pytest.raises(ExportError, match="node 0 .* has no full evaluation"):
        export_node(broken, 0, tmp_path / "x")
    (broken / "final.json").unlink()
    with pytest.raises(ExportError, match="no final selection yet .*--node ID"):
        export_node(broken, None, tmp_path / "x")
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("mine")
    with pytest.raises(ExportError, match="not an earlier export"):
        export_node(run_dir, 0, occupied)
    with pytest.raises(ExportError, match="notes.txt is a file; pass a folder"):
        export_node(run_dir, 0, occupied / "notes.txt")
    with pytest.raises(ExportError, match="notes.txt is a file; pass a folder"):
        export_node(run_dir, 0, occupied / "notes.txt" / "sub")

    # the command: exit code 2 and the message, no traceback; success prints how to load
    assert cli_main(["export", str(broken), "--node", "1", "--out", str(tmp_path / "y")]) == 2
    assert "failed generation" in capsys.readouterr().err
    assert cli_main(["export", str(run_dir), "--out", str(tmp_path / "ok")]) == 0
    assert "load_memory" in capsys.readouterr().out
    assert (tmp_path / "ok" / "manifest.json").is_file()
