"""A namespace's episodes out and in: JSON lines, one episode a line, its images inline as data
URLs, so that an export taken from one server (or state folder) imports into another.

`GET /v1/export?user=U` and `automemo memory export STATE --user U` write them;
`POST /v1/import?user=U` and `automemo memory import STATE --user U FILE` read them back, each
line checked like a `remember` (images decoded, limits applied)."""

from __future__ import annotations

import base64
import json
from typing import Any, Callable

from automemo.contract import EpisodeRecorder, ImageRef
from automemo.serve.requests import BadRequest, RequestLimits, remember_episode


_SIGNATURES = ((b"\xff\xd8\xff", "jpeg"), (b"GIF8", "gif"), (b"\x89PNG", "png"))


def data_url(data: bytes) -> str:
    """Stored image bytes (checked as PNG, JPEG, GIF or WebP when they arrived) as a data URL
    whose type is the bytes' own."""
    kind = "webp" if data[:4] == b"RIFF" and data[8:12] == b"WEBP" else next(
        (name for signature, name in _SIGNATURES if data.startswith(signature)), "png")
    return f"data:image/{kind};base64,{base64.b64encode(data).decode()}"


def episode_lines(memory: Any) -> list[str]:
    """`memory` (a `UserMemory`)'s episodes as JSON lines."""
    return [json.dumps(_inline_images(e.to_dict(), lambda ref: data_url(memory.image_bytes(ref))),
                       ensure_ascii=False) for e in memory.episodes()]


def read_lines(text: str, limits: RequestLimits, benchmark: str,
               store_image: Callable[[bytes], ImageRef]) -> list[EpisodeRecorder]:
    """Episodes from JSON lines, checked as remembers are; a bad line names its number and stops
    the import before anything is stored in memory."""
    episodes = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            body = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadRequest(f"line {number} is not JSON ({exc.msg}); send one episode object per line") from None
        try:
            episodes.append(remember_episode(body, limits, benchmark, store_image, allow_paths=False))
        except BadRequest as exc:
            raise BadRequest(f"line {number}: {exc}") from None
    return episodes


def _inline_images(episode: dict[str, Any], as_url: Callable[[ImageRef], str]) -> dict[str, Any]:
    def url(ref: dict[str, Any] | None) -> str | None:
        return None if not ref else as_url(ImageRef.from_dict(ref))

    out = dict(episode)
    if out.get("task_images"):
        out["task_images"] = [url(r) for r in out["task_images"]]
    if out.get("initial_screenshot"):
        out["initial_screenshot"] = url(out["initial_screenshot"])
    out["steps"] = [{**s, "screenshot": url(s["screenshot"])} if s.get("screenshot") else s
                    for s in out.get("steps") or []]
    return out
