"""The OpenAPI description of the REST face, served at /openapi.json."""

from __future__ import annotations

from typing import Any

_ERROR = {"description": "a sentence saying what was wrong",
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


def openapi_schema(version: str, secured: bool) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "AutoMMemo memory server", "version": version,
                 "description": "Recall from and remember into an exported memo program. The same "
                                "server speaks MCP (streamable HTTP) at /mcp."},
        "paths": {
            "/v1/recall": {"post": {
                "summary": "What memory holds for a task",
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Recall"}}}},
                "responses": {"200": {"description": "the payload", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Payload"}}}},
                    "400": _ERROR, "401": _ERROR, "413": _ERROR, "415": _ERROR, "503": _ERROR},
            }},
            "/v1/remember": {"post": {
                "summary": "Store an episode (applied and fsynced before the answer)",
                "requestBody": {"required": True, "content": {"application/json": {"schema": {"oneOf": [
                    {"$ref": "#/components/schemas/Episode"}, {"$ref": "#/components/schemas/Chat"}]}}}},
                "responses": {"200": {"description": "acknowledged", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Ack"}}}},
                    "400": _ERROR, "401": _ERROR, "413": _ERROR, "415": _ERROR, "503": _ERROR},
            }},
            "/v1/manifest": {"get": {"summary": "The exported program's manifest",
                                     "responses": {"200": {"description": "the manifest"}, "401": _ERROR}}},
            "/healthz": {"get": {"summary": "Liveness", "security": [],
                                 "responses": {"200": {"description": "serving"}, "503": _ERROR}}},
        },
        "components": {"schemas": {
            "Error": {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]},
            "Recall": {"type": "object", "required": ["instruction"], "additionalProperties": False, "properties": {
                "instruction": {"type": "string", "description": "the task or question"},
                "images": {"type": "array", "items": {"type": "string"},
                           "description": "data URLs (data:image/png;base64,...); file paths from local clients"},
                "scope": {"type": "string", "description": "whose memory to search (a user id)"},
                "user": {"type": "string", "description": "alias of scope"},
                "time": {"type": "string", "description": "when the question is asked"}}},
            "Payload": {"type": "object", "properties": {
                "text": {"type": "string"},
                "images": {"type": "array", "items": {"type": "object", "properties": {
                    "data_url": {"type": "string"}, "caption": {"type": ["string", "null"]},
                    "sha256": {"type": "string"}}}},
                "evidence": {"type": "array", "items": {"type": "string"}, "description": "ranked, best first"},
                "metadata": {"type": "object"},
                "retrieve_ms": {"type": "number", "description": "the program's own retrieve time"},
                "queued_ms": {"type": "number", "description": "time waiting for earlier calls to the program"}}},
            "Episode": {"type": "object", "required": ["task_id", "instruction"], "properties": {
                "task_id": {"type": "string"}, "instruction": {"type": "string"},
                "steps": {"type": "array", "items": {"type": "object", "required": ["index"], "properties": {
                    "index": {"type": "integer"}, "observation": {"type": "string"},
                    "action": {"type": "string"}, "thought": {"type": "string"},
                    "ref": {"type": ["string", "null"]},
                    "screenshot": {"type": "string", "description": "a data URL"}}}},
                "task_images": {"type": "array", "items": {"type": "string", "description": "data URLs"}},
                "final_answer": {"type": ["string", "null"]}, "reward": {"type": "number"},
                "success": {"type": "boolean"}, "metadata": {"type": "object"}}},
            "Chat": {"type": "object", "required": ["messages"], "properties": {
                "messages": {"type": "array", "items": {"type": "object", "required": ["role", "content"],
                             "properties": {"role": {"type": "string"}, "content": {"type": "string"},
                                            "images": {"type": "array", "items": {"type": "string"},
                                                       "description": "data URLs"}}}},
                "user": {"type": "string"}, "time": {"type": "string"}, "task_id": {"type": "string"}}},
            "Ack": {"type": "object", "properties": {
                "ok": {"type": "boolean"}, "seq": {"type": "integer"}, "task_id": {"type": "string"},
                "applied": {"type": "boolean", "description": "false when the program raised on it"}}},
        }},
    }
    if secured:
        schema["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        schema["security"] = [{"bearer": []}]
    return schema
