"""What the HTTP guard lets through, from the command line's flags: the host names the server
answers to, the web page origins it trusts with CORS, and the rate limit. Plain data, so the
command line can build it without importing the web stack."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from automemo.serve.defaults import HOST, RATE_LIMIT

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


@dataclass(frozen=True)
class HttpPolicy:
    """What the guard lets through, from the command line's flags."""

    bind_host: str = HOST
    allowed_hosts: tuple[str, ...] = ()   # --allowed-host: NAME (any port) or NAME:PORT
    cors_origins: tuple[str, ...] = ()    # --cors-origin: scheme://host[:port], exactly
    rate_per_minute: int = RATE_LIMIT     # --rate-limit; 0: none

    def host_names(self) -> tuple[str, ...]:
        """The Host names (lower case, IPv6 in brackets) requests may carry."""
        names: list[str] = []
        if is_loopback(self.bind_host) or is_wildcard(self.bind_host):
            names.extend(LOOPBACK_NAMES)  # a wildcard bind listens on loopback too
        if not is_wildcard(self.bind_host):
            names.append(_bracketed(self.bind_host))
        names.extend(h.lower() for h in self.allowed_hosts)
        return tuple(dict.fromkeys(names))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    return host.strip("[]") in ("0.0.0.0", "::", "")


def _bracketed(host: str) -> str:
    host = host.lower()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
