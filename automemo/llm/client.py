"""`LLMClient`: chat and embeddings per role over the `openai` SDK, with retries, a ledger row per
attempt and spending caps checked before every attempt.

The SDK's own retries are disabled so that every attempt is visible here (in the ledger and in
the backoff policy). Retried: HTTP 429, 5xx, 408/409, timeouts and connection errors. Not
retried: other 4xx (a wrong model name or key does not fix itself) and malformed 200 answers
(a base_url pointing at something that is not an OpenAI-compatible server).
"""

from __future__ import annotations

import os
import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import openai

from automemo.llm.budget import SpendGuard, Spend
from automemo.llm.config import ROLES, LLMConfig, RoleConfig
from automemo.llm.ledger import Ledger, LedgerEntry
from automemo.llm.messages import message_text
from automemo.llm.prices import PriceTable

_RETRIED_STATUS = {408, 409, 429}
# A local server (vLLM, Ollama, llama.cpp, the fake) ignores the key, but the SDK wants one.
_PLACEHOLDER_KEY = "no-key-needed"


class LLMError(RuntimeError):
    """An LLM call failed for good. The message names the role, model, endpoint, the last
    status and how many attempts were made, which is what a user needs to fix the config."""

    def __init__(self, message: str, *, role: str = "", model: str = "", base_url: str = "",
                 status: str = "", attempts: int = 0) -> None:
        super().__init__(message)
        self.role, self.model, self.base_url = role, model, base_url
        self.status, self.attempts = status, attempts


class ContextLengthError(LLMError):
    """The server refused the request because prompt plus completion exceed the model's context
    (an HTTP 400 saying so). Not retried as it is: the caller may trim the prompt and try again."""


# How OpenAI, vLLM, llama.cpp and Ollama word a context overflow in a 400 body. The status alone
# cannot tell it from any other bad request, and only this one is cured by a shorter prompt.
_CONTEXT_PHRASES = (
    "context length", "context_length", "maximum context", "context size", "context window",
    "too many tokens", "exceeds the available context",
)


def _is_context_overflow(exc: Exception) -> bool:
    if not isinstance(exc, openai.BadRequestError):
        return False
    text = str(exc).lower()
    return any(phrase in text for phrase in _CONTEXT_PHRASES)


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for (OpenAI tool calling); `arguments` is its JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ChatResult:
    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float
    tool_calls: tuple[ToolCall, ...] = ()  # when the call offered tools and the model chose some


class _BadResponse(Exception):
    """A 200 answer that is not a usable completion/embedding."""


def _estimate_tokens(text: str) -> int:
    return (len(text) + 3) // 4


def _classify(exc: Exception) -> tuple[str, bool] | None:
    """(ledger status, retry?) of a failed attempt; None for an exception that is not about the
    server (e.g. a TypeError from unserialisable messages): that is a bug to surface as it is."""
    if isinstance(exc, openai.APITimeoutError):
        return "timeout", True
    if isinstance(exc, openai.APIConnectionError):
        return "connection", True
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        return f"http {code}", code >= 500 or code in _RETRIED_STATUS
    if isinstance(exc, (_BadResponse, openai.APIResponseValidationError, ValueError)):
        return "bad-response", False  # ValueError: the SDK's JSONDecodeError on a non-JSON body
    return None


def _retry_after(exc: Exception) -> float | None:
    """Seconds the server asked us to wait (Retry-After / retry-after-ms), if it said."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return float(value) * scale
            except ValueError:
                pass  # an HTTP date: fall back to our own backoff
    return None


def _image_hint(kind: str, role: str, exc: Exception) -> str:
    """A server error on a request with images often means a text-only model: say what to set."""
    body = getattr(getattr(exc, "request", None), "content", b"") or b""
    if kind == "chat" and b'"image_url"' in body:
        return (f" (the request carried images: if the model is text-only, set "
                f"llm.{role}.vision = false)")
    return ""


def completion_cap(cfg: RoleConfig, messages: Sequence[dict[str, Any]], wanted: int) -> int:
    """The completion cap sent with a chat request: `wanted`, lowered when the role's context
    size is known and the prompt leaves less room (a cap beyond the context is itself refused by
    some servers), but never below a quarter of `wanted` or 256 tokens, whichever is smaller."""
    if not cfg.context_tokens:
        return wanted
    prompt = _estimate_tokens("\n".join(message_text(m) for m in messages))
    room = cfg.context_tokens - prompt
    return max(min(wanted, 256, max(1, wanted // 4)), min(wanted, room))


class LLMClient:
    def __init__(self, config: LLMConfig, ledger: Ledger | None = None) -> None:
        self.config = config
        self.ledger = ledger if ledger is not None else Ledger()
        self.prices = PriceTable(config.prices)
        tokens, usd = self.ledger.spent()  # a resumed run keeps counting from what it spent
        self.guard = SpendGuard(config.max_total_tokens, config.max_usd, already=Spend(tokens, usd))
        self._clients: dict[str, openai.OpenAI] = {}
        self._lock = threading.Lock()
        self._rng = random.Random()
        for role in ROLES:  # fail fast on a missing key rather than mid-search
            if self.configured(role):
                self._sdk(role)

    # --- introspection --------------------------------------------------------------------------

    def configured(self, role: str) -> bool:
        return self.config.role(role).configured

    def totals(self) -> dict[str, dict[str, Any]]:
        """Per role: {"calls", "failed", "prompt_tokens", "completion_tokens", "usd", "unpriced_models"}."""
        return self.ledger.totals("role")

    def exhausted(self) -> str | None:
        """Why no new LLM call may start (a cap is reached), or None. The search checks this
        before starting an action so that it stops between steps, not inside one."""
        return self.guard.exhausted()

    # --- calls ----------------------------------------------------------------------------------

    def chat(
        self,
        role: str,
        messages: Sequence[dict[str, Any]],
        *,
        node: int | str | None = None,
        purpose: str = "",
        max_tokens: int | None = None,
        temperature: float | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
    ) -> ChatResult:
        """A chat completion. With `tools` (OpenAI function specs) the model may answer with
        `tool_calls` instead of (or besides) text."""
        cfg = self._role(role)
        request = dict(
            model=cfg.model,
            messages=list(messages),
            max_tokens=completion_cap(
                cfg, messages, max_tokens if max_tokens is not None else cfg.max_tokens),
            temperature=temperature if temperature is not None else cfg.temperature,
        )
        if tools:
            request["tools"] = list(tools)

        def attempt(sdk: openai.OpenAI) -> tuple[str, int, int, str]:
            response = sdk.chat.completions.create(**request)
            choices = getattr(response, "choices", None)
            if not isinstance(choices, list) or not choices:
                raise _BadResponse(f"no choices in the answer: {str(response)[:200]}")
            message = getattr(choices[0], "message", None)
            content = getattr(message, "content", None)
            calls = tuple(
                ToolCall(str(c.id), str(c.function.name), str(c.function.arguments or "{}"))
                for c in (getattr(message, "tool_calls", None) or []) if getattr(c, "function", None)
            ) if tools else ()
            if calls and content is None:
                content = ""
            if not isinstance(content, str):
                raise _BadResponse(f"the first choice has no text content: {str(choices[0])[:200]}")
            usage = getattr(response, "usage", None)
            prompt = getattr(usage, "prompt_tokens", None)
            completion = getattr(usage, "completion_tokens", None)
            if not isinstance(prompt, int):  # some local servers omit usage: estimate, caps still hold
                prompt = _estimate_tokens("\n".join(message_text(m) for m in messages))
            if not isinstance(completion, int):
                completion = _estimate_tokens(content)
            return (content, calls), prompt, completion, getattr(response, "model", None) or cfg.model

        (text, calls), prompt, completion, model, usd, latency = self._run(role, "chat", node, purpose, attempt)
        return ChatResult(text, model, prompt, completion, usd, latency, calls)

    def embed(
        self,
        role: str,
        texts: Sequence[str],
        *,
        node: int | str | None = None,
        purpose: str = "",
        model: str | None = None,
    ) -> list[list[float]]:
        """Embeddings of `texts` in order. `model` overrides the role's model (a role's chat model
        is rarely an embedding model)."""
        cfg = self._role(role)
        texts = list(texts)
        if not texts:
            return []
        name = model or cfg.model

        def attempt(sdk: openai.OpenAI) -> tuple[list[list[float]], int, int, str]:
            response = sdk.embeddings.create(model=name, input=texts)
            data = getattr(response, "data", None)
            if not isinstance(data, list) or len(data) != len(texts):
                raise _BadResponse(f"expected {len(texts)} embeddings, got {str(data)[:200]}")
            ordered = sorted(data, key=lambda d: getattr(d, "index", 0))
            vectors = [getattr(d, "embedding", None) for d in ordered]
            if not all(isinstance(v, list) and v for v in vectors):
                raise _BadResponse("an embedding is missing or empty")
            tokens = getattr(getattr(response, "usage", None), "prompt_tokens", None)
            if not isinstance(tokens, int):
                tokens = sum(_estimate_tokens(t) for t in texts)
            return vectors, tokens, 0, name

        vectors, *_ = self._run(role, "embed", node, purpose, attempt)
        return vectors

    # --- machinery ------------------------------------------------------------------------------

    def _role(self, role: str) -> RoleConfig:
        cfg = self.config.role(role)
        if not cfg.configured:
            raise LLMError(
                f"LLM role {role!r} is not configured: set llm.{role}.model (and base_url) in the config",
                role=role,
            )
        return cfg

    def _sdk(self, role: str) -> openai.OpenAI:
        with self._lock:
            if role not in self._clients:
                cfg = self.config.role(role)
                key = os.environ.get(cfg.api_key_env, "")
                if not key and not cfg.base_url:
                    raise LLMError(
                        f"LLM role {role!r} (model {cfg.model!r}) would call OpenAI's own endpoint, and "
                        f"${cfg.api_key_env} is empty: export the key, or pass --{role}-base-url URL "
                        f"(llm.{role}.base_url in a config file) for another OpenAI-compatible server "
                        f"(vLLM, Ollama, llama.cpp)",
                        role=role, model=cfg.model,
                    )
                self._clients[role] = openai.OpenAI(
                    api_key=key or _PLACEHOLDER_KEY,
                    base_url=cfg.base_url or None,
                    timeout=cfg.timeout_s,
                    max_retries=0,
                )
            return self._clients[role]

    def _backoff(self, cfg: RoleConfig, retry: int) -> float:
        # Full-ish jitter: concurrent evaluations that hit the same 429 must not retry in lockstep.
        ceiling = min(cfg.retry_backoff_max_s, cfg.retry_backoff_s * (2 ** retry))
        return ceiling * (0.5 + 0.5 * self._rng.random())

    def _run(self, role: str, kind: str, node: Any, purpose: str, attempt: Callable) -> tuple:
        cfg = self._role(role)
        sdk = self._sdk(role)
        where = cfg.base_url or "the default OpenAI endpoint"
        status, detail, previous = "", "", None
        for number in range(1, cfg.max_retries + 2):
            self.guard.check(f"{role} {kind} call ({purpose or 'no purpose'})")
            started = time.monotonic()
            try:
                value, prompt, completion, model = attempt(sdk)
            except Exception as exc:  # noqa: BLE001 - classified below; anything unknown is not retried
                latency = time.monotonic() - started
                classified = _classify(exc)
                status, retry = classified or ("error", False)
                detail = str(exc)[:500]
                self.ledger.record(LedgerEntry(
                    role=role, model=cfg.model, status=status, kind=kind, node=node,
                    purpose=purpose, attempt=number, latency_s=latency, error=detail,
                ))
                if classified is None:
                    raise
                # An internal error (500) that repeats word for word is the server's answer to
                # this very request (a chat template rejecting it, say), not a passing fault: stop
                # at two. 502-504 (gateway, overload) are transient by nature and keep retrying.
                repeated = status == "http 500" and (status, detail) == previous
                previous = (status, detail)
                if _is_context_overflow(exc):
                    raise ContextLengthError(
                        f"{kind} call for role {role!r} (model {cfg.model!r} at {where}): the prompt "
                        f"does not fit the model's context: {detail} (set llm.{role}.context_tokens "
                        "to the model's context size so that prompts are fitted before the call)",
                        role=role, model=cfg.model, base_url=cfg.base_url, status=status, attempts=number,
                    ) from exc
                if not retry or repeated or number > cfg.max_retries:
                    why = " (the same server error twice: retrying will not change it)" if repeated else ""
                    raise LLMError(
                        f"{kind} call for role {role!r} (model {cfg.model!r} at {where}) failed after "
                        f"{number} attempt(s){why}; last status: {status}: {detail}"
                        f"{_image_hint(kind, role, exc)}",
                        role=role, model=cfg.model, base_url=cfg.base_url, status=status, attempts=number,
                    ) from exc
                asked = _retry_after(exc)
                wait = self._backoff(cfg, number - 1)
                time.sleep(min(cfg.retry_backoff_max_s, max(wait, asked)) if asked else wait)
                continue
            latency = time.monotonic() - started
            cost = self.prices.cost(model, prompt, completion)
            self.guard.add(prompt + completion, cost.usd)
            self.ledger.record(LedgerEntry(
                role=role, model=model, status="ok", kind=kind, node=node, purpose=purpose,
                attempt=number, prompt_tokens=prompt, completion_tokens=completion,
                usd=cost.usd, priced=cost.priced, latency_s=latency,
            ))
            return value, prompt, completion, model, cost.usd, latency
        raise AssertionError("unreachable")  # the loop either returns or raises
