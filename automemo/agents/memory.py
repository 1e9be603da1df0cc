"""Memory injection: the payload enters the agent's conversation once, as its own message right
after the system prompt and before the first user turn (the paper's protocol), rendered by the
shared fragment `prompts/memory_injection.j2`, with the payload's images attached."""

from __future__ import annotations

from typing import Any

from automemo.contract import MemoryPayload
from automemo.episode_store import EpisodeStore
from automemo.llm.messages import user_message
from automemo.prompting import render

MEMORY_MARKER = "## Memory from earlier tasks"  # first line of memory_injection.j2; tests look for it


def memory_message(payload: MemoryPayload | None, store: EpisodeStore, max_images: int) -> dict[str, Any] | None:
    """The memory message, or None when there is nothing to inject (no payload, or an empty
    one: the no-memory program must leave the agent's prompt exactly as without memory)."""
    if payload is None or (not payload.text.strip() and not payload.images):
        return None
    refs = list(payload.images[: max(0, max_images)])
    text = render(
        "memory_injection",
        text=payload.text,
        n_images=len(refs),
        captions=[r.caption for r in refs if r.caption],
    )
    return user_message(text, [store.image_bytes(r) for r in refs])
