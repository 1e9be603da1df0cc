"""The OpenAPI description of the REST face, served at /openapi.json."""

from __future__ import annotations

from typing import Any

_ERROR = {"description": "a sentence saying what was wrong",
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
_RATE = {**_ERROR, "description": "over --rate-limit; wait the seconds in the Retry-After header",
         "headers": {"Retry-After": {"schema": {"type": "integer"}}}}
# every route: 403 for a Host or Origin the server was not started to trust (and, on recall and
# remember, a user the token may not use); 429 over the rate limit
_GUARDED = {"401": _ERROR, "403": _ERROR, "429": _RATE}
_WRITES = {"400": _ERROR, **_GUARDED, "413": _ERROR, "415": _ERROR, "503": _ERROR}
_IMAGES = {"type": "array", "items": {"type": "string"},
           "description": "data URLs (data:image/png;base64,...) of PNG, JPEG, GIF or WebP images; each is "
                          "decoded before anything is stored. File paths are read only over MCP stdio"}
_USER = "whose memory (a user id; a namespace). A token bound to users may name only those; naming " \
        "none, it acts on its one user, or the default namespace \"\" for an unbound token"


def openapi_schema(version: str, secured: bool) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "AutoMMemo memory server", "version": version,
                 "description": "Recall from and remember into an exported memo program. The same "
                                "server speaks MCP (streamable HTTP, stateless, JSON answers) at /mcp."},
        "paths": {
            "/v1/recall": {"post": {
                "summary": "What memory holds for a task",
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Recall"}}}},
                "responses": {"200": {"description": "the payload", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Payload"}}}}, **_WRITES},
            }},
            "/v1/remember": {"post": {
                "summary": "Store an episode (applied and fsynced before the answer)",
                "requestBody": {"required": True, "content": {"application/json": {"schema": {"oneOf": [
                    {"$ref": "#/components/schemas/Episode"}, {"$ref": "#/components/schemas/Chat"},
                    {"$ref": "#/components/schemas/Message"}]}}}},
                "responses": {"200": {"description": "acknowledged", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Ack"}}}}, **_WRITES},
            }},
            "/v1/forget": {"post": {
                "summary": "Forget one episode (task_id) or everything of a user, for good",
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Forget"}}}},
                "responses": {"200": {"description": "forgotten", "content": {"application/json": {
                    "schema": {"type": "object"}}}}, **_WRITES}}},
            "/v1/export": {"get": {
                "summary": "A user's episodes as JSON lines, images inline as data URLs",
                "parameters": [{"name": "user", "in": "query", "schema": {"type": "string"}, "description": _USER}],
                "responses": {"200": {"description": "one episode a line",
                                      "content": {"application/x-ndjson": {"schema": {"type": "string"}}}},
                              **_GUARDED, "503": _ERROR}}},
            "/v1/import": {"post": {
                "summary": "Add episodes (JSON lines, as an export writes them) to a user's memory",
                "parameters": [{"name": "user", "in": "query", "schema": {"type": "string"}, "description": _USER}],
                "requestBody": {"required": True, "content": {"application/x-ndjson": {"schema": {"type": "string"}}}},
                "responses": {"200": {"description": "imported", "content": {"application/json": {
                    "schema": {"type": "object"}}}}, **_WRITES}}},
            "/v1/manifest": {"get": {"summary": "The exported program's manifest",
                                     "responses": {"200": {"description": "the manifest"}, **_GUARDED}}},
            "/healthz": {"get": {"summary": "Liveness (no token, no rate limit; Host and Origin still checked)",
                                 "security": [],
                                 "responses": {"200": {"description": "serving"}, "403": _ERROR, "503": _ERROR}}},
        },
        "components": {"schemas": {
            "Error": {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]},
            "Recall": {
                "type": "object", "additionalProperties": False,
                "description": "one of instruction, query or text is required (they are one field)",
                "anyOf": [{"required": ["instruction"]}, {"required": ["query"]}, {"required": ["text"]}],
                "properties": {
                    "instruction": {"type": "string", "description": "the task or question"},
                    "query": {"type": "string", "description": "alias of instruction"},
                    "text": {"type": "string", "description": "alias of instruction"},
                    "images": _IMAGES,
                    "user": {"type": "string", "description": _USER},
                    "scope": {"type": "string", "description": "alias of user"},
                    "user_id": {"type": "string", "description": "alias of user"},
                    "time": {"type": "string", "description": "when the question is asked"},
                    "metadata": {"type": "object", "description": "what else is known at question time: "
                                 "only the keys a retrieve task may carry on the served benchmark "
                                 "(budget, and the benchmark's own such as site); any other is a 400"},
                    "limit": {"type": "integer", "minimum": 1,
                              "description": "accepted and ignored: the program's payload decides how much"},
                    "top_k": {"type": "integer", "minimum": 1, "description": "as limit"}}},
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
                "steps": {"type": "array", "items": {"type": "object", "properties": {
                    "index": {"type": "integer", "minimum": 0,
                              "description": "the step's number; left out, steps are numbered 0, 1, ... in order"},
                    "observation": {"type": "string"},
                    "action": {"type": "string"}, "thought": {"type": "string"},
                    "ref": {"type": ["string", "null"]},
                    "screenshot": {"type": "string", "description": "a data URL"}}}},
                "task_images": _IMAGES,
                "final_answer": {"type": ["string", "null"]}, "reward": {"type": "number"},
                "success": {"type": "boolean"},
                "metadata": {"type": "object", "properties": {"user": {"type": "string", "description": _USER}}}}},
            "Chat": {"type": "object", "required": ["messages"], "additionalProperties": False, "properties": {
                "messages": {"type": "array", "items": {"type": "object", "required": ["role", "content"],
                             "properties": {"role": {"type": "string"}, "content": {"type": "string"},
                                            "images": _IMAGES}}},
                "user": {"type": "string", "description": _USER},
                "user_id": {"type": "string", "description": "alias of user"},
                "time": {"type": "string"}, "task_id": {"type": "string"}}},
            "Message": {
                "type": "object", "additionalProperties": False,
                "description": "one message, remembered as a one-message chat",
                "anyOf": [{"required": ["content"]}, {"required": ["text"]}],
                "properties": {
                    "content": {"type": "string"}, "text": {"type": "string", "description": "alias of content"},
                    "role": {"type": "string", "default": "user"}, "images": _IMAGES,
                    "user": {"type": "string", "description": _USER},
                    "user_id": {"type": "string", "description": "alias of user"},
                    "time": {"type": "string"}, "task_id": {"type": "string"}}},
            "Forget": {"type": "object", "additionalProperties": False, "properties": {
                "user": {"type": "string", "description": _USER},
                "user_id": {"type": "string", "description": "alias of user"},
                "task_id": {"type": "string", "description": "the id remember answered; without it, the whole user"}}},
            "Ack": {"type": "object", "properties": {
                "ok": {"type": "boolean"}, "user": {"type": "string"}, "task_id": {"type": "string"},
                "seq": {"type": "integer", "description": "the position in that user's log"},
                "applied": {"type": "boolean", "description": "false when the program raised on it"}}},
        }},
    }
    if secured:
        schema["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        schema["security"] = [{"bearer": []}]
    return schema
