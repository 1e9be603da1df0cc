"""The analysis call (DESIGN §8): a parent's source, score and bounded evidence in, structured
JSON feedback out, validated against `FEEDBACK_SCHEMA`.

The same JSON shape is what the offline mutator writes as its rule-based diagnosis, so the tree
and the report show one kind of diagnosis whichever meta agent ran.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema

from automemo.llm import system_message, user_message
from automemo.meta.base import MetaError
from automemo.meta.conversation import MetaConversation
from automemo.meta.evidence import Evidence

RELEVANCE_LABELS = ("helpful", "missing", "irrelevant", "redundant", "misleading")

FEEDBACK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["summary", "memory_relevance", "content_issues", "structural_issues", "suggestions"],
    "additionalProperties": False,
    "properties": {
        "summary": {"type": "string", "minLength": 1, "description": "the diagnosis in 1-3 sentences"},
        "memory_relevance": {
            "type": "array",
            "description": "one entry per judged trajectory",
            "items": {
                "type": "object",
                "required": ["task_id", "label", "reason"],
                "additionalProperties": False,
                "properties": {
                    "task_id": {"type": "string"},
                    "label": {"enum": list(RELEVANCE_LABELS)},
                    "reason": {"type": "string"},
                },
            },
        },
        "content_issues": {"type": "array", "items": {"type": "string"}},
        "structural_issues": {"type": "array", "items": {"type": "string"}},
        "suggestions": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["priority", "change", "rationale"],
                "additionalProperties": False,
                "properties": {
                    "priority": {"type": "integer", "minimum": 1},
                    "change": {"type": "string", "minLength": 1},
                    "rationale": {"type": "string"},
                },
            },
        },
    },
}

_JSON_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n(?P<body>.*?)^[ \t]*```", re.DOTALL | re.MULTILINE)


class FeedbackError(MetaError):
    """The analysis reply is not valid feedback JSON; the message says what was wrong."""


def parse_feedback(text: str) -> dict[str, Any]:
    """The feedback object of a reply: the first fenced JSON block that parses (or the reply
    itself when it is bare JSON), checked against FEEDBACK_SCHEMA. Suggestions come back sorted
    by priority."""
    candidates = [m["body"] for m in _JSON_FENCE.finditer(text)] or [text.strip()]
    data, error = None, "the reply holds no JSON object"
    for body in candidates:
        try:
            data = json.loads(body)
            break
        except json.JSONDecodeError as exc:
            error = f"the JSON does not parse: {exc.msg} at line {exc.lineno} column {exc.colno}"
    if data is None:
        raise FeedbackError(error)
    validator = jsonschema.Draft202012Validator(FEEDBACK_SCHEMA)
    problems = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if problems:
        shown = "; ".join(
            f"at {'/'.join(map(str, p.absolute_path)) or 'top level'}: {p.message}" for p in problems[:5]
        )
        raise FeedbackError(f"the JSON does not match the schema ({shown})")
    data["suggestions"] = sorted(data["suggestions"], key=lambda s: s["priority"])
    return data


def analyse(
    conversation: MetaConversation, *, system: str, prompt: str, evidence: Evidence
) -> dict[str, Any]:
    """Run the analysis call: the rendered `prompt` with the evidence's images attached as
    multimodal inputs, in the order the prompt lists them."""
    images = [img.path for img in evidence.images()]
    messages = [system_message(system), user_message(prompt, images=images)]
    return conversation.ask(
        messages,
        parse_feedback,
        expected="json",
        purpose="analysis",
        max_tokens=conversation.config.analysis_max_tokens,
    )
