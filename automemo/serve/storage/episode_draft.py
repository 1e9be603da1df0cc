"""A remembered episode between the request and the memory: checked whole, its images decoded and
checked, but nothing stored yet. The namespace stores the images when the episode's turn comes
(under its lock, off the event loop), so a refused request, a request still waiting, or one
whose program died stores nothing a log line does not point at."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from automemo.contract import EpisodeRecorder, ImageRef

PENDING = "pending"  # an image slot's path before its bytes are stored: "pending/<i>"


def placeholder(index: int) -> dict[str, Any]:
    return {"path": f"{PENDING}/{index}", "sha256": f"{PENDING}-{index}"}


def map_images(data: dict[str, Any], convert: Callable[[Any], Any]) -> dict[str, Any]:
    """The episode JSON with every image slot (task_images, initial_screenshot, each step's
    screenshot) replaced by `convert(slot)`."""
    data = dict(data)
    if data.get("task_images"):
        images = data["task_images"]
        data["task_images"] = [convert(i) for i in images] if isinstance(images, list) else images
    if data.get("initial_screenshot") is not None:
        data["initial_screenshot"] = convert(data["initial_screenshot"])
    if isinstance(data.get("steps"), list):
        data["steps"] = [
            {**step, "screenshot": convert(step["screenshot"])}
            if isinstance(step, dict) and step.get("screenshot") is not None else step
            for step in data["steps"]
        ]
    return data


@dataclass(frozen=True)
class EpisodeDraft:
    episode: dict[str, Any]          # an EpisodeRecorder's JSON whose image slots are placeholders
    images: tuple[bytes, ...] = ()   # the checked bytes of placeholder i

    @classmethod
    def of(cls, episode: EpisodeRecorder) -> EpisodeDraft:
        """An episode built elsewhere, whose images (if any) are already in the namespace's store."""
        return cls(episode.to_dict())

    @property
    def task_id(self) -> str:
        return str(self.episode.get("task_id"))

    @property
    def size(self) -> int:
        """About what it adds to the namespace's disk: its log line and its images."""
        return len(json.dumps(self.episode, ensure_ascii=False)) + sum(map(len, self.images))

    def build(self, store_image: Callable[[bytes], ImageRef]) -> EpisodeRecorder:
        """Store the images (in order) and return the episode pointing at them."""
        if not self.images:
            return EpisodeRecorder.from_dict(self.episode)
        stored = [store_image(data).to_dict() for data in self.images]

        def convert(slot: Any) -> Any:
            path = slot.get("path", "") if isinstance(slot, dict) else ""
            if path.startswith(PENDING + "/"):
                return {**stored[int(path.split("/", 1)[1])], "caption": slot.get("caption")}
            return slot
        return EpisodeRecorder.from_dict(map_images(self.episode, convert))
