"""Who may act on which memory: bearer tokens, each bound to namespaces (a namespace is a `user`,
"*" binds every one), and the decision of which namespace a request acts on.

The HTTP guard authenticates a request with `TokenTable.authenticate` and leaves the caller's
`Principal` in the ASGI scope (`PRINCIPAL_KEY`); the handlers (REST and MCP tools alike) ask
`namespace_for(principal, requested_user)` before touching memory. Over stdio there is no token:
the client is the user's own process, and the stdio face passes `LOCAL`, which may use every
namespace, explicitly. Access fails closed: a request without a principal (no guard saw it, or no
caller was given) is refused, never taken for `LOCAL`."""

from __future__ import annotations

import hmac
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from automemo.errors import AutomemoError, UsageError
from automemo.serve.defaults import DEFAULT_USER

EVERY = "*"                         # binds a token to every namespace
PRINCIPAL_KEY = "automemo.principal"  # where the guard leaves the caller in the ASGI scope


class NamespaceRefused(AutomemoError, PermissionError):
    """The caller may not act on the namespace it named (HTTP 403); the message is safe to show."""

    status = 403


class AccessConfigError(UsageError, ValueError):
    """The token configuration cannot be used; the message says what to fix."""


@dataclass(frozen=True)
class Principal:
    """The caller of one request: a label for logs and rate limits (never the token itself) and
    the namespaces it may use."""

    label: str
    namespaces: frozenset[str]

    @property
    def unbound(self) -> bool:
        return EVERY in self.namespaces

    def may_use(self, namespace: str) -> bool:
        return self.unbound or namespace in self.namespaces


LOCAL = Principal("local", frozenset({EVERY}))  # stdio, or HTTP on a server without tokens


def namespace_for(principal: Principal | None, requested: str) -> str:
    """The namespace a request acts on: the one it names if the caller may use it; naming none,
    the token's only namespace, or the fixed default namespace (`DEFAULT_USER`, never "") for an
    unbound token. Raises `NamespaceRefused` otherwise, and for no principal at all."""
    if not isinstance(principal, Principal):
        raise NamespaceRefused("this request carries no caller (it did not pass the server's guard); it is refused")
    if requested:
        if principal.may_use(requested):
            return requested
        raise NamespaceRefused(f"this token may not use the memory of user {requested!r}; it may use "
                               f"{_listed(principal)}")
    if principal.unbound:
        return DEFAULT_USER
    if len(principal.namespaces) == 1:
        return next(iter(principal.namespaces))
    raise NamespaceRefused(f"this token may use several users' memories ({_listed(principal)}); name one "
                           f"with \"user\"")


def principal_of(scope: Mapping[str, Any] | None) -> Principal:
    """The caller the guard recorded for an HTTP request's ASGI scope. No scope, or a scope the
    guard never saw, is refused rather than trusted (stdio passes `LOCAL` itself)."""
    if scope is None:
        raise NamespaceRefused("this call carries no HTTP request, so no caller the server's guard checked; "
                               "it is refused")
    principal = scope.get(PRINCIPAL_KEY)
    if not isinstance(principal, Principal):
        raise NamespaceRefused("this request did not pass the server's guard; it is refused")
    return principal


def _listed(principal: Principal) -> str:
    return ", ".join(repr(n) for n in sorted(principal.namespaces))


@dataclass(frozen=True)
class TokenTable:
    """The tokens a server accepts, each with its principal. Empty: no token is asked for."""

    entries: tuple[tuple[bytes, Principal], ...] = ()

    @property
    def required(self) -> bool:
        return bool(self.entries)

    def authenticate(self, authorization: bytes | None) -> Principal | None:
        """The principal of an `Authorization: Bearer <token>` header value, or None. Every entry
        is compared in constant time, so the answer's timing does not tell which one came close."""
        if not authorization or not authorization.startswith(b"Bearer "):
            return None
        given = authorization[7:].strip()
        found = None
        for token, principal in self.entries:
            if hmac.compare_digest(given, token):
                found = principal
        return found


def token_table(env_specs: list[str], tokens_file: Path | None, environ: Mapping[str, str] = os.environ) -> TokenTable:
    """The table from `--token-env` specs (`NAME`: the token in $NAME may use every namespace;
    `NAME=ana,bob`: only those) and a `--tokens` JSON file. A plain `NAME` that is unset adds no
    token (loopback may run without one); a bound one that is unset is an error."""
    entries: list[tuple[bytes, Principal]] = []
    for spec in env_specs:
        name, bound, users = spec.partition("=")
        name = name.strip()
        if not name:
            raise AccessConfigError(f"--token-env {spec!r} names no environment variable; pass NAME or "
                                    f"NAME=user1,user2")
        token = environ.get(name, "").strip()
        namespaces = _namespaces([u.strip() for u in users.split(",")] if bound else [EVERY],
                                 f"--token-env {spec}")
        if not token:
            if bound:
                raise AccessConfigError(f"the environment variable {name} (from --token-env {spec}) is empty; "
                                        f"put the token in it or drop the flag")
            continue
        entries.append((token.encode(), Principal(f"token from ${name}", namespaces)))
    if tokens_file is not None:
        entries.extend(_read_tokens_file(tokens_file))
    seen: set[bytes] = set()
    for token, principal in entries:
        if token in seen:
            raise AccessConfigError(f"two token entries hold the same token ({principal.label}); each token "
                                    f"must be bound once")
        seen.add(token)
    return TokenTable(tuple(entries))


def _read_tokens_file(path: Path) -> list[tuple[bytes, Principal]]:
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise AccessConfigError(f"cannot read the tokens file {path} ({exc.strerror})") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        # the file holds secrets: a copy readable by others is a leaked token
        raise AccessConfigError(f"the tokens file {path} is open to group or others (mode "
                                f"{stat.S_IMODE(mode):o}); run `chmod 600 {path}` and start again")
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AccessConfigError(f"the tokens file {path} is not readable JSON ({exc.__class__.__name__}); "
                                f"write {{\"tokens\": [{{\"token\": \"...\", \"namespaces\": [\"ana\"]}}]}}") from None
    items = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise AccessConfigError(f"the tokens file {path} needs a non-empty list \"tokens\" of "
                                f"{{\"token\": \"...\", \"namespaces\": [\"ana\"] or [\"*\"]}}")
    entries = []
    for i, item in enumerate(items, 1):
        where = f"entry {i} of the tokens file {path}"
        if not isinstance(item, dict) or set(item) - {"token", "namespaces", "name"}:
            raise AccessConfigError(f"{where} must be an object with \"token\" and \"namespaces\" (and an "
                                    f"optional \"name\")")
        token = item.get("token")
        if not isinstance(token, str) or not token.strip() or token != token.strip():
            raise AccessConfigError(f"{where} has no usable \"token\": a non-empty string without spaces around it")
        # the label keys the rate limit, so it is unique even when two entries share a name
        name = f"{item['name']} (tokens file entry {i})" if item.get("name") else f"tokens file entry {i}"
        entries.append((token.encode(), Principal(str(name), _namespaces(item.get("namespaces"), where))))
    return entries


def _namespaces(value: Any, where: str) -> frozenset[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise AccessConfigError(f"{where}: namespaces must be a non-empty list of user names, or [\"*\"] for every one")
    return frozenset(v.strip() for v in value)
