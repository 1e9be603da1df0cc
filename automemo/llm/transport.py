"""A streamed chat completion over plain HTTP (server-sent events), with an inactivity timeout.

Why not the SDK's whole-answer timeout: a slow local server may need twenty minutes for an answer
it is steadily producing, while a server that stopped producing should be given up on within
a minute. So the clock here measures silence: `first_token_s` until the first byte of the answer
(the server reads the prompt, or a reasoning model thinks, before it says anything), then
`stall_s` between any two reads. A call that is given up on has its connection closed before
this function returns, so the server stops generating the abandoned answer before any retry is
sent (llama.cpp and vLLM cancel a request whose client went away).

Plain `http.client` rather than the SDK because only at the socket can the silence be timed and
the connection be closed for certain.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import urlsplit

from automemo.errors import HostError

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class TransportError(HostError):
    """A streamed call failed; subclasses say how."""


class ConnectFailed(TransportError):
    """No connection to the server (refused, unknown host, connect timeout)."""


class Stalled(TransportError):
    """The server went silent for longer than allowed; the connection was closed."""


class HTTPStatusError(TransportError):
    """The server answered with an error status; `message` is the error body's message."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str], body: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status, self.message, self.headers, self.body = status, message, dict(headers), body


class MalformedStream(TransportError):
    """A 200 answer that is not an OpenAI-style event stream."""


@dataclass(frozen=True)
class StreamedAnswer:
    text: str
    finish_reason: str | None
    model: str
    prompt_tokens: int | None = None       # None: the server reported no usage
    completion_tokens: int | None = None
    cached_tokens: int | None = None       # prompt tokens the server reused from its cache
    reasoning_chars: int = 0               # reasoning the server streamed apart from the answer


def _connection(base_url: str, connect_s: float) -> tuple[http.client.HTTPConnection, str]:
    url = urlsplit(base_url or DEFAULT_BASE_URL)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ConnectFailed(f"base_url {base_url!r} is not an http(s) URL")
    if url.scheme == "https":
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            url.hostname, url.port, timeout=connect_s, context=ssl.create_default_context())
    else:
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=connect_s)
    return conn, url.path.rstrip("/") + "/chat/completions"


def _error_message(raw: str) -> str:
    """The message of an OpenAI-style error body ({"error": {"message": ...}}), else the body."""
    try:
        data = json.loads(raw)
    except ValueError:
        return raw.strip()[:1000]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])
    if isinstance(error, str):
        return error
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])
    return raw.strip()[:1000]


def stream_chat(
    base_url: str, api_key: str, body: Mapping[str, Any], *,
    connect_s: float = 30.0, first_token_s: float = 600.0, stall_s: float = 120.0,
) -> StreamedAnswer:
    """POST `body` (an OpenAI chat request; "stream" is set here) and read the event stream to
    its end. Raises ConnectFailed, Stalled, HTTPStatusError or MalformedStream; the connection
    is closed whichever way this returns."""
    conn, path = _connection(base_url, connect_s)
    payload = json.dumps({**body, "stream": True}).encode()
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream",
               "Authorization": f"Bearer {api_key}"}
    sock: socket.socket | None = None
    response: http.client.HTTPResponse | None = None
    try:
        try:
            conn.connect()
        except OSError as exc:
            raise ConnectFailed(f"cannot connect to {base_url or DEFAULT_BASE_URL}: {exc}") from None
        sock = conn.sock  # kept: http.client lets go of it when the answer says "Connection: close"
        sock.settimeout(first_token_s)
        try:
            conn.request("POST", path, body=payload, headers=headers)
            response = conn.getresponse()
        except socket.timeout:
            raise Stalled(f"no answer within {first_token_s:g} s (first_token_timeout_s)") from None
        except (ConnectionError, http.client.HTTPException) as exc:
            raise ConnectFailed(f"the connection to {base_url} broke: {exc}") from None
        if response.status != 200:
            raw = response.read(1_000_000).decode("utf-8", "replace")
            raise HTTPStatusError(response.status, _error_message(raw), dict(response.getheaders()), raw)
        if "text/event-stream" not in (response.getheader("Content-Type") or ""):
            return _whole_answer(response.read().decode("utf-8", "replace"))
        return _read_events(sock, response, first_token_s, stall_s)
    finally:
        # Closed before any retry: the server sees the client go and stops generating.
        if response is not None:
            response.close()
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed by the server
            sock.close()
        conn.close()


def _whole_answer(raw: str) -> StreamedAnswer:
    """A server that ignored "stream" and sent the completion in one piece."""
    try:
        data = json.loads(raw)
        choice = data["choices"][0]
        content = choice["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise MalformedStream(f"the answer is neither an event stream nor a completion: {raw[:200]}") from None
    if not isinstance(content, str):
        raise MalformedStream(f"the first choice has no text content: {json.dumps(choice)[:200]}")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    return StreamedAnswer(
        text=content, finish_reason=choice.get("finish_reason"), model=str(data.get("model") or ""),
        prompt_tokens=usage.get("prompt_tokens") if isinstance(usage.get("prompt_tokens"), int) else None,
        completion_tokens=usage.get("completion_tokens") if isinstance(usage.get("completion_tokens"), int) else None,
        cached_tokens=cached if isinstance(cached, int) else None)


def _read_events(sock: socket.socket, response: http.client.HTTPResponse,
                 first_token_s: float, stall_s: float) -> StreamedAnswer:
    parts: list[str] = []
    finish: str | None = None
    model = ""
    usage: dict[str, Any] = {}
    timings: dict[str, Any] = {}
    reasoning = 0
    started = False
    last_data = time.monotonic()
    while True:
        limit, name = (stall_s, "stall_timeout_s") if started else (first_token_s, "first_token_timeout_s")
        try:
            line = response.readline()
        except socket.timeout:
            line = None
        except (ConnectionError, http.client.HTTPException) as exc:
            raise ConnectFailed(f"the stream broke off: {exc}") from None
        # Keep-alive comments (sse-starlette pings every 15 s) are not progress: only data is.
        if line is None or time.monotonic() - last_data > limit:
            raise Stalled(f"the server sent no answer for {limit:g} s ({name}) after "
                          f"{len(''.join(parts))} characters of answer")
        if not line:
            break  # the server closed the stream
        text = line.decode("utf-8", "replace").strip()
        if not text.startswith("data:"):
            continue  # blank separators, comments (": ping"), event names
        last_data = time.monotonic()
        if not started:
            started = True
            sock.settimeout(stall_s)
        data = text[5:].strip()
        if data == "[DONE]":
            break
        try:
            event = json.loads(data)
        except ValueError:
            raise MalformedStream(f"an event is not JSON: {data[:200]}") from None
        if not isinstance(event, dict):
            raise MalformedStream(f"an event is not an object: {data[:200]}")
        if isinstance(event.get("error"), (dict, str)):
            raise HTTPStatusError(500, _error_message(data), {}, data)
        model = event.get("model") or model
        if isinstance(event.get("usage"), dict):
            usage = event["usage"]
        if isinstance(event.get("timings"), dict):  # llama.cpp: prompt tokens taken from its cache
            timings = event["timings"]
        for choice in event.get("choices") or []:
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                parts.append(delta["content"])
            for key in ("reasoning_content", "reasoning"):
                if isinstance(delta.get(key), str):
                    reasoning += len(delta[key])
            if choice.get("finish_reason"):
                finish = choice["finish_reason"]
    details = usage.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if cached is None and isinstance(timings.get("cache_n"), int):
        cached = timings["cache_n"]
    return StreamedAnswer(
        text="".join(parts), finish_reason=finish, model=model,
        prompt_tokens=usage.get("prompt_tokens") if isinstance(usage.get("prompt_tokens"), int) else None,
        completion_tokens=usage.get("completion_tokens") if isinstance(usage.get("completion_tokens"), int) else None,
        cached_tokens=cached if isinstance(cached, int) else None, reasoning_chars=reasoning,
    )

