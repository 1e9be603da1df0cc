"""Flags several commands take with one meaning (`eval` and `search`): defined once here, so
that their spelling, help and parsing cannot drift apart."""

from __future__ import annotations

import json
from typing import Any

from automemo.cli import UserError


def add_option_flag(p) -> None:
    p.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="benchmark option, e.g. path=DIR for memgallery / locomo (VALUE parsed as JSON "
                        "when it can be), repeatable")


def add_ray_address_flag(p) -> None:
    p.add_argument("--ray-address", metavar="ADDR",
                   help="an existing Ray cluster (e.g. ray://head:10001); default: a local one")


def add_agent_flags(p, *, model_help: str = "model of the execution agent") -> None:
    p.add_argument("--agent-model", metavar="M", help=model_help)
    p.add_argument("--agent-base-url", metavar="U", help="the agent's OpenAI-compatible …/v1 URL")


def add_judge_flags(p) -> None:
    p.add_argument("--judge-model", metavar="M",
                   help="model of the LLM judge (webvoyager, mind2web, judge=llm); default: the agent's")
    p.add_argument("--judge-base-url", metavar="U", help="the judge's …/v1 URL (default: the agent's)")


def parse_options(items: list[str] | None) -> dict[str, Any]:
    """`--option KEY=VALUE` items as a mapping, each VALUE parsed as JSON when it can be."""
    options: dict[str, Any] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UserError(f"--option {item!r}: expected KEY=VALUE, e.g. --option n_users=2")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def with_judge_defaults(data: dict[str, Any]) -> dict[str, Any]:
    """The judge answers on the agent's endpoint, with its key, and with its model unless given
    one: one key and one server are enough to evaluate a judged benchmark."""
    llm = data.get("llm") or {}
    agent, judge = llm.get("agent") or {}, dict(llm.get("judge") or {})
    for key in ("model", "base_url", "api_key_env"):
        if agent.get(key) and not judge.get(key):
            judge[key] = agent[key]
    return {**data, "llm": {**llm, "judge": judge}} if judge else data
