"""The one typed definition of what a client may send, from which every face is derived: the
request checks (`serve.requests`: which names a field answers to, which fields a form knows),
the MCP tools' signatures (`serve.mcp_face`) and `/openapi.json` (`serve.http.openapi`). A field, an
alias or a description is written here once.

A field is sent under its name or any of its aliases (one field: two names with different values
are refused). A form is what one kind of request may carry."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from automemo.serve.defaults import DEFAULT_USER

_TYPES: dict[str, tuple[dict[str, Any], Any, Any]] = {
    # kind: (JSON schema, Python annotation of an MCP tool argument, its default)
    "string": ({"type": "string"}, str, ""),
    "integer": ({"type": "integer", "minimum": 1}, int | None, None),
    "boolean": ({"type": "boolean"}, bool | None, None),
    "object": ({"type": "object"}, dict[str, Any] | None, None),
    "images": ({"type": "array", "items": {"type": "string"}}, list[str] | None, None),
    "ids": ({"type": "array", "items": {"type": "string"}}, list[str] | None, None),
    "messages": ({"type": "array", "items": {"type": "object", "required": ["role", "content"], "properties": {
        "role": {"type": "string"}, "content": {"type": "string"},
        "images": {"type": "array", "items": {"type": "string"}}}}}, list[dict[str, Any]] | None, None),
}


@dataclass(frozen=True)
class Field:
    name: str
    kind: str                        # a key of _TYPES
    description: str
    aliases: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """Every name it is accepted under, its own first."""
        return (self.name, *self.aliases)


@dataclass(frozen=True)
class Form:
    title: str
    fields: tuple[Field, ...]
    description: str = ""

    def names(self) -> set[str]:
        return {n for f in self.fields for n in f.names}

    def schema(self) -> dict[str, Any]:
        """The JSON schema of the form: each field, and each alias as "alias of <field>"."""
        properties: dict[str, Any] = {}
        for f in self.fields:
            properties[f.name] = {**_TYPES[f.kind][0], "description": f.description}
            for alias in f.aliases:
                properties[alias] = {**_TYPES[f.kind][0], "description": f"alias of {f.name}"}
        schema = {"type": "object", "additionalProperties": False, "properties": properties}
        return {**schema, "description": self.description} if self.description else schema

    def tool_doc(self, lead: str) -> str:
        """An MCP tool's description: `lead`, then each argument with its aliases."""
        def named(f: Field) -> str:
            aliases = f" (or {', '.join(f'`{a}`' for a in f.aliases)})" if f.aliases else ""
            return f"`{f.name}`{aliases}: {f.description}"
        return f"{lead} Arguments: " + "; ".join(named(f) for f in self.fields) + "."

    def signature(self, context: Any) -> inspect.Signature:
        """An MCP tool's signature: every name optional (the checks say what is missing), and the
        SDK's context parameter `ctx`, annotated with `context`."""
        parameters = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=_TYPES[f.kind][2],
                                        annotation=_TYPES[f.kind][1])
                      for f in self.fields for n in f.names]
        parameters.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, default=None,
                                            annotation=context | None))
        return inspect.Signature(parameters)


USER_DOC = ("whose memory (a user id; a namespace). A token bound to users may name only those; naming none, "
            f"it acts on its one user, or the default namespace {DEFAULT_USER!r} for an unbound token")
IMAGES_DOC = ("data URLs (data:image/png;base64,...) of PNG, JPEG, GIF or WebP images; each is decoded before "
              "anything is stored. File paths are read only over MCP stdio")

USER = Field("user", "string", USER_DOC, ("user_id", "scope"))
INSTRUCTION = Field("instruction", "string", "the task or question", ("query", "text"))
IMAGES = Field("images", "images", IMAGES_DOC)
TIME = Field("time", "string", "when the question is asked, or the conversation took place")
METADATA = Field("metadata", "object", "what else is known at question time: only the keys a retrieve task may "
                                       "carry on the served benchmark (budget, and the benchmark's own such as "
                                       "site); any other is refused")
LIMIT = Field("limit", "integer", "accepted and ignored: the program's payload decides how much a recall returns")
TOP_K = Field("top_k", "integer", "as limit")
TASK_ID = Field("task_id", "string", "the episode's id (made up when left out); forget takes it back")
EPISODE = Field("episode", "object", "the episode JSON: task_id, instruction, steps [{index, observation, action, "
                                     "screenshot?}] (index numbered in order when left out), final_answer, reward")
MESSAGES = Field("messages", "messages", "a conversation, one step per message")
CONTENT = Field("content", "string", "one message; a transcript of \"role: text\" lines becomes one step per turn",
                ("text",))
ROLE = Field("role", "string", "the message's speaker (default user)")
FORGET_TASK = Field("task_id", "string", "the id remember answered: forgets that episode")
FORGET_ALL = Field("all", "boolean", "true: forgets everything of the user instead (every episode, its images and "
                                     "cache entries); a forget names task_id or all, never neither")

RECALL = Form("Recall", (INSTRUCTION, IMAGES, USER, TIME, METADATA, LIMIT, TOP_K),
              "one of instruction, query or text is required (they are one field)")
CHAT = Form("Chat", (MESSAGES, USER, TIME, TASK_ID))
MESSAGE = Form("Message", (CONTENT, ROLE, IMAGES, USER, TIME, TASK_ID), "one message, remembered as a one-message "
                                                                       "chat (a transcript: one step per turn)")
EPISODE_CALL = Form("EpisodeCall", (EPISODE, USER), "an episode and the user whose memory it goes to (its "
                                                    "metadata.user, if any, must be the same)")
REMEMBER_TOOL = Form("remember", (EPISODE, MESSAGES, CONTENT, ROLE, IMAGES, USER, TIME, TASK_ID))
FORGET = Form("Forget", (USER, FORGET_TASK, FORGET_ALL), "exactly one of task_id (one episode) or all: true (the "
                                                         "whole user): a forget that names neither forgets nothing")
EXPORT = Form("Export", (USER,))
RECALL_ID = Field("recall_id", "string", "the recall_id a recall of this user answered with")
USED = Field("used", "ids", "the evidence ids of that recall the agent used (cited, or acted on)")
NOT_USED = Field("not_used", "ids", "evidence ids of that recall the agent read and did not use (optional)")
FEEDBACK = Form("Feedback", (USER, RECALL_ID, USED, NOT_USED),
                "what the agent used of one recall, once per recall: only ids that recall returned")
IGNORED_COUNTS = (LIMIT, TOP_K)
