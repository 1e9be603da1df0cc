"""Preflight: every LLM endpoint a search will call answers, checked before its first step.

Without it a dead endpoint shows late: with the seed sweep on, a search whose meta server is down
evaluates every seed before its first meta call fails. So before step 1 (and before a resumed run
continues) each endpoint the run uses gets one cheap request: `GET …/models`, which every
OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama, the project's fake) answers without
loading or running a model. A server without that route (HTTP 404/405) gets one chat completion
of one token instead. One attempt, no retries: this is a question about whether anything answers
at the URL, and a server that does not answer now fails the search's first calls anyway.

Dead means: no connection, no answer within the timeout, a 5xx, a refused key (401/403), or an
answer that is not an OpenAI-compatible server's. Any other answer (a 400 about the request, a
429) shows a live server. Nothing is recorded in the ledger: the list costs no tokens, and the
one-token fallback is not worth a row that would look like spend on a step.
"""

from __future__ import annotations

import os
from typing import Sequence

import openai

from automemo.failures import InfrastructureFailure
from automemo.llm.config import LLMConfig, RoleConfig

# A local server ignores the key, but the SDK wants one (the same stand-in as the client's).
_PLACEHOLDER_KEY = "no-key-needed"
# Long enough for a busy server's model list, short enough that a host that swallows packets
# is noticed quickly; the role's own timeout_s applies when it is shorter.
TIMEOUT_S = 30.0


class EndpointUnreachable(InfrastructureFailure):
    """A configured LLM endpoint did not answer the preflight request. The message is one
    sentence naming the role(s), the URL and the reason."""

    def __init__(self, roles: Sequence[str], base_url: str, reason: str) -> None:
        self.roles, self.base_url, self.reason = tuple(roles), base_url, reason
        super().__init__(f"the {' and '.join(roles)} LLM endpoint {base_url} does not answer: {reason}")


def check_endpoints(config: LLMConfig, roles: Sequence[str]) -> None:
    """Raise `EndpointUnreachable` for the first of `roles`' endpoints that does not answer.
    Roles that share a URL and key are checked with one request; unconfigured roles are
    skipped."""
    endpoints: dict[tuple[str, str], list[str]] = {}
    for role in roles:
        cfg = config.role(role)
        if cfg.configured:
            endpoints.setdefault((cfg.base_url, cfg.api_key_env), []).append(role)
    for sharing in endpoints.values():
        cfg = config.role(sharing[0])
        sdk = _sdk(cfg)
        reason = probe(sdk, cfg)
        if reason is not None:
            raise EndpointUnreachable(sharing, str(sdk.base_url).rstrip("/"), reason)


def probe(sdk: openai.OpenAI, cfg: RoleConfig) -> str | None:
    """Why the endpoint behind `sdk` is dead, or None when it answers."""
    try:
        sdk.models.list()
        return None
    except openai.APIStatusError as exc:
        if exc.status_code not in (404, 405):  # 404/405: no model list here; ask for one token
            return _status_reason(exc, cfg)
    except Exception as exc:  # noqa: BLE001 - every other failure is a reason, said as it is
        return _failure_reason(exc, _timeout(cfg))
    try:
        sdk.chat.completions.create(model=cfg.model, max_tokens=1,
                                    messages=[{"role": "user", "content": "ping"}])
        return None
    except openai.NotFoundError as exc:
        return (f"HTTP 404 for both the model list and a chat completion ({_first_line(exc.message)}): "
                f"is it the server's …/v1 URL, and is model {cfg.model!r} served there?")
    except openai.APIStatusError as exc:
        return _status_reason(exc, cfg)
    except Exception as exc:  # noqa: BLE001
        return _failure_reason(exc, _timeout(cfg))


def _sdk(cfg: RoleConfig) -> openai.OpenAI:
    return openai.OpenAI(api_key=os.environ.get(cfg.api_key_env) or _PLACEHOLDER_KEY,
                         base_url=cfg.base_url or None, timeout=_timeout(cfg),
                         max_retries=0)


def _timeout(cfg: RoleConfig) -> float:
    return min(cfg.timeout_s, TIMEOUT_S)


def _status_reason(exc: openai.APIStatusError, cfg: RoleConfig) -> str | None:
    code = exc.status_code
    if code in (401, 403):
        return f"HTTP {code}, the API key (${cfg.api_key_env}) was refused"
    if code >= 500:
        return f"HTTP {code}: {_first_line(exc.message)}"
    return None  # a 400 about the request, a 429: the server is there and answering


def _failure_reason(exc: Exception, timeout_s: float) -> str:
    if isinstance(exc, openai.APITimeoutError):
        return f"no answer within {timeout_s:g} s"
    if isinstance(exc, openai.APIConnectionError):
        return f"no connection ({_root_cause(exc)})"
    # Anything else is an answer the SDK could not read (an HTML page, say): not an
    # OpenAI-compatible server at this URL.
    return (f"its answer is not an OpenAI-compatible server's ({type(exc).__name__}: "
            f"{_first_line(str(exc))}); is it the server's …/v1 URL?")


def _root_cause(exc: BaseException) -> str:
    """The innermost cause's message: "[Errno 111] Connection refused" rather than the SDK's
    "Connection error."."""
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__
    return _first_line(str(exc)) or type(exc).__name__


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:200]
