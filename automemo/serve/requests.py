"""What a client may send, checked before anything reaches the program: a recall (instruction,
images, scope, time) and a remember (the contract's episode JSON, a chat, or one message, a
transcript string becoming its turns). Every rejection is a `BadRequest` whose message says
what was wrong and what to send instead; none echoes a server path or a traceback.

The field names other memory services use are accepted as aliases (`query`/`text` for a recall's
`instruction`, `user_id`/`scope` for `user`, `content`/`text` for a one-message remember), so a
generic benchmark harness or SDK can drive the server without an adapter; which field answers to
which names, and which fields each form knows, is `serve.request_model`'s one definition. A request refused here
has stored nothing: a remember becomes an `EpisodeDraft` whose images are decoded and checked
but not stored (the namespace stores them in the episode's turn)."""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from automemo.contract import RETRIEVE_METADATA_KEYS, USER_KEY, ContractError, EpisodeRecorder, ImageRef, Step, retrieve_metadata
from automemo.errors import DataError
from automemo.serve import defaults
from automemo.serve import request_model as model
from automemo.serve.storage.episode_draft import EpisodeDraft, map_images, placeholder
from automemo.serve.storage.images import NotAnImage, check_image
from automemo.serve.transcript import transcript_turns

# The namespace (a user id) a request acts on, given the one it names ("" when it names none);
# raises to refuse. The faces pass their caller's authorisation (serve.access.namespace_for).
UserFor = Callable[[str], str]


class BadRequest(DataError, ValueError):
    """The request is malformed (400), too large (413) or has a field out of bounds (422); the
    message is safe to show to the client."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status

    def __reduce__(self) -> tuple[Any, ...]:  # raised in an image worker, it crosses a pipe whole
        return type(self), (str(self), self.status)


@dataclass(frozen=True)
class RequestLimits:
    """What one request may carry (the values and why: `serve.defaults`)."""

    max_body_bytes: int = defaults.MAX_BODY_BYTES
    max_images: int = defaults.MAX_IMAGES
    max_episode_images: int = defaults.MAX_EPISODE_IMAGES
    max_image_bytes: int = defaults.MAX_IMAGE_BYTES
    max_image_pixels: int = defaults.MAX_IMAGE_PIXELS
    max_text_chars: int = defaults.MAX_TEXT_CHARS
    max_steps: int = defaults.MAX_STEPS
    max_id_chars: int = defaults.MAX_ID_CHARS
    max_time_chars: int = defaults.MAX_TIME_CHARS
    max_metadata_chars: int = defaults.MAX_METADATA_CHARS


@dataclass(frozen=True)
class RecallRequest:
    instruction: str
    images: tuple[bytes, ...] = ()
    scope: str = ""  # the namespace the recall searches (a user id), already authorised
    time: str = ""
    # what else the application knows at question time: only the keys a retrieve task may carry
    # on the served benchmark (`contract.retrieve_metadata`, as the evaluation harness gives them)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RememberRequest:
    user: str              # the namespace it is remembered in, already authorised
    draft: EpisodeDraft    # its metadata.user is that namespace


_DATA_URL = re.compile(r"^data:image/(png|jpe?g|gif|webp);base64,(.*)$", re.S)
# a field and the other names it is accepted under, the canonical one first
INSTRUCTION, USER, CONTENT = model.INSTRUCTION.names, model.USER.names, model.CONTENT.names
_RECALL_KEYS = model.RECALL.names()


def recall_request(body: Any, limits: RequestLimits, *, allow_paths: bool, user_for: UserFor,
                   question_time_keys: frozenset[str] = frozenset()) -> RecallRequest:
    body = _object(body, "a recall")
    unknown = sorted(set(body) - _RECALL_KEYS)
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)} in a recall; send {', '.join(sorted(_RECALL_KEYS))}")
    instruction = _one_of(body, INSTRUCTION)
    if not isinstance(instruction, str) or not instruction.strip():
        raise BadRequest("a recall needs \"instruction\" (or \"query\" or \"text\"): a non-empty string "
                         "(the task or question)")
    if len(instruction) > limits.max_text_chars:
        raise BadRequest(f"the instruction has {len(instruction)} characters; the limit is {limits.max_text_chars}",
                         413)
    # accepted so that a harness's usual arguments are not an error, and ignored: how much a
    # recall returns is the program's payload, cut to the run's budget
    for name in (f.name for f in model.IGNORED_COUNTS):
        value = body.get(name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise BadRequest(f"\"{name}\" must be a positive integer (it is accepted and ignored: the "
                             f"program decides how much a recall returns)")
    images = body.get("images") or []
    if not isinstance(images, list):
        raise BadRequest("\"images\" must be a list of data URLs (data:image/png;base64,...)")
    if len(images) > limits.max_images:
        raise BadRequest(f"a recall may carry at most {limits.max_images} images; this one has {len(images)}", 413)
    scope = user_for(_short(_one_of(body, USER), "user", limits.max_id_chars))  # before an image is decoded
    time = _short(body.get("time"), "time", limits.max_time_chars)
    return RecallRequest(
        instruction=instruction,
        images=tuple(image_bytes(item, i, limits, allow_paths=allow_paths) for i, item in enumerate(images)),
        scope=scope,
        time=time,
        metadata=_question_time(body.get("metadata"), limits, question_time_keys),
    )


def _question_time(metadata: Any, limits: RequestLimits, question_time_keys: frozenset[str]) -> dict[str, Any]:
    """A recall's `metadata`: what a retrieve task may carry on this benchmark, the same
    allow-list the evaluation harness applies (`contract.retrieve_metadata`); anything else (a
    label) is refused, not dropped in silence. The user is the call's `user`, never a key here."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise BadRequest("\"metadata\" must be an object of what is known at question time")
    kept, refused = retrieve_metadata({k: v for k, v in metadata.items() if k != USER_KEY}, question_time_keys)
    if refused or USER_KEY in metadata:
        allowed = sorted((RETRIEVE_METADATA_KEYS - {USER_KEY}) | set(question_time_keys))
        named = sorted(set(refused) | ({USER_KEY} & set(metadata)))
        raise BadRequest(f"a recall's metadata may carry only what is known at question time on this benchmark "
                         f"({', '.join(allowed)}), not {', '.join(named)}; the user is the call's \"user\"")
    if len(json.dumps(kept, default=str)) > limits.max_metadata_chars:
        raise BadRequest(f"a recall's metadata is over {limits.max_metadata_chars} characters of JSON", 413)
    return kept


def _one_of(body: dict[str, Any], names: tuple[str, ...]) -> Any:
    """The value of a field sent under any of its names; two names with different values are
    refused rather than one silently winning."""
    given = {name: body[name] for name in names if body.get(name) not in (None, "")}
    if len({repr(v) for v in given.values()}) > 1:
        raise BadRequest(f"{' and '.join(f'{n!r}' for n in given)} name the same field with different values; "
                         f"send one of {', '.join(names)}")
    return next(iter(given.values()), body.get(names[0]))


def _short(value: Any, name: str, limit: int) -> str:
    """A short string field (a user, a task_id, a time, a role): "" when absent; refused when it
    is not a string (400) or longer than `limit` (422): it is copied into every step and log line."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadRequest(f"\"{name}\" must be a string")
    if len(value) > limit:
        raise BadRequest(f"\"{name}\" has {len(value)} characters; the limit is {limit} (it is an id, a name or "
                         f"a time, not content)", 422)
    return value


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
            raise BadRequest(f"image {index} is larger than {limits.max_image_bytes} bytes", 413)
        data = path.read_bytes()
    if len(data) > limits.max_image_bytes:
        raise BadRequest(f"image {index} is {len(data)} bytes; the limit is {limits.max_image_bytes}", 413)
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
    "{\"messages\": [{\"role\", \"content\"}], \"user\": ...} or one message {\"content\", \"role\"?, \"user\"?} "
    "(a transcript of \"role: text\" lines becomes one step per turn)"
)
_ENVELOPE_KEYS = model.EPISODE_CALL.names()


def remember_request(body: Any, limits: RequestLimits, benchmark: str, *, allow_paths: bool,
                     user_for: UserFor) -> RememberRequest:
    """A remember from the contract's episode JSON (bare, or as `{"episode": ..., "user": ...}`),
    a chat (`{"messages": [{"role", "content", "images"?}], "user", "time", "task_id"}`) or one
    message (`{"content" or "text", "role"?, "images"?, "user"?, ...}`; a transcript string
    becomes its turns). The user is read once, authorised with `user_for`, and written into the
    episode's `metadata.user`; an episode naming another user than its call is refused. Images
    come as data URLs (file paths over stdio), decoded and checked, not stored."""
    body = _object(body, "a remember")
    images = _Images(limits, allow_paths)
    chat = _chat_form(body)
    if chat is not None:
        user = user_for(_short(chat["user"], "user", limits.max_id_chars))
        task_id = _short(chat["task_id"], "task_id", limits.max_id_chars) or f"chat-{uuid.uuid4().hex[:12]}"
        episode = chat_episode(chat["messages"], limits, benchmark, images.check, user=user, task_id=task_id,
                               time=_short(chat["time"], "time", limits.max_time_chars)).to_dict()
    else:
        episode, user = _episode_form(body, limits, user_for)
        episode = _episode(map_images(episode, images.check), benchmark).to_dict()
    draft = EpisodeDraft(episode, tuple(images.checked))
    if draft.size - sum(map(len, draft.images)) > 2 * limits.max_text_chars:
        raise BadRequest(f"the episode is {draft.size} characters of JSON without its images; the limit is "
                         f"{2 * limits.max_text_chars}", 413)
    return RememberRequest(user, draft)


def _episode_form(body: dict[str, Any], limits: RequestLimits, user_for: UserFor) -> tuple[dict[str, Any], str]:
    """An episode's JSON with its steps numbered and its `metadata.user` set to the namespace it
    goes to: the one the call names (`user`/`user_id`/`scope` beside `episode`) or the episode's
    own `metadata.user`; two different ones are refused."""
    named = ""
    if "episode" in body:
        unknown = sorted(set(body) - _ENVELOPE_KEYS)
        if unknown:
            raise BadRequest(f"unknown field(s) {', '.join(unknown)} beside \"episode\"; send \"episode\" and "
                             f"optionally \"user\"")
        named = _short(_one_of(body, USER), "user", limits.max_id_chars)
        body = _object(body["episode"], "\"episode\"")
    metadata = body.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise BadRequest(f"not an episode (\"metadata\" must be an object); {_EPISODE_HELP}")
    own = _short((metadata or {}).get("user"), "metadata.user", limits.max_id_chars)
    if named and own and named != own:
        raise BadRequest(f"the call names user {named!r} and the episode's metadata.user is {own!r}; send one "
                         f"of them, or the same user in both")
    user = user_for(named or own)
    _short(body.get("task_id"), "task_id", limits.max_id_chars)
    _short((metadata or {}).get("time"), "metadata.time", limits.max_time_chars)
    steps = body.get("steps")
    if isinstance(steps, list):
        if len(steps) > limits.max_steps:
            raise BadRequest(f"the episode has {len(steps)} steps; the limit is {limits.max_steps}", 413)
        # a harness sends steps in order and rarely numbers them
        steps = [{"index": i, **step} if isinstance(step, dict) and "index" not in step else step
                 for i, step in enumerate(steps)]
        body = {**body, "steps": steps}
    return {**body, "metadata": {**(metadata or {}), "user": user}}, user


def _episode(body: dict[str, Any], benchmark: str) -> EpisodeRecorder:
    try:
        return EpisodeRecorder.from_dict({"benchmark": benchmark, **body})
    except BadRequest:
        raise
    except (ContractError, TypeError, ValueError, AttributeError, KeyError) as exc:
        raise BadRequest(f"not an episode ({_first_line(exc)}); {_EPISODE_HELP}") from None


class _Images:
    """The images of one remember: each decoded and checked as the request is read, its slot in
    the episode a placeholder until the namespace stores it (`EpisodeDraft.build`)."""

    def __init__(self, limits: RequestLimits, allow_paths: bool) -> None:
        self.limits, self.allow_paths = limits, allow_paths
        self.checked: list[bytes] = []

    def check(self, item: Any) -> dict[str, Any]:
        if isinstance(item, dict):
            raise BadRequest("images of an episode must be data URLs (data:image/png;base64,...); image "
                             "references into another store cannot be read here")
        if len(self.checked) >= self.limits.max_episode_images:
            raise BadRequest(f"an episode may carry at most {self.limits.max_episode_images} images", 413)
        self.checked.append(image_bytes(item, len(self.checked), self.limits, allow_paths=self.allow_paths))
        return placeholder(len(self.checked) - 1)


_CHAT_KEYS, _MESSAGE_KEYS = model.CHAT.names(), model.MESSAGE.names()


def _chat_form(body: dict[str, Any]) -> dict[str, Any] | None:
    """A chat as `{"messages", "user", "time", "task_id"}`, from a chat or from one message (a
    transcript string: its turns); None for an episode."""
    if "messages" in body:
        form, keys = "a chat remember", _CHAT_KEYS
    elif any(name in body for name in CONTENT):
        form, keys = "a one-message remember", _MESSAGE_KEYS
    else:
        return None
    unknown = sorted(set(body) - keys)
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)} in {form}; send {', '.join(sorted(keys))}")
    chat = {"user": _one_of(body, USER), "time": body.get("time"), "task_id": body.get("task_id")}
    if "messages" in body:
        return {**chat, "messages": body["messages"]}
    content = _one_of(body, CONTENT)
    turns = transcript_turns(content) if isinstance(content, str) and not body.get("images") else None
    if turns:
        return {**chat, "messages": [{"role": role, "content": text} for role, text in turns]}
    message = {"role": body.get("role") or "user", "content": content}
    if body.get("images"):
        message["images"] = body["images"]
    return {**chat, "messages": [message]}


def chat_episode(messages: Any, limits: RequestLimits, benchmark: str, put: Callable[[Any], dict[str, Any]], *,
                 user: str, task_id: str, time: str) -> EpisodeRecorder:
    """A conversation episode: one step per message (a message's further images follow as steps of
    their own, since a step holds one picture), cited as `<task_id>#<i>`."""
    if not isinstance(messages, list) or not messages:
        raise BadRequest("\"messages\" must be a non-empty list of {\"role\", \"content\"} objects")
    if len(messages) > limits.max_steps:
        raise BadRequest(f"the chat has {len(messages)} messages; the limit is {limits.max_steps}", 413)
    steps, total = [], 0
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str) \
                or not isinstance(message.get("content"), str):
            raise BadRequest(f"message {i} must be an object with string \"role\" and \"content\"")
        role = _short(message["role"], f"message {i} role", limits.max_id_chars)
        total += len(message["content"])
        if total > limits.max_text_chars:
            raise BadRequest(f"the chat has more than {limits.max_text_chars} characters of content (the limit)", 413)
        pictures = [ImageRef.from_dict(put(x)) for x in _list_of(message.get("images") or [], f"message {i} images")]
        for k, picture in enumerate(pictures or [None]):
            text = message["content"] if k == 0 else f"(image {k + 1} of this message)"
            steps.append(Step(index=len(steps), observation=f"{role}: {text}", screenshot=picture,
                              ref=f"{task_id}#{len(steps)}", metadata={"speaker": role, "time": time}))
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


_FORGET_KEYS = model.FORGET.names()


@dataclass(frozen=True)
class ForgetRequest:
    user: str                    # the namespace it acts on, already authorised
    task_id: str | None = None   # one episode's id
    all: bool = False            # or everything of the user


def check_forget_target(task_id: str | None, all: bool) -> None:
    """A forget names what it erases: one episode (`task_id`) or the whole user (`all`). A call
    with neither is refused, never read as "everything": an agent's forget() with no arguments
    must not erase a user's memory."""
    if task_id is not None and all:
        raise BadRequest("a forget takes \"task_id\" (one episode) or \"all\": true (everything of the user), not "
                         "both; nothing was forgotten")
    if task_id is None and not all:
        raise BadRequest("a forget needs \"task_id\" (the id remember answered: that episode is forgotten) or "
                         "\"all\": true (every episode of the user is forgotten); it named neither, so nothing "
                         "was forgotten")


def forget_request(body: Any, limits: RequestLimits, *, user_for: UserFor) -> ForgetRequest:
    """`{"user": U, "task_id": T}` forgets one episode; `{"user": U, "all": true}` the namespace."""
    body = _object(body, "a forget")
    unknown = sorted(set(body) - _FORGET_KEYS)
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)} in a forget; send \"user\" and \"task_id\" (one "
                         f"episode) or \"all\": true (everything of the user)")
    user = _short(_one_of(body, USER), "user", limits.max_id_chars)
    task_id, every = body.get("task_id"), body.get("all")
    if task_id is not None and (not isinstance(task_id, str) or not task_id):
        raise BadRequest("\"task_id\" must be a non-empty string: the id `remember` answered with")
    if every is not None and not isinstance(every, bool):
        raise BadRequest("\"all\" must be true or false (true: forget everything of the user)")
    task_id = _short(task_id, "task_id", limits.max_id_chars) if task_id is not None else None
    check_forget_target(task_id, bool(every))
    return ForgetRequest(user_for(user), task_id, bool(every))


@dataclass(frozen=True)
class FeedbackRequest:
    user: str                       # the namespace it acts on, already authorised
    recall_id: str
    used: tuple[str, ...]
    not_used: tuple[str, ...] = ()


def feedback_request(body: Any, limits: RequestLimits, *, user_for: UserFor) -> FeedbackRequest:
    """`{"user": U, "recall_id": R, "used": [ids], "not_used": [ids]?}`: what the agent used of
    recall R. Its shape is checked here; whether R is this user's and returned those ids, by the
    namespace's recall log (`serve.storage.recall_log`)."""
    body = _object(body, "a feedback")
    unknown = sorted(set(body) - model.FEEDBACK.names())
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)} in a feedback; send \"user\", \"recall_id\", "
                         f"\"used\" and optionally \"not_used\"")
    user = _short(_one_of(body, USER), "user", limits.max_id_chars)
    recall_id = body.get("recall_id")
    if not isinstance(recall_id, str) or not recall_id:
        raise BadRequest("\"recall_id\" is required: the recall_id the recall answered with")

    def ids(name: str) -> tuple[str, ...]:
        value = body.get(name, [])
        if not isinstance(value, list) or not all(isinstance(i, str) and i for i in value):
            raise BadRequest(f"\"{name}\" must be a list of the evidence ids the recall returned")
        return tuple(_short(i, name, limits.max_id_chars) for i in value)

    if "used" not in body:
        raise BadRequest("\"used\" is required: the evidence ids the agent used ([] when it used none)")
    return FeedbackRequest(user_for(user), _short(recall_id, "recall_id", limits.max_id_chars), ids("used"),
                           ids("not_used"))


def export_request(body: Any, limits: RequestLimits, *, user_for: UserFor) -> str:
    """`{"user": U}` (or `{}`): whose episodes to export; the authorised namespace."""
    body = _object(body, "an export")
    unknown = sorted(set(body) - model.EXPORT.names())
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)} in an export; send \"user\" (or nothing)")
    return user_for(_short(_one_of(body, USER), "user", limits.max_id_chars))
