"""A tidy layout of the generation tree for the report's inline SVG.

Pure: (id, parent) pairs in, coordinates out. The tree is drawn left to right (depth on x,
siblings on y) because search trees are wide and shallow: the root has many children long
before any branch is deep, and a page scrolls vertically far more comfortably than sideways.

The layout is a contour-based Reingold–Tilford variant: each subtree is packed as close to its
left sibling as the two subtrees' contours allow at every depth (not merely by leaf count), and a
parent sits midway between its first and last child. Siblings keep id order, which is creation
order, so reading a column top to bottom follows the search's history.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence


@dataclass(frozen=True)
class PlacedNode:
    id: int
    parent: int | None
    depth: int        # 0 for a root
    slot: float       # breadth position in units of one node pitch; >= 0


@dataclass(frozen=True)
class TreeLayout:
    nodes: tuple[PlacedNode, ...]   # in id order

    @property
    def depth(self) -> int:
        """Number of levels (0 for an empty tree)."""
        return 1 + max((n.depth for n in self.nodes), default=-1)

    @property
    def breadth(self) -> float:
        """Slots spanned: the largest slot + 1 (0 for an empty tree)."""
        return 1 + max((n.slot for n in self.nodes), default=-1)

    def node(self, node_id: int) -> PlacedNode:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(f"no node {node_id} in the layout")


@dataclass(frozen=True)
class _Subtree:
    offsets: dict[int, float]            # node id -> slot relative to the subtree's root
    contour: list[tuple[float, float]]   # per depth below the root: (min, max) relative slot


def layout_tree(edges: Iterable[tuple[int, int | None]], *, separation: float = 1.0) -> TreeLayout:
    """Lay out the forest given as (node id, parent id or None) pairs.

    A node whose parent is not among the ids is treated as a root (a hand-edited or damaged run may
    lack a parent row; the report should still show the rest).
    Several roots are placed side by side like siblings.
    """
    pairs = sorted(edges, key=lambda e: e[0])
    ids = [i for i, _ in pairs]
    if len(set(ids)) != len(ids):
        raise ValueError("node ids must be unique")
    known = set(ids)
    parent_of = {i: (p if p in known and p != i else None) for i, p in pairs}
    children: dict[int | None, list[int]] = {}
    for i in ids:
        children.setdefault(parent_of[i], []).append(i)
    _check_acyclic(parent_of)

    forest = _pack([_subtree(r, children, separation) for r in children.get(None, [])], separation)
    slots: dict[int, float] = {}
    for root_slot, tree in forest:
        for node_id, rel in tree.offsets.items():
            slots[node_id] = root_slot + rel
    depth_of = {i: _depth(i, parent_of) for i in ids}
    low = min(slots.values(), default=0.0)
    return TreeLayout(
        tuple(PlacedNode(i, parent_of[i], depth_of[i], slots[i] - low) for i in ids)
    )


def _check_acyclic(parent_of: dict[int, int | None]) -> None:
    for start in parent_of:
        seen = {start}
        p = parent_of[start]
        while p is not None:
            if p in seen:
                raise ValueError(f"the parent links of node {start} form a cycle")
            seen.add(p)
            p = parent_of[p]


def _depth(node_id: int, parent_of: dict[int, int | None]) -> int:
    d, p = 0, parent_of[node_id]
    while p is not None:
        d, p = d + 1, parent_of[p]
    return d


def _subtree(node_id: int, children: dict[int | None, list[int]], sep: float) -> _Subtree:
    kids = [_subtree(c, children, sep) for c in children.get(node_id, [])]
    if not kids:
        return _Subtree({node_id: 0.0}, [(0.0, 0.0)])
    packed = _pack(kids, sep)
    center = (packed[0][0] + packed[-1][0]) / 2
    offsets = {node_id: 0.0}
    contour: list[tuple[float, float]] = [(0.0, 0.0)]
    for root_slot, tree in packed:
        shift = root_slot - center
        offsets.update({k: v + shift for k, v in tree.offsets.items()})
        for d, (lo, hi) in enumerate(tree.contour, start=1):
            if d < len(contour):
                contour[d] = (min(contour[d][0], lo + shift), max(contour[d][1], hi + shift))
            else:
                contour.append((lo + shift, hi + shift))
    return _Subtree(offsets, contour)


def _pack(trees: Sequence[_Subtree], sep: float) -> list[tuple[float, _Subtree]]:
    """Place subtrees left to right, each as close to those before it as every depth allows.
    Returns (root slot, subtree) pairs; the first root is at slot 0."""
    placed: list[tuple[float, _Subtree]] = []
    right: list[float] = []   # the right contour of everything placed so far, per depth
    for tree in trees:
        shift = 0.0
        if placed:
            shift = max(
                right[d] - lo + sep for d, (lo, _) in enumerate(tree.contour) if d < len(right)
            )
        placed.append((shift, tree))
        for d, (_, hi) in enumerate(tree.contour):
            if d < len(right):
                right[d] = max(right[d], hi + shift)
            else:
                right.append(hi + shift)
    return placed


# --- pixels -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CardBox:
    id: int
    x: float   # top-left corner
    y: float


@dataclass(frozen=True)
class Edge:
    parent: int
    child: int
    path: str   # SVG path data: a horizontal S-curve from the parent's right to the child's left


@dataclass(frozen=True)
class TreeDrawing:
    width: float
    height: float
    card_width: float
    card_height: float
    cards: tuple[CardBox, ...]
    edges: tuple[Edge, ...]


def draw_tree(
    layout: TreeLayout,
    *,
    card_width: float = 196,
    card_height: float = 72,
    gap_x: float = 40,
    gap_y: float = 14,
    margin: float = 12,
) -> TreeDrawing:
    """Map the layout to pixel boxes for cards of a fixed size, and the connecting curves."""
    pitch_x, pitch_y = card_width + gap_x, card_height + gap_y
    boxes = {
        n.id: CardBox(n.id, margin + n.depth * pitch_x, margin + n.slot * pitch_y)
        for n in layout.nodes
    }
    edges = []
    for n in layout.nodes:
        if n.parent is None:
            continue
        a, b = boxes[n.parent], boxes[n.id]
        x0, y0 = a.x + card_width, a.y + card_height / 2
        x1, y1 = b.x, b.y + card_height / 2
        mid = (x0 + x1) / 2
        edges.append(
            Edge(n.parent, n.id, f"M{x0:.1f},{y0:.1f} C{mid:.1f},{y0:.1f} {mid:.1f},{y1:.1f} {x1:.1f},{y1:.1f}")
        )
    width = 2 * margin + (layout.depth - 1) * pitch_x + card_width if layout.nodes else 0
    height = 2 * margin + (layout.breadth - 1) * pitch_y + card_height if layout.nodes else 0
    return TreeDrawing(
        width=width,
        height=height,
        card_width=card_width,
        card_height=card_height,
        cards=tuple(boxes[n.id] for n in layout.nodes),
        edges=tuple(edges),
    )
