"""`automemo serve` as a client sees it: a real server process driven by a plain HTTP client and
by the MCP SDK's own client (streamable HTTP and stdio); kill -9 and restart lose no acknowledged
remember; concurrent clients; bad input answered with a sentence; an open bind refused."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from automemo.serve.storage.episode_log import EpisodeLog
from automemo.serve.storage.state_folder import StateFolder
from servetools import PNG, Server, call, data_url as _data_url, make_export

ROOT = Path(__file__).resolve().parents[1]


def _declared_oversize(port: int) -> tuple[int, dict]:
    """A body declared over the limit is answered before it is sent (urllib would keep sending)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"POST /v1/recall HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 9000000\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def _bytes(data_url: str) -> bytes:
    return base64.b64decode(data_url.split(",", 1)[1])


def episode(i: int) -> dict:
    return {"task_id": f"ep-{i}", "instruction": f"where did I park car{i}",
            "steps": [{"index": 0, "observation": f"car{i} is parked on level {i}", "action": "look", "ref": f"r{i}"}],
            "final_answer": f"level {i}", "reward": 1.0}


@pytest.fixture()
def export(tmp_path) -> Path:
    return make_export(tmp_path / "export")


@pytest.mark.bwrap
def test_rest_remember_survives_kill9_concurrent_clients_and_bad_input(export, tmp_path):
    state = tmp_path / "state"
    server = Server(export, state)
    try:
        with ThreadPoolExecutor(16) as pool:
            acks = list(pool.map(lambda i: call(server.url + "/v1/remember", episode(i)), range(40)))
            recalls = list(pool.map(lambda i: call(server.url + "/v1/recall", {"instruction": f"park car{i}"}),
                                    range(40)))
        assert all(status == 200 and ack["ok"] and ack["applied"] for status, ack in acks)
        assert sorted(ack["seq"] for _, ack in acks) == list(range(1, 41))  # one order, no gaps
        # a recall never sees half an update: the count it reports is a whole number of episodes
        assert all(status == 200 and 0 <= r["metadata"]["n_memories"] <= 40 for status, r in recalls)
        status, chat = call(server.url + "/v1/remember", {
            "messages": [{"role": "user", "content": "my cat is called Miso"},
                         {"role": "assistant", "content": "noted"}], "user": "ana", "time": "2026-11-24"})
        assert status == 200 and chat["task_id"].startswith("chat-")
        status, pictured = call(server.url + "/v1/remember", {"messages": [
            {"role": "user", "content": "this is my red bicycle", "images": [_data_url(PNG)]}], "user": "ana"})
        assert status == 200 and pictured["applied"]
        server.kill9()
    finally:
        server.stop()

    logged = [json.loads(line) for line in
              (StateFolder(state).user_dir("default") / "episodes.jsonl").read_text().splitlines()]
    assert [e["seq"] for e in logged] == list(range(1, 41))
    assert len((StateFolder(state).user_dir("ana") / "episodes.jsonl").read_text().splitlines()) == 2
    server = Server(export, state)
    try:
        status, found = call(server.url + "/v1/recall", {"instruction": "where did I park car17"})
        assert status == 200 and found["evidence"][0] == "r17" and "level 17" in found["text"]
        assert found["metadata"]["n_memories"] == 40  # every acknowledged remember of no user, nothing shipped
        status, bicycle = call(server.url + "/v1/recall", {"instruction": "my red bicycle", "user": "ana"})
        assert _bytes(bicycle["images"][0]["data_url"]) == PNG  # a remembered image survives kill -9
        status, ana = call(server.url + "/v1/recall", {"instruction": "what is my cat called", "user": "ana"})
        assert "Miso" in ana["text"] and ana["evidence"][:2] == [f"{chat['task_id']}#0", f"{chat['task_id']}#1"]
        status, other = call(server.url + "/v1/recall", {"instruction": "what is my cat called", "user": "bo"})
        assert "Miso" not in other["text"]  # another user's memory
        status, image = call(server.url + "/v1/recall", {"instruction": "car3", "images": [_data_url(PNG)]})
        assert status == 200 and _bytes(image["images"][0]["data_url"]) == PNG
        status, manifest = call(server.url + "/v1/manifest")
        assert manifest["node"]["id"] == 3 and manifest["experience"]["episodes"] == 3
        assert "/secret" not in json.dumps(manifest)
        status, schema = call(server.url + "/openapi.json")
        assert {"/v1/recall", "/v1/remember", "/v1/manifest", "/healthz"} <= set(schema["paths"])
        _bad_input_gets_a_sentence_and_changes_nothing(server, tmp_path)
    finally:
        server.stop()


def _bad_input_gets_a_sentence_and_changes_nothing(server: Server, tmp_path: Path) -> None:
    url = server.url
    cases = [
        (call(url + "/v1/recall", raw=b"{not json"), 400, "not valid JSON"),
        (call(url + "/v1/recall", [1, 2]), 400, "must be a JSON object"),
        (call(url + "/v1/recall", {"instruction": ""}), 400, "non-empty string"),
        (call(url + "/v1/recall", {"instruction": "x", "colour": 1}), 400, "unknown field(s) colour"),
        (call(url + "/v1/recall", {"instruction": "x", "images": ["data:image/png;base64,AAAA"] * 9}), 413,
         "at most 8 images"),
        (call(url + "/v1/recall", {"instruction": "x", "images": ["data:image/png;base64,@@"]}), 400,
         "does not decode"),
        (call(url + "/v1/recall", raw=b'{"instruction": "x"}', content_type="text/plain"), 415, "Content-Type"),
        (_declared_oversize(server.port), 413, "the limit is 8000000"),
        (call(url + "/v1/remember", {"task_id": 5}), 400, "\"task_id\" must be a string"),
        (call(url + "/v1/remember", {"task_id": "t", "steps": "x"}), 400, "not an episode"),
        (call(url + "/v1/remember", {"messages": [{"role": "user"}]}), 400, "message 0"),
        (call(url + "/v1/remember", {**episode(1), "steps": [{"index": 0, "screenshot": {
            "path": "images/x.png", "sha256": "0"}}]}), 400, "must be data URLs"),
    ]
    for (status, answer), expected, sentence in cases:
        assert status == expected and sentence in answer["error"], answer
        assert "Traceback" not in answer["error"] and str(tmp_path) not in answer["error"]
    before = call(url + "/v1/recall", {"instruction": "anything"})[1]["metadata"]["n_memories"]
    status, poison = call(url + "/v1/remember", {**episode(0), "instruction": "poison"})
    assert status == 200 and poison["applied"] is False  # logged, skipped again on replay
    assert call(url + "/v1/recall", {"instruction": "anything"})[1]["metadata"]["n_memories"] == before


def test_an_open_bind_needs_a_token_and_a_taken_port_is_a_sentence(export, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SERVE_TEST_TOKEN"}
    done = subprocess.run([sys.executable, "-m", "automemo", "serve", str(export), "--host", "0.0.0.0",
                           "--token-env", "SERVE_TEST_TOKEN"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "refusing to bind 0.0.0.0 without a token" in done.stderr
    assert "SERVE_TEST_TOKEN" in done.stderr and "Traceback" not in done.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = subprocess.run([sys.executable, "-m", "automemo", "serve", str(export), "--port",
                               str(taken.getsockname()[1])], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "pass another --port" in done.stderr


@pytest.mark.bwrap
def test_a_token_is_required_when_set(export, tmp_path):
    server = Server(export, tmp_path / "state", "--token-env", "SERVE_TEST_TOKEN",
                    env={"SERVE_TEST_TOKEN": "s3cret"})
    try:
        status, answer = call(server.url + "/v1/manifest")
        assert status == 401 and "Authorization: Bearer" in answer["error"]
        assert call(server.url + "/v1/manifest", token="wrong")[0] == 401
        assert call(server.url + "/v1/manifest", token="s3cret")[0] == 200
        assert "s3cret" not in json.dumps(call(server.url + "/openapi.json", token="s3cret")[1])
        asyncio.run(_mcp_http(server.url, "s3cret"))
    finally:
        server.stop()


async def _mcp_http(url: str, token: str) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        async with Client(streamable_http_client(url + "/mcp", http_client=http)) as client:
            await _mcp_session(client)


async def _mcp_session(client) -> None:
    tools = {t.name for t in (await client.list_tools()).tools}
    assert {"recall", "remember", "forget"} <= tools
    ack = await client.call_tool("remember", {"messages": [{"role": "user", "content": "the boat is red"}],
                                              "user": "kim"})
    assert not ack.is_error and ack.structured_content["ok"]
    found = await client.call_tool("recall", {"instruction": "what colour is the boat", "scope": "kim",
                                              "images": [_data_url(PNG)]})
    assert not found.is_error and "red" in found.content[0].text
    assert [c.type for c in found.content][:2] == ["text", "image"]
    assert found.structured_content["evidence"] == [f"{ack.structured_content['task_id']}#0"]
    bad = await client.call_tool("recall", {"instruction": " "})
    assert bad.is_error and "non-empty string" in bad.content[0].text
    manifest = await client.read_resource("automemo://manifest")
    assert json.loads(manifest.contents[0].text)["node"]["id"] == 3


@pytest.mark.bwrap
def test_mcp_over_stdio(export, tmp_path):
    from mcp import Client, StdioServerParameters

    async def session() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "automemo", "serve", str(export), "--transport", "stdio",
                                          "--state", str(tmp_path / "state"), "--sandbox", "bwrap"],
            env=dict(os.environ), cwd=str(ROOT))
        async with Client(params) as client:
            await _mcp_session(client)

    asyncio.run(session())
    assert len((StateFolder(tmp_path / "state").user_dir("kim") / "episodes.jsonl").read_text().splitlines()) == 1


def test_a_torn_last_log_line_is_dropped_and_the_log_continues(tmp_path):
    log = EpisodeLog(tmp_path / "log.jsonl")
    log.append_episode({"task_id": "a"}, received=0.0)
    log.append_episode({"task_id": "b"}, received=0.0)
    log.close()
    with open(tmp_path / "log.jsonl", "ab") as fh:
        fh.write(b'{"seq": 3, "epis')  # a kill in the middle of an unacknowledged append
    again = EpisodeLog(tmp_path / "log.jsonl")
    assert [e.seq for e in again.read()] == [1, 2]
    assert again.append_episode({"task_id": "c"}, received=0.0).seq == 3
    again.close()
    assert [json.loads(x)["seq"] for x in (tmp_path / "log.jsonl").read_text().splitlines()] == [1, 2, 3]
