"""A real, scriptable OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

It speaks just enough of the API for the `openai` SDK: `POST /v1/chat/completions`,
`POST /v1/embeddings` and `GET /v1/models` (`list_models=False` answers that one 404, as some
gateways do). Because it is a real server on a real socket, the client's retries, timeouts,
connection handling and error parsing are exercised for real.

Responses for chat completions come from, in order: the script queue (`script([...])`), the
handler (`set_handler(fn)`), the fallback (`fallback`: "echo" repeats the last user text,
"error" answers HTTP 500 so that an unscripted call is loud). A response is either the
assistant's content as a string or a dict with any of:

    content  the assistant text
    status   an HTTP status to answer instead (429, 500, ...) with an OpenAI-style error body
    delay    seconds to sleep before answering (a client timeout shorter than this fires)
    raw      a raw body sent as-is with status 200 (garbage for error-handling tests)
    usage    {"prompt_tokens": .., "completion_tokens": ..} instead of the chars/4 estimate
    headers  extra response headers (e.g. {"Retry-After": "1"} with a 429)
    tool_calls  [{"name": .., "arguments": {..}}]: the assistant calls these tools (OpenAI tool calling)
    finish_reason  what the choice ends with ("stop" unless given; "length" = cut at the cap)
    stall_after    streamed: send this many chunks, then go silent until the client closes the
                   connection (or `stall_s` seconds pass), as a server stuck mid-answer does
    ping_every     while stalled, send a keep-alive comment this often (seconds), as
                   sse-starlette servers do: it must not count as progress
    cached_tokens  prompt tokens reported as reused from the server's cache

A request with `"stream": true` is answered as server-sent events, a few characters per chunk,
with a usage chunk when `stream_options.include_usage` asks for one. `rejects` makes the server
refuse what real ones refuse, with OpenAI's error body: "max_tokens" (reasoning models want
max_completion_tokens), "temperature" (only the default), "images" (a text-only model).
`events` records ("request" | "closed", time, connection number): a test can check that the
client closed a stalled connection before it sent its retry. `max_in_flight` is the most chat
requests it was answering at once (with `latency`, what a parallel client overlaps).

Embeddings are deterministic: a vector seeded by the SHA-256 of the text, L2-normalised, of
dimension `embedding_dim`; the same text always gets the same vector, in any process.
"""

from __future__ import annotations

import collections
import hashlib
import json
import math
import random
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Literal, Union

from automemo.llm.messages import message_text

Response = Union[str, dict]
Handler = Callable[[dict], Response]


def estimate_tokens(text: str) -> int:
    """The fake server's own token count, as a server's tokenizer would report it: ~4 characters
    per token (never 0 for a non-empty text). Deliberately not the planner's estimate
    (`automemo.llm.tokens`, 3 characters per token): a real server counts with its own
    tokenizer, and the meta agent's prompt fitting must hold against a count that differs."""
    return (len(text) + 3) // 4


def hash_embedding(text: str, dim: int) -> list[float]:
    """A deterministic unit vector for `text` (stable across processes and platforms)."""
    rng = random.Random(hashlib.sha256(text.encode("utf-8")).digest())
    vec = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


class FakeLLM:
    """An OpenAI-compatible server with scripted answers. Use as a context manager, or call
    `start()` / `stop()`. Thread-safe: the server answers requests on several threads."""

    def __init__(
        self,
        *,
        fallback: Literal["echo", "error"] = "echo",
        embedding_dim: int = 64,
        latency: float = 0.0,
        model: str = "fake-model",
        rejects: Iterable[str] = (),
        stall_s: float = 30.0,
        port: int = 0,
        list_models: bool = True,
    ) -> None:
        """`port` 0 picks a free one; a given port lets a test bring a server up where a
        configured endpoint was dead."""
        self._port = port
        self.list_models = list_models
        self.fallback = fallback
        self.rejects = set(rejects)
        unknown = self.rejects - set(_REJECTIONS)
        if unknown:
            raise ValueError(f"unknown rejects {sorted(unknown)}; known: {sorted(_REJECTIONS)}")
        self.stall_s = stall_s
        self._events: list[tuple[str, float, int]] = []
        self._connections = 0
        self.embedding_dim = embedding_dim
        self.latency = latency  # seconds added to every answer (benchmarks model a real API)
        self._in_flight = 0      # chat requests received and not yet answered
        self._max_in_flight = 0  # the most of them at once since the last reset_in_flight()
        self.model = model
        self._lock = threading.Lock()
        self._queue: collections.deque[Response] = collections.deque()
        self._handler: Handler | None = None
        self._requests: list[dict] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> FakeLLM:
        if self._server is not None:
            return self
        server = ThreadingHTTPServer(("127.0.0.1", self._port), _make_request_handler(self))
        server.daemon_threads = True
        self._server = server
        # A short poll interval keeps stop() fast: tests start and stop a server each.
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fakellm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeLLM is not started; call start() or use it as a context manager")
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # --- scripting ------------------------------------------------------------------------------

    def script(self, responses: Iterable[Response]) -> FakeLLM:
        """Queue chat responses, consumed one per request in order (appends to what is queued)."""
        with self._lock:
            self._queue.extend(responses)
        return self

    def set_handler(self, fn: Handler | None) -> FakeLLM:
        """Answer chat requests the script does not cover with `fn(request_json)`."""
        with self._lock:
            self._handler = fn
        return self

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self._handler = None
            self._requests.clear()

    @property
    def requests(self) -> list[dict]:
        """JSON bodies received so far (chat and embeddings), oldest first; a copy."""
        with self._lock:
            return list(self._requests)

    @property
    def events(self) -> list[tuple[str, float, int]]:
        """("request" | "closed", monotonic time, connection number), oldest first; a copy."""
        with self._lock:
            return list(self._events)

    def _event(self, kind: str, connection: int) -> None:
        with self._lock:
            self._events.append((kind, time.monotonic(), connection))

    def _new_connection(self) -> int:
        with self._lock:
            self._connections += 1
            return self._connections

    @property
    def max_in_flight(self) -> int:
        """The most chat requests being answered at once since start (or `reset_in_flight`)."""
        with self._lock:
            return self._max_in_flight

    def reset_in_flight(self) -> None:
        with self._lock:
            self._max_in_flight = self._in_flight

    def _answering(self, delta: int) -> None:
        with self._lock:
            self._in_flight += delta
            self._max_in_flight = max(self._max_in_flight, self._in_flight)

    @property
    def pending(self) -> int:
        """Scripted responses not yet consumed."""
        with self._lock:
            return len(self._queue)

    # --- answering (called by the request handler threads) ----------------------------------------

    def _record(self, path: str, body: dict) -> None:
        with self._lock:
            self._requests.append({**body, "_path": path})

    def _next_chat_response(self, body: dict) -> Response:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            handler = self._handler
        if handler is not None:
            return handler(body)
        if self.fallback == "echo":
            users = [m for m in body.get("messages", []) if m.get("role") == "user"]
            return message_text(users[-1]) if users else ""
        return {"status": 500, "content": "FakeLLM: no scripted response left and fallback='error'"}


def _chat_completion(fake: FakeLLM, body: dict, content: str, usage: dict | None, tool_calls: list | None = None) -> dict:
    prompt_text = "\n".join(message_text(m) for m in body.get("messages", []))
    usage = dict(usage or {})
    usage.setdefault("prompt_tokens", estimate_tokens(prompt_text))
    usage.setdefault("completion_tokens", estimate_tokens(content))
    usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
    return {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or fake.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content or None, "tool_calls": [
                    {"id": f"call_{i}_{time.monotonic_ns()}", "type": "function",
                     "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))}}
                    for i, c in enumerate(tool_calls)
                ]} if tool_calls else {"role": "assistant", "content": content},
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        "usage": usage,
    }


def _embeddings(fake: FakeLLM, body: dict) -> dict:
    inputs = body.get("input", [])
    if isinstance(inputs, str):
        inputs = [inputs]
    data = [
        {"object": "embedding", "index": i, "embedding": hash_embedding(str(t), fake.embedding_dim)}
        for i, t in enumerate(inputs)
    ]
    tokens = sum(estimate_tokens(str(t)) for t in inputs)
    return {
        "object": "list",
        "data": data,
        "model": body.get("model") or fake.model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def _error_body(status: int, message: str, param: str | None = None, code: str | None = None) -> dict:
    kind = "rate_limit_error" if status == 429 else "server_error" if status >= 500 else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "param": param, "code": code or str(status)}}


# What real servers answer (HTTP 400) to what they refuse: (param, code, message).
_REJECTIONS = {
    "max_tokens": ("max_tokens", "unsupported_parameter",
                   "Unsupported parameter: 'max_tokens' is not supported with this model. "
                   "Use 'max_completion_tokens' instead."),
    "temperature": ("temperature", "unsupported_value",
                    "Unsupported value: 'temperature' does not support 0.0 with this model. "
                    "Only the default (1) value is supported."),
    "images": ("messages", "invalid_value",
               "Invalid content type. image_url is only supported by certain models."),
}


def _refusal(fake: FakeLLM, body: dict) -> dict | None:
    """The 400 body a server with `fake.rejects` answers `body` with, or None."""
    images = any(isinstance(m.get("content"), list) and any(
        isinstance(p, dict) and p.get("type") == "image_url" for p in m["content"])
        for m in body.get("messages", []))
    present = {"max_tokens": "max_tokens" in body, "temperature": "temperature" in body, "images": images}
    for name in sorted(fake.rejects):
        if present[name]:
            param, code, message = _REJECTIONS[name]
            return _error_body(400, message, param, code)
    return None


def _chunks(text: str, size: int = 8) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def _peer_closed(sock: socket.socket, wait: float) -> bool:
    """Whether the client closed its end (readable, and a peek reads nothing) within `wait` s."""
    readable, _, _ = select.select([sock], [], [], wait)
    if not readable:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def _make_request_handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class RequestHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body leave in one segment: with Nagle on, the body would wait for the
        # client's delayed ACK (~40 ms per call), which benchmarks would measure as latency.
        disable_nagle_algorithm = True
        wbufsize = -1

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def setup(self) -> None:
            super().setup()
            self.connection_number = fake._new_connection()

        def _stream(self, body: dict, response: dict) -> None:
            """The answer as server-sent events; the connection closes at its end."""
            model = body.get("model") or fake.model
            base = {"id": f"chatcmpl-fake-{time.monotonic_ns()}", "object": "chat.completion.chunk",
                    "created": int(time.time()), "model": model}
            content = response.get("content", "")
            events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece},
                                            "finish_reason": None}]} for piece in _chunks(content)]
            events.append({**base, "choices": [{"index": 0, "delta": {},
                                                "finish_reason": response.get("finish_reason", "stop")}]})
            if (body.get("stream_options") or {}).get("include_usage"):
                usage = _chat_completion(fake, body, content, response.get("usage"))["usage"]
                if response.get("cached_tokens") is not None:
                    usage["prompt_tokens_details"] = {"cached_tokens": int(response["cached_tokens"])}
                events.append({**base, "choices": [], "usage": usage})
            stall_after = response.get("stall_after")
            self.close_connection = True
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for i, event in enumerate(events):
                    if stall_after is not None and i == int(stall_after):
                        deadline = time.monotonic() + fake.stall_s
                        ping, next_ping = response.get("ping_every"), time.monotonic()
                        while time.monotonic() < deadline:
                            if ping and time.monotonic() >= next_ping:  # keep-alive, not progress
                                self.wfile.write(b": ping\n\n")
                                self.wfile.flush()
                                next_ping += float(ping)
                            if _peer_closed(self.connection, 0.02):
                                fake._event("closed", self.connection_number)
                                return
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                fake._event("closed", self.connection_number)

        def _send(self, status: int, body: bytes | dict, headers: dict | None = None) -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, str(value))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout fired): nothing to answer

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models") and fake.list_models:
                self._send(200, {"object": "list", "data": [{"id": fake.model, "object": "model"}]})
            else:
                self._send(404, _error_body(404, f"FakeLLM: no route GET {self.path}"))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(400, _error_body(400, "FakeLLM: request body is not JSON"))
                return
            fake._record(self.path, body)
            fake._event("request", self.connection_number)
            chat = self.path.endswith("/chat/completions")
            if chat:
                fake._answering(+1)
            try:
                self._answer(body)
            finally:
                if chat:
                    fake._answering(-1)

        def _answer(self, body: dict) -> None:
            if fake.latency:
                time.sleep(fake.latency)
            if self.path.endswith("/embeddings"):
                self._send(200, _embeddings(fake, body))
                return
            if not self.path.endswith("/chat/completions"):
                self._send(404, _error_body(404, f"FakeLLM: no route POST {self.path}"))
                return
            refusal = _refusal(fake, body)
            if refusal is not None:
                self._send(400, refusal)
                return
            response = fake._next_chat_response(body)
            if isinstance(response, str):
                response = {"content": response}
            if response.get("delay"):
                time.sleep(float(response["delay"]))
            if "raw" in response:
                raw_body = response["raw"]
                self._send(200, raw_body.encode() if isinstance(raw_body, str) else raw_body)
            elif response.get("status", 200) != 200:
                status = int(response["status"])
                self._send(status, _error_body(status, response.get("content") or f"fake {status}"),
                           response.get("headers"))
            elif body.get("stream") and not response.get("tool_calls"):
                self._stream(body, response)
            else:
                answer = _chat_completion(fake, body, response.get("content", ""), response.get("usage"),
                                          response.get("tool_calls"))
                if response.get("finish_reason"):
                    answer["choices"][0]["finish_reason"] = response["finish_reason"]
                self._send(200, answer)

    return RequestHandler
