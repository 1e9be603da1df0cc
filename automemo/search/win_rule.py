"""When a candidate replaces the program it is held to: the one rule a search's final
confirmation and a served memory's adaptation round both apply (docs/search.md, "What the selection is held to").

    clears:  d − z · SE(d) > 0          on the scored questions (d = candidate − bar, paired)
    holds:   d_g + z · SE(d_g) >= 0     on every guard (a guard metric, or a guard kind's questions)

and the candidate wins when it clears and every guard holds (each caller reports the two apart:
a candidate that cleared and lost a guard is told so).

A proxy can favour a design for the wrong reason (pseudo-questions whose answers are a turn's
neighbours favour programs that return blocks of adjacent turns); the guards, scored on other
questions or other metrics, catch a candidate that gains on the proxy what it loses elsewhere.
When nothing wins, the bar is kept: never worse than what the user already had comes first.
Pure arithmetic on paired differences (`tree_stats.PairedDifference`).
"""

from __future__ import annotations

from automemo.search.tree_stats import TIE_TOLERANCE, PairedDifference


def clears(d: PairedDifference, z: float) -> bool:
    """The candidate's lead over the bar is more than z paired standard errors."""
    return d.difference - z * d.se > TIE_TOLERANCE


def holds(g: PairedDifference, z: float) -> bool:
    """The candidate loses to the bar by no more than z paired standard errors on a guard."""
    return g.difference + z * g.se >= -TIE_TOLERANCE
