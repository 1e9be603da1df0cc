"""Text helpers: tokens for lexical matching, URL hosts, action verbs, clipping, and the query
text a task offers before its first turn."""

from __future__ import annotations

import re
from typing import Any, Iterable
from urllib.parse import urlparse

from automemo.contract import EpisodeRecorder, ImageRef, PartialRecorder

STOPWORDS = frozenset(
    """a an the and or but if then else of to in on at by for with from into onto over under is
    are was were be been being am do does did done have has had having i me my mine you your we
    our they their them he she his her it its this that these those there here what which who whom
    whose when where why how all any each some no not only own same so than too very can will
    just should would could may might must shall about above below up down out off again further
    once as such both few more most other s t don now please tell show me let us"""
    .split()
)
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_URL = re.compile(r"https?://[^\s\"'<>)]+")
_QUOTED = re.compile(r"\"[^\"]{1,80}\"|'[^']{1,80}'")
_NUMBER = re.compile(r"\b\d+(?:[.,:/-]\d+)*\b")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens without stop words: the unit of lexical matching."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS and len(t) > 1]


def overlap(query: Iterable[str], text_tokens: Iterable[str]) -> float:
    """Share of the query's distinct tokens that occur in the text (0..1)."""
    q = set(query)
    return len(q & set(text_tokens)) / len(q) if q else 0.0


def host_of(*texts: str) -> str:
    """The host of the first URL in `texts` (without "www."), or "" when there is none."""
    for text in texts:
        match = _URL.search(text or "")
        if match:
            host = urlparse(match.group(0)).netloc.lower()
            return host[4:] if host.startswith("www.") else host
    return ""


def action_type(action: str) -> str:
    """The verb of an action string: `click(...)` / `CLICK #3` / `type "x"` -> click / type."""
    match = re.match(r"\s*([A-Za-z_]+)", action or "")
    return match.group(1).lower() if match else ""


def generalise(text: str) -> str:
    """Replace quoted values and numbers with placeholders, so that a lesson learned on one task
    reads as a rule for the next (M2's value generalisation)."""
    text = _QUOTED.sub("<target item>", text)
    return _NUMBER.sub("<number>", text)


def clip(text: str, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def query_text(task: PartialRecorder, observation_chars: int = 400) -> str:
    """What a task says about itself before the first turn: instruction, the start of the initial
    observation and the captions of its images."""
    parts = [task.instruction]
    if task.initial_observation:
        parts.append(clip(task.initial_observation, observation_chars))
    parts += [i.caption for i in task_images(task) if i.caption]
    return "\n".join(p for p in parts if p)


def task_images(task: PartialRecorder | EpisodeRecorder) -> list[ImageRef]:
    """The images known before the first turn: task images, then the initial screenshot."""
    images = list(task.task_images)
    if task.initial_screenshot is not None:
        images.append(task.initial_screenshot)
    return images


def dedupe(items: Iterable[Any], key=lambda x: x) -> list[Any]:
    seen, out = set(), []
    for item in items:
        k = key(item)
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out
