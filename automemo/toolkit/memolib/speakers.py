"""Speaker-aware ranking: a question that names a speaker ("What did Caroline paint?") ranks
that speaker's turns up.

Multi-party memories (LoCoMo's two friends) hold the same topic in both speakers' turns; who
said it is part of what is asked. LoCoMo's own retrieval baselines index "speaker: text"
observations (Maharana et al., ACL 2024, arXiv:2402.17753), and Zep / Graphiti keep the speaker
as an entity of every episode (arXiv:2501.13956). Units carry their speaker (`Unit.speaker`,
from the benchmark's round metadata); the question's side is its text: a speaker counts as named
when their name, or its first word, occurs in the question as a whole word.
"""

from __future__ import annotations

import re
from typing import Collection, Sequence

from automemo.toolkit.memolib.units import Unit


def named_speakers(question: str, speakers: Collection[str]) -> set[str]:
    """The speakers among `speakers` the question names (full name or first name, any case)."""
    low = (question or "").lower()
    out = set()
    for speaker in speakers:
        names = {speaker.strip().lower(), speaker.strip().lower().split(" ")[0]} - {""}
        if any(re.search(rf"(?<![a-z0-9]){re.escape(n)}(?![a-z0-9])", low) for n in names if len(n) > 1):
            out.add(speaker)
    return out


def speaker_ranking(question: str, prior: Sequence[int | tuple[int, float]], turns: Sequence[Unit]) -> list[tuple[int, float]]:
    """`prior`'s rows (a first stage's ranking, best first) whose speaker the question names, in
    `prior`'s order: fused with `prior`, they move up. Empty when it names no speaker, or names
    every speaker of the candidates (then nothing tells them apart)."""
    rows = [p[0] if isinstance(p, tuple) else p for p in prior]
    rows = [r for r in rows if 0 <= r < len(turns)]
    present = {turns[r].speaker for r in rows if turns[r].speaker}
    named = named_speakers(question, present)
    if not named or named == present:
        return []
    kept = [r for r in rows if turns[r].speaker in named]
    return [(r, 1.0 / (1 + i)) for i, r in enumerate(kept)]
