"""The OpenAPI description of the REST face, served at /openapi.json. The request bodies' fields,
aliases and descriptions come from `serve.request_model`, as the checks and the MCP tools do."""

from __future__ import annotations

from typing import Any

from automemo.serve import request_model as model

_ERROR = {"description": "a sentence saying what was wrong",
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
_RATE = {**_ERROR, "description": "over --rate-limit; wait the seconds in the Retry-After header",
         "headers": {"Retry-After": {"schema": {"type": "integer"}}}}
# every route: 403 for a Host or Origin the server was not started to trust (and, on recall and
# remember, a user the token may not use); 429 over the rate limit
_GUARDED = {"401": _ERROR, "403": _ERROR, "429": _RATE}
_WRITES = {"400": _ERROR, **_GUARDED, "413": _ERROR, "415": _ERROR, "422": _ERROR, "503": _ERROR}
_EXPORTED = {"description": "one episode a line", "content": {"application/x-ndjson": {"schema": {"type": "string"}}}}
_IMAGES = {"type": "array", "items": {"type": "string"}, "description": model.IMAGES_DOC}
_USER = model.USER_DOC


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
                    {"$ref": "#/components/schemas/Episode"}, {"$ref": "#/components/schemas/EpisodeCall"},
                    {"$ref": "#/components/schemas/Chat"}, {"$ref": "#/components/schemas/Message"}]}}}},
                "responses": {"200": {"description": "acknowledged", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Ack"}}}}, **_WRITES},
            }},
            "/v1/feedback": {"post": {
                "summary": "Which items of a recall the agent used (once per recall; fsynced before the answer)",
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Feedback"}}}},
                "responses": {"200": {"description": "logged", "content": {"application/json": {
                    "schema": {"type": "object"}}}},
                              "404": {**_ERROR, "description": "no such recall of this user"},
                              "409": {**_ERROR, "description": "that recall has feedback already"}, **_WRITES}}},
            "/v1/forget": {"post": {
                "summary": "Forget one episode (task_id) or everything of a user (all: true), for good",
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Forget"}}}},
                "responses": {"200": {"description": "forgotten", "content": {"application/json": {
                    "schema": {"type": "object"}}}}, **_WRITES}}},
            "/v1/export": {
                "post": {
                    "summary": "A user's episodes as JSON lines, images inline as data URLs",
                    "requestBody": {"required": True, "content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/Export"}}}},
                    "responses": {"200": _EXPORTED, **_WRITES}},
                "get": {
                    "summary": "As POST, on a server with tokens only (405 without: a page's <img> tag could "
                               "send this GET)",
                    "parameters": [{"name": "user", "in": "query", "schema": {"type": "string"},
                                    "description": _USER}],
                    "responses": {"200": _EXPORTED, **_GUARDED, "405": _ERROR, "503": _ERROR}}},
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
            "Recall": {**model.RECALL.schema(), "anyOf": [{"required": [n]} for n in model.INSTRUCTION.names]},
            "Payload": {"type": "object", "properties": {
                "text": {"type": "string"},
                "images": {"type": "array", "items": {"type": "object", "properties": {
                    "data_url": {"type": "string"}, "caption": {"type": ["string", "null"]},
                    "sha256": {"type": "string"}}}},
                "evidence": {"type": "array", "items": {"type": "string"}, "description": "ranked, best first"},
                "metadata": {"type": "object"},
                "retrieve_ms": {"type": "number", "description": "the program's own retrieve time"},
                "queued_ms": {"type": "number", "description": "time waiting for earlier calls to the program"},
                "version": {"type": "integer", "description": "the user's program version that answered "
                                                             "(0: the exported program; `serve --adapt`)"},
                "recall_id": {"type": "string", "description": "names this recall in a feedback (/v1/feedback)"}}},
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
            "EpisodeCall": {**model.EPISODE_CALL.schema(), "required": ["episode"]},
            "Chat": {**model.CHAT.schema(), "required": ["messages"]},
            "Message": {**model.MESSAGE.schema(), "anyOf": [{"required": [n]} for n in model.CONTENT.names]},
            "Forget": {**model.FORGET.schema(), "oneOf": [
                {"required": [model.FORGET_TASK.name]},
                {"required": [model.FORGET_ALL.name], "properties": {model.FORGET_ALL.name: {"const": True}}}]},
            "Export": model.EXPORT.schema(),
            "Feedback": {**model.FEEDBACK.schema(), "required": [model.RECALL_ID.name, model.USED.name]},
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
