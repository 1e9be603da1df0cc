"""Building the guest root filesystem without pulling from any registry.

One root filesystem serves both backends: bubblewrap mounts the directory read-only as `/`, and
Docker runs the same tree after `docker import`. It is made of:
1. `debootstrap --variant=minbase <suite>` with Debian's python3 (3.11 on bookworm, matching the
   host's cp311 wheels), from the mirror the host's own apt sources name;
2. the packages of `sandbox/requirements.txt`, as wheels the HOST's pip downloads, installed into
   the rootfs with `pip install --target --no-index`, so nothing runs pip or the network inside;
3. mount points for the session (`/state`, `/store`, `/opt/automemo`, `/run/automemo`).

Builds are cached under `CACHE_DIR/sandbox/<content hash>/` and keyed by the definition's
content, so a build is a no-op until `requirements.txt` or the definition below changes.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterator

from automemo.errors import HostError
from automemo.paths import CACHE_DIR, SANDBOX_DIR

IMAGE_REPOSITORY = "automemo-sandbox"
GUEST_SITE_PACKAGES = "usr/local/lib/python3.11/dist-packages"
# Paths the session mounts over; they must exist because the root is read-only.
MOUNT_POINTS = ("state", "store", "opt/automemo/automemo", "run/automemo")
# Trimmed after the build: nothing in the guest reads them and they are most of minbase's size.
STRIP_PATHS = ("var/cache/apt", "var/lib/apt/lists", "usr/share/doc", "usr/share/man",
               "usr/share/info", "usr/share/locale", "var/log")
DEFINITION_VERSION = "2"  # bump when the build steps change in a way that alters the rootfs


class ImageBuildError(HostError, RuntimeError):
    """A build step failed; the message names the step and the tail of its output."""


@dataclass(frozen=True)
class ImageDefinition:
    suite: str = "bookworm"                      # Debian release; bookworm ships python3.11
    variant: str = "minbase"                     # debootstrap variant: essential + apt only
    debs: tuple[str, ...] = ("python3", "libgomp1")  # libgomp1: OpenMP runtime used by faiss
    requirements: tuple[str, ...] = ()           # pip requirement lines (sandbox/requirements.txt)
    mount_points: tuple[str, ...] = MOUNT_POINTS
    version: str = DEFINITION_VERSION

    def content_hash(self) -> str:
        blob = json.dumps(asdict(self), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    @property
    def tag(self) -> str:
        return f"{IMAGE_REPOSITORY}:{self.content_hash()}"


def load_definition(sandbox_dir: Path = SANDBOX_DIR) -> ImageDefinition:
    req_file = sandbox_dir / "requirements.txt"
    if not req_file.exists():
        raise ImageBuildError(f"{req_file} is missing: it lists the guest's Python packages")
    lines = [ln.split("#", 1)[0].strip() for ln in req_file.read_text().splitlines()]
    return ImageDefinition(requirements=tuple(ln for ln in lines if ln))


def build_dir(defn: ImageDefinition) -> Path:
    return CACHE_DIR / "sandbox" / defn.content_hash()


def rootfs_path(defn: ImageDefinition | None = None) -> Path | None:
    """The finished rootfs of `defn` (default: the current definition), or None if not built."""
    defn = defn or load_definition()
    root = build_dir(defn) / "rootfs"
    return root if (build_dir(defn) / "rootfs.complete").exists() else None


def debian_mirror(suite: str = "bookworm") -> str:
    """The Debian archive the host's apt uses for `suite` (never a hard-coded host).

    `AUTOMEMO_DEBIAN_MIRROR` overrides it. Both one-line `.list` and deb822 `.sources` files are
    read; security and update pockets are skipped since debootstrap wants the main archive."""
    override = os.environ.get("AUTOMEMO_DEBIAN_MIRROR")
    if override:
        return override
    files = [Path("/etc/apt/sources.list")]
    for folder in (Path("/etc/apt/sources.list.d"),):
        if folder.is_dir():
            files += sorted(folder.glob("*.list")) + sorted(folder.glob("*.sources"))
    for path in files:
        if not path.exists():
            continue
        for uri, suites in _apt_entries(path.read_text(errors="replace")):
            if suite in suites and "security" not in uri:
                return uri
    raise ImageBuildError(
        f"no Debian mirror for {suite!r} in /etc/apt/sources.list*; set AUTOMEMO_DEBIAN_MIRROR "
        "to the URL of a Debian archive"
    )


def _apt_entries(text: str) -> Iterator[tuple[str, set[str]]]:
    if re.search(r"^URIs:", text, flags=re.M):  # deb822 stanzas
        for stanza in re.split(r"\n\s*\n", text):
            fields = dict(
                (m.group(1).lower(), m.group(2).strip())
                for m in re.finditer(r"^([A-Za-z-]+):\s*(.*)$", stanza, flags=re.M)
            )
            if "deb" in fields.get("types", "").split() and "uris" in fields:
                for uri in fields["uris"].split():
                    yield uri, set(fields.get("suites", "").split())
        return
    for line in text.splitlines():
        parts = re.sub(r"\[[^]]*\]", "", line.split("#", 1)[0]).split()
        if len(parts) >= 3 and parts[0] == "deb":
            yield parts[1], {parts[2]}


# --- building -------------------------------------------------------------------------------

Step = Callable[[str], None]  # reports the name of the step that starts


def missing_build_needs() -> list[str]:
    """What this machine lacks to build the rootfs offline, each with how to get it; empty when
    nothing is missing. Asked before anything is written, so a build that cannot run says all of
    it at once instead of failing at its first step."""
    missing = []
    if os.geteuid() != 0:
        missing.append("root (debootstrap and chroot need it): run `sudo automemo sandbox build`")
    for tool, package in (("debootstrap", "debootstrap"), ("chroot", "coreutils")):
        if not shutil.which(tool):
            missing.append(f"{tool} (Debian/Ubuntu: apt-get install {package})")
    return missing


def build(*, force: bool = False, docker_import: bool = True, on_step: Step = lambda s: None,
          defn: ImageDefinition | None = None) -> ImageDefinition:
    """Build the rootfs (and the Docker image if an engine answers) unless already built."""
    defn = defn or load_definition()
    if force or rootfs_path(defn) is None:
        missing = missing_build_needs()
        if missing:
            raise ImageBuildError(
                "automemo sandbox build cannot run here; it needs " + "; ".join(missing) + ". Without "
                "them, a machine that can pull a base image builds the same guest with Docker: "
                "docker build -t automemo-sandbox:latest sandbox/ (see sandbox/README.md)"
            )
    out = build_dir(defn)
    out.mkdir(parents=True, exist_ok=True)
    with _build_lock(out / "build.lock"):
        if force or rootfs_path(defn) is None:
            _build_rootfs(defn, out, on_step)
        if docker_import and (force or not docker_image_present(defn)):
            on_step("docker import")
            _docker_import(defn, out / "rootfs")
    return defn


@contextlib.contextmanager
def _build_lock(path: Path) -> Iterator[None]:
    # Several engineers' test runs may ask for the image at once; one builds, the rest wait.
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _build_rootfs(defn: ImageDefinition, out: Path, on_step: Step) -> None:
    (out / "rootfs.complete").unlink(missing_ok=True)
    partial = out / "rootfs.partial"
    shutil.rmtree(partial, ignore_errors=True)
    mirror = debian_mirror(defn.suite)
    on_step(f"debootstrap {defn.suite} ({defn.variant})")
    _run(["debootstrap", f"--variant={defn.variant}", f"--include={','.join(defn.debs)}",
          defn.suite, str(partial), mirror], "debootstrap")
    wheels = out / "wheels"
    on_step("download wheels with the host's pip")
    _run([sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--python-version",
          "3.11", "--dest", str(wheels), *defn.requirements], "pip download")
    on_step("install wheels into the rootfs")
    _run([sys.executable, "-m", "pip", "install", "--no-index", "--find-links", str(wheels),
          "--only-binary=:all:", "--no-compile", "--no-warn-script-location",
          "--target", str(partial / GUEST_SITE_PACKAGES), *defn.requirements], "pip install")
    on_step("strip caches, add mount points")
    for rel in STRIP_PATHS:
        target = partial / rel
        if target.is_dir():
            shutil.rmtree(target)
            target.mkdir(parents=True)
    for rel in MOUNT_POINTS:
        (partial / rel).mkdir(parents=True, exist_ok=True)
    on_step("check the guest imports its packages")
    _run(["chroot", str(partial), "/usr/bin/python3", "-c",
          "import numpy, faiss, networkx, sqlite_utils, PIL.Image, sqlite3"], "import check")
    final = out / "rootfs"
    shutil.rmtree(final, ignore_errors=True)
    partial.rename(final)
    (out / "rootfs.complete").write_text(json.dumps(asdict(defn), indent=2))


def _run(cmd: list[str], step: str) -> None:
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-20:])
        raise ImageBuildError(f"{step} failed (exit {proc.returncode}):\n{tail}")


# --- docker ---------------------------------------------------------------------------------


def docker_image_present(defn: ImageDefinition | None = None) -> bool:
    defn = defn or load_definition()
    try:
        import docker

        docker.from_env().images.get(defn.tag)
        return True
    except Exception:
        return False


def _docker_import(defn: ImageDefinition, rootfs: Path) -> None:
    import docker

    tar = rootfs.parent / "rootfs.tar"
    _run(["tar", "-C", str(rootfs), "--numeric-owner", "-cf", str(tar), "."], "tar rootfs")
    try:
        client = docker.from_env()
        repo, tag = defn.tag.split(":")
        client.api.import_image_from_file(str(tar), repository=repo, tag=tag)
        client.images.get(defn.tag).tag(IMAGE_REPOSITORY, "latest")
    finally:
        tar.unlink(missing_ok=True)
