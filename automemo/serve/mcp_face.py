"""The MCP face: tools `recall`, `remember` and `forget`, the manifest as the resource
`automemo://manifest`, on the official SDK's MCPServer (stdio or streamable HTTP)."""

from __future__ import annotations

import json
import logging
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ImageContent, TextContent

from automemo.serve.requests import (BadRequest, RequestLimits, forget_request, recall_request, remember_episode,
                                     remember_user)
from automemo.serve.service import MemoryService, ServiceError

MANIFEST_URI = "automemo://manifest"
log = logging.getLogger("automemo.serve")


def build_mcp(service: MemoryService, limits: RequestLimits, *, allow_paths: bool) -> MCPServer:
    node = (service.manifest.get("node") or {}).get("id")
    server = MCPServer(
        name="automemo",
        instructions=(
            "A learned memory. Call `recall` with the task or question before acting to get what "
            "past experience says about it; call `remember` with what happened afterwards."
        ),
        description=f"AutoMMemo memory program (node {node})",
        log_level="WARNING",
    )

    @server.tool(description=(
        "What memory holds for a task: text to put in your prompt, images, and ranked evidence ids. "
        "`images` are data URLs (data:image/png;base64,...) or, for a local server, file paths; "
        "`scope` names whose memory to search (a user id), `time` is when the question is asked."))
    async def recall(instruction: str, images: list[str] | None = None, scope: str = "",
                     time: str = "") -> CallToolResult:
        body = {"instruction": instruction, "images": images or [], "scope": scope, "time": time}
        try:
            answer = await service.recall(recall_request(body, limits, allow_paths=allow_paths))
        except (BadRequest, ServiceError) as exc:
            return _error(str(exc))
        except Exception:  # the client gets a sentence, the operator the traceback
            log.exception("recall failed")
            return _error("the recall failed inside the server; see the server's log")
        content: list[Any] = [TextContent(type="text", text=answer["text"] or "(memory holds nothing for this task)")]
        for image in answer["images"]:
            head, data = image["data_url"].split(",", 1)
            content.append(ImageContent(type="image", data=data, mime_type=head[5:].split(";")[0]))
        if answer["evidence"]:
            content.append(TextContent(type="text", text="evidence: " + ", ".join(answer["evidence"])))
        structured = {k: v for k, v in answer.items() if k != "images"}
        structured["images"] = [{"caption": i["caption"], "sha256": i["sha256"]} for i in answer["images"]]
        return CallToolResult(content=content, structured_content=structured)

    @server.tool(description=(
        "Store an experience in memory. Pass either `episode` (the episode JSON: task_id, "
        "instruction, steps with observation/action and optional screenshot, final_answer, reward) or "
        "`messages` ([{role, content, images?}], a conversation) with optional `user` and `time`. "
        "Images are data URLs (data:image/png;base64,...)."))
    async def remember(episode: dict[str, Any] | None = None, messages: list[dict[str, Any]] | None = None,
                       user: str = "", time: str = "") -> CallToolResult:
        if (episode is None) == (messages is None):
            return _error("pass exactly one of `episode` (an episode object) or `messages` (a conversation)")
        body = episode if episode is not None else {"messages": messages, "user": user, "time": time}
        try:
            owner = remember_user(body)
            episode = remember_episode(body, limits, service.benchmark, service.store_image_for(owner),
                                       allow_paths=allow_paths)
            answer = await service.remember(owner, episode)
        except (BadRequest, ServiceError) as exc:
            return _error(str(exc))
        except Exception:
            log.exception("remember failed")
            return _error("the remember failed inside the server; see the server's log")
        return CallToolResult(content=[TextContent(type="text", text=json.dumps(answer))], structured_content=answer)

    @server.tool(description=(
        "Forget, for good: with `task_id`, the remembered episode(s) with that id (the id `remember` "
        "answered); without it, everything remembered for `user`. Nothing forgotten is recalled again, "
        "after a restart included."))
    async def forget(user: str = "", task_id: str = "") -> CallToolResult:
        try:
            owner, task = forget_request({"user": user, **({"task_id": task_id} if task_id else {})})
            answer = await service.forget(owner, task)
        except (BadRequest, ServiceError) as exc:
            return _error(str(exc))
        except Exception:
            log.exception("forget failed")
            return _error("the forget failed inside the server; see the server's log")
        return CallToolResult(content=[TextContent(type="text", text=json.dumps(answer))], structured_content=answer)

    @server.resource(MANIFEST_URI, name="manifest", mime_type="application/json",
                     description="The exported program's manifest: scores, lineage, budget, models")
    def manifest() -> str:
        return json.dumps(service.public_manifest(), indent=2)

    return server


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
