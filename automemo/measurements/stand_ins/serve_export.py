"""An exported folder written from a program's text and update episodes, in the layout and with
the manifest hashes `automemo export` writes: what `automemo bench serve` (and the serve tests)
serve without running a search first."""

from __future__ import annotations

import json
from pathlib import Path

from automemo.contract import INTERFACE_VERSION, EpisodeRecorder
from automemo.episode_store import EpisodeStore
from automemo.export import EXPERIENCE, FORMAT, MANIFEST, PROGRAM, sha256_file

GROUP = "update-train-0"


def write_export(out: Path, program: str, episodes: list[EpisodeRecorder], *, node_id: int = 0,
                 benchmark: str = "minigallery", extra: dict | None = None) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / PROGRAM).write_text(program)
    store = EpisodeStore(out / EXPERIENCE)
    files = [str(store.put_episode(GROUP, e).relative_to(out)) for e in episodes]
    store.put_json(f"collections/{GROUP}.json", {"task_ids": [e.task_id for e in episodes]})
    (out / "README.md").write_text("an export written for a benchmark or a test\n")
    manifest = {
        "format": FORMAT, "interface_version": INTERFACE_VERSION, "created": "2026-01-01T00:00:00Z",
        "run": {"run_id": "synthetic", "path": ""},
        "node": {"id": node_id, "summary": "", "action": "seed"},
        "scores": {"mean": 0.0, "n": 0, "lcb": 0.0},
        "lineage": [{"id": node_id, "action": "seed", "summary": "", "mean": 0.0, "n": 0}],
        "budget": {"max_chars": 50_000, "max_images": 2}, "limits": {},
        "benchmark": {"name": benchmark}, "models": {"configured": {}, "used": {}},
        "embeddings": {"text": "minilm"}, "config": {},
        "experience": {"group": GROUP, "episodes": files, "n_images": 0},
        **(extra or {}),
    }
    manifest["files"] = {str(p.relative_to(out)): sha256_file(p) for p in sorted(out.rglob("*"))
                         if p.is_file() and p.name != MANIFEST}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2))
    return out
