"""The episode store: recorders as JSON, images as content-addressed files.

One store per run (and shareable between runs with the same benchmark/agent config). The
sandbox mounts `root` read-only, so an `ImageRef.path` written here resolves in the guest.
Writes are atomic (temp file + rename) so that concurrent episodes and a crash mid-write never
leave a half file behind.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from automemo.contract import EpisodeRecorder, ImageRef


def atomic_write(path: Path, data: bytes, *, durable: bool = False) -> None:
    """Write `path` whole or not at all; `durable=True` also survives a power cut (the data and
    the folder's new name are fsynced before returning)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        # mkstemp makes the file 0600; the sandbox guest runs as another user and must read it.
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if durable:
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


class EpisodeStore:
    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root).resolve()
        (self.root / "images").mkdir(parents=True, exist_ok=True)
        (self.root / "episodes").mkdir(parents=True, exist_ok=True)

    # images --------------------------------------------------------------------------------

    def put_image(self, image: Any, caption: str | None = None) -> ImageRef:
        """Store a PIL image, image bytes (PNG or JPG, kept as they are) or a path; return its
        reference. Same bytes, same file."""
        if isinstance(image, (bytes, bytearray)):
            data = bytes(image)
        elif isinstance(image, (str, os.PathLike)):
            data = Path(image).read_bytes()
        else:  # a PIL image
            buf = io.BytesIO()
            image.save(buf, format="PNG")
            data = buf.getvalue()
        digest = hashlib.sha256(data).hexdigest()
        # The suffix follows the bytes: a released JPG is stored as it was shipped, not re-encoded.
        suffix = "jpg" if data.startswith(b"\xff\xd8\xff") else "png"
        rel = f"images/{digest[:2]}/{digest}.{suffix}"
        target = self.root / rel
        if not target.exists():
            atomic_write(target, data)
        return ImageRef(path=rel, sha256=digest, caption=caption)

    def image_path(self, ref: ImageRef) -> Path:
        path = (self.root / ref.path).resolve()
        if self.root not in path.parents:
            raise ValueError(f"image path {ref.path!r} escapes the episode store {self.root}")
        return path

    def image_bytes(self, ref: ImageRef) -> bytes:
        return self.image_path(ref).read_bytes()

    # episodes ------------------------------------------------------------------------------

    def episode_path(self, group: str, task_id: str) -> Path:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in task_id)
        return self.root / "episodes" / group / f"{safe}.json"

    def put_episode(self, group: str, episode: EpisodeRecorder) -> Path:
        path = self.episode_path(group, episode.task_id)
        atomic_write(path, episode.to_json().encode())
        return path

    def get_episode(self, group: str, task_id: str) -> EpisodeRecorder | None:
        path = self.episode_path(group, task_id)
        if not path.exists():
            return None
        return EpisodeRecorder.from_json(path.read_text())

    def episodes(self, group: str) -> list[EpisodeRecorder]:
        folder = self.root / "episodes" / group
        if not folder.exists():
            return []
        return [EpisodeRecorder.from_json(p.read_text()) for p in sorted(folder.glob("*.json"))]

    def put_json(self, rel: str, value: Any) -> Path:
        path = self.root / rel
        atomic_write(path, json.dumps(value, indent=2, sort_keys=True).encode())
        return path
