"""`MemoServices`: the host side of a session's toolkit calls.

One instance per sandbox session. It answers "llm", "embed_text", "embed_tokens", "embed_image",
"embedding_dims" and "has_llm" for the guest, which never sees a model, a key or the network.
Everything arriving here was produced by untrusted code, so every parameter is validated and
every error message says what was wrong in terms the program's author (an LLM) can act on:
the message is what the guest's exception carries.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from automemo.contract import ContractError, ImageRef
from automemo.errors import AutomemoError
from automemo.failures import HostServiceFailed
from automemo.llm.breaker import CALLS_STOPPED, EndpointDown
from automemo.llm.budget import BudgetExceeded
from automemo.llm.messages import user_message
from automemo.toolkit.api import ToolkitUnavailable
from automemo.toolkit import matrix_wire
from automemo.toolkit.embedding import CachedTextEncoder, Encoders
from automemo.toolkit.encode_cost import ColdEncodeMeter

if TYPE_CHECKING:
    from automemo.llm import LLMClient


@dataclass(frozen=True)
class MemoQuota:
    max_llm_calls: int = 500              # per session; a program summarising every episode fits
    max_embed_items: int = 100_000        # texts computed (cache hits free) + images embedded per session
    max_images_per_llm_call: int = 8      # images attached to one toolkit.llm call
    max_tokens_per_llm_call: int = 4096   # completion cap a program may ask for
    max_prompt_chars: int = 200_000       # text of one toolkit.llm prompt


class ServiceError(AutomemoError, ValueError):
    """A toolkit call from the guest had bad parameters."""


class QuotaExceeded(ToolkitUnavailable):
    """The session spent its quota of a host service."""


class MemoServices:
    def __init__(
        self,
        encoders: Encoders,
        llm_client: LLMClient | None,
        store_root: Path | str,
        node: int | str | None = None,
        quota: MemoQuota = MemoQuota(),
        meter: ColdEncodeMeter | None = None,
    ) -> None:
        """`meter`: charges the texts and images asked for as if nothing were cached (an
        evaluation's cost figures, automemo.evaluation.cost); None: nothing is charged."""
        self.encoders = encoders
        self.meter = meter
        self.llm = llm_client
        self.store_root = Path(store_root).resolve()
        self.node = node
        self.quota = quota
        self.llm_calls = 0
        self.embed_items = 0
        self._lock = threading.Lock()
        self._host_failures: list[BaseException] = []
        self._methods: dict[str, Callable[[dict], Any]] = {
            "llm": self._llm,
            "embed_text": self._embed_text,
            "embed_tokens": self._embed_tokens,
            "embed_image": self._embed_image,
            "embedding_dims": lambda params: self.encoders.dims(),
            "has_llm": lambda params: self._has_llm(),
        }

    def handle(self, method: str, params: dict[str, Any]) -> Any:
        if method not in self._methods:
            raise ServiceError(f"unknown toolkit host method {method!r}; known: {', '.join(self._methods)}")
        if not isinstance(params, dict):
            raise ServiceError(f"toolkit.{method}: parameters must be an object, got {type(params).__name__}")
        try:
            return self._methods[method](params)
        except (ServiceError, ToolkitUnavailable):
            raise  # the program's own doing (bad parameters, spent quota, no memo LLM configured)
        except Exception as exc:
            # The host failed (memo LLM, embedding model, encoder, spent run cap): the guest gets a
            # clean error, and the call is marked so that whatever the program makes of it (a
            # crash, or a quiet fallback) is not scored as the program's.
            with self._lock:
                self._host_failures.append(exc)
            what = "the run's spending cap is reached" if isinstance(exc, BudgetExceeded) else \
                "its LLM endpoint is down" if isinstance(exc, EndpointDown) else f"{type(exc).__name__}: {exc}"
            raise ToolkitUnavailable(f"toolkit.{method}: the host's service failed ({what}); "
                                     "this call is not charged to the program") from None

    def take_host_failures(self) -> list[BaseException]:
        """The host-side failures met since the last call of this method (in order), cleared."""
        with self._lock:
            failures, self._host_failures = self._host_failures, []
        return failures

    @property
    def cold_encode_ms(self) -> float:
        """CPU milliseconds the host's encoders would have spent on this session's requests with
        nothing cached, each distinct text or image once (0 without a meter)."""
        return self.meter.charged_ms if self.meter is not None else 0.0

    def usage(self) -> dict[str, int]:
        with self._lock:
            return {"llm_calls": self.llm_calls, "embed_items": self.embed_items}

    # --- methods --------------------------------------------------------------------------------

    def _has_llm(self) -> bool:
        return self.llm is not None and self.llm.configured("memo")

    def _llm(self, params: dict) -> str:
        _known(params, "llm", {"prompt", "images", "max_tokens", "temperature", "purpose"})
        if not self._has_llm():
            raise ToolkitUnavailable(
                "toolkit.llm: no memo LLM is configured for this run; check toolkit.has_llm() "
                "and use a deterministic fallback"
            )
        messages = _messages(params.get("prompt"))
        images = params.get("images", [])
        if not isinstance(images, list):
            raise ServiceError("toolkit.llm: images must be a list of ImageRef")
        if len(images) > self.quota.max_images_per_llm_call:
            raise ServiceError(
                f"toolkit.llm: {len(images)} images attached, at most {self.quota.max_images_per_llm_call} per call"
            )
        max_tokens = params.get("max_tokens", 512)
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not 1 <= max_tokens <= self.quota.max_tokens_per_llm_call:
            raise ServiceError(f"toolkit.llm: max_tokens must be an int in 1..{self.quota.max_tokens_per_llm_call}, got {max_tokens!r}")
        temperature = params.get("temperature", 0.0)
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2:
            raise ServiceError(f"toolkit.llm: temperature must be a number in 0..2, got {temperature!r}")
        purpose = params.get("purpose", "")
        if not isinstance(purpose, str):
            raise ServiceError("toolkit.llm: purpose must be a string")
        chars = sum(len(str(m.get("content", ""))) for m in messages)
        if chars > self.quota.max_prompt_chars:
            raise ServiceError(f"toolkit.llm: prompt has {chars} characters, at most {self.quota.max_prompt_chars}")
        if images:
            paths = [self._image_path(ref, f"toolkit.llm: images[{i}]") for i, ref in enumerate(images)]
            last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=None)
            if last_user is None:
                raise ServiceError("toolkit.llm: images need a user message to attach to")
            messages[last_user] = user_message(messages[last_user]["content"], paths)
        self._spend("llm_calls", 1, self.quota.max_llm_calls, "toolkit.llm calls")
        result = self.llm.chat(  # type: ignore[union-attr]
            "memo", messages, node=self.node, purpose=f"memo:{purpose}" if purpose else "memo",
            max_tokens=max_tokens, temperature=float(temperature),
        )
        return result.text

    def _embed_text(self, params: dict) -> list[list[float]] | dict[str, Any]:
        """Lists of floats, or with `packed: true` (what the guest's toolkit asks for) the
        float32 bytes in base64 (`matrix_wire`): the same vectors, bit for bit, in a quarter of
        the bytes and without formatting a decimal per float."""
        _known(params, "embed_text", {"texts", "packed"})
        texts = params.get("texts")
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise ServiceError("toolkit.embed_text: texts must be a list of strings")
        packed = params.get("packed", False)
        if not isinstance(packed, bool):
            raise ServiceError(f"toolkit.embed_text: packed must be true or false, got {packed!r}")
        if self.meter is not None:
            self.meter.texts(texts)
        if isinstance(self.encoders.text, CachedTextEncoder):
            # Only what the encoder computes counts: a cached text costs a lookup. A LongMemEval
            # test split is 124,000 turns over ~27,000 distinct texts.
            spend = lambda n: self._spend("embed_items", n, self.quota.max_embed_items, "embedded items")  # noqa: E731
            rows = self.encoders.text.embed(texts, node=self.node, before_encode=spend)
        else:
            self._spend("embed_items", len(texts), self.quota.max_embed_items, "embedded items")
            rows = self.encoders.text.embed(texts, node=self.node)
        return matrix_wire.pack(rows, "float32") if packed else rows.tolist()

    def _embed_tokens(self, params: dict) -> list[dict[str, Any]]:
        _known(params, "embed_tokens", {"texts"})
        texts = params.get("texts")
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise ServiceError("toolkit.embed_tokens: texts must be a list of strings")
        if not getattr(self.encoders.text, "has_tokens", False):
            raise ToolkitUnavailable(
                f"toolkit.embed_tokens: the run's text encoder ({self.encoders.text.name}) gives pooled "
                "vectors only; fall back to toolkit.embed_text"
            )
        self._spend("embed_items", len(texts), self.quota.max_embed_items, "embedded items")
        if self.meter is not None:
            self.meter.texts(texts, tokens=True)
        return [matrix_wire.pack(m, "float16") for m in self.encoders.text.embed_tokens(texts, node=self.node)]

    def _embed_image(self, params: dict) -> list[list[float]]:
        _known(params, "embed_image", {"refs"})
        refs = params.get("refs")
        if not isinstance(refs, list):
            raise ServiceError("toolkit.embed_image: refs must be a list of ImageRef")
        paths = [self._image_path(ref, f"toolkit.embed_image: refs[{i}]") for i, ref in enumerate(refs)]
        self._spend("embed_items", len(paths), self.quota.max_embed_items, "embedded items")
        if self.meter is not None:
            self.meter.images([str(p) for p in paths])
        try:
            return self.encoders.image.embed_files(paths).tolist()
        except ValueError as exc:
            raise ServiceError(f"toolkit.embed_image: {exc}") from None

    # --- helpers --------------------------------------------------------------------------------

    def _spend(self, counter: str, amount: int, limit: int, what: str) -> None:
        with self._lock:
            used = getattr(self, counter)
            if used + amount > limit:
                raise QuotaExceeded(
                    f"session quota exceeded: {used} {what} used, this call asks {amount} more, "
                    f"the limit is {limit}; cache results in the program's state instead of recomputing"
                )
            setattr(self, counter, used + amount)

    def _image_path(self, value: Any, where: str) -> Path:
        try:
            ref = value if isinstance(value, ImageRef) else ImageRef.from_dict(value)
        except ContractError as exc:
            raise ServiceError(f"{where}: {exc}") from None
        path = (self.store_root / ref.path).resolve()
        if self.store_root not in path.parents:  # symlinks inside the store could point out
            raise ServiceError(f"{where}: {ref.path!r} resolves outside the episode store")
        if not path.is_file():
            raise ServiceError(f"{where}: no image at {ref.path!r} in the episode store")
        return path


def raise_host_failure(services: Any, during: str) -> None:
    """After a sandbox call: raise what the host's services met while serving it, if anything.
    A spent run cap or a dead memo LLM endpoint stops the work (`BudgetExceeded`,
    `EndpointDown`: the run's stop, with its own reason); any other host failure is
    `HostServiceFailed`, the caller's to retry or exclude. Services without the record (a
    test's stub) never raise here."""
    take = getattr(services, "take_host_failures", None)
    failures = take() if take is not None else []
    if not failures:
        return
    stopped = next((f for f in failures if isinstance(f, CALLS_STOPPED)), None)
    if stopped is not None:
        raise type(stopped)(f"{during} stopped: {stopped}")
    first = failures[0]
    raise HostServiceFailed(f"{during}: a host toolkit service failed ({type(first).__name__}: {first}); "
                            "the call is not charged to the program")


def _known(params: dict, method: str, allowed: set[str]) -> None:
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ServiceError(f"toolkit.{method}: unknown parameter(s) {unknown}; accepted: {sorted(allowed)}")


def _messages(prompt: Any) -> list[dict[str, Any]]:
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    if not isinstance(prompt, list) or not prompt:
        raise ServiceError("toolkit.llm: prompt must be a string or a non-empty list of messages")
    out = []
    for i, message in enumerate(prompt):
        if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant"):
            raise ServiceError(
                f"toolkit.llm: prompt[{i}] must be an object with role system|user|assistant and content"
            )
        content = message.get("content")
        if isinstance(content, list):
            # Text parts only: an image part could carry a URL that the model server would fetch,
            # a way out of a sandbox that has no network. Images travel in `images`, as store refs.
            if not all(isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str) for p in content):
                raise ServiceError(
                    f"toolkit.llm: prompt[{i}].content parts must be {{'type': 'text', 'text': ...}}; "
                    "attach images with the images= argument (ImageRefs of the episode store)"
                )
            content = "\n".join(p["text"] for p in content)
        if not isinstance(content, str):
            raise ServiceError(f"toolkit.llm: prompt[{i}].content must be a string or a list of text parts")
        out.append({"role": message["role"], "content": content})
    return out
