"""What a web agent and a web environment exchange: the observation the agent sees, and the
action language it answers in, with its parser.

One action per turn, on a line starting with `Action:` (the last such line wins, so the model may
think aloud first):

    click [12]             click element 12 of the element list
    type [5] hello world   focus element 5 and type the rest of the line (quotes optional)
    press Enter            press a key (Enter, Tab, Backspace, Escape, ArrowDown, ... or a letter)
    scroll down            scroll the page (up | down)
    wait                   let the page finish loading or animating (live web)
    back                   go back to the previous page (live web)
    answer <text>          finish, with a final answer (or "done")

Anything else is an `InvalidAction` whose message is fed back to the agent as an error
observation, so that it can correct itself within the step budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from automemo.errors import AutomemoError

KEYS = {
    "enter": "<Enter>", "tab": "<Tab>", "backspace": "<Backspace>", "escape": "<Escape>",
    "esc": "<Escape>", "space": " ", "delete": "<Delete>", "arrowdown": "<ArrowDown>",
    "arrowup": "<ArrowUp>", "arrowleft": "<ArrowLeft>", "arrowright": "<ArrowRight>",
    "home": "<Home>", "end": "<End>", "pagedown": "<PageDown>", "pageup": "<PageUp>",
}
ACTION_HELP = "click [N] | type [N] text | press KEY | scroll up|down | wait | back | answer text"


class InvalidAction(AutomemoError, ValueError):
    """The model's reply holds no well-formed action; the message says what was wrong."""


@dataclass(frozen=True)
class WebObservation:
    elements: str                  # the element list, one `[N] tag "text" ...` per line
    screenshot: bytes | None = None
    error: str | None = None       # what went wrong with the previous action, if anything


@dataclass(frozen=True)
class WebAction:
    kind: str            # "click" | "type" | "press" | "scroll" | "wait" | "back" | "answer"
    ref: int | None = None
    text: str = ""

    def __str__(self) -> str:
        if self.kind == "click":
            return f"click [{self.ref}]"
        if self.kind == "type":
            return f"type [{self.ref}] {self.text}"
        return f"{self.kind} {self.text}".rstrip()


_ACTION_LINE = re.compile(r"^\s*\**action\**\s*:\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_REF = re.compile(r"^\[?\s*(\d+)\s*\]?")


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        return text[1:-1]
    return text


def _ref(rest: str, verb: str) -> tuple[int, str]:
    match = _REF.match(rest.strip())
    if not match:
        raise InvalidAction(f"`{verb}` needs an element number in brackets, e.g. `{verb} [3]`; got `{verb} {rest.strip()}`")
    return int(match.group(1)), rest.strip()[match.end():]


def parse_action(reply: str) -> WebAction:
    lines = _ACTION_LINE.findall(reply or "")
    if not lines:
        raise InvalidAction(f"no line starting with `Action:` in the reply; use one of: {ACTION_HELP}")
    line = lines[-1].strip().strip("`").strip()
    verb, _, rest = line.partition(" ")
    verb = verb.lower().rstrip(":")
    if verb == "click":
        ref, _ = _ref(rest, "click")
        return WebAction("click", ref)
    if verb == "type":
        ref, text = _ref(rest, "type")
        text = _unquote(text.lstrip(";:, "))
        if not text:
            raise InvalidAction("`type [N] text` needs the text to type after the element number")
        return WebAction("type", ref, text)
    if verb == "press":
        key = _unquote(rest)
        name = key.lower().replace("_", "").replace(" ", "")
        if name in KEYS:
            return WebAction("press", text=KEYS[name])
        if len(key) == 1:
            return WebAction("press", text=key)
        raise InvalidAction(f"unknown key {key!r}; use one of {', '.join(sorted(KEYS))} or a single character")
    if verb == "scroll":
        direction = _unquote(rest).lower()
        if direction not in ("up", "down"):
            raise InvalidAction(f"`scroll` takes `up` or `down`, got {direction!r}")
        return WebAction("scroll", text=direction)
    if verb in ("wait", "back"):
        return WebAction(verb)
    if verb in ("answer", "finish", "done", "stop"):
        return WebAction("answer", text=_unquote(rest) or "done")
    raise InvalidAction(f"unknown action `{verb}`; use one of: {ACTION_HELP}")
