"""One request model: the REST checks, the MCP tools' input schemas and /openapi.json all carry
the same fields and aliases, because all three are derived from `serve.request_model`."""

from __future__ import annotations

import asyncio

import pytest

from automemo.serve import request_model as model
from automemo.serve.mcp_face import build_mcp
from automemo.serve.openapi import openapi_schema
from automemo.serve.requests import BadRequest, RequestLimits, forget_request, recall_request


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


def test_the_checks_accept_every_alias_the_model_names_and_nothing_else():
    def who(body):
        return forget_request(body, RequestLimits(), user_for=lambda named: named)[0]

    for alias in model.USER.names:
        assert who({alias: "ana"}) == "ana"
    with pytest.raises(BadRequest, match="unknown field"):
        who({"username": "ana"})
    for alias in model.INSTRUCTION.names:
        asked = recall_request({alias: "where", "scope": "ana"}, RequestLimits(), allow_paths=False,
                               user_for=lambda named: named)
        assert (asked.instruction, asked.scope) == ("where", "ana")
