"""Fitting the meta agent's prompts into the model's context before the call.

A small local model (8,192 tokens, say) cannot take the paper's evidence caps (50,000 characters
of observation per episode): sent as built, the prompt is refused with a server error and the
step is lost. When the meta role declares its `context_tokens`, each prompt is rendered at the
first trim level that fits, from nothing given up to the bare program; a context-length refusal
all the same (the estimate is only an estimate) moves one level further, until the last.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from automemo.llm.messages import message_text
from automemo.meta.config import MetaConfig
from automemo.llm.tokens import estimate_tokens

# What one attached image costs a vision model, roughly (a 512-pixel tile and its overhead).
IMAGE_TOKENS = 800


@dataclass(frozen=True)
class Trim:
    """One level of giving things up. `label` says what, for the prompt and the node's record;
    a None field keeps the meta config's own value."""

    label: str
    observation_chars: int | None = None
    payload_chars: int | None = None
    images_per_episode: int | None = None
    trajectories: int | None = None       # per outcome (successes, failures)
    ideas: bool = True                    # the menu of ideas from earlier memory systems
    improvements: int | None = None       # earlier parent→child gains shown
    helpers: bool = True                  # signatures of the helper modules the program imports
    source_chars: int | None = None       # the program itself
    memolib_notes: bool = True            # memolib's listing with each name's one-line description

    def evidence_config(self, config: MetaConfig) -> MetaConfig:
        changes: dict[str, Any] = {}
        if self.observation_chars is not None:
            changes["observation_chars"] = min(config.observation_chars, self.observation_chars)
        if self.payload_chars is not None:
            changes["payload_chars"] = min(config.payload_chars, self.payload_chars)
        if self.images_per_episode is not None:
            changes["observation_images"] = min(config.observation_images, self.images_per_episode)
            changes["payload_images"] = min(config.payload_images, self.images_per_episode)
        if self.trajectories is not None:
            changes["n_successes"] = min(config.n_successes, self.trajectories)
            changes["n_failures"] = min(config.n_failures, self.trajectories)
        shown: dict[str, Any] = {}   # what the prompts show besides the evidence ([meta.llm])
        if self.improvements is not None:
            shown["max_improvements"] = min(config.llm.max_improvements, self.improvements)
        if self.source_chars is not None:
            shown["source_chars"] = min(config.llm.source_chars, self.source_chars)
        return dataclasses.replace(config, **changes, llm=dataclasses.replace(config.llm, **shown))


TRIMS: tuple[Trim, ...] = (
    Trim(""),
    # memolib's listing is the largest fixed part (about 6,000 tokens with its notes, 3,000
    # without): past the first level it is listed by signature alone.
    Trim("observations cut to 8,000 and payloads to 4,000 characters; memolib listed by signature "
         "alone", 8_000, 4_000, memolib_notes=False),
    Trim("observations cut to 2,000 and payloads to 1,000 characters, one image per episode, "
         "no menu of ideas, one earlier improvement; memolib listed by signature alone",
         2_000, 1_000, 1, None, False, 1, memolib_notes=False),
    Trim("one success and one failure, observations cut to 600 and payloads to 300 characters, "
         "no images, no menu of ideas or earlier improvements; memolib listed by signature alone",
         600, 300, 0, 1, False, 0, memolib_notes=False),
    Trim("no trajectories, no menu of ideas, earlier improvements or helper signatures; memolib "
         "listed by signature alone; the program cut to 6,000 characters", 0, 0, 0, 0, False, 0, False,
         6_000, memolib_notes=False),
)


def estimate_prompt_tokens(messages: Sequence[dict[str, Any]], n_images: int = 0) -> int:
    chars = sum(len(message_text(m)) for m in messages)
    return estimate_tokens(chars) + 1 + n_images * IMAGE_TOKENS


@dataclass(frozen=True)
class PromptRoom:
    """Tokens a prompt may use; None when the model's context is unknown (nothing is trimmed)."""

    tokens: int | None

    def fits(self, messages: Sequence[dict[str, Any]], n_images: int) -> bool:
        return self.tokens is None or estimate_prompt_tokens(messages, n_images) <= self.tokens


def prompt_room(context_tokens: int, completion_tokens: int) -> PromptRoom:
    """The room left for the prompt once the completion is reserved: the completion cap, but at
    most a quarter of the context. A child program is about its parent's size, which the prompt
    holds too; the client then gives the completion all the room the prompt really left."""
    if not context_tokens:
        return PromptRoom(None)
    return PromptRoom(max(0, context_tokens - min(completion_tokens, context_tokens // 4)))


def fit(
    build: Callable[[Trim], tuple[list[dict[str, Any]], int]], room: PromptRoom, *, start: int = 0
) -> tuple[list[dict[str, Any]], int]:
    """The messages of the first trim level from `start` whose estimate fits `room` (the last
    level when none does: the server has the final word) and that level's index. `build(trim)`
    returns the messages and how many images they carry."""
    start = min(start, len(TRIMS) - 1)
    for level in range(start, len(TRIMS)):
        messages, images = build(TRIMS[level])
        if room.fits(messages, images) or level == len(TRIMS) - 1:
            return messages, level
    raise AssertionError("unreachable")  # the last level always returns
