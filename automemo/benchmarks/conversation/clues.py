"""Gold clues as released, read into the refs of the turns they name.

Published releases are dirty. LoCoMo's locomo10.json joins several ids in one evidence entry
("D8:6; D9:17", and three entries with spaces: "D9:1 D4:4 D4:6"), misspells a few ("D:11:26"
for D11:26, "D30:05" for D30:5), wraps some in parentheses (the official scorer strips them),
and cites a few turns its conversation does not have ("D10:19" in conv-42, "D4:36" in conv-47,
a bare "D" in conv-42). One policy for every reader: a clue that names a turn as written is
that turn; one that does not is split on `;`, `,` and whitespace and each part spelled
canonically (`D<session>:<turn>`, no leading zeros); parts that then name a turn are kept and
reported as repaired, the others are dropped and reported (or refuse the file, with
unknown_clues = "error").
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

from automemo.benchmarks.conversation.model import DatasetError, DroppedClue, RepairedClue, UnknownClues

_SEPARATORS = re.compile(r"[;,\s]+")
_DIALOGUE_ID = re.compile(r"^D:?(\d+):0*(\d+)$")


def clue_parts(clue: str) -> list[str]:
    """The ids a clue that names no turn as written may hold: split on separators, parentheses
    removed, each spelled canonically when it looks like a dialogue id."""
    out = []
    for part in _SEPARATORS.split(clue.replace("(", " ").replace(")", " ")):
        if not part:
            continue
        m = _DIALOGUE_ID.match(part)
        out.append(f"D{int(m.group(1))}:{int(m.group(2))}" if m else part)
    return out


class ClueResolver:
    """One policy for clues, shared by every release reader: `drop` (the default: real releases
    are dirty, and one bad clue must not refuse a whole file) keeps a record of each dropped
    and each repaired clue; `error` stops at the first clue that names no turn."""

    def __init__(self, policy: UnknownClues) -> None:
        if policy not in ("drop", "error"):
            raise DatasetError(f'unknown_clues must be "drop" or "error", got {policy!r}')
        self.policy = policy
        self.dropped: list[DroppedClue] = []
        self.repaired: list[RepairedClue] = []

    def __call__(self, clues: Iterable, known: Mapping[str, str], where: str, names_no: str) -> list[str]:
        """The qualified refs of `clues` found in `known`, each once; `names_no` completes
        "clue X names no ..." in the error sentence."""
        out = []
        for clue in map(str, clues):
            if clue in known:
                out.append(known[clue])
                continue
            parts = clue_parts(clue)
            found = [p for p in parts if p in known]
            if found:
                self.repaired.append(RepairedClue(where, clue, tuple(found)))
                out.extend(known[p] for p in found)
            missing = [p for p in parts if p not in known] or ([] if found else [clue])
            for part in missing:
                if self.policy == "error":
                    which = f"clue {clue!r}" if part == clue else f"{part!r} of clue {clue!r}"
                    raise DatasetError(
                        f"{where}: {which} names no {names_no}; fix the file, or set the option "
                        f"unknown_clues = \"drop\" (the default) to drop such clues"
                    )
                self.dropped.append(DroppedClue(where, part))
        return list(dict.fromkeys(out))
