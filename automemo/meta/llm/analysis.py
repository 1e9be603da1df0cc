"""The analysis call: a parent's source, score and bounded evidence in, structured
JSON feedback out, in the shape of `FEEDBACK_SCHEMA`.

The reply is read leniently (`read_feedback`): small models drop required fields or invent
labels, and a diagnosis missing its summary still says what to change. What is there is kept,
what is missing is filled, and the repairs are listed; only a reply holding no JSON object (or
one with nothing usable in it) is re-asked, and after that the caller falls back to the
rule-based diagnosis.

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
from automemo.meta.llm.conversation import MetaConversation

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


def _json_object(text: str) -> Any:
    """The first fenced JSON block that parses, else the reply itself as bare JSON, else the
    outermost {...} span of the reply (a model that forgot the fence)."""
    candidates = [m["body"] for m in _JSON_FENCE.finditer(text)]
    if not candidates and text.strip()[:1] in ("{", "["):
        candidates.append(text.strip())
    first, last = text.find("{"), text.rfind("}")
    if 0 <= first < last:
        candidates.append(text[first : last + 1])
    error = "the reply holds no JSON object"
    for body in candidates:
        try:
            return json.loads(body)
        except json.JSONDecodeError as exc:
            error = f"the JSON does not parse: {exc.msg} at line {exc.lineno} column {exc.colno}"
    raise FeedbackError(error)


def parse_feedback(text: str) -> dict[str, Any]:
    """The feedback object of a reply, strictly: checked against FEEDBACK_SCHEMA. Suggestions
    come back sorted by priority."""
    data = _json_object(text)
    validator = jsonschema.Draft202012Validator(FEEDBACK_SCHEMA)
    problems = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if problems:
        shown = "; ".join(
            f"at {'/'.join(map(str, p.absolute_path)) or 'top level'}: {p.message}" for p in problems[:5]
        )
        raise FeedbackError(f"the JSON does not match the schema ({shown})")
    data["suggestions"] = sorted(data["suggestions"], key=lambda s: s["priority"])
    return data


def read_feedback(text: str) -> tuple[dict[str, Any], list[str]]:
    """The feedback of a reply in FEEDBACK_SCHEMA's shape, and what had to be repaired to get it
    there (empty when the reply matched the schema). Raises FeedbackError when the reply holds
    no JSON object or nothing of a diagnosis."""
    data = _json_object(text)
    if not isinstance(data, dict):
        raise FeedbackError(f"the JSON is a {type(data).__name__}, not an object")
    repairs: list[str] = []
    dropped = sorted(set(data) - set(FEEDBACK_SCHEMA["properties"]))
    if dropped:
        repairs.append("dropped unknown fields " + ", ".join(dropped))
    for name in ("content_issues", "structural_issues"):
        data[name] = _strings(data.get(name), name, repairs)
    relevance = []
    raw = data.get("memory_relevance")
    if "memory_relevance" not in data:
        repairs.append("filled missing memory_relevance")
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and item.get("label") in RELEVANCE_LABELS and item.get("task_id") is not None:
            relevance.append({"task_id": str(item["task_id"]), "label": item["label"],
                              "reason": str(item.get("reason") or "")})
        else:
            repairs.append(f"dropped memory_relevance entry {json.dumps(item, default=str)[:80]}")
    suggestions = []
    raw = data.get("suggestions")
    for i, item in enumerate(raw if isinstance(raw, list) else [raw] if raw else [], start=1):
        if isinstance(item, str) and item.strip():
            item = {"change": item}
        if isinstance(item, dict) and isinstance(item.get("change"), str) and item["change"].strip():
            priority = item.get("priority")
            suggestions.append({
                "priority": priority if isinstance(priority, int) and priority >= 1 else i,
                "change": item["change"], "rationale": str(item.get("rationale") or ""),
            })
        else:
            repairs.append(f"dropped suggestion {json.dumps(item, default=str)[:80]}")
    suggestions.sort(key=lambda s: s["priority"])
    summary = data.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        repairs.append("filled missing summary")
        summary = "; ".join([s["change"] for s in suggestions[:1]] + data["content_issues"][:1]
                            + data["structural_issues"][:1])
    if not summary and not suggestions:
        raise FeedbackError(
            "the JSON holds no summary, no issues and no suggestions: nothing of a diagnosis")
    if not suggestions:
        repairs.append("filled missing suggestions from the summary")
        suggestions = [{"priority": 1, "change": summary, "rationale": "the analysis' summary"}]
    feedback = {
        "summary": summary, "memory_relevance": relevance,
        "content_issues": data["content_issues"], "structural_issues": data["structural_issues"],
        "suggestions": suggestions,
    }
    return feedback, repairs


def _strings(value: Any, name: str, repairs: list[str]) -> list[str]:
    if value is None:
        repairs.append(f"filled missing {name}")
        return []
    if isinstance(value, str):
        repairs.append(f"{name} was one string, not a list")
        return [value] if value.strip() else []
    if not isinstance(value, list):
        repairs.append(f"dropped {name} (a {type(value).__name__}, not a list)")
        return []
    return [v if isinstance(v, str) else json.dumps(v, default=str) for v in value]


def analyse(
    conversation: MetaConversation, messages: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[str]]:
    """Run the analysis call; (feedback, repairs) as `read_feedback` gives them."""
    return conversation.ask(
        messages,
        read_feedback,
        expected="json",
        purpose="analysis",
        max_tokens=conversation.config.llm.analysis_max_tokens,
    )


def analysis_messages(system: str, prompt: str, images: list[Any]) -> list[dict[str, Any]]:
    """The analysis request: the rendered prompt with the evidence's images attached as
    multimodal inputs, in the order the prompt lists them (plain text content without images)."""
    return [system_message(system), user_message(prompt, images=images)]
