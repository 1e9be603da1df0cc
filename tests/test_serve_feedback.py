"""Feedback on a recall over a real `automemo serve` process (docs/serve.md, "Feedback"): every recall answers
with a recall_id; POST /v1/feedback and the MCP tool `feedback` take what the agent used; bad
feedback is refused with a clear 4xx and changes nothing; the log is the user's (forgetting an
episode drops the recalls that showed it, forget all drops it whole, an export carries it and an
import brings it back)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

import pytest

from automemo.serve.storage.recall_log import RECALLS
from automemo.serve.storage.state_folder import StateFolder
from servetools import ROOT, call, free_port, make_export


@pytest.fixture()
def server(tmp_path):
    export = make_export(tmp_path / "export", n_shipped=0)
    port = free_port()
    state = tmp_path / "state"
    log = open(tmp_path / "serve.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "automemo", "serve", str(export), "--port", str(port),
                             "--state", str(state), "--sandbox", "unsafe"], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=log, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        assert proc.poll() is None, (tmp_path / "serve.log").read_text()
        try:
            if call(url + "/healthz")[0] == 200:
                break
        except OSError:
            time.sleep(0.1)
    yield url, state
    proc.terminate()
    proc.wait(20)
    log.close()


def _remember(url, user, task_id, text):
    status, answer = call(url + "/v1/remember", {"user": user, "episode": {
        "task_id": task_id, "instruction": "chat", "steps": [{"index": 0, "observation": text}]}})
    assert status == 200, answer


def test_feedback_is_taken_once_for_what_the_recall_returned_and_refused_otherwise(server):
    url, state = server
    _remember(url, "ana", "bike", "my bike is red and parked at the station")
    _remember(url, "ana", "cat", "my cat is grey and called pixel")
    status, recall = call(url + "/v1/recall", {"user": "ana", "query": "where is my bike parked"})
    assert status == 200 and recall["recall_id"] and "bike#0" in recall["evidence"]
    log = StateFolder(state).user_dir("ana") / RECALLS
    before = log.read_bytes()
    for body, code, words in [
        ({"user": "ana", "recall_id": "nope", "used": ["bike#0"]}, 404, "no recall"),
        ({"user": "bob", "recall_id": recall["recall_id"], "used": ["bike#0"]}, 404, "no recall"),  # another user's
        ({"user": "ana", "recall_id": recall["recall_id"], "used": ["dog#0"]}, 400, "not returned by recall"),
        ({"user": "ana", "recall_id": recall["recall_id"]}, 400, "\"used\" is required"),
        ({"user": "ana", "recall_id": recall["recall_id"], "used": "bike#0"}, 400, "must be a list"),
        ({"user": "ana", "recall_id": recall["recall_id"], "used": [], "clicked": []}, 400, "unknown field"),
    ]:
        status, answer = call(url + "/v1/feedback", body)
        assert status == code and words in answer["error"], (body, answer)
    assert log.read_bytes() == before  # nothing of a refusal is logged
    status, answer = call(url + "/v1/feedback", {"user": "ana", "recall_id": recall["recall_id"], "used": ["bike#0"]})
    assert status == 200 and answer["used"] == 1
    status, answer = call(url + "/v1/feedback", {"user": "ana", "recall_id": recall["recall_id"], "used": ["bike#0"]})
    assert status == 409 and "feedback already" in answer["error"]


def test_the_recall_log_is_the_users_forgotten_exported_and_imported_with_her_episodes(server):
    url, state = server
    # no word in common between the two: each recall shows one episode only
    _remember(url, "ana", "bike", "bicycle parked near station")
    _remember(url, "ana", "cat", "cat called pixel")
    _, bike = call(url + "/v1/recall", {"user": "ana", "query": "bicycle parked where"})
    _, cat = call(url + "/v1/recall", {"user": "ana", "query": "cat called what"})
    assert bike["evidence"] == ["bike#0"] and cat["evidence"] == ["cat#0"]
    call(url + "/v1/feedback", {"user": "ana", "recall_id": cat["recall_id"], "used": ["cat#0"]})
    import urllib.request

    request = urllib.request.Request(url + "/v1/export", data=json.dumps({"user": "ana"}).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    lines = [json.loads(line) for line in urllib.request.urlopen(request, timeout=30).read().decode().splitlines()]
    recalls = [line for line in lines if "recall" in line]
    assert {r["recall"] for r in recalls} == {bike["recall_id"], cat["recall_id"]}
    assert next(r for r in recalls if r["recall"] == cat["recall_id"])["used"] == ["cat#0"]
    # an import into another user brings the episodes and the recalls (and their feedback) back
    text = "".join(json.dumps(line) + "\n" for line in lines)
    request = urllib.request.Request(url + "/v1/import?user=eve", data=text.encode(), method="POST",
                                     headers={"Content-Type": "application/x-ndjson"})
    answer = json.loads(urllib.request.urlopen(request, timeout=30).read())
    assert answer["imported"] == 2 and answer["recalls"] == 2
    # forgetting the bike drops the recall that showed it, from the disk too
    assert call(url + "/v1/forget", {"user": "ana", "task_id": "bike"})[0] == 200
    log = StateFolder(state).user_dir("ana") / RECALLS
    assert "bicycle parked where" not in log.read_text() and "cat called what" in log.read_text()
    status, answer = call(url + "/v1/feedback", {"user": "ana", "recall_id": bike["recall_id"], "used": []})
    assert status == 404
    # forget all: the user's whole folder, the recall log with it
    assert call(url + "/v1/forget", {"user": "ana", "all": True})[0] == 200
    assert not log.exists()


def test_the_feedback_tool_and_route_are_described(server):
    url, _ = server
    status, schema = call(url + "/openapi.json")
    assert status == 200 and "/v1/feedback" in schema["paths"]
    assert set(schema["components"]["schemas"]["Feedback"]["required"]) == {"recall_id", "used"}
    assert "recall_id" in schema["components"]["schemas"]["Payload"]["properties"]

    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def tools():
        async with Client(streamable_http_client(url + "/mcp")) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            await client.call_tool("remember", {"user": "ana", "content": "my kite is blue"})
            recalled = await client.call_tool("recall", {"user": "ana", "query": "which kite"})
            rid, shown = recalled.structured_content["recall_id"], recalled.structured_content["evidence"]
            told = await client.call_tool("feedback", {"user": "ana", "recall_id": rid, "used": shown[:1]})
            again = await client.call_tool("feedback", {"user": "ana", "recall_id": rid, "used": shown[:1]})
            return listed, told, again
    listed, told, again = asyncio.run(tools())
    assert "feedback" in listed and "recall_id" in listed["feedback"].input_schema["properties"]
    assert not told.is_error and told.structured_content["used"] == 1
    assert again.is_error and "feedback already" in again.content[0].text
