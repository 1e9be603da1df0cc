"""Loading an exported memo program in an application:

    from automemo.deploy import load_memory
    with load_memory("exports/best") as memory:
        payload = memory.retrieve(task)      # a PartialRecorder -> MemoryPayload, budget-truncated
        memory.update(episode)               # an EpisodeRecorder

The folder is checked before anything runs: every file against the manifest's sha256, and the
memo-program interface version against this automemo's. The program runs sandboxed by default
and is warmed by replaying the shipped update episodes, so it answers as it did in the search.
Nothing of the run that produced it needs to exist.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Mapping

from automemo import configtools
from automemo.benchmarks import question_time_keys
from automemo.contract import (INTERFACE_VERSION, SUPPORTED_INTERFACE_VERSIONS, Budget, EpisodeRecorder, ImageRef,
                               MemoryPayload, PartialRecorder, question_time_task)
from automemo.episode_store import EpisodeStore
from automemo.errors import DataError
from automemo.export import EXPERIENCE, FORMAT, MANIFEST, PROGRAM, sha256_file
from automemo.sandbox import snapshot as sandbox_snapshot
from automemo.sandbox.base import HostServices, Limits, ProgramError, Sandbox, SandboxError, Session


class DeployError(DataError, RuntimeError):
    """The exported folder cannot be loaded; the message says what is wrong and what to do."""


def manifest_question_time_keys(manifest: Mapping[str, Any]) -> frozenset[str]:
    """The question-time keys of the benchmark an export was searched on (none for a user's own
    benchmark file: a deployed memory does not import it)."""
    return question_time_keys(str((manifest.get("benchmark") or {}).get("name") or ""), load_plugins=False)


def read_manifest(folder: str | Path) -> dict[str, Any]:
    """The manifest of an exported folder after checking the format, the interface version and
    the hash of every file it lists."""
    folder = Path(folder)
    path = folder / MANIFEST
    if not path.is_file():
        raise DeployError(
            f"{folder} is not an exported memo program (no {MANIFEST}); make one with "
            f"`automemo export runs/<id> --out {folder}`"
        )
    try:
        manifest = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise DeployError(f"{path} is not valid JSON ({exc}); re-export the node") from None
    if manifest.get("format") != FORMAT:
        raise DeployError(f"{path} has format {manifest.get('format')!r}; this automemo reads {FORMAT!r}")
    if str(manifest.get("interface_version")) not in SUPPORTED_INTERFACE_VERSIONS:
        raise DeployError(
            f"{folder} was exported for memo-program interface version "
            f"{manifest.get('interface_version')!r}, this automemo speaks version {INTERFACE_VERSION!r} "
            f"(and loads {', '.join(SUPPORTED_INTERFACE_VERSIONS)}); "
            f"install the automemo version that exported it or re-export the run with this one"
        )
    files = manifest.get("files") or {}
    if PROGRAM not in files:
        raise DeployError(f"{path} lists no {PROGRAM}; re-export the node")
    bad = []
    for rel, expected in sorted(files.items()):
        file = folder / rel
        if not file.is_file():
            bad.append(f"{rel} is missing")
        elif sha256_file(file) != expected:
            bad.append(f"{rel} was modified (sha256 differs from the manifest)")
    if bad:
        shown = "; ".join(bad[:5]) + (f"; and {len(bad) - 5} more" if len(bad) > 5 else "")
        raise DeployError(
            f"{folder} does not match its manifest: {shown}. Re-export the node rather than "
            f"editing an exported folder"
        )
    return manifest


class DeployedMemory:
    """A live memo program: its sandbox session, warm with the shipped experience.

    `store` is the episode store the program reads images from (a private working copy of the
    export's `experience/`); put the images of new tasks and episodes there with `put_image`."""

    def __init__(
        self,
        manifest: dict[str, Any],
        session: Session,
        store: EpisodeStore,
        *,
        budget: Budget,
        limits: Limits,
        workdir: Path | None,
    ) -> None:
        self.manifest = manifest
        self.session = session
        self.store = store
        self.budget = budget
        self.limits = limits
        self.question_time_keys = manifest_question_time_keys(manifest)
        self.update_failures: list[dict[str, str]] = []
        self._workdir = workdir

    def put_image(self, image: Any, caption: str | None = None) -> ImageRef:
        """Store an image (PIL image, PNG bytes or a path) where the program can open it."""
        return self.store.put_image(image, caption)

    def update(self, episode: EpisodeRecorder | dict, *, checked: bool = False) -> None:
        """`checked=True`: `episode` is the dict of an EpisodeRecorder (e.g. read back from a log
        written from one) and goes to the program as it is, without a second round of checks."""
        if not (checked and isinstance(episode, dict)):
            episode = episode if isinstance(episode, EpisodeRecorder) else EpisodeRecorder.from_dict(episode)
            episode = episode.to_dict()
        # flush: a deployed update finishes its own embedding (a served remember records exactly
        # the cache entries its episode asked for, and forgetting it drops them)
        self.session.call("update", {"episode": episode, "flush": True}, self.limits.timeout("update"))

    def retrieve(self, task: PartialRecorder | dict) -> MemoryPayload:
        """The program's payload for `task`, cut to the run's budget. The program sees `task` as
        the search's harness showed it its questions (`contract.question_time_task`): metadata cut
        to the contract's allow-list and the benchmark's question-time keys, and the run's budget."""
        task = task if isinstance(task, PartialRecorder) else PartialRecorder.from_dict(task)
        task = question_time_task(task, self.question_time_keys, self.budget.to_dict())[0]
        result = self.session.call("retrieve", {"task": task.to_dict()}, self.limits.timeout("retrieve"))
        return MemoryPayload.from_dict(result).truncated(self.budget)

    def snapshot(self) -> bytes:
        """The program's state as bytes `load_memory(..., snapshot=...)` starts from. Raises
        `ProgramError` when the program cannot save its state (see the contract's snapshots)."""
        return sandbox_snapshot.save_state(self.session, self.limits)

    def restore(self, data: bytes) -> None:
        """Make this (freshly loaded, not yet updated) memory the one `data` was taken of."""
        sandbox_snapshot.load_state(self.session, data, self.limits)

    def close(self) -> None:
        self.session.close()
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def __enter__(self) -> DeployedMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load_memory(
    folder: str | Path,
    *,
    sandbox: str | Sandbox = "auto",
    unsafe: bool = False,
    services: HostServices | None = None,
    progress: bool = False,
    store_dir: str | Path | None = None,
    snapshot: bytes | str | Path | None = None,
    experience: bool = True,
) -> DeployedMemory:
    """Load an exported memo program: verify it, open it in `sandbox` ("auto", "docker",
    "bwrap", or a Sandbox object; `unsafe=True` runs it without isolation), and replay its
    update episodes (`progress=True` shows a progress bar). `services` answers the toolkit's
    host methods; by default the run's own embedding configuration with no LLM (programs then
    take their deterministic paths). `store_dir` keeps the working episode store (images of new
    tasks, the embedding cache) in a folder that outlives the memory instead of a temporary one.
    `snapshot` (bytes of `DeployedMemory.snapshot()`, or a file holding them) starts the memory
    from that state instead of replaying the shipped episodes. `experience=False` starts the
    program empty: the shipped episodes are neither copied into the store nor replayed (a served
    memory whose users do not share the search's experience)."""
    folder = Path(folder).resolve()
    manifest = read_manifest(folder)
    budget = configtools.build(Budget, manifest.get("budget") or {})
    limits = configtools.build(Limits, manifest.get("limits") or {})
    backend = _backend(sandbox, unsafe)
    workdir = None if store_dir is not None else Path(tempfile.mkdtemp(prefix="automemo-deploy-"))
    try:
        store = EpisodeStore(Path(store_dir) if workdir is None else workdir / "store")
        if experience:
            _copy_tree(folder / EXPERIENCE, store.root)
        host = services if services is not None else default_services(manifest, store.root)
        session = backend.open((folder / PROGRAM).read_text(), limits, services=host, store_root=store.root)
    except BaseException:
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
        raise
    memory = DeployedMemory(manifest, session, store, budget=budget, limits=limits, workdir=workdir)
    try:
        if snapshot is None:
            if experience:
                _replay(memory, folder, progress)
        else:
            _restore(memory, snapshot)
    except BaseException:
        memory.close()
        raise
    return memory


def _backend(sandbox: str | Sandbox, unsafe: bool) -> Sandbox:
    from automemo.assembly import AssemblyError, open_sandbox

    if not isinstance(sandbox, str):
        return sandbox
    try:
        return open_sandbox("unsafe" if unsafe else sandbox, unsafe_confirmed=unsafe)
    except AssemblyError as exc:
        raise DeployError(str(exc)) from None


def default_services(manifest: dict[str, Any], store_root: Path) -> HostServices:
    """The run's own embedding configuration, cached in the working store, and the run's memo
    LLM when the environment provides its key (`memo_llm`)."""
    from automemo.assembly import AssemblyError, memo_services

    try:
        return memo_services(manifest.get("embeddings"), store_root, memo_llm(manifest))
    except AssemblyError as exc:
        raise DeployError(
            f"the exported program's embedding config cannot be served here ({exc}); pass "
            f"services=MemoServices(...) built with encoders you have"
        ) from None


def memo_llm(manifest: Mapping[str, Any]) -> Any:
    """An LLM client serving the memo role the program was searched with (so that it answers
    as it did in the search), when the manifest names one and the environment holds its key;
    otherwise None, said once on stderr: the program then takes its deterministic path."""
    from automemo.llm import LLMClient
    from automemo.llm.config import LLMConfig, RoleConfig

    role = ((manifest.get("config") or {}).get("llm") or {}).get("memo") or {}
    try:
        memo = configtools.build(RoleConfig, role)
    except (TypeError, ValueError):
        memo = RoleConfig()
    if not memo.configured:
        return None
    if not os.environ.get(memo.api_key_env):
        print(f"load_memory: the program was searched with the memo LLM {memo.model!r}"
              f"{' at ' + memo.base_url if memo.base_url else ''}, and ${memo.api_key_env} is not set: "
              f"toolkit.llm is unavailable, so the program answers through its deterministic fallback "
              f"(set ${memo.api_key_env} to serve the model)", file=sys.stderr)
        return None
    return LLMClient(LLMConfig(memo=memo))


def _copy_tree(source: Path, target: Path) -> None:
    """A private working copy of the shipped episode store (hard links where possible: the files
    are content-addressed and never rewritten in place)."""
    for path in sorted(source.rglob("*")):
        if not path.is_file():
            continue
        dst = target / path.relative_to(source)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.unlink(missing_ok=True)  # a kept store (store_dir) already holds the previous copy
        try:
            os.link(path, dst)
        except OSError:
            shutil.copyfile(path, dst)


def _restore(memory: DeployedMemory, snapshot: bytes | str | Path) -> None:
    data = snapshot if isinstance(snapshot, bytes) else Path(snapshot).read_bytes()
    try:
        memory.restore(data)
    except SandboxError as exc:
        raise DeployError(f"the snapshot does not load into this program ({exc.kind}: {exc.detail}); "
                          f"start from the shipped episodes instead (no snapshot)") from exc


def _replay(memory: DeployedMemory, folder: Path, progress: bool) -> None:
    """Feed the shipped update episodes in their original order. A program exception on one
    episode skips it (as evaluation did); a dead or hung guest is a load failure."""
    from rich.progress import track

    episodes = memory.manifest.get("experience", {}).get("episodes", [])
    for rel in track(episodes, description="replaying experience", disable=not progress):
        episode = EpisodeRecorder.from_json((folder / rel).read_text())
        try:
            memory.update(episode)
        except ProgramError as exc:
            memory.update_failures.append({"task_id": episode.task_id, "error": exc.detail})
        except SandboxError as exc:
            raise DeployError(
                f"replaying update episode {episode.task_id} failed ({exc.kind}: {exc.detail}); "
                f"the program cannot be warmed up in this sandbox"
            ) from exc
