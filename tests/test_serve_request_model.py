"""One request model: the REST checks, the MCP tools' input schemas and /openapi.json all carry
the same fields and aliases, because all three are derived from `serve.request_model`."""

from __future__ import annotations

import asyncio

import pytest

from automemo.serve import request_model as model
from automemo.serve.http.openapi import openapi_schema
from automemo.serve.mcp_face import build_mcp
from automemo.serve.requests import BadRequest, ForgetRequest, RequestLimits, forget_request, recall_request


class _Service:  # what build_mcp reads before any call
    manifest: dict = {}
    benchmark = "minigallery"
    question_time_keys = frozenset()


def test_the_faces_agree_with_the_model():
    tools = {t.name: t for t in asyncio.run(build_mcp(_Service(), RequestLimits(), allow_paths=False).list_tools())}
    schemas = openapi_schema("0", secured=False)["components"]["schemas"]
    for tool, form, component in (("recall", model.RECALL, "Recall"), ("remember", model.REMEMBER_TOOL, None),
                                  ("forget", model.FORGET, "Forget")):
        assert set(tools[tool].input_schema["properties"]) == form.names(), tool
        assert tools[tool].input_schema.get("required", []) == []  # the checks say what is missing
        if component:
            assert set(schemas[component]["properties"]) == form.names(), component
    assert {"scope", "user_id"} <= set(tools["remember"].input_schema["properties"])  # once missing on MCP
    assert {"scope", "user_id"} <= set(tools["forget"].input_schema["properties"])
    assert "`user` (or `user_id`, `scope`)" in tools["forget"].description
    assert tools["forget"].input_schema["properties"]["all"]["anyOf"][0]["type"] == "boolean"
    assert {"required": ["task_id"]} in schemas["Forget"]["oneOf"]  # one of task_id or all: true


def test_the_checks_accept_every_alias_the_model_names_and_nothing_else():
    def who(body):
        return forget_request({**body, "all": True}, RequestLimits(), user_for=lambda named: named).user

    for alias in model.USER.names:
        assert who({alias: "ana"}) == "ana"
    with pytest.raises(BadRequest, match="unknown field"):
        who({"username": "ana"})
    for alias in model.INSTRUCTION.names:
        asked = recall_request({alias: "where", "scope": "ana"}, RequestLimits(), allow_paths=False,
                               user_for=lambda named: named)
        assert (asked.instruction, asked.scope) == ("where", "ana")


def test_a_forget_names_one_episode_or_the_whole_user_never_neither():
    def forget(body):
        return forget_request(body, RequestLimits(), user_for=lambda named: named or "default")

    assert forget({"user": "ana", "task_id": "t1"}) == ForgetRequest("ana", "t1", False)
    assert forget({"user_id": "ana", "all": True}) == ForgetRequest("ana", None, True)
    assert forget({"task_id": "t1", "all": False}).task_id == "t1"
    for bare in ({}, {"user": "ana"}, {"all": False}):
        with pytest.raises(BadRequest, match='named neither, so nothing was forgotten') as refused:
            forget(bare)
        assert '"task_id"' in str(refused.value) and '"all": true' in str(refused.value)
    with pytest.raises(BadRequest, match="not both"):
        forget({"task_id": "t1", "all": True})
    with pytest.raises(BadRequest, match='"all" must be true or false'):
        forget({"all": "yes"})
