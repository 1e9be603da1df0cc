"""`automemo serve` over HTTP as a hostile web page, a benchmark harness and a token-holding client
see it: two real server processes (the program unsandboxed, for speed), driven with raw HTTP
(to set Host and Origin), the MCP SDK's client and a benchmark harness's generic MCP adapter.

- A web page reaching a loopback server through a rebound DNS name (foreign Host) or calling it
  from its own origin (foreign Origin) is refused on every route, MCP included.
- No image file path is read over HTTP, loopback and no token included; bytes that are not an
  image are refused before anything is stored or logged.
- Harness-style requests (`query`, `content`, steps without `index`) work.
- Rate limit, tokens bound to users, CORS only when configured."""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from servetools import PNG, ROOT, free_port, make_export

PASSWD = b"root:x:0:0:root:/root:/bin/bash\n"
TOKENS = {"ANA": "ana-secret-token", "ALL": "all-secret-token", "BURST": "burst-secret-token"}


class Served:
    """One `automemo serve` subprocess of this worktree's package."""

    def __init__(self, export: Path, state: Path, *flags: str, env: dict | None = None) -> None:
        self.port, self.state = free_port(), state
        cmd = [sys.executable, "-m", "automemo", "serve", str(export), "--port", str(self.port),
               "--state", str(state), "--sandbox", "unsafe", *flags]
        # stderr to a file: a pipe nobody reads would stall a chatty server once full
        self.log = state.parent / f"serve-{self.port}.log"
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
                                         stderr=log, stdout=subprocess.DEVNULL)
        deadline = time.time() + 60
        while time.time() < deadline:
            assert self.proc.poll() is None, self.log.read_text()
            try:
                if self.request("GET", "/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise AssertionError("the server did not come up")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def request(self, method: str, path: str, body: object = None, *, token: str | None = None,
                host: str | None = None, origin: str | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], dict]:
        """(status, headers with lower-case names, the JSON answer or {"body": text})."""
        sent = {"Host": host or f"127.0.0.1:{self.port}", **(headers or {})}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
            sent.setdefault("Accept", "application/json, text/event-stream")
        if token:
            sent["Authorization"] = f"Bearer {token}"
        if origin:
            sent["Origin"] = origin
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request(method, path, body=data, headers=sent)
            answer = connection.getresponse()
            raw, headers = answer.read(), {k.lower(): v for k, v in answer.getheaders()}
            is_json = headers.get("content-type", "").startswith("application/json")
            return answer.status, headers, json.loads(raw) if is_json and raw else {"body": raw.decode()}
        finally:
            connection.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(20)


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    return make_export(tmp_path_factory.mktemp("export") / "export")


@pytest.fixture(scope="module")
def open_server(export, tmp_path_factory):
    """Loopback, no token, no CORS, no rate limit: the setup of the reported attack."""
    server = Served(export, tmp_path_factory.mktemp("open") / "state", "--rate-limit", "0")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def token_server(export, tmp_path_factory):
    """Tokens bound to users, a trusted web app origin, a host name, and a low rate limit."""
    folder = tmp_path_factory.mktemp("tokens")
    tokens_file = folder / "tokens.json"
    tokens_file.write_text(json.dumps({"tokens": [{"token": TOKENS["ALL"], "namespaces": ["*"]},
                                                  {"token": TOKENS["BURST"], "namespaces": ["*"]}]}))
    tokens_file.chmod(0o600)
    server = Served(export, folder / "state", "--token-env", "ANA_TOKEN=ana", "--tokens", str(tokens_file),
                    "--cors-origin", "https://app.example", "--allowed-host", "memory.example",
                    "--rate-limit", "600", env={"ANA_TOKEN": TOKENS["ANA"]})
    yield server
    server.stop()


def _data_url(data: bytes, kind: str = "png") -> str:
    return f"data:image/{kind};base64," + base64.b64encode(data).decode()


def _mcp_call(name: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def _state_files(state: Path) -> dict[str, int]:
    """Every file of the state folder and its size: what a refused request must leave as it was."""
    return {str(p.relative_to(state)): p.stat().st_size for p in sorted(state.rglob("*"))
            if p.is_file() and p.name != ".lock"}


def test_a_rebound_host_or_a_foreign_origin_is_refused_on_every_route(open_server):
    server = open_server
    routes = [("POST", "/v1/recall", {"instruction": "what is my cat called"}),
              ("POST", "/v1/remember", {"content": "my cat is called Miso"}),
              ("POST", "/mcp", _mcp_call("recall", {"query": "what is my cat called"})),
              ("GET", "/healthz", None), ("GET", "/openapi.json", None), ("GET", "/v1/manifest", None)]
    before = _state_files(server.state)
    for method, path, body in routes:
        status, _, answer = server.request(method, path, body, host=f"evil.example:{server.port}")
        assert status == 403, (path, answer)
        assert "'evil.example:" in answer["error"] and "--allowed-host evil.example" in answer["error"]
        status, _, answer = server.request(method, path, body, origin="https://evil.example")
        assert status == 403 and "'https://evil.example'" in answer["error"], (path, answer)
        assert "--cors-origin https://evil.example" in answer["error"]
        status, _, answer = server.request(method, path, body, origin="null")  # a sandboxed page or a file
        assert status == 403, (path, answer)
    assert _state_files(server.state) == before  # nothing remembered, no recall image stored

    # the loopback names pass as Host; a page passes only from the server's own origin, exactly:
    # another local app on another port is another origin; clients without Origin pass
    for host in ("localhost", f"localhost:{server.port}", f"127.0.0.1:{server.port}", "[::1]:8080"):
        assert server.request("GET", "/healthz", host=host)[0] == 200, host
    for other in ("http://localhost:3000", f"http://localhost:{server.port + 1}", f"https://127.0.0.1:{server.port}x"):
        status, _, answer = server.request("POST", "/v1/recall", {"instruction": "cat"}, origin=other)
        assert status == 403 and "--cors-origin" in answer["error"], other
    status, _, answer = server.request("POST", "/v1/recall", {"instruction": "cat"},
                                       origin=f"http://127.0.0.1:{server.port}")
    assert status == 200 and "text" in answer
    assert server.request("GET", "/v1/manifest", host="evil.example")[0] == 403  # no port either


def test_no_file_is_read_over_http_and_non_images_are_refused_before_storage(open_server, tmp_path):
    from PIL import Image

    server = open_server
    photo = tmp_path / "photo.png"
    Image.new("RGB", (4, 4), "red").save(photo)
    before = _state_files(server.state)
    refused = [
        ("/v1/recall", {"instruction": "what is in the photo", "images": [str(photo)]}, "read only over stdio"),
        ("/v1/remember", {"content": "my photo", "images": [str(photo)]}, "read only over stdio"),
        ("/v1/remember", {"messages": [{"role": "user", "content": "x", "images": ["/etc/passwd"]}]},
         "read only over stdio"),
        ("/v1/remember", {"task_id": "t", "instruction": "x", "steps": [{"screenshot": "/etc/passwd"}]},
         "read only over stdio"),
        ("/v1/recall", {"instruction": "x", "images": [_data_url(PASSWD)]}, "does not decode as an image"),
        # a good image first, then a bad one: the good one must not be stored either
        ("/v1/remember", {"task_id": "t", "instruction": "x", "steps": [
            {"observation": "a", "screenshot": _data_url(PNG)},
            {"observation": "b", "screenshot": _data_url(PASSWD, "jpeg")}]}, "image 1 does not decode"),
        ("/v1/remember", {"content": "x", "images": [_data_url(PNG[:-20])]}, "does not decode"),
    ]
    for path, body, sentence in refused:
        status, _, answer = server.request("POST", path, body)
        assert status == 400 and sentence in answer["error"], (body, answer)
        assert str(tmp_path) not in answer["error"]
    status, _, answer = server.request("POST", "/mcp",
                                       _mcp_call("remember", {"content": "x", "images": ["/etc/passwd"]}))
    assert status == 200 and answer["result"]["isError"] and "read only over stdio" in json.dumps(answer)
    assert _state_files(server.state) == before  # no image stored, no log line

    status, _, ok = server.request("POST", "/v1/remember", {"content": "my bicycle is red", "images": [_data_url(PNG)]})
    assert status == 200 and ok["applied"]


def test_harness_style_requests(open_server):
    server = open_server
    status, _, ack = server.request("POST", "/v1/remember", {"content": "my dog is called Pixel", "user_id": "zed"})
    assert status == 200 and ack["ok"] and ack["task_id"].startswith("chat-")
    status, _, spoken = server.request("POST", "/v1/remember", {"text": "noted, Pixel", "role": "assistant",
                                                                "user": "zed"})
    assert status == 200
    for body in ({"query": "what is my dog called", "user": "zed"},
                 {"text": "what is my dog called", "user_id": "zed", "top_k": 5},
                 {"query": "what is my dog called", "scope": "zed", "limit": 3}):
        status, _, found = server.request("POST", "/v1/recall", body)
        assert status == 200 and "Pixel" in found["text"], (body, found)
        assert f"{ack['task_id']}#0" in found["evidence"]
    status, _, schema = server.request("GET", "/openapi.json")
    assert {"query", "text", "user_id", "top_k"} <= set(schema["components"]["schemas"]["Recall"]["properties"])
    status, _, found = server.request("POST", "/v1/recall", {"query": "what is my dog called", "user": "yan"})
    assert "Pixel" not in found["text"]  # the user reaches the program
    status, _, answer = server.request("POST", "/v1/recall", {"query": "a", "instruction": "b"})
    assert status == 400 and "send one of instruction, query, text" in answer["error"]

    # steps without index are numbered in order
    status, _, ack = server.request("POST", "/v1/remember", {
        "task_id": "numbered", "instruction": "find the spare key",
        "steps": [{"observation": "looked in the drawer"}, {"observation": "spare key under the blue pot"}],
        "final_answer": "under the blue pot", "reward": 1.0})
    assert status == 200 and ack["applied"]
    status, _, found = server.request("POST", "/v1/recall", {"query": "spare key"})
    assert found["evidence"][:2] == ["numbered#0", "numbered#1"]
    status, _, answer = server.request("POST", "/v1/remember", {"task_id": "t", "instruction": "x",
                                                                "steps": [{"index": "first"}]})
    assert status == 400 and "steps: [{index, observation, action}]" in answer["error"]


def test_a_benchmark_harness_generic_mcp_adapter_drives_the_server(open_server):
    """Bench'd harness's generic MCP adapter (PyPI `benchd-harness`): it picks tools by name,
    ingests a transcript as `content` and queries with `query`, in plain JSON-RPC POSTs. Its reset
    is `forget` with no arguments, which the server refuses (a forget names a task_id or all: an
    agent's bare forget() must not erase a memory); the adapter ignores the refusal, so its memory
    is not cleared between test cases."""
    mcp_adapter = pytest.importorskip("benchd_harness.adapters.mcp_adapter")
    adapter = mcp_adapter.MCPAdapter({"endpoint": open_server.url + "/mcp"})
    adapter.setup()
    try:
        assert (adapter._ingest_tool, adapter._query_tool, adapter._reset_tool) == ("remember", "recall", "forget")
        adapter.ingest([{"role": "user", "content": "I moved to Lisbon in March"},
                        {"role": "assistant", "content": "Lisbon, noted"}])
        answer = adapter.recall("when did I move to Lisbon")
        assert "moved to Lisbon in March" in answer
        adapter.reset()  # between test cases: forget({}), refused, and the adapter carries on
        assert "moved to Lisbon in March" in adapter.recall("when did I move to Lisbon")
    finally:
        adapter.teardown()


def test_the_harness_tool_convention_over_the_mcp_sdk_client(open_server):
    """The same convention with the official SDK client over streamable HTTP: tools found by
    name (recall|search, remember|add, forget|reset|delete), `query` and `content` sent."""
    asyncio.run(_convention_session(open_server.url + "/mcp"))


async def _convention_session(url: str) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    def named(tools: dict, *names: str) -> str | None:
        return next((t for t in tools for n in names if n in t.lower()), None)

    async with Client(streamable_http_client(url)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        query_tool, add_tool = named(tools, "recall", "search"), named(tools, "remember", "add")
        reset_tool = named(tools, "forget", "reset", "delete")
        assert (query_tool, add_tool, reset_tool) == ("recall", "remember", "forget")
        assert "query" in tools[query_tool].input_schema["properties"]
        assert "content" in tools[add_tool].input_schema["properties"]
        assert tools[query_tool].input_schema.get("required", []) == []
        ack = await client.call_tool(add_tool, {"content": "[user]: my locker code is 4711", "user_id": "kai"})
        assert not ack.is_error, ack.content
        found = await client.call_tool(query_tool, {"query": "what is my locker code", "user_id": "kai"})
        assert not found.is_error and "4711" in found.content[0].text
        bare = await client.call_tool(reset_tool, {"user_id": "kai"})
        assert bare.is_error and '"all": true' in bare.content[0].text  # a bare forget erases nothing
        assert not (await client.call_tool(reset_tool, {"user_id": "kai", "all": True})).is_error
        found = await client.call_tool(query_tool, {"query": "what is my locker code", "user_id": "kai"})
        assert "4711" not in found.content[0].text


def test_the_rate_limit_answers_429_per_token(token_server):
    server = token_server
    passed = 0
    for _ in range(400):  # 600 a minute: a burst of 60, then 10 a second
        status, headers, answer = server.request("GET", "/v1/manifest", token=TOKENS["BURST"])
        if status != 200:
            break
        passed += 1
    assert status == 429 and int(headers["retry-after"]) >= 1, (passed, status)
    assert 60 <= passed < 400
    assert "600 a minute" in answer["error"] and "--rate-limit" in answer["error"]
    assert server.request("GET", "/healthz")[0] == 200  # not counted
    assert server.request("GET", "/v1/manifest", token=TOKENS["ALL"])[0] == 200  # another token's own bucket


def test_a_token_bound_to_a_user_stays_in_that_users_memory(token_server):
    server = token_server
    ana, everyone = TOKENS["ANA"], TOKENS["ALL"]
    assert server.request("POST", "/v1/recall", {"query": "x"})[0] == 401
    status, _, answer = server.request("POST", "/v1/recall", {"query": "x", "user": "bob"}, token=ana)
    assert status == 403 and "may not use the memory of user 'bob'" in answer["error"] and "'ana'" in answer["error"]
    status, _, answer = server.request("POST", "/v1/remember", {"content": "bob's secret", "user_id": "bob"}, token=ana)
    assert status == 403
    # naming no user, ana's token acts on ana's memory
    status, _, ack = server.request("POST", "/v1/remember", {"content": "my umbrella is yellow"}, token=ana)
    assert status == 200
    status, _, found = server.request("POST", "/v1/recall", {"query": "what colour is my umbrella", "user": "ana"},
                                      token=everyone)
    assert "yellow" in found["text"]
    status, _, found = server.request("POST", "/v1/recall", {"query": "what colour is my umbrella", "user": "bob"},
                                      token=everyone)
    assert status == 200 and "yellow" not in found["text"]
    status, _, found = server.request("POST", "/v1/recall", {"query": "what colour is my umbrella"}, token=ana)
    assert "yellow" in found["text"]
    # an episode names its user in metadata.user
    status, _, answer = server.request("POST", "/v1/remember", {
        "task_id": "t", "instruction": "x", "steps": [{"observation": "y"}], "metadata": {"user": "bob"}}, token=ana)
    assert status == 403
    # forget, export and import are bound the same way
    assert server.request("POST", "/v1/forget", {"user": "bob", "all": True}, token=ana)[0] == 403
    assert server.request("GET", "/v1/export?user=bob", token=ana)[0] == 403
    assert server.request("POST", "/v1/import?user=bob", {"task_id": "t", "instruction": "x"}, token=ana)[0] == 403
    status, _, exported = server.request("GET", "/v1/export", token=ana)  # naming no user: ana's
    assert status == 200 and "umbrella is yellow" in exported["body"]
    asyncio.run(_mcp_as_ana(server.url + "/mcp"))


async def _mcp_as_ana(url: str) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKENS['ANA']}"}, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            refused = await client.call_tool("recall", {"query": "umbrella", "user": "bob"})
            assert refused.is_error and "may not use the memory of user 'bob'" in refused.content[0].text
            refused = await client.call_tool("remember", {"content": "x", "user_id": "bob"})
            assert refused.is_error
            refused = await client.call_tool("forget", {"user": "bob", "all": True})
            assert refused.is_error and "may not use the memory of user 'bob'" in refused.content[0].text
            found = await client.call_tool("recall", {"query": "what colour is my umbrella"})
            assert not found.is_error and "yellow" in found.content[0].text


def test_cors_only_for_configured_origins_and_allowed_host_names(open_server, token_server):
    preflight = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
    # no --cors-origin: no CORS header on any answer, preflights included
    for method, path in (("OPTIONS", "/v1/recall"), ("GET", "/v1/manifest")):
        _, headers, _ = open_server.request(method, path, origin=f"http://localhost:{open_server.port}",
                                            headers=preflight if method == "OPTIONS" else None)
        assert not any(h.startswith("access-control-") for h in headers), headers

    server, app = token_server, "https://app.example"
    status, headers, _ = server.request("OPTIONS", "/v1/recall", origin=app,
                                        headers={**preflight, "Access-Control-Request-Headers": "authorization"})
    assert status == 200 and headers["access-control-allow-origin"] == app
    status, headers, _ = server.request("GET", "/v1/manifest", token=TOKENS["ALL"], origin=app)
    assert status == 200 and headers["access-control-allow-origin"] == app
    status, headers, _ = server.request("GET", "/v1/manifest", token=TOKENS["ALL"], origin="https://other.example")
    assert status == 403 and "access-control-allow-origin" not in headers
    status, _, _ = server.request("GET", "/v1/manifest", token=TOKENS["ALL"], host=f"memory.example:{server.port}")
    assert status == 200  # --allowed-host


def test_a_tokens_file_open_to_others_is_refused(export, tmp_path):
    tokens_file = tmp_path / "tokens.json"
    tokens_file.write_text(json.dumps({"tokens": [{"token": "t0ken", "namespaces": ["ana"]}]}))
    tokens_file.chmod(0o644)
    done = subprocess.run([sys.executable, "-m", "automemo", "serve", str(export), "--tokens", str(tokens_file),
                           "--port", str(free_port())], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and f"chmod 600 {tokens_file}" in done.stderr and "Traceback" not in done.stderr


def test_over_stdio_an_image_file_is_read_and_still_checked(export, tmp_path):
    """The one place file paths are read: stdio, whose client is the user's own process."""
    from mcp import Client, StdioServerParameters
    from PIL import Image

    photo = tmp_path / "photo.png"
    Image.new("RGB", (3, 2), "blue").save(photo)
    not_an_image = tmp_path / "notes.png"
    not_an_image.write_bytes(PASSWD)

    async def session() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "automemo", "serve", str(export), "--transport", "stdio",
                                          "--state", str(tmp_path / "state"), "--sandbox", "unsafe"],
            env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
        async with Client(params) as client:
            found = await client.call_tool("recall", {"query": "a blue photo", "images": [str(photo)]})
            assert not found.is_error and found.content[1].type == "image"
            assert base64.b64decode(found.content[1].data) == photo.read_bytes()
            refused = await client.call_tool("remember", {"content": "notes", "images": [str(not_an_image)]})
            assert refused.is_error and "does not decode as an image" in refused.content[0].text
            assert str(tmp_path) not in refused.content[0].text

    asyncio.run(session())
    assert not (tmp_path / "state" / "episodes.jsonl").exists()


def test_a_transcript_string_becomes_one_step_per_turn(open_server):
    server = open_server
    transcript = "\n".join(f"{'user' if i % 2 == 0 else 'assistant'}: turn {i} says fact{i}" for i in range(40))
    status, _, ack = server.request("POST", "/v1/remember", {"content": transcript, "user": "tx"})
    assert status == 200, ack
    status, _, found = server.request("POST", "/v1/recall", {"query": "fact33", "user": "tx"})
    # the program cites every step of a matching episode: one per turn, not one for the transcript
    assert found["evidence"] == [f"{ack['task_id']}#{i}" for i in range(40)]
    assert "assistant: turn 33 says fact33" in found["text"]
    bracketed = "[Caroline]: I adopted a cat\n[Mel]: what is its name?\n[Caroline]: Miso,\nafter the soup"
    status, _, ack = server.request("POST", "/v1/remember", {"text": bracketed, "user": "tx2"})
    status, _, found = server.request("POST", "/v1/recall", {"query": "soup", "user": "tx2"})
    assert found["evidence"] == [f"{ack['task_id']}#{i}" for i in range(3)]  # a line without a speaker continues
    assert "Caroline: Miso,\nafter the soup" in found["text"]
    status, _, ack = server.request("POST", "/v1/remember", {"content": "Note: the key is under the pot", "user": "tx3"})
    status, _, found = server.request("POST", "/v1/recall", {"query": "key", "user": "tx3"})
    assert found["evidence"] == [f"{ack['task_id']}#0"]  # one plain message stays one step


def test_an_oversized_field_is_refused_and_nothing_is_stored(open_server):
    server = open_server
    before = _state_files(server.state)
    long = "x" * 201
    for body in ({"content": "hello", "task_id": long}, {"content": "hello", "user": long},
                 {"content": "hello", "time": "2026" * 30}, {"messages": [{"role": long, "content": "hi"}]},
                 {"task_id": long, "instruction": "x", "steps": [{"observation": "y"}]},
                 {"task_id": "t", "instruction": "x", "metadata": {"user": long}}):
        status, _, answer = server.request("POST", "/v1/remember", body)
        assert status == 422 and "the limit is" in answer["error"], (body, answer)
    status, _, answer = server.request("POST", "/v1/recall", {"query": "x", "user": long})
    assert status == 422
    status, _, answer = server.request("POST", "/v1/remember", {"content": "y" * 200_001})
    assert status == 413 and "200000" in answer["error"]
    assert _state_files(server.state) == before


def test_export_needs_a_json_body_or_a_token(open_server, token_server):
    server = open_server
    status, _, ack = server.request("POST", "/v1/remember", {"content": "my pin is 8080", "user": "exp"})
    # what a page's <img src> sends: a GET without a token, without an Origin
    status, _, answer = server.request("GET", "/v1/export?user=exp")
    assert status == 405 and "POST" in answer["error"] and "8080" not in json.dumps(answer)
    status, _, exported = server.request("POST", "/v1/export", {"user": "exp"})
    assert status == 200 and "8080" in exported["body"]
    status, _, exported = token_server.request("GET", "/v1/export", token=TOKENS["ANA"])
    assert status == 200
