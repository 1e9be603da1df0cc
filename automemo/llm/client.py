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
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import openai

from automemo.errors import HostError, UsageError
from automemo.llm.tokens import estimate_tokens
from automemo.llm import quirks as quirk_rules
from automemo.llm import transport
from automemo.llm.breaker import CircuitBreaker
from automemo.llm.budget import SpendGuard, Spend
from automemo.llm.config import ROLES, LLMConfig, RoleConfig
from automemo.llm.ledger import Ledger, LedgerEntry
from automemo.llm.messages import message_text
from automemo.llm.prices import PriceTable, unpriced_cap_problem
from automemo.llm.quirks import Quirk

_RETRIED_STATUS = {408, 409, 429}
# A local server (vLLM, Ollama, llama.cpp, the fake) ignores the key, but the SDK wants one.
_PLACEHOLDER_KEY = "no-key-needed"


class LLMError(HostError, RuntimeError):
    """An LLM call failed for good. The message names the role, model, endpoint, the last
    status and how many attempts were made, which is what a user needs to fix the config."""

    def __init__(self, message: str, *, role: str = "", model: str = "", base_url: str = "",
                 status: str = "", attempts: int = 0) -> None:
        super().__init__(message)
        self.role, self.model, self.base_url = role, model, base_url
        self.status, self.attempts = status, attempts


class UnpricedModelError(UsageError, LLMError):
    """A USD cap was set while a configured model has no price: the cap could not be held."""


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
    if not (isinstance(exc, openai.BadRequestError)
            or (isinstance(exc, transport.HTTPStatusError) and exc.status == 400)):
        return False
    text = str(exc).lower()
    return any(phrase in text for phrase in _CONTEXT_PHRASES)


def _bad_request_message(exc: Exception) -> str | None:
    """The message of a 400 answer (from the SDK or the streamed transport), else None."""
    if isinstance(exc, transport.HTTPStatusError) and exc.status == 400:
        return exc.message
    if isinstance(exc, openai.BadRequestError):
        return str(exc)
    return None


# A failed call whose last status is one of these says the endpoint is down or broken, not that
# the request was wrong: it counts toward the circuit breaker.
_ENDPOINT_STATUSES = ("connection", "timeout", "stalled", "http 5")


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
    finish_reason: str | None = None       # "stop", "length" (cut at the completion cap), ...
    cached_tokens: int | None = None       # prompt tokens the server reused from its cache, if it said


class _BadResponse(Exception):
    """A 200 answer that is not a usable completion/embedding."""


def _classify(exc: Exception) -> tuple[str, bool] | None:
    """(ledger status, retry?) of a failed attempt; None for an exception that is not about the
    server (e.g. a TypeError from unserialisable messages): that is a bug to surface as it is."""
    if isinstance(exc, transport.Stalled):
        return "stalled", True
    if isinstance(exc, transport.ConnectFailed):
        return "connection", True
    if isinstance(exc, transport.HTTPStatusError):
        return f"http {exc.status}", exc.status >= 500 or exc.status in _RETRIED_STATUS
    if isinstance(exc, transport.MalformedStream):
        return "bad-response", False
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
    if isinstance(exc, transport.HTTPStatusError):
        headers = {k.lower(): v for k, v in exc.headers.items()}
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


def completion_cap(cfg: RoleConfig, messages: Sequence[dict[str, Any]], wanted: int) -> int:
    """The completion cap sent with a chat request: `wanted`, lowered when the role's context
    size is known and the prompt leaves less room (a cap beyond the context is itself refused by
    some servers), but never below a quarter of `wanted` or 256 tokens, whichever is smaller."""
    if not cfg.context_tokens:
        return wanted
    prompt = estimate_tokens("\n".join(message_text(m) for m in messages))
    room = cfg.context_tokens - prompt
    return max(min(wanted, 256, max(1, wanted // 4)), min(wanted, room))


class LLMClient:
    def __init__(self, config: LLMConfig, ledger: Ledger | None = None, *,
                 warn: Callable[[str], None] | None = None) -> None:
        """`warn` receives the one-time warnings of the run (a role turned text-only); default:
        a line on stderr."""
        self.config = config
        self.ledger = ledger if ledger is not None else Ledger()
        self.prices = PriceTable(config.prices)
        problem = unpriced_cap_problem(config, self.prices)
        if problem:
            raise UnpricedModelError(problem)
        tokens, usd = self.ledger.spent()  # a resumed run keeps counting from what it spent
        self.guard = SpendGuard(config.max_total_tokens, config.max_usd, already=Spend(tokens, usd))
        self.breaker = CircuitBreaker(config.breaker_failures)
        self.warn = warn or (lambda text: print(f"automemo: warning: {text}", file=sys.stderr))
        self._quirks: dict[str, set[Quirk]] = {role: set() for role in ROLES}
        self._clients: dict[str, openai.OpenAI] = {}
        self._lock = threading.Lock()
        self._rng = random.Random()
        for role in ROLES:  # fail fast on a missing key rather than mid-search
            if self.configured(role):
                self._sdk(role)

    # --- introspection --------------------------------------------------------------------------

    def configured(self, role: str) -> bool:
        return self.config.role(role).configured

    def vision(self, role: str) -> bool:
        """Whether the role's requests may carry images: its config says so and its server has
        not refused them in this run."""
        return self.config.role(role).vision and Quirk.TEXT_ONLY not in self._quirks[role]

    def quirks(self, role: str) -> set[Quirk]:
        """What the role's server was found to refuse in this run (a copy)."""
        with self._lock:
            return set(self._quirks[role])

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
        `tool_calls` instead of (or besides) text. `<think>` reasoning is stripped from the text.
        Streamed (the role's `stream`, calls without tools), silence is timed rather than the
        whole answer, and a call given up on is closed before it is retried."""
        cfg = self._role(role)
        request: dict[str, Any] = dict(
            model=cfg.model,
            messages=list(messages),
            max_tokens=completion_cap(
                cfg, messages, max_tokens if max_tokens is not None else cfg.max_tokens),
            temperature=temperature if temperature is not None else cfg.temperature,
        )
        if tools:
            request["tools"] = list(tools)
        streamed = cfg.stream and not tools

        def usage_of(text: str, prompt: Any, completion: Any) -> tuple[int, int]:
            if not isinstance(prompt, int):  # some local servers omit usage: estimate, caps still hold
                prompt = estimate_tokens("\n".join(message_text(m) for m in messages))
            if not isinstance(completion, int):
                completion = estimate_tokens(text)
            return prompt, completion

        def attempt_streamed(sdk: openai.OpenAI, body: dict[str, Any]) -> tuple:
            # The SDK client has resolved the endpoint (the role's base_url, else OPENAI_BASE_URL,
            # else OpenAI's own), so streamed calls go where the SDK's would.
            answer = transport.stream_chat(
                str(sdk.base_url), sdk.api_key, {**body, "stream_options": {"include_usage": True}},
                connect_s=min(30.0, cfg.timeout_s), first_token_s=cfg.first_token_timeout_s,
                stall_s=cfg.stall_timeout_s)
            text = quirk_rules.strip_think(answer.text)
            prompt, completion = usage_of(answer.text, answer.prompt_tokens, answer.completion_tokens)
            value = (text, (), answer.finish_reason, answer.cached_tokens)
            return value, prompt, completion, answer.model or cfg.model

        def attempt_sdk(sdk: openai.OpenAI, body: dict[str, Any]) -> tuple:
            response = sdk.chat.completions.create(**body)
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
            prompt, completion = usage_of(content, getattr(usage, "prompt_tokens", None),
                                          getattr(usage, "completion_tokens", None))
            cached = getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None)
            value = (quirk_rules.strip_think(content), calls,
                     getattr(choices[0], "finish_reason", None), cached if isinstance(cached, int) else None)
            return value, prompt, completion, getattr(response, "model", None) or cfg.model

        attempt = attempt_streamed if streamed else attempt_sdk
        (text, calls, finish, cached), prompt, completion, model, usd, latency = self._run(
            role, "chat", node, purpose, lambda sdk: attempt(sdk, self._adapted(role, request)),
            request=request)
        return ChatResult(text, model, prompt, completion, usd, latency, calls, finish, cached)

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
                tokens = sum(estimate_tokens(t) for t in texts)
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

    def _adapted(self, role: str, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            known = set(self._quirks[role])
        return quirk_rules.apply(request, known)

    def _learn(self, role: str, exc: Exception, request: dict[str, Any] | None, *,
               repeated: bool = False) -> bool:
        """Whether a failed attempt revealed a quirk of the role's server not yet known (then it
        is kept for the run, and the call is sent again adapted to it): a 400 that names what
        it refuses, or the same server error twice on a request with images (a text-only
        model's chat template failing on image parts, as llama.cpp's does)."""
        if request is None:
            return False
        message = _bad_request_message(exc)
        with self._lock:
            known = self._quirks[role]
            sent = quirk_rules.apply(request, known)
            if message is not None:
                quirk = quirk_rules.learn(message, sent, known)
            elif repeated and Quirk.TEXT_ONLY not in known and quirk_rules.has_images(sent["messages"]):
                quirk, message = Quirk.TEXT_ONLY, str(exc)
            else:
                quirk = None
            if quirk is None:
                return False
            known.add(quirk)
        if quirk is Quirk.TEXT_ONLY:
            cfg = self.config.role(role)
            self.warn(f"the {role} model {cfg.model!r} refused image inputs ({message[:160]}); "
                      f"role {role} runs text-only for the rest of this run (set llm.{role}.vision = "
                      f"false to say so from the start)")
        return True

    def _run(self, role: str, kind: str, node: Any, purpose: str, attempt: Callable,
             request: dict[str, Any] | None = None) -> tuple:
        cfg = self._role(role)
        sdk = self._sdk(role)
        where = cfg.base_url or "the default OpenAI endpoint"
        status, detail, previous = "", "", None
        number, retries = 0, 0
        while True:
            number += 1
            self.guard.check(f"{role} {kind} call ({purpose or 'no purpose'})")
            self.breaker.check()
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
                if self._learn(role, exc, request, repeated=repeated):
                    continue  # the request was wrong for this server, not the server: no retry spent
                if _is_context_overflow(exc):
                    self.breaker.success()  # the server answered: it is up
                    raise ContextLengthError(
                        f"{kind} call for role {role!r} (model {cfg.model!r} at {where}): the prompt "
                        f"does not fit the model's context: {detail} (set llm.{role}.context_tokens "
                        "to the model's context size so that prompts are fitted before the call)",
                        role=role, model=cfg.model, base_url=cfg.base_url, status=status, attempts=number,
                    ) from exc
                if not retry or repeated or retries >= cfg.max_retries:
                    why = " (the same server error twice: retrying will not change it)" if repeated else ""
                    message = (f"{kind} call for role {role!r} (model {cfg.model!r} at {where}) failed "
                               f"after {number} attempt(s){why}; last status: {status}: {detail}")
                    if status.startswith(_ENDPOINT_STATUSES):
                        self.breaker.failure(message)  # raises EndpointDown at the limit
                    else:
                        self.breaker.success()
                    raise LLMError(message, role=role, model=cfg.model, base_url=cfg.base_url,
                                   status=status, attempts=number) from exc
                retries += 1
                asked = _retry_after(exc)
                wait = self._backoff(cfg, retries - 1)
                time.sleep(min(cfg.retry_backoff_max_s, max(wait, asked)) if asked else wait)
                continue
            latency = time.monotonic() - started
            self.breaker.success()
            cost = self.prices.cost(model, prompt, completion)
            self.guard.add(prompt + completion, cost.usd)
            cached = value[3] if kind == "chat" else None
            self.ledger.record(LedgerEntry(
                role=role, model=model, status="ok", kind=kind, node=node, purpose=purpose,
                attempt=number, prompt_tokens=prompt, completion_tokens=completion,
                usd=cost.usd, priced=cost.priced, latency_s=latency, cached_tokens=cached or 0,
            ))
            return value, prompt, completion, model, cost.usd, latency
