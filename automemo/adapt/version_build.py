"""A candidate made a version a namespace can serve: its program folder (the served export with
the candidate's program.py, hashed as `automemo export` hashes), and its state rebuilt from the
namespace's log and snapshotted, so that the swap costs the serving process a snapshot load and
the log's short tail while the old program answers every call until then."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any, Mapping

from automemo.adapt.history import History
from automemo.contract import EpisodeRecorder
from automemo.deploy import load_memory, read_manifest
from automemo.export import MANIFEST, PROGRAM, sha256_file
from automemo.sandbox.base import ProgramError
from automemo.serve.storage.state_folder import SnapshotMeta, StateFolder
from automemo.serve.storage.versions import PROGRAM_DIR

README = "README.md"
# The private store a version's rebuild reads and fills (the namespace's images hard-linked in,
# its embedding cache), inside the staging folder: a killed round leaves it where every forget,
# drop and start sweeps (`NamespaceVersions.sweep_staging`), never in the machine's temporary
# folder, which nothing of the service sweeps. It leaves before the version is installed.
STORE = ".rebuild-store"


def write_program(served: Path, source: str, staged: Path, adapted: Mapping[str, Any]) -> str:
    """`staged/program/`: the served export's files (hard-linked: the shipped experience is
    shared, never copied) with `source` as its program.py and a manifest saying how it was
    adapted (`adapted`: what the version's record says of its source; a pooled round's carries no
    summary, which can quote the users' words). Returns the program's sha256."""
    target = staged / PROGRAM_DIR
    # no parents: a staging folder a forget swept stays gone (its round then installs nothing)
    target.mkdir()
    manifest = read_manifest(served)
    for rel in manifest["files"]:
        if rel in (PROGRAM, README):
            continue
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(served / rel, target / rel)
        except OSError:  # another file system
            shutil.copy2(served / rel, target / rel)
    (target / PROGRAM).write_text(source)
    (target / README).write_text("a served memory's program, adapted to its history by `automemo serve --adapt`\n")
    manifest = {**manifest, "node": {"id": None, "summary": str(adapted.get("summary", "")), "action": "adapted"},
                "adapted": dict(adapted), "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    manifest["files"] = {str(p.relative_to(target)): sha256_file(p) for p in sorted(target.rglob("*"))
                         if p.is_file() and p.name != MANIFEST}
    (target / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False))
    return manifest["files"][PROGRAM]


def prebuild_snapshot(staged: Path, history: History, *, sandbox: str, shared_experience: bool,
                      program_sha256: str) -> bool:
    """Replay the history into the staged program in a sandbox of its own, over a private store
    (the namespace's images linked in; `STORE`, inside the staging folder), and save its state as
    the version's snapshot at the history's last sequence number. False when the program cannot
    save its state (the namespace then opens the version by replaying its log)."""
    store = staged / STORE
    store.mkdir()   # no parents, as `write_program`
    try:
        for entry in history.entries:
            for ref in EpisodeRecorder.from_dict(entry.episode).images():
                source, target = history.store / ref.path, store / ref.path
                if source.is_file() and not target.exists():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.link(source, target)
        memory = load_memory(staged / PROGRAM_DIR, sandbox=sandbox, unsafe=sandbox == "unsafe", store_dir=store,
                             experience=shared_experience)
        try:
            for entry in history.entries:
                try:
                    memory.update(entry.episode, checked=True)
                except ProgramError:
                    pass  # it raises when served too: the same skip, the same state
            started = time.perf_counter()
            try:
                data = memory.snapshot()
            except ProgramError:
                return False
        finally:
            memory.close()
    finally:
        shutil.rmtree(store, ignore_errors=True)
    StateFolder.write_snapshot(staged, data, SnapshotMeta(
        seq=max(history.seqs, default=0), sha256=hashlib.sha256(data).hexdigest(), bytes=len(data),
        program_sha256=program_sha256, seconds=round(time.perf_counter() - started, 3)))
    return True
