"""What a client may send, checked before anything reaches the program: a recall (instruction,
images, scope, time) and a remember (the contract's episode JSON, a chat, or one message). Every
rejection is a `BadRequest` whose message says what was wrong and what to send instead; none
echoes a server path or a traceback.

The field names other memory services use are accepted as aliases (`query`/`text` for a recall's
`instruction`, `user_id` for `user`, `content`/`text` for a one-message remember), so a generic
benchmark harness or SDK can drive the server without an adapter. A request refused here has
stored nothing: a remember's images are all decoded and checked, and the episode built, before
the first image is stored."""

from __future__ import annotations

import base64
import binascii
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from automemo.contract import ContractError, EpisodeRecorder, ImageRef, Step
from automemo.errors import DataError
from automemo.serve.images import NotAnImage, check_image

StoreImage = Callable[[bytes], ImageRef]  # puts image bytes where the program reads them
# The namespace (a user id) a request acts on, given the one it names ("" when it names none);
# raises to refuse. The HTTP face passes its caller's authorisation (serve.access.namespace_for).
UserFor = Callable[[str], str]


class BadRequest(DataError, ValueError):
    """The request is malformed; the message is safe to show to the client."""


@dataclass(frozen=True)
class RequestLimits:
    max_body_bytes: int = 8_000_000     # one HTTP request body (images travel inside it as data URLs)
    max_images: int = 8                 # images per recall
    max_episode_images: int = 64        # images per remembered episode (a screenshot per step)
    max_image_bytes: int = 4_000_000    # one image file (base64-decoded)
    max_image_pixels: int = 25_000_000  # one image's width x height (a 5000 x 5000 screenshot)
    max_text_chars: int = 200_000       # an instruction, or all of a chat's messages together
    max_steps: int = 2_000              # steps of one episode


@dataclass(frozen=True)
class RecallRequest:
    instruction: str
    images: tuple[bytes, ...] = ()
    scope: str = ""  # the namespace the recall searches (a user id), already authorised
    time: str = ""


_DATA_URL = re.compile(r"^data:image/(png|jpe?g|gif|webp);base64,(.*)$", re.S)
# a field and the other names it is accepted under, the canonical one first
_INSTRUCTION = ("instruction", "query", "text")
_USER = ("user", "scope", "user_id")
_CONTENT = ("content", "text")
# accepted so that a harness's usual arguments are not an error, and ignored: how much a recall
# returns is the program's payload, cut to the run's budget
_IGNORED_COUNTS = ("limit", "top_k")
_RECALL_KEYS = {*_INSTRUCTION, *_USER, "images", "time", *_IGNORED_COUNTS}


def _as_named(user: str) -> str:
    return user


def recall_request(body: Any, limits: RequestLimits, *, allow_paths: bool,
                   user_for: UserFor = _as_named) -> RecallRequest:
    body = _object(body, "a recall")
    unknown = sorted(set(body) - _RECALL_KEYS)
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)} in a recall; send {', '.join(sorted(_RECALL_KEYS))}")
    instruction = _one_of(body, _INSTRUCTION)
    if not isinstance(instruction, str) or not instruction.strip():
        raise BadRequest("a recall needs \"instruction\" (or \"query\" or \"text\"): a non-empty string "
                         "(the task or question)")
    if len(instruction) > limits.max_text_chars:
        raise BadRequest(f"the instruction has {len(instruction)} characters; the limit is {limits.max_text_chars}")
    for name in _IGNORED_COUNTS:
        value = body.get(name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise BadRequest(f"\"{name}\" must be a positive integer (it is accepted and ignored: the "
                             f"program decides how much a recall returns)")
    images = body.get("images") or []
    if not isinstance(images, list):
        raise BadRequest("\"images\" must be a list of data URLs (data:image/png;base64,...)")
    if len(images) > limits.max_images:
        raise BadRequest(f"a recall may carry at most {limits.max_images} images; this one has {len(images)}")
    scope = _one_of(body, _USER) or ""
    time = body.get("time") or ""
    for name, value in (("user", scope), ("time", time)):
        if not isinstance(value, str):
            raise BadRequest(f"\"{name}\" must be a string")
    scope = user_for(scope)  # refused here, before an image is decoded
    return RecallRequest(
        instruction=instruction,
        images=tuple(image_bytes(item, i, limits, allow_paths=allow_paths) for i, item in enumerate(images)),
        scope=scope,
        time=time,
    )


def _one_of(body: dict[str, Any], names: tuple[str, ...]) -> Any:
    """The value of a field sent under any of its names; two names with different values are
    refused rather than one silently winning."""
    given = {name: body[name] for name in names if body.get(name) not in (None, "")}
    if len({repr(v) for v in given.values()}) > 1:
        raise BadRequest(f"{' and '.join(f'{n!r}' for n in given)} name the same field with different values; "
                         f"send one of {', '.join(names)}")
    return next(iter(given.values()), body.get(names[0]))


def image_bytes(item: Any, index: int, limits: RequestLimits, *, allow_paths: bool) -> bytes:
    """The bytes of one image given as a data URL or, when `allow_paths` (stdio only: the client
    is the user's own process), a file path; refused unless they decode as an image."""
    if not isinstance(item, str) or not item:
        raise BadRequest(f"image {index} must be a data URL (data:image/png;base64,...)")
    match = _DATA_URL.match(item)
    if match:
        try:
            data = base64.b64decode(match.group(2), validate=True)
        except (binascii.Error, ValueError):
            raise BadRequest(f"image {index} is a data URL whose base64 does not decode") from None
    elif item.startswith("data:"):
        raise BadRequest(f"image {index} is a data URL of an unsupported type; send image/png, jpeg, gif or webp")
    elif not allow_paths:
        # over HTTP a path would be read by the server for whoever sent it (a web page, another
        # user), loopback included
        raise BadRequest(f"image {index}: file paths are read only over stdio; over HTTP send a data URL "
                         f"(data:image/png;base64,...)")
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
    try:
        check_image(data, limits.max_image_pixels)
    except NotAnImage as exc:
        raise BadRequest(f"image {index} {exc}") from None
    return data


_EPISODE_HELP = (
    "send the episode JSON (task_id, instruction, steps: [{index, observation, action}] with index "
    "0, 1, ... (numbered in order when left out), final_answer, reward), a chat "
    "{\"messages\": [{\"role\", \"content\"}], \"user\": ...} or one message {\"content\", \"role\"?, \"user\"?}"
)


def remember_episode(body: Any, limits: RequestLimits, benchmark: str, store_image: StoreImage, *,
                     allow_paths: bool, user_for: UserFor = _as_named) -> EpisodeRecorder:
    """An episode from the contract's episode JSON, a chat
    (`{"messages": [{"role", "content", "images"?}], "user": ..., "time": ...}`) or one message
    (`{"content" or "text", "role"?, "images"?, "user"?, ...}`). Images come as data URLs (file
    paths over stdio) and are stored with `store_image` once the whole request has passed."""
    body = _object(body, "a remember")
    chat = _chat_form(body)
    if chat is not None:
        chat = {**chat, "task_id": chat.get("task_id") or f"chat-{uuid.uuid4().hex[:12]}"}

        def build(put: _Put) -> EpisodeRecorder:
            return chat_episode(chat, limits, benchmark, put, user_for)
    else:
        if "episode" in body and len(body) == 1:
            body = _object(body["episode"], "\"episode\"")
        episode = _numbered(_with_namespace(body, user_for), limits)

        def build(put: _Put) -> EpisodeRecorder:
            return _episode(episode, benchmark, put)
    images = _Images(limits, allow_paths)
    build(images.check)  # everything checked, every image decoded: nothing stored yet
    return build(images.storer(store_image))


_Put = Callable[[Any], dict[str, Any]]  # an image as the client sent it -> an ImageRef dict


class _Images:
    """The images of one remember, in two passes over the same request: `check` decodes and checks
    each (so a refusal leaves the store as it was), then `storer` stores them in the same order."""

    _PENDING = {"path": "pending.png", "sha256": "pending"}  # stands in while the episode is checked

    def __init__(self, limits: RequestLimits, allow_paths: bool) -> None:
        self.limits, self.allow_paths = limits, allow_paths
        self.checked: list[bytes] = []

    def check(self, item: Any) -> dict[str, Any]:
        if isinstance(item, dict):
            raise BadRequest("images of an episode must be data URLs (data:image/png;base64,...); image "
                             "references into another store cannot be read here")
        if len(self.checked) >= self.limits.max_episode_images:
            raise BadRequest(f"an episode may carry at most {self.limits.max_episode_images} images")
        self.checked.append(image_bytes(item, len(self.checked), self.limits, allow_paths=self.allow_paths))
        return dict(self._PENDING)

    def storer(self, store_image: StoreImage) -> _Put:
        pending = iter(self.checked)
        return lambda item: store_image(next(pending)).to_dict()


def _with_namespace(body: dict[str, Any], user_for: UserFor) -> dict[str, Any]:
    """An episode names its user in `metadata.user`; the namespace it may act on goes there."""
    metadata = body.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        return body  # the contract's check says what is wrong
    requested = (metadata or {}).get("user") or ""
    if not isinstance(requested, str):
        raise BadRequest("\"metadata.user\" must be a string (the user whose memory this is)")
    namespace = user_for(requested)
    return {**body, "metadata": {**(metadata or {}), "user": namespace}} if namespace else body


def _numbered(body: dict[str, Any], limits: RequestLimits) -> dict[str, Any]:
    """Steps without an `index` get their position: a harness sends steps in order and rarely
    numbers them."""
    steps = body.get("steps")
    if not isinstance(steps, list):
        return body
    if len(steps) > limits.max_steps:
        raise BadRequest(f"the episode has {len(steps)} steps; the limit is {limits.max_steps}")
    return {**body, "steps": [{"index": i, **step} if isinstance(step, dict) and "index" not in step else step
                              for i, step in enumerate(steps)]}


def _episode(body: dict[str, Any], benchmark: str, put: _Put) -> EpisodeRecorder:
    data = {"benchmark": benchmark, **body}
    try:
        return EpisodeRecorder.from_dict(_stored_images(data, put))
    except BadRequest:
        raise
    except (ContractError, TypeError, ValueError, AttributeError, KeyError) as exc:
        raise BadRequest(f"not an episode ({_first_line(exc)}); {_EPISODE_HELP}") from None


def _stored_images(data: dict[str, Any], put: _Put) -> dict[str, Any]:
    """The episode JSON with its images (task_images, initial_screenshot, steps' screenshots)
    given as data URLs replaced by what `put` makes of them."""
    data = dict(data)
    if data.get("task_images"):
        data["task_images"] = [put(i) for i in _list_of(data["task_images"], "task_images")]
    if data.get("initial_screenshot") is not None:
        data["initial_screenshot"] = put(data["initial_screenshot"])
    if isinstance(data.get("steps"), list):
        data["steps"] = [
            {**step, "screenshot": put(step["screenshot"])}
            if isinstance(step, dict) and step.get("screenshot") is not None else step
            for step in data["steps"]
        ]
    return data


_CHAT_KEYS = {"messages", *_USER, "time", "task_id"}
_MESSAGE_KEYS = {*_CONTENT, "role", "images", *_USER, "time", "task_id"}


def _chat_form(body: dict[str, Any]) -> dict[str, Any] | None:
    """A chat as `{"messages", "user", "time", "task_id"}`, from a chat or from one message;
    None for an episode."""
    if "messages" in body:
        form, keys = "a chat remember", _CHAT_KEYS
    elif any(name in body for name in _CONTENT):
        form, keys = "a one-message remember", _MESSAGE_KEYS
    else:
        return None
    unknown = sorted(set(body) - keys)
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)} in {form}; send {', '.join(sorted(keys))}")
    chat = {"user": _one_of(body, _USER) or "", "time": body.get("time") or "", "task_id": body.get("task_id")}
    if "messages" in body:
        return {**chat, "messages": body["messages"]}
    message = {"role": body.get("role") or "user", "content": _one_of(body, _CONTENT)}
    if body.get("images"):
        message["images"] = body["images"]
    return {**chat, "messages": [message]}


def chat_episode(chat: dict[str, Any], limits: RequestLimits, benchmark: str, put: _Put,
                 user_for: UserFor = _as_named) -> EpisodeRecorder:
    """A conversation episode: one step per message, cited as `<task_id>#<i>`."""
    messages = chat["messages"]
    if not isinstance(messages, list) or not messages:
        raise BadRequest("\"messages\" must be a non-empty list of {\"role\", \"content\"} objects")
    if len(messages) > limits.max_steps:
        raise BadRequest(f"the chat has {len(messages)} messages; the limit is {limits.max_steps}")
    user, time, task_id = chat["user"], chat["time"], chat["task_id"]
    for name, value in (("user", user), ("time", time), ("task_id", task_id)):
        if not isinstance(value, str):
            raise BadRequest(f"\"{name}\" must be a string")
    user = user_for(user)
    steps, total = [], 0
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str) \
                or not isinstance(message.get("content"), str):
            raise BadRequest(f"message {i} must be an object with string \"role\" and \"content\"")
        total += len(message["content"])
        # one step per message; a message's further images follow as steps of their own, since a
        # step holds one picture
        pictures = [ImageRef.from_dict(put(x)) for x in _list_of(message.get("images") or [], f"message {i} images")]
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
    """The user a remember names, before authorisation: a chat's or a message's `user` (or
    `user_id`, `scope`), or an episode's `metadata.user`; the default namespace "" when it names
    none. A malformed body names none: `remember_episode` says what is wrong with it."""
    if isinstance(body, dict) and "episode" in body and len(body) == 1:
        body = body["episode"]
    if not isinstance(body, dict):
        return ""
    if "messages" in body or any(name in body for name in _CONTENT):
        user = _one_of(body, _USER)
    else:
        metadata = body.get("metadata")
        user = metadata.get("user") if isinstance(metadata, dict) else None
    if user is not None and not isinstance(user, str):
        raise BadRequest("\"user\" must be a string (whose memory this is)")
    return user or ""


_FORGET_KEYS = {"user", "user_id", "task_id"}


def forget_request(body: Any) -> tuple[str, str | None]:
    """`{"user": U}` forgets the namespace; `{"user": U, "task_id": T}` one episode (`user_id`
    is an alias of `user`). The user is the one named, before authorisation."""
    body = _object(body, "a forget")
    unknown = sorted(set(body) - _FORGET_KEYS)
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)} in a forget; send \"user\" and optionally \"task_id\"")
    user, task_id = _one_of(body, ("user", "user_id")) or "", body.get("task_id")
    if not isinstance(user, str):
        raise BadRequest("\"user\" must be a string: whose memory to forget from")
    if task_id is not None and (not isinstance(task_id, str) or not task_id):
        raise BadRequest("\"task_id\" must be a non-empty string: the id `remember` answered with")
    return user, task_id
