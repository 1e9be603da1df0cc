"""Mini-Gallery images: flat pictures of counted, coloured, patterned shapes with a text label.

Every attribute of an image is known (an `ImageSpec`), so a question about an image has an exact
gold answer, and a memory that keeps only an (incomplete) caption can be told apart from one that
keeps the pixels. Rendering is a pure function of the spec: no randomness, so the same spec gives
the same PNG bytes (on the same Pillow version) and a dataset hash can be checked in tests.
"""

from __future__ import annotations

import functools
import io
import math
from dataclasses import asdict, dataclass

from PIL import Image, ImageDraw, ImageFont

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (214, 40, 40),
    "blue": (40, 90, 214),
    "green": (40, 160, 70),
    "yellow": (235, 200, 30),
    "purple": (130, 50, 170),
    "orange": (240, 130, 20),
    "pink": (235, 110, 170),
    "teal": (20, 150, 150),
    "brown": (130, 80, 40),
    "black": (30, 30, 30),
}
KINDS = ("circle", "square", "triangle", "star", "diamond", "hexagon", "cross", "ring")
PATTERNS = ("solid", "striped", "dotted", "checkered")
# Pale backgrounds keep every object colour readable; they carry no meaning in any question.
BACKGROUNDS: dict[str, tuple[int, int, int]] = {
    "cream": (250, 245, 230),
    "mist": (232, 238, 245),
    "sage": (228, 240, 228),
    "sand": (242, 232, 214),
    "lilac": (240, 232, 246),
}


@dataclass(frozen=True)
class ImageSpec:
    kind: str
    colour: str
    pattern: str
    count: int
    label: str
    background: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS or self.colour not in COLOURS or self.pattern not in PATTERNS:
            raise ValueError(f"unknown image attribute in {self}")
        if self.background not in BACKGROUNDS or not 1 <= self.count <= 6:
            raise ValueError(f"unsupported background or count in {self}")

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def kinds(self) -> str:
        """The kind's plural, as questions say it ("crosses", "stars")."""
        return f"{self.kind}es" if self.kind.endswith("s") else f"{self.kind}s"

    def describe(self) -> str:
        """The full description: what a perfect captioner would say."""
        noun = self.kind if self.count == 1 else self.kinds
        return f"{self.count} {self.pattern} {self.colour} {noun} with a label reading {self.label!r}"


def _cells(count: int, size: int) -> list[tuple[int, int, int]]:
    """Centres and radius of `count` non-overlapping objects above the label strip."""
    cols = 1 if count == 1 else 2 if count <= 4 else 3
    rows = math.ceil(count / cols)
    area_h = int(size * 0.78)
    cw, ch = size / cols, area_h / rows
    radius = int(min(cw, ch) * 0.36)
    return [
        (int(cw * (i % cols) + cw / 2), int(ch * (i // cols) + ch / 2), radius) for i in range(count)
    ]


def _shape(draw: ImageDraw.ImageDraw, kind: str, cx: int, cy: int, r: int) -> None:
    if kind == "circle":
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=255)
    elif kind == "ring":
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=255)
        s = r // 2
        draw.ellipse((cx - s, cy - s, cx + s, cy + s), fill=0)
    elif kind == "square":
        s = int(r * 0.85)
        draw.rectangle((cx - s, cy - s, cx + s, cy + s), fill=255)
    elif kind == "cross":
        t = r // 3
        draw.rectangle((cx - r, cy - t, cx + r, cy + t), fill=255)
        draw.rectangle((cx - t, cy - r, cx + t, cy + r), fill=255)
    else:
        draw.polygon(_polygon(kind, cx, cy, r), fill=255)


def _polygon(kind: str, cx: int, cy: int, r: int) -> list[tuple[float, float]]:
    if kind == "triangle":
        angles, radii = [90, 210, 330], [r] * 3
    elif kind == "diamond":
        angles, radii = [90, 180, 270, 0], [r, r * 0.65, r, r * 0.65]
    elif kind == "hexagon":
        angles, radii = [0, 60, 120, 180, 240, 300], [r] * 6
    else:  # star: alternate outer and inner points
        angles = [90 + 36 * i for i in range(10)]
        radii = [r if i % 2 == 0 else r * 0.42 for i in range(10)]
    return [
        (cx + rad * math.cos(math.radians(a)), cy - rad * math.sin(math.radians(a)))
        for a, rad in zip(angles, radii)
    ]


def _texture(pattern: str, colour: tuple[int, int, int], size: int) -> Image.Image:
    tex = Image.new("RGB", (size, size), colour)
    draw = ImageDraw.Draw(tex)
    light = tuple(min(255, c + 110) for c in colour)
    if pattern == "striped":
        for x in range(-size, size, 10):
            draw.line((x, 0, x + size, size), fill=light, width=4)
    elif pattern == "dotted":
        for y in range(3, size, 9):
            for x in range(3, size, 9):
                draw.ellipse((x - 2, y - 2, x + 2, y + 2), fill=light)
    elif pattern == "checkered":
        for y in range(0, size, 8):
            for x in range(0, size, 8):
                if (x // 8 + y // 8) % 2:
                    draw.rectangle((x, y, x + 7, y + 7), fill=light)
    return tex


@functools.lru_cache(maxsize=1)
def _font() -> ImageFont.ImageFont:
    return ImageFont.load_default()


def render(spec: ImageSpec, size: int = 128) -> Image.Image:
    img = Image.new("RGB", (size, size), BACKGROUNDS[spec.background])
    mask = Image.new("L", (size, size), 0)
    mdraw = ImageDraw.Draw(mask)
    for cx, cy, r in _cells(spec.count, size):
        _shape(mdraw, spec.kind, cx, cy, r)
    img.paste(_texture(spec.pattern, COLOURS[spec.colour], size), (0, 0), mask)
    draw = ImageDraw.Draw(img)
    strip = int(size * 0.8)
    draw.rectangle((0, strip, size, size), fill=(255, 255, 255))
    draw.text((size // 2, (strip + size) // 2), spec.label, fill=(0, 0, 0), font=_font(), anchor="mm")
    return img


def render_png(spec: ImageSpec, size: int = 128) -> bytes:
    buf = io.BytesIO()
    render(spec, size).save(buf, format="PNG", optimize=False)
    return buf.getvalue()
