"""OpenAI-style chat messages, including images as base64 data URLs.

Images travel inline (data URLs) rather than as file URLs because the model server is usually
another machine (or a local server with no access to the run directory).
"""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from typing import Any, Sequence, Union

ImageInput = Union[bytes, bytearray, str, os.PathLike, Any]  # Any: a PIL.Image.Image

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_mime(data: bytes) -> str:
    """The MIME type of encoded image bytes, from their magic number."""
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    raise ValueError(
        "image bytes are not PNG, JPEG, GIF or WEBP (first bytes "
        f"{data[:8]!r}); pass a PIL image or a file in one of those formats"
    )


def image_bytes(image: ImageInput) -> bytes:
    """Encoded bytes of an image given as bytes, a file path or a PIL image (encoded as PNG)."""
    if isinstance(image, (bytes, bytearray)):
        return bytes(image)
    if isinstance(image, (str, os.PathLike)):
        path = Path(image)
        if not path.is_file():
            raise ValueError(f"image file {path} does not exist")
        return path.read_bytes()
    if hasattr(image, "save") and hasattr(image, "mode"):
        buf = io.BytesIO()
        (image if image.mode in ("RGB", "RGBA", "L") else image.convert("RGB")).save(buf, format="PNG")
        return buf.getvalue()
    raise TypeError(f"an image must be bytes, a path or a PIL image, got {type(image).__name__}")


def data_url(image: ImageInput) -> str:
    data = image_bytes(image)
    return f"data:{image_mime(data)};base64,{base64.b64encode(data).decode('ascii')}"


def image_part(image: ImageInput, detail: str = "auto") -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": data_url(image), "detail": detail}}


def system_message(text: str) -> dict[str, Any]:
    return {"role": "system", "content": text}


def assistant_message(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def user_message(text: str, images: Sequence[ImageInput] = ()) -> dict[str, Any]:
    """A user message; with images, a multimodal content list (text first, then the images).
    Without images the content stays a plain string, which every OpenAI-compatible server takes."""
    if not images:
        return {"role": "user", "content": text}
    return {"role": "user", "content": [{"type": "text", "text": text}, *(image_part(i) for i in images)]}


def message_text(message: dict[str, Any]) -> str:
    """The text parts of a message (images left out): for logs and token estimates."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""
