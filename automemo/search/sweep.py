"""The seed sweep (`search.seed_sweep`): before the strategy chooses anything, every seed
program is transplanted under the root, one step each, in name order.

Hand designs are the bar a search has to beat. Left to the strategy, a seed is only tried when
some generation happens to transplant it, and the strongest one can be missed for a whole run;
swept, each is a node of the tree: a candidate for the final selection (the bar of
`policy.final_by_bound` under exact evaluation) and a parent the generator can build on. The root
(already evaluated) and `no_memory` (it remembers nothing) are not swept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from automemo.paths import list_seeds
from automemo.programs import DISCOVERED, discovered_path
from automemo.search.pending import PendingAction
from automemo.search.tree import Tree

NOT_SWEPT = ("no_memory",)
SWEPT_ACTIONS = ("transplant", "discovered")  # the node actions a sweep's transplants commit


def sweep_order(seeds_dir: Path, root: str, discovered: bool = True) -> tuple[str, ...]:
    """The programs a sweep transplants, in the order it does: the seeds, then the discovered
    default (a labelled search on new data starts from the tool's best known memory; it is a
    candidate there, never the bar a selection is held to), each unless it is the root."""
    names = [p.stem for p in list_seeds(seeds_dir)]
    if discovered and discovered_path().is_file():
        names.append(DISCOVERED)
    return tuple(n for n in names if n != root.removesuffix(".py") and n not in NOT_SWEPT)


def unswept(order: tuple[str, ...], tree: Tree, running: Iterable[PendingAction]) -> tuple[str, ...]:
    """The seeds of `order` not transplanted yet. Transplants are issued strictly in order and
    each commits exactly one node (passed or failed), so a count of the committed and in-flight
    ones says how far the sweep got, on a resumed run too."""
    done = sum(1 for n in tree.nodes() if n.action in SWEPT_ACTIONS)
    done += sum(1 for a in running if a.kind == "transplant")
    return order[done:]
