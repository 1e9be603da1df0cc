"""LLM configuration: one `RoleConfig` per role (meta, agent, judge, memo) plus spending caps.

A role is configured when its `model` is set; an unconfigured role makes the component that
needs it fall back (the parameter mutator instead of the meta LLM, retrieval-only scoring instead
of an agent, memo programs' deterministic paths instead of `toolkit.llm`). API keys are never
part of the config: only the *name* of the environment variable that holds one, so that a
resolved config can be written to the run directory as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from automemo import configtools

ROLES = ("meta", "agent", "judge", "memo")


@dataclass(frozen=True)
class RoleConfig:
    model: str = ""                      # model name; empty = role not configured
    base_url: str = ""                   # OpenAI-compatible endpoint (…/v1); empty = the SDK's default
    api_key_env: str = "OPENAI_API_KEY"  # environment variable read for the key (never stored)
    temperature: float = 0.0             # deterministic by default: search runs should be repeatable
    max_tokens: int = 1024               # completion cap per call unless the caller asks otherwise
    timeout_s: float = 120.0             # per-attempt HTTP timeout of calls not streamed (embeddings, calls offering tools)
    stream: bool = True                  # stream chat answers, so that silence is timed rather than the whole answer
    # streamed: longest silence before the answer starts (the server reads the prompt, a
    # reasoning model thinks); raise it for a slow local server or a long-thinking model
    first_token_timeout_s: float = 600.0
    stall_timeout_s: float = 120.0       # streamed: longest silence once the answer flows; the call is then closed and retried
    max_retries: int = 4                 # retries after the first attempt (429, 5xx, timeout, connection)
    retry_backoff_s: float = 1.0         # first backoff; doubles per retry, with jitter
    retry_backoff_max_s: float = 30.0    # ceiling of one backoff sleep, a server's Retry-After included
    vision: bool = True                  # the model takes images; false (a text-only model): images are dropped and prompts say so
    # the model's context window in tokens (e.g. 8192 for a small local server); 0 = unknown:
    # prompts are sent as built. Set it and evidence is trimmed to fit before the call.
    context_tokens: int = 0

    def __post_init__(self) -> None:
        if self.context_tokens < 0:
            raise configtools.ConfigError(
                f"context_tokens must be >= 0 (0 = unknown), got {self.context_tokens}")

    @property
    def configured(self) -> bool:
        return bool(self.model)


@dataclass(frozen=True)
class LLMConfig:
    meta: RoleConfig = RoleConfig()      # diagnoses and rewrites memo programs
    agent: RoleConfig = RoleConfig()     # the fixed execution agent
    judge: RoleConfig = RoleConfig()     # LLM-as-judge scoring
    memo: RoleConfig = RoleConfig()      # what memo programs reach through toolkit.llm / embeddings
    # Caps over all roles. Once one is reached no new action starts, the step in progress is
    # abandoned, and the final selection is made from what was evaluated. Unset = no cap.
    # Prompt + completion tokens:
    max_total_tokens: int | None = field(default=None, metadata={"example": 2_000_000})
    # USD, priced with automemo.llm.prices and [llm.prices]; refused at start when a configured
    # model has no price:
    max_usd: float | None = field(default=None, metadata={"example": 5.0})
    # LLM calls in a row that fail at the endpoint (connection, silence, 5xx, after their retries)
    # before the search stops, exits non-zero and can be resumed; 0 = never stop for that.
    breaker_failures: int = 3
    # USD per 1M (input, output) tokens by model name; overrides and extends automemo.llm.prices
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)

    def role(self, name: str) -> RoleConfig:
        if name not in ROLES:
            raise ValueError(f"unknown LLM role {name!r}; roles are {', '.join(ROLES)}")
        return getattr(self, name)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None, path: str = "llm") -> LLMConfig:
        """Build from a plain mapping (a TOML table); unknown keys fail with their key path."""
        return configtools.build(cls, data, path)
