"""Mini-Gallery data: users' conversation logs (sessions of rounds, some with an image) and
questions with gold answers and evidence clues. Plain frozen data; `to_dict` is the canonical
JSON form whose hash tests compare across runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from automemo.benchmarks.minigallery.images import ImageSpec

QUESTION_TYPES = ("FR", "VS", "TTL", "TR", "VR", "MR", "KR", "CD", "AR")


@dataclass(frozen=True)
class GalleryImage:
    image_id: str        # e.g. "U1:S2:IMG3"
    spec: ImageSpec
    caption: str | None  # what a text-only memory gets instead of pixels (often incomplete)


@dataclass(frozen=True)
class Round:
    round_id: str        # e.g. "U1:S2:R5"
    speaker: str
    text: str
    time: str            # "YYYY-MM-DD HH:MM"
    image: GalleryImage | None = None


@dataclass(frozen=True)
class Session:
    session_id: str      # e.g. "U1:S2"
    user_id: str
    time: str
    rounds: tuple[Round, ...]


@dataclass(frozen=True)
class UserLog:
    user_id: str
    name: str
    sessions: tuple[Session, ...]

    def ids(self) -> set[str]:
        """Every round and image id of this user's conversation."""
        out = set()
        for session in self.sessions:
            for r in session.rounds:
                out.add(r.round_id)
                if r.image:
                    out.add(r.image.image_id)
        return out


@dataclass(frozen=True)
class Question:
    question_id: str     # e.g. "U1:Q07"
    user_id: str
    qtype: str           # one of QUESTION_TYPES
    question: str
    answer: str
    clues: tuple[str, ...]           # round / image ids that support the answer (empty for AR)
    time: str
    image: ImageSpec | None = None   # the question's own picture (VS by example, TTL)


@dataclass(frozen=True)
class GallerySplit:
    name: str
    users: tuple[UserLog, ...]
    questions: tuple[Question, ...]

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)


def _plain(value: Any) -> Any:
    if isinstance(value, ImageSpec):
        return value.to_dict()
    if hasattr(value, "__dataclass_fields__"):
        return {name: _plain(getattr(value, name)) for name in value.__dataclass_fields__}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
