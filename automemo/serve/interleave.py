"""Team-draft interleaving (Radlinski, Kurup and Joachims 2008; Chapelle et al. 2012): two ranked
lists made one, each item credited to the team that drafted it, so that what the agent uses of
the one list shown says which ranking it prefers (docs/serve.md, "Trials").

Each round of the draft, the team with fewer picks (on a tie, a coin) adds its highest-ranked
item not yet in the list. An item both teams rank is shown once, for the team that picked it
first; the coin makes that team either one alike, so neither ranking is favoured by the draft.
The coins are seeded by the recall's id: a recall's interleave is reproducible from its log line.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

LIVE = "live"     # the team of the program the namespace serves
TRIAL = "trial"   # the team of the program on trial beside it


@dataclass(frozen=True)
class Interleaved:
    items: tuple[str, ...]   # the list shown, in its order
    teams: tuple[str, ...]   # the team of each item, LIVE or TRIAL

    def team_of(self) -> dict[str, str]:
        return dict(zip(self.items, self.teams))


def team_draft(live: Sequence[str], trial: Sequence[str], length: int, seed: str) -> Interleaved:
    """The team-draft interleave of `live` and `trial`, at most `length` items (the live list's
    length, so that a trial never shows more than the program serving would), each once."""
    coin = random.Random(f"team-draft/{seed}")
    items: list[str] = []
    teams: list[str] = []
    shown: set[str] = set()
    ranked = {LIVE: list(dict.fromkeys(live)), TRIAL: list(dict.fromkeys(trial))}
    position = {LIVE: 0, TRIAL: 0}
    picks = {LIVE: 0, TRIAL: 0}

    def next_of(team: str) -> str | None:
        while position[team] < len(ranked[team]) and ranked[team][position[team]] in shown:
            position[team] += 1
        return ranked[team][position[team]] if position[team] < len(ranked[team]) else None

    while len(items) < length:
        heads = {team: next_of(team) for team in (LIVE, TRIAL)}
        open_teams = [team for team, head in heads.items() if head is not None]
        if not open_teams:
            break
        if len(open_teams) == 1:
            team = open_teams[0]  # the other list ran out: the rest is this one's
        elif picks[LIVE] != picks[TRIAL]:
            team = LIVE if picks[LIVE] < picks[TRIAL] else TRIAL
        else:
            team = LIVE if coin.random() < 0.5 else TRIAL
        item = heads[team]
        items.append(item)
        teams.append(team)
        shown.add(item)
        picks[team] += 1
    return Interleaved(tuple(items), tuple(teams))


def credit(team_of: Mapping[str, str], used: Iterable[str]) -> int:
    """One recall's outcome for the trial: +1 when the agent used more of the trial team's items
    than of the live team's, -1 when fewer, 0 on a tie (a tie decides nothing)."""
    used = set(used)
    trial = sum(1 for item in used if team_of.get(item) == TRIAL)
    live = sum(1 for item in used if team_of.get(item) == LIVE)
    return (trial > live) - (trial < live)
