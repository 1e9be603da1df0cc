"""Exporting a selected memo program as a self-contained folder:

    program.py        the memo program, in its deployable form: its fits on all train questions,
                      without the tables cross-fitted by conversation that only the search's
                      scoring needed (`automemo.meta.source.fitted`); the run's node folder
                      keeps the program as it was scored
    manifest.json     scores, n, LCB, lineage, budget, limits, interface version, models,
                      embedding config, created time, and the sha256 of every other file
    experience/       the update episodes it learns from, in the episode-store layout
                      (episodes/<group>/*.json, images/.., collections/<group>.json)
    README.md         how to load it

`automemo.deploy.load_memory(folder)` loads it in an application with nothing else of the run
present: it replays the shipped episodes, so the memory is warm, after checking the hashes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path
from typing import Any

from automemo.contract import INTERFACE_VERSION, Budget, EpisodeRecorder
from automemo.episode_store import EpisodeStore, atomic_write
from automemo.errors import DataError
from automemo.llm.config import ROLES
from automemo.llm.ledger import Ledger
from automemo.meta.source.fitted import deployable_source
from automemo.prompting import render
from automemo.paths import file_in_the_way
from automemo.runs import RunDir
from automemo.runs.records import EvaluationRecord
from automemo.runs.rundir import RunDirError
from automemo.search.view import RunView

FORMAT = "automemo-export/1"
MANIFEST = "manifest.json"
PROGRAM = "program.py"
EXPERIENCE = "experience"


class ExportError(DataError, RuntimeError):
    """The node cannot be exported; the message says why and what to do."""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def export_node(run_dir: str | Path, node_id: int | None = None, out_dir: str | Path | None = None) -> Path:
    """Write node `node_id` of the run (default: the node final.json selected) to `out_dir`
    (default: `<run_dir>/export-<node>`). Returns the folder."""
    run = _open_run(run_dir)
    view = RunView.load(run)
    node_id = _selected(run) if node_id is None else int(node_id)
    try:
        node = view.node(node_id)
    except KeyError as exc:
        raise ExportError(str(exc).strip("'\"")) from None
    if node.failed:
        raise ExportError(
            f"node {node_id} of run {run.run_id} is a failed generation ({node.failure or 'no reason recorded'}); "
            f"it never passed its quick exam, so there is nothing to deploy. Pick an evaluated node "
            f"(`automemo tree {run.path}`)"
        )
    evaluations = view.evaluations_of(node_id)
    if not evaluations:
        raise ExportError(
            f"node {node_id} of run {run.run_id} has no full evaluation; export a node that was "
            f"evaluated (`automemo tree {run.path}` lists them)"
        )
    out = Path(out_dir) if out_dir is not None else run.path / f"export-{node_id}"
    _prepare(out)
    config = run.config()
    group, task_ids = _update_episodes(run, node_id, evaluations)
    # Bytes, not text: a program without cross-fitted tables is shipped exactly as it was scored.
    scored = (run.path / node.program_path).read_bytes().decode("utf-8")
    atomic_write(out / PROGRAM, deployable_source(scored).encode("utf-8"))
    files, n_images = _copy_experience(EpisodeStore(run.store_root), out / EXPERIENCE, group, task_ids)
    manifest = {
        "format": FORMAT,
        "interface_version": INTERFACE_VERSION,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "run": {"run_id": run.run_id, "path": str(run.path)},
        "node": {"id": node_id, "summary": node.summary, "action": node.action},
        "scores": _scores(view, node_id),
        "lineage": [
            {"id": n.id, "action": n.action, "summary": n.summary, "mean": n.mean, "n": n.n}
            for n in view.lineage(node_id)
        ],
        "budget": _section(config, "budget", Budget().to_dict()),
        "limits": _section(config.get("sandbox", {}), "limits", {}),
        "benchmark": config.get("benchmark", {}),
        "models": _models(view),
        "embeddings": {k: v for k, v in config.get("embeddings", {}).items() if k != "cache_path"},
        # Which image encoder the program was searched with: CLIP (with its weights) or the
        # perceptual fallback; a deployment should serve the same.
        "image_encoder": _image_encoder(config),
        # The whole resolved run config (it holds no secret, only key-variable names): what
        # `automemo eval` of this folder scores it under unless flags say otherwise.
        "config": config,
        "experience": {
            "group": group,
            "episodes": files,
            "n_images": n_images,
        },
    }
    atomic_write(out / "README.md", render("export_readme", manifest=manifest).encode())
    manifest["files"] = {
        str(p.relative_to(out)): sha256_file(p) for p in sorted(out.rglob("*")) if p.is_file() and p.name != MANIFEST
    }
    atomic_write(out / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False).encode())
    return out


def export_program(name: str, out_dir: str | Path) -> Path:
    """Write a named program (`automemo.programs`: `discovered`, a seed, a program file) as an
    exported folder with no run behind it and no shipped experience: what `automemo serve` needs
    to serve it to a user who has no data yet. Its manifest says what the program is, and the
    discovered default's carries its provenance."""
    from automemo.config import RunConfig, run_config_to_dict
    from automemo.programs import ProgramNotFound, read_provenance, resolve_program

    try:
        program = resolve_program(name)
    except ProgramNotFound as exc:
        raise ExportError(str(exc)) from None
    out = Path(out_dir)
    _prepare(out)
    atomic_write(out / PROGRAM, program.source.encode("utf-8"))
    (out / EXPERIENCE).mkdir(exist_ok=True)
    defaults = run_config_to_dict(RunConfig())
    summary = {"discovered": "discovered default", "hand design": f"seed {program.name}"}.get(
        program.kind.value, f"program {program.name}")
    manifest = {
        "format": FORMAT,
        "interface_version": INTERFACE_VERSION,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "run": {"run_id": "", "path": ""},
        "node": {"id": 0, "summary": summary, "action": program.kind.value, "program": program.name},
        "scores": {"mean": 0.0, "n": 0, "lcb": 0.0},
        "lineage": [],
        "provenance": read_provenance(program.source),
        "budget": Budget().to_dict(),
        "limits": {},
        "benchmark": {},
        "models": {"configured": {}, "used": {}},
        "embeddings": {k: v for k, v in defaults.get("embeddings", {}).items() if k != "cache_path"},
        "image_encoder": _image_encoder(defaults),
        "config": {},
        "experience": {"group": "", "episodes": [], "n_images": 0},
    }
    atomic_write(out / "README.md", render("export_readme", manifest=manifest).encode())
    manifest["files"] = {
        str(p.relative_to(out)): sha256_file(p) for p in sorted(out.rglob("*")) if p.is_file() and p.name != MANIFEST
    }
    atomic_write(out / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False).encode())
    return out


# --- reading the run ----------------------------------------------------------------------------


def _open_run(run_dir: str | Path) -> RunDir:
    path = Path(run_dir)
    if not path.is_dir():
        raise ExportError(f"run directory {path} not found; runs are the folders under runs/ made by `automemo search`")
    try:
        return RunDir.open(path)
    except RunDirError as exc:
        raise ExportError(str(exc)) from None


def _selected(run: RunDir) -> int:
    final = run.final()
    if not final or final.get("node_id") is None:
        raise ExportError(
            f"run {run.run_id} has no final selection yet (no final.json: the search has not finished); "
            f"pass --node ID to export a node anyway, or finish it with `automemo search --resume {run.path}`"
        )
    return int(final["node_id"])


def _prepare(out: Path) -> None:
    blocker = file_in_the_way(out)
    if blocker is not None:
        raise ExportError(f"--out {out}: {blocker} is a file; pass a folder for the export")
    if out.exists() and any(out.iterdir()):
        if not (out / MANIFEST).is_file():
            raise ExportError(
                f"{out} exists and is not an earlier export (no {MANIFEST}); choose an empty or new folder"
            )
        shutil.rmtree(out)  # re-exporting replaces an earlier export, nothing else
    out.mkdir(parents=True, exist_ok=True)


def _update_episodes(run: RunDir, node_id: int, evaluations: list[EvaluationRecord]) -> tuple[str, list[str]]:
    """The update-episode group the node's evaluations learned from, and its task ids in order."""
    group = None
    for ev in reversed(evaluations):
        summary = run.evaluation_result(node_id, ev.k) or {}
        group = (summary.get("result", {}).get("info") or {}).get("update_group")
        if group:
            break
    manifests = sorted((run.store_root / "collections").glob("update-train-*.json"))
    if group is None and len(manifests) == 1:
        group = manifests[0].stem
    if group is None:
        raise ExportError(
            f"cannot tell which update episodes node {node_id} learned from: its evaluation records "
            f"no update group and the run's episode store holds {len(manifests)} train collections"
        )
    collection = run.store_root / "collections" / f"{group}.json"
    if not collection.is_file():
        raise ExportError(f"the run's episode store has no collection {group} ({collection} is missing)")
    return group, list(json.loads(collection.read_text())["task_ids"])


def _copy_experience(
    store: EpisodeStore, target: Path, group: str, task_ids: list[str]
) -> tuple[list[str], int]:
    """Copy the episodes and every image they reference; returns the episode files (relative
    to the export folder, in update order) and the number of images."""
    out = EpisodeStore(target)
    images: set[str] = set()
    files: list[str] = []
    for task_id in task_ids:
        source = store.episode_path(group, task_id)
        if not source.is_file():
            raise ExportError(f"update episode {task_id} of {group} is missing from the run ({source})")
        episode = EpisodeRecorder.from_json(source.read_text())
        files.append(str(out.put_episode(group, episode).relative_to(out.root.parent)))
        images.update(ref.path for ref in episode.images())
    for rel in sorted(images):
        src = store.root / rel
        if not src.is_file():
            raise ExportError(f"image {rel} referenced by an update episode is missing from the run's store")
        dst = out.root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
    collection = store.root / "collections" / f"{group}.json"
    out.put_json(f"collections/{group}.json", json.loads(collection.read_text()))
    return files, len(images)


def _scores(view: RunView, node_id: int) -> dict[str, Any]:
    node = view.node(node_id)
    return {
        "mean": node.mean,
        "n": node.n,
        "lcb": node.lcb,
        "total_evaluations": view.total_evaluations,
        "c_e": view.search.c_e,
        "evaluations": [
            {"k": ev.k, "mean": ev.mean, "n_scored": ev.n_scored, "metrics": dict(ev.metrics),
             "per_category": dict(ev.per_category), "errors": dict(ev.errors)}
            for ev in view.evaluations_of(node_id)
        ],
    }


def _section(config: dict, name: str, default: dict) -> dict:
    value = config.get(name)
    return dict(value) if isinstance(value, dict) else default


def _models(view: RunView) -> dict[str, Any]:
    """Configured model per LLM role, and the models the ledger actually saw."""
    llm = view.config.get("llm", {})
    roles = {r: (llm.get(r) or {}).get("model", "") for r in ROLES}
    ledger = Ledger(view.run.db_path)
    try:
        seen = {role: sorted(models) for role, models in ledger.models_by_role().items()}
    finally:
        ledger.close()
    return {"configured": roles, "used": seen}


def _image_encoder(config: dict[str, Any]) -> str:
    from automemo.configtools import build
    from automemo.toolkit.embedding import EmbeddingConfig, image_encoder_label

    embeddings = {k: v for k, v in (config.get("embeddings") or {}).items() if k != "cache_path"}
    return image_encoder_label(build(EmbeddingConfig, embeddings))
