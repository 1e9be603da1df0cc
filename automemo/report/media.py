"""Images of the report: thumbnails copied into `report/img/`, so the folder opens from file://
on any machine (the episode store may be elsewhere or gone) and stays small.

Every image goes through one `ImageSink`, which deduplicates by source content (payload images
repeat across nodes: they come from the same episode store) and stops adding images once the
byte budget is spent, so that the report of a long run still fits its size target.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from automemo.episode_store import atomic_write

IMG_DIR = "img"


@dataclass(frozen=True)
class Thumb:
    src: str          # relative to the report root, e.g. "img/3fa2….jpg"
    width: int
    height: int
    caption: str = ""


class ImageSink:
    def __init__(self, report_root: Path, *, max_px: int, quality: int, byte_budget: int) -> None:
        self.root = report_root
        self.max_px = max_px
        self.quality = quality
        self.byte_budget = byte_budget
        self.bytes_written = 0
        self.omitted = 0                     # images skipped because the budget was spent
        self.written: set[str] = set()       # file names produced by this build
        self._by_source: dict[str, Thumb | None] = {}

    def add(self, source: Path, caption: str = "") -> Thumb | None:
        """A thumbnail of `source`, or None if it is missing, unreadable, or over budget."""
        try:
            data = source.read_bytes()
        except OSError:
            return None
        # The settings are part of the key: a refresh with the same settings reuses the files of
        # the previous build instead of decoding every image again.
        key = hashlib.sha256(data + f"|{self.max_px}|{self.quality}".encode()).hexdigest()
        if key in self._by_source:
            thumb = self._by_source[key]
            return Thumb(thumb.src, thumb.width, thumb.height, caption) if thumb else None
        thumb = self._make(key, data, caption)
        self._by_source[key] = thumb
        return thumb

    def _make(self, key: str, data: bytes, caption: str) -> Thumb | None:
        name = f"{key[:20]}.jpg"
        target = self.root / IMG_DIR / name
        if target.exists():
            return self._reuse(name, target, caption)
        try:
            with Image.open(io.BytesIO(data)) as im:
                im.thumbnail((self.max_px, self.max_px), reducing_gap=2.0)
                # JPEG has no alpha: flatten onto white, which is what the page behind it shows.
                rgb = Image.new("RGB", im.size, "white")
                rgb.paste(im.convert("RGBA"), mask=im.convert("RGBA").getchannel("A"))
        except (UnidentifiedImageError, OSError, ValueError):
            return None
        buf = io.BytesIO()
        rgb.save(buf, format="JPEG", quality=self.quality, optimize=True)
        encoded = buf.getvalue()
        if self.bytes_written + len(encoded) > self.byte_budget:
            self.omitted += 1
            return None
        atomic_write(target, encoded)
        self.bytes_written += len(encoded)
        self.written.add(name)
        return Thumb(f"{IMG_DIR}/{name}", rgb.width, rgb.height, caption)

    def _reuse(self, name: str, target: Path, caption: str) -> Thumb | None:
        size = target.stat().st_size
        if self.bytes_written + size > self.byte_budget:
            self.omitted += 1
            return None
        try:
            with Image.open(target) as im:
                width, height = im.size
        except (UnidentifiedImageError, OSError):
            return None
        self.bytes_written += size
        self.written.add(name)
        return Thumb(f"{IMG_DIR}/{name}", width, height, caption)
