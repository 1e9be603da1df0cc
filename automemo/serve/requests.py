"""What a client may send, checked before anything reaches the program: a recall (instruction,
images, scope, time) and a remember (the contract's episode JSON, or a chat). Every rejection is a
`BadRequest` whose message says what was wrong and what to send instead; none echoes a server
path or a traceback."""

from __future__ import annotations

import base64
import binascii
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from automemo.contract import ContractError, EpisodeRecorder, ImageRef, Step

StoreImage = Callable[[bytes], ImageRef]  # puts image bytes where the program reads them


class BadRequest(ValueError):
    """The request is malformed; the message is safe to show to the client."""


@dataclass(frozen=True)
class RequestLimits:
    max_body_bytes: int = 8_000_000     # one HTTP request body (images travel inside it as data URLs)
    max_images: int = 8                 # images per recall
    max_episode_images: int = 64        # images per remembered episode (a screenshot per step)
    max_image_bytes: int = 4_000_000    # one decoded image
    max_text_chars: int = 200_000       # an instruction, or all of a chat's messages together
    max_steps: int = 2_000              # steps of one episode


@dataclass(frozen=True)
class RecallRequest:
    instruction: str
    images: tuple[bytes, ...] = ()
    scope: str = ""
    time: str = ""


_DATA_URL = re.compile(r"^data:image/(png|jpe?g|gif|webp);base64,(.*)$", re.S)
_RECALL_KEYS = {"instruction", "images", "scope", "user", "time"}


def recall_request(body: Any, limits: RequestLimits, *, allow_paths: bool) -> RecallRequest:
    body = _object(body, "a recall")
    unknown = sorted(set(body) - _RECALL_KEYS)
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)} in a recall; send {', '.join(sorted(_RECALL_KEYS))}")
    instruction = body.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise BadRequest("a recall needs \"instruction\": a non-empty string (the task or question)")
    if len(instruction) > limits.max_text_chars:
        raise BadRequest(f"the instruction has {len(instruction)} characters; the limit is {limits.max_text_chars}")
    images = body.get("images") or []
    if not isinstance(images, list):
        raise BadRequest("\"images\" must be a list of data URLs (data:image/png;base64,...) or file paths")
    if len(images) > limits.max_images:
        raise BadRequest(f"a recall may carry at most {limits.max_images} images; this one has {len(images)}")
    scope = body.get("scope", body.get("user")) or ""
    time = body.get("time") or ""
    for name, value in (("scope", scope), ("time", time)):
        if not isinstance(value, str):
            raise BadRequest(f"\"{name}\" must be a string")
    return RecallRequest(
        instruction=instruction,
        images=tuple(image_bytes(item, i, limits, allow_paths=allow_paths) for i, item in enumerate(images)),
        scope=scope,
        time=time,
    )


def image_bytes(item: Any, index: int, limits: RequestLimits, *, allow_paths: bool) -> bytes:
    """The bytes of one image given as a data URL or (local clients only) a file path."""
    if not isinstance(item, str) or not item:
        raise BadRequest(f"image {index} must be a data URL (data:image/png;base64,...) or a file path")
    match = _DATA_URL.match(item)
    if match:
        try:
            data = base64.b64decode(match.group(2), validate=True)
        except (binascii.Error, ValueError):
            raise BadRequest(f"image {index} is a data URL whose base64 does not decode") from None
    elif item.startswith("data:"):
        raise BadRequest(f"image {index} is a data URL of an unsupported type; send image/png, jpeg, gif or webp")
    elif not allow_paths:
        raise BadRequest(f"image {index}: file paths are accepted only from local clients; send a data URL")
    else:
        path = Path(item).expanduser()
        if not path.is_file():
            raise BadRequest(f"image {index}: no such file; give an existing image file or a data URL")
        if path.stat().st_size > limits.max_image_bytes:
            raise BadRequest(f"image {index} is larger than {limits.max_image_bytes} bytes")
        data = path.read_bytes()
    if len(data) > limits.max_image_bytes:
        raise BadRequest(f"image {index} is {len(data)} bytes; the limit is {limits.max_image_bytes}")
    if not data:
        raise BadRequest(f"image {index} is empty")
    return data


def remember_episode(body: Any, limits: RequestLimits, benchmark: str, store_image: StoreImage, *,
                     allow_paths: bool) -> EpisodeRecorder:
    """An episode from the contract's episode JSON, or from a chat
    (`{"messages": [{"role", "content", "images"?}], "user": ..., "time": ...}`). Images come as
    data URLs (file paths from local clients) and are stored with `store_image`."""
    body = _object(body, "a remember")
    images = _Images(limits, store_image, allow_paths)
    if "messages" in body:
        return chat_episode(body, limits, benchmark, images)
    if "episode" in body and len(body) == 1:
        body = _object(body["episode"], "\"episode\"")
    steps = body.get("steps")
    if isinstance(steps, list) and len(steps) > limits.max_steps:
        raise BadRequest(f"the episode has {len(steps)} steps; the limit is {limits.max_steps}")
    data = {"benchmark": benchmark, **body}
    try:
        data = _stored_images(data, images)
        episode = EpisodeRecorder.from_dict(data)
    except BadRequest:
        raise
    except (ContractError, TypeError, ValueError, AttributeError) as exc:
        raise BadRequest(
            f"not an episode ({_first_line(exc)}); send the episode JSON (task_id, instruction, "
            f"steps with observation/action, final_answer, reward) or a chat "
            f"{{\"messages\": [{{\"role\", \"content\"}}], \"user\": ...}}"
        ) from None
    return episode


class _Images:
    """Images of one remember: decoded, counted against the limit, stored."""

    def __init__(self, limits: RequestLimits, store_image: StoreImage, allow_paths: bool) -> None:
        self.limits, self.store_image, self.allow_paths, self.count = limits, store_image, allow_paths, 0

    def put(self, item: Any) -> dict[str, Any]:
        if isinstance(item, dict):
            raise BadRequest("images of an episode must be data URLs (data:image/png;base64,...); image "
                             "references into another store cannot be read here")
        if self.count >= self.limits.max_episode_images:
            raise BadRequest(f"an episode may carry at most {self.limits.max_episode_images} images")
        data = image_bytes(item, self.count, self.limits, allow_paths=self.allow_paths)
        self.count += 1
        return self.store_image(data).to_dict()


def _stored_images(data: dict[str, Any], images: _Images) -> dict[str, Any]:
    """The episode JSON with its images (task_images, initial_screenshot, steps' screenshots)
    given as data URLs replaced by references to the stored files."""
    data = dict(data)
    if data.get("task_images"):
        data["task_images"] = [images.put(i) for i in _list_of(data["task_images"], "task_images")]
    if data.get("initial_screenshot") is not None:
        data["initial_screenshot"] = images.put(data["initial_screenshot"])
    if isinstance(data.get("steps"), list):
        data["steps"] = [
            {**step, "screenshot": images.put(step["screenshot"])}
            if isinstance(step, dict) and step.get("screenshot") is not None else step
            for step in data["steps"]
        ]
    return data


_CHAT_KEYS = {"messages", "user", "time", "task_id"}


def chat_episode(body: dict[str, Any], limits: RequestLimits, benchmark: str, images: _Images) -> EpisodeRecorder:
    unknown = sorted(set(body) - _CHAT_KEYS)
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)} in a chat remember; send {', '.join(sorted(_CHAT_KEYS))}")
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        raise BadRequest("\"messages\" must be a non-empty list of {\"role\", \"content\"} objects")
    if len(messages) > limits.max_steps:
        raise BadRequest(f"the chat has {len(messages)} messages; the limit is {limits.max_steps}")
    user, time = body.get("user") or "", body.get("time") or ""
    task_id = body.get("task_id") or f"chat-{uuid.uuid4().hex[:12]}"
    for name, value in (("user", user), ("time", time), ("task_id", task_id)):
        if not isinstance(value, str):
            raise BadRequest(f"\"{name}\" must be a string")
    steps, total = [], 0
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str) \
                or not isinstance(message.get("content"), str):
            raise BadRequest(f"message {i} must be an object with string \"role\" and \"content\"")
        total += len(message["content"])
        # one step per message; a message's further images follow as steps of their own, since a
        # step holds one picture
        pictures = [ImageRef.from_dict(images.put(x)) for x in _list_of(message.get("images") or [], f"message {i} images")]
        for k, picture in enumerate(pictures or [None]):
            text = message["content"] if k == 0 else f"(image {k + 1} of this message)"
            steps.append(Step(index=len(steps), observation=f"{message['role']}: {text}", screenshot=picture,
                              ref=f"{task_id}#{len(steps)}", metadata={"speaker": message["role"], "time": time}))
    if total > limits.max_text_chars:
        raise BadRequest(f"the chat has {total} characters of content; the limit is {limits.max_text_chars}")
    first_user = next((m["content"] for m in messages if m["role"] == "user"), messages[0]["content"])
    return EpisodeRecorder(
        task_id=task_id, benchmark=benchmark, instruction=first_user[:2000], steps=tuple(steps),
        reward=1.0, success=True, metadata={"conversation": True, "user": user, "time": time},
    )


def _list_of(value: Any, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise BadRequest(f"\"{name}\" must be a list of data URLs")
    return value


def _object(body: Any, what: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadRequest(f"{what} must be a JSON object, not {type(body).__name__}")
    return body


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__


def remember_user(body: Any) -> str:
    """Whose memory a remember goes to: a chat's `user`, or an episode's `metadata.user`
    (the default namespace "" when it names none)."""
    if isinstance(body, dict) and "episode" in body and len(body) == 1:
        body = body["episode"]
    if not isinstance(body, dict):
        return ""
    user = body.get("user") if "messages" in body else (body.get("metadata") or {}).get("user")
    if user is not None and not isinstance(user, str):
        raise BadRequest("\"user\" must be a string (whose memory this is)")
    return user or ""


def forget_request(body: Any) -> tuple[str, str | None]:
    """`{"user": U}` forgets the namespace; `{"user": U, "task_id": T}` one episode."""
    body = _object(body, "a forget")
    unknown = sorted(set(body) - {"user", "task_id"})
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)} in a forget; send \"user\" and optionally \"task_id\"")
    user, task_id = body.get("user", ""), body.get("task_id")
    if not isinstance(user, str):
        raise BadRequest("\"user\" must be a string: whose memory to forget from")
    if task_id is not None and (not isinstance(task_id, str) or not task_id):
        raise BadRequest("\"task_id\" must be a non-empty string: the id `remember` answered with")
    return user, task_id
