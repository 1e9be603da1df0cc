"""A namespace's episodes out and in: JSON lines, one episode a line, its images inline as data
URLs, so that an export taken from one server (or state folder) imports into another.

`GET /v1/export?user=U` and `automemo memory export STATE --user U` write them;
`POST /v1/import?user=U` and `automemo memory import STATE --user U FILE` read them back, each
line checked like a `remember` (images decoded, limits applied), every line before anything is
stored: an import is all or nothing. After the episodes, an export carries the user's recalls and
the agent's feedback on them (`serve.storage.recall_log`), one `{"recall": ...}` line each: they are the
user's as the episodes are, and an import adds them back."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

from automemo.contract import ImageRef
from automemo.serve.requests import BadRequest, RequestLimits, remember_request
from automemo.serve.storage.episode_draft import EpisodeDraft, map_images


_SIGNATURES = ((b"\xff\xd8\xff", "jpeg"), (b"GIF8", "gif"), (b"\x89PNG", "png"))


def data_url(data: bytes) -> str:
    """Stored image bytes (checked as PNG, JPEG, GIF or WebP when they arrived) as a data URL
    whose type is the bytes' own."""
    kind = "webp" if data[:4] == b"RIFF" and data[8:12] == b"WEBP" else next(
        (name for signature, name in _SIGNATURES if data.startswith(signature)), "png")
    return f"data:image/{kind};base64,{base64.b64encode(data).decode()}"


def episode_lines(memory: Any) -> list[str]:
    """`memory` (a `UserMemory`)'s episodes as JSON lines, then its recall log's lines."""
    def inline(ref: dict[str, Any]) -> str:
        return data_url(memory.image_bytes(ImageRef.from_dict(ref)))
    episodes = [json.dumps(map_images(e.to_dict(), inline), ensure_ascii=False) for e in memory.episodes()]
    return episodes + [json.dumps(line, ensure_ascii=False) for line in memory.recalls.lines()]


@dataclass(frozen=True)
class Imported:
    """What an export's lines hold: its episodes (checked as remembers) and its recall lines."""

    episodes: list[EpisodeDraft]
    recalls: list[dict[str, Any]] = field(default_factory=list)


def read_lines(text: str, limits: RequestLimits, benchmark: str, *, user: str) -> Imported:
    """Episodes from JSON lines (an export), each checked as a remember into `user`'s memory
    (its `metadata.user` becomes `user`), and its recall lines. Every line is checked before the
    caller stores anything: a bad line names its number and nothing of the import is kept."""
    drafts, recalls = [], []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            body = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadRequest(f"line {number} is not JSON ({exc.msg}); send one episode object per line") from None
        if isinstance(body, dict) and "recall" in body:
            recalls.append(_recall_line(body, number))
            continue
        if isinstance(body, dict) and isinstance(body.get("metadata"), dict):
            body = {**body, "metadata": {k: v for k, v in body["metadata"].items() if k != "user"}}
        try:
            drafts.append(remember_request(body, limits, benchmark, allow_paths=False,
                                           user_for=lambda named: user).draft)
        except BadRequest as exc:
            raise BadRequest(f"line {number}: {exc}; nothing of this import was stored", exc.status) from None
    return Imported(drafts, recalls)


def _recall_line(body: dict[str, Any], number: int) -> dict[str, Any]:
    """A recall line of an export, its shape checked."""
    shown, used = body.get("shown"), body.get("used", [])
    if not isinstance(body["recall"], str) or not isinstance(body.get("query", ""), str) or \
            not isinstance(shown, list) or not isinstance(used, list) or not set(used) <= set(shown):
        raise BadRequest(f"line {number}: a recall line needs \"recall\" (an id), \"query\", \"shown\" (ids) and "
                         f"optionally \"used\" (ids among them); nothing of this import was stored")
    return body
