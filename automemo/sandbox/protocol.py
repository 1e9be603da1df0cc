"""Framing of the session channel: length-prefixed JSON messages over one unix socket.

Stdlib only: both the host and the guest runner import it.

Both directions share one connection. The host sends requests ("load", "update", "retrieve",
"ping", "describe"); while handling one, the guest may send its own requests for host services
("llm", "embed_text", ...), which the host answers before the guest sends its result. Messages:

    request   {"id": <int|str>, "method": str, "params": {...}}
    response  {"id": <same id>, "result": <json>}
           or {"id": <same id>, "error": {"kind": str, "message": str, "traceback": str}}

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON.
"""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

from automemo.errors import AutomemoError, HostError

HEADER = struct.Struct(">I")
SOCKET_NAME = "host.sock"


class ChannelClosed(HostError, ConnectionError):
    """The peer closed the connection (for the host: the guest exited)."""


class FrameTooLarge(AutomemoError, ValueError):
    """A frame announced more bytes than the receiver accepts."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"a {size:,}-byte message exceeds the limit of {limit:,} bytes")
        self.size = size
        self.limit = limit


class ProtocolViolation(AutomemoError, ValueError):
    """A frame is not a JSON object of the shape above."""


def encode(message: dict[str, Any]) -> bytes:
    """Serialise a message. Raises TypeError/ValueError for data JSON cannot carry (NaN too)."""
    body = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
    return HEADER.pack(len(body)) + body


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall(encode(message))


def send_frame(sock: socket.socket, frame: bytes) -> None:
    sock.sendall(frame)


def recv(sock: socket.socket, max_bytes: int) -> dict[str, Any]:
    """Read one message. Honours the socket's timeout (raises `socket.timeout`)."""
    (size,) = HEADER.unpack(_recv_exactly(sock, HEADER.size))
    if size > max_bytes:
        raise FrameTooLarge(size, max_bytes)
    body = _recv_exactly(sock, size)
    try:
        message = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise ProtocolViolation(f"message is not valid JSON: {exc}") from None
    if not isinstance(message, dict) or "id" not in message:
        raise ProtocolViolation("message is not a JSON object with an id")
    return message


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise ChannelClosed("the other end closed the session channel")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def error_message(msg_id: Any, kind: str, message: str, traceback: str = "") -> dict[str, Any]:
    return {"id": msg_id, "error": {"kind": kind, "message": message, "traceback": traceback}}


def is_request(message: dict[str, Any]) -> bool:
    return "method" in message
