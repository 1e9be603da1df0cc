"""What a server refuses, learned from its 400 once and kept for the run, and what it sends that
is not the answer.

Real servers differ in what a chat request may carry: OpenAI's reasoning models (o3, o4-mini,
gpt-5) refuse `max_tokens` (they want `max_completion_tokens`) and any `temperature` but the
default; a text-only model refuses image parts. Rather than a table of model names that ages,
the client sends the common request, reads the refusal, adapts the request and remembers the
adaptation for every later call of that role.
"""

from __future__ import annotations

import enum
import re
from typing import Any, Sequence


class Quirk(enum.Enum):
    MAX_COMPLETION_TOKENS = "max_completion_tokens"  # send the completion cap under this name
    NO_TEMPERATURE = "no_temperature"                # leave temperature at the server's default
    TEXT_ONLY = "text_only"                          # drop image parts
    NO_STREAM_OPTIONS = "no_stream_options"          # the server rejects stream_options


def learn(message: str, request: dict[str, Any], known: set[Quirk]) -> Quirk | None:
    """The quirk a 400's message reveals about `request`, or None when it is some other refusal
    (or one already learned: learning it again would loop)."""
    text = message.lower()
    found: Quirk | None = None
    if "max_tokens" in text and "max_completion_tokens" in text and "max_tokens" in request:
        found = Quirk.MAX_COMPLETION_TOKENS
    elif "temperature" in text and "temperature" in request and any(
            w in text for w in ("unsupported", "not support", "does not support", "only the default")):
        found = Quirk.NO_TEMPERATURE
    elif "stream_options" in text and "stream_options" in request:
        found = Quirk.NO_STREAM_OPTIONS
    elif has_images(request.get("messages") or ()) and any(
            w in text for w in ("image", "multimodal", "multi-modal", "vision")):
        found = Quirk.TEXT_ONLY
    return None if found in known else found


def apply(request: dict[str, Any], quirks: set[Quirk]) -> dict[str, Any]:
    """`request` adapted to what the server is known to refuse (a new dict)."""
    out = dict(request)
    if Quirk.MAX_COMPLETION_TOKENS in quirks and "max_tokens" in out:
        out["max_completion_tokens"] = out.pop("max_tokens")
    if Quirk.NO_TEMPERATURE in quirks:
        out.pop("temperature", None)
    if Quirk.NO_STREAM_OPTIONS in quirks:
        out.pop("stream_options", None)
    if Quirk.TEXT_ONLY in quirks and "messages" in out:
        out["messages"] = without_images(out["messages"])
    return out


def has_images(messages: Sequence[dict[str, Any]]) -> bool:
    return any(isinstance(m.get("content"), list) and any(
        isinstance(p, dict) and p.get("type") == "image_url" for p in m["content"]) for m in messages)


def without_images(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with image parts dropped; a content list left with text only becomes a string,
    which every server takes."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            texts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
            dropped = sum(1 for p in content if isinstance(p, dict) and p.get("type") == "image_url")
            note = f"\n[{dropped} image(s) left out: the model takes text only]" if dropped else ""
            m = {**m, "content": "\n".join(texts) + note}
        out.append(m)
    return out


_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>\s*", re.DOTALL | re.IGNORECASE)
_OPEN_THINK = re.compile(r"^\s*<think(?:ing)?>", re.IGNORECASE)
_CLOSE_THINK = re.compile(r"</think(?:ing)?>\s*", re.IGNORECASE)


def strip_think(text: str) -> str:
    """The answer without the model's `<think>…</think>` reasoning (Qwen3, DeepSeek-R1 and kin
    put it in the content). A reply that opens a think block and never closes it (cut at the
    completion cap) has no answer yet: "". A lone closing tag (the server's chat template
    opened the block) ends the reasoning."""
    text = _THINK.sub("", text)
    if _OPEN_THINK.match(text):
        return ""
    close = _CLOSE_THINK.search(text)
    if close and "<think" not in text[: close.start()].lower():
        text = text[close.end():]
    return text
