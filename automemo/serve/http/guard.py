"""The ASGI guard in front of every HTTP route (REST, /mcp, /healthz, /openapi.json): what is
checked before a request reaches a handler, in this order.

1. Host: the name the client used must be one this server answers to (the bind address, the
   loopback names on a loopback or wildcard bind, `--allowed-host`). A web page whose own name
   was rebound to 127.0.0.1 (DNS rebinding) sends its own name here and is refused.
2. Origin: a browser names the page that sends a request; a page may call the server only from
   its own origin (scheme and the very host and port of the request's Host) or a `--cors-origin`,
   matched exactly: another local app (`http://localhost:3000`) is another origin. Clients that
   send no Origin (curl, SDKs) pass.
3. CORS, only for `--cors-origin` origins: preflights answered, responses labelled.
4. The bearer token (every path but /healthz), whose principal is left in the scope for the
   handlers' namespace checks (`serve.access`).
5. The rate limit per token, or per client address without tokens (not /healthz).
6. A declared body over the limit, refused before it is read.

Every refusal is a JSON `{"error": sentence}` naming what was refused and the flag that allows it."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from starlette.middleware.cors import CORSMiddleware
from starlette.responses import JSONResponse

from automemo.serve.access import LOCAL, PRINCIPAL_KEY, TokenTable
from automemo.serve.http.policy import HttpPolicy
from automemo.serve.http.rate_limit import RateLimiter

log = logging.getLogger("automemo.serve")
OPEN_PATHS = ("/healthz",)  # no token, no rate limit: a liveness probe
_CORS_HEADERS = ["Authorization", "Content-Type", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-ID"]


def build_guard(app: Any, policy: HttpPolicy, tokens: TokenTable, max_body_bytes: int) -> Any:
    """The app wrapped in the checks above (CORS only when origins are configured)."""
    inner = Guard(app, policy, tokens, max_body_bytes)
    if policy.cors_origins:
        inner = CORSMiddleware(inner, allow_origins=list(policy.cors_origins), allow_credentials=False,
                               allow_methods=["GET", "POST", "DELETE", "OPTIONS"], allow_headers=_CORS_HEADERS,
                               expose_headers=["Mcp-Session-Id", "Retry-After"], max_age=600)
    return HostGuard(inner, policy)


class HostGuard:
    """Steps 1 and 2: Host and Origin, before CORS answers a preflight."""

    def __init__(self, app: Any, policy: HttpPolicy) -> None:
        self.app = app
        self.hosts = policy.host_names()
        self.origins = frozenset(o.rstrip("/").lower() for o in policy.cors_origins)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1").strip().lower()
        if not self._host_allowed(host):
            # the operator sees it too: a client of theirs refused here needs --allowed-host
            log.warning("refused a request for host %r (not an allowed host name)", host)
            shown = host or "(none)"
            return await refusal(
                f"refused: this server does not answer to the host name {shown!r} in the Host header (it "
                f"answers to {', '.join(self.hosts)}); a web page reaching it through a rebound DNS name "
                f"sends such a header. If clients really reach it by that name, start it with "
                f"--allowed-host {_name_of(host) or 'NAME'}", 403)(scope, receive, send)
        origin = headers.get(b"origin")
        if origin is not None:
            origin_text = origin.decode("latin-1").strip().rstrip("/").lower()
            if not self._origin_allowed(origin_text, host):
                log.warning("refused a request from the web page origin %r", origin_text)
                return await refusal(
                    f"refused: a request from the web page origin {origin_text!r} (the Origin header); "
                    f"browsers may call this server only from pages it was started to trust: pass "
                    f"--cors-origin {origin_text if origin_text.startswith('http') else 'ORIGIN'} to allow "
                    f"that page", 403)(scope, receive, send)
        return await self.app(scope, receive, send)

    def _host_allowed(self, host: str) -> bool:
        return bool(host) and (host in self.hosts or _name_of(host) in self.hosts)

    def _origin_allowed(self, origin: str, host: str) -> bool:
        """A configured origin, or the server's own: the page was served from the very host and
        port this request is addressed to (a same-origin call). "null" (a sandboxed page, a
        file) and anything odd are refused."""
        if origin in self.origins:
            return True
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path:
            return False
        return parts.netloc == host


def _name_of(host: str) -> str:
    """A Host header without its port: `example.com:8080` -> `example.com`, `[::1]:80` -> `[::1]`."""
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    """Steps 4 to 6: token, rate limit, declared body size."""

    def __init__(self, app: Any, policy: HttpPolicy, tokens: TokenTable, max_body_bytes: int) -> None:
        self.app = app
        self.tokens = tokens
        self.max_body_bytes = max_body_bytes
        self.limiter = RateLimiter(policy.rate_per_minute) if policy.rate_per_minute > 0 else None

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        open_path = scope["path"] in OPEN_PATHS
        principal = LOCAL  # no tokens configured: every caller may use every namespace
        if self.tokens.required and not open_path:
            principal = self.tokens.authenticate(headers.get(b"authorization"))
            if principal is None:
                return await refusal("missing or wrong token: send the header `Authorization: Bearer <token>`",
                                     401, {"WWW-Authenticate": "Bearer"})(scope, receive, send)
        if not (self.tokens.required and open_path):
            # an open path under tokens carries no principal, so a handler there cannot act for anyone
            scope[PRINCIPAL_KEY] = principal
        if self.limiter is not None and not open_path:
            caller = principal.label if self.tokens.required else f"address {(scope.get('client') or ('?',))[0]}"
            decision = self.limiter.take(caller)
            if not decision.allowed:
                whose = "this token" if self.tokens.required else "this client address"
                return await refusal(
                    f"too many requests from {whose}: the limit is {self.limiter.per_minute} a minute "
                    f"(--rate-limit); retry in {decision.retry_after} s", 429,
                    {"Retry-After": str(decision.retry_after)})(scope, receive, send)
        length = headers.get(b"content-length")
        if length is not None:
            if not length.isdigit():
                return await refusal("the Content-Length header is not a number", 400)(scope, receive, send)
            if int(length) > self.max_body_bytes:
                return await refusal(f"the request body is {int(length)} bytes; the limit is {self.max_body_bytes}",
                                     413)(scope, receive, send)
        return await self.app(scope, receive, send)


def refusal(message: str, status: int, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)
