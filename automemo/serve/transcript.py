"""A transcript sent as one string becomes its turns. Harnesses send a whole conversation as one
`content`: lines of `role: text` or `[role]: text`. Kept as one step, it is one unit the size of
the conversation, cut at the payload budget, so every recall returns the same first turns; as
one step per turn, retrieval ranks turns.

A string is a transcript when its first non-empty line opens with a speaker and at least two
turns are found; lines that open with no speaker continue the turn before them. Anything else
(one line, a note that happens to contain a colon) stays one message."""

from __future__ import annotations

import re

# a speaker: a word or a short name ("user", "assistant", "Caroline", "Dr. Lee"), bare or in brackets
_TURN = re.compile(r"^\s*(?:\[(?P<bracketed>[^\]\n]{1,40})\]|(?P<bare>[A-Za-z][\w .'-]{0,39}?))\s*:\s?(?P<text>.*)$")


def transcript_turns(text: str) -> list[tuple[str, str]] | None:
    """The (role, text) turns of a transcript, or None when `text` is not one."""
    turns: list[list[str]] = []
    for line in text.splitlines():
        match = _TURN.match(line)
        if match and (match.group("bracketed") or not _looks_like_prose(match.group("bare"))):
            turns.append([(match.group("bracketed") or match.group("bare")).strip(), match.group("text")])
        elif turns:
            turns[-1][1] += "\n" + line
        elif line.strip():
            return None  # it does not open with a speaker
    turns = [[role, body.strip()] for role, body in turns]
    if len(turns) < 2 or not all(role for role, _ in turns):
        return None
    return [(role, body) for role, body in turns]


def _looks_like_prose(name: str) -> bool:
    """A bare speaker is a name of at most three words ("Note to self: ..." is prose)."""
    return len(name.split()) > 3
