"""Pure parts of the report: tree layout, progress-chart geometry, diffs."""

from __future__ import annotations

import random

import pytest

from automemo.report.charts import (
    ScorePoint,
    StepAction,
    best_so_far,
    progress_chart,
    score_axis,
    step_ticks,
)
from automemo.report.diffs import diff_stats, mark_changes, side_by_side
from automemo.report.tree_layout import draw_tree, layout_tree
from automemo.runs.records import Outcome


def _random_tree(rng: random.Random, n: int) -> list[tuple[int, int | None]]:
    return [(0, None)] + [(i, rng.randrange(i)) for i in range(1, n)]


# --- tree layout --------------------------------------------------------------------------------


def test_layout_places_children_one_level_deeper_and_parent_between_them():
    layout = layout_tree([(0, None), (1, 0), (2, 0), (3, 0), (4, 2)])
    by_id = {n.id: n for n in layout.nodes}
    assert [by_id[i].depth for i in range(5)] == [0, 1, 1, 1, 2]
    # siblings in id order, one pitch apart, parent centred over first and last child
    assert by_id[1].slot < by_id[2].slot < by_id[3].slot
    assert by_id[0].slot == pytest.approx((by_id[1].slot + by_id[3].slot) / 2)
    assert by_id[4].slot == pytest.approx(by_id[2].slot)  # an only child sits beside its parent
    assert layout.depth == 3 and min(n.slot for n in layout.nodes) == 0


@pytest.mark.parametrize("seed", range(25))
def test_layout_never_overlaps_nodes_of_one_level(seed):
    rng = random.Random(seed)
    layout = layout_tree(_random_tree(rng, rng.randint(1, 40)))
    levels: dict[int, list[float]] = {}
    for n in layout.nodes:
        levels.setdefault(n.depth, []).append(n.slot)
    for slots in levels.values():
        slots.sort()
        assert all(b - a >= 1 - 1e-9 for a, b in zip(slots, slots[1:]))


def test_layout_is_tidier_than_one_slot_per_leaf():
    # Node 2's only child 5 has three children one level below node 1's leaves: packing by
    # contours lets them reach under node 1's subtree (4 slots), where one slot per leaf
    # would need 5.
    edges = [(0, None), (1, 0), (2, 0), (3, 1), (4, 1), (5, 2), (6, 5), (7, 5), (8, 5)]
    layout = layout_tree(edges)
    assert layout.breadth == 4
    by_id = {n.id: n for n in layout.nodes}
    assert by_id[5].slot - by_id[4].slot >= 1 and by_id[6].slot < by_id[4].slot + 1


def test_layout_survives_a_missing_parent_and_rejects_cycles_and_duplicates():
    layout = layout_tree([(0, None), (1, 0), (5, 99)])  # parent 99 is not in the run
    assert layout.node(5).parent is None and layout.node(5).depth == 0
    with pytest.raises(ValueError, match="cycle"):
        layout_tree([(0, None), (1, 2), (2, 1)])
    with pytest.raises(ValueError, match="unique"):
        layout_tree([(0, None), (0, None)])


def test_empty_and_single_node_layouts():
    assert layout_tree([]).nodes == () and draw_tree(layout_tree([])).width == 0
    one = draw_tree(layout_tree([(0, None)]), card_width=100, card_height=50, margin=10)
    assert (one.width, one.height) == (120, 70) and one.edges == ()


def test_drawing_connects_each_child_to_its_parent_within_the_canvas():
    layout = layout_tree(_random_tree(random.Random(3), 20))
    drawing = draw_tree(layout, card_width=200, card_height=70)
    assert len(drawing.edges) == 19
    for box in drawing.cards:
        assert 0 <= box.x and box.x + 200 <= drawing.width
        assert 0 <= box.y and box.y + 70 <= drawing.height
    boxes = {b.id: b for b in drawing.cards}
    edge = drawing.edges[0]
    start = edge.path.split()[0]
    assert start == f"M{boxes[edge.parent].x + 200:.1f},{boxes[edge.parent].y + 35:.1f}"
    assert edge.path.endswith(f"{boxes[edge.child].x:.1f},{boxes[edge.child].y + 35:.1f}")


# --- chart --------------------------------------------------------------------------------------


def test_best_so_far_follows_running_means_and_can_drop():
    points = [
        ScorePoint(0, 0, 0, 0.2),
        ScorePoint(1, 1, 0, 0.6),   # child 1 leads
        ScorePoint(2, 1, 1, 0.2),   # re-evaluated: μ(1) = 0.4, still leads
        ScorePoint(3, 1, 2, 0.0),   # μ(1) = 0.267
        ScorePoint(4, 2, 0, 0.3),   # node 2 now leads with 0.3
    ]
    best = best_so_far(points)
    assert [b.step for b in best] == [0, 1, 2, 3, 4]
    assert [b.node_id for b in best] == [0, 1, 1, 1, 2]
    assert [round(b.mean, 3) for b in best] == [0.2, 0.6, 0.4, 0.267, 0.3]


def test_best_so_far_tie_goes_to_the_older_node():
    best = best_so_far([ScorePoint(0, 0, 0, 0.5), ScorePoint(1, 3, 0, 0.5)])
    assert best[-1].node_id == 0


def test_progress_chart_maps_steps_and_scores_into_the_plot():
    points = [ScorePoint(0, 0, 0, 0.1), ScorePoint(1, 1, 0, 0.5), ScorePoint(2, 0, 1, 0.3)]
    actions = [
        StepAction(0, "evaluate_root", Outcome.EVALUATED, 0),
        StepAction(1, "generate", Outcome.EVALUATED, 0, 1),
        StepAction(2, "evaluate", Outcome.EVALUATED, 0),
        StepAction(3, "generate", Outcome.FAILED_EXAM, 1, 2),
    ]
    ch = progress_chart(points, actions, planned_steps=10, width=500, plot_height=100)
    assert ch.left < ch.right <= 500 and ch.top < ch.bottom
    xs = [d.x for d in ch.dots]
    assert xs[0] == pytest.approx(ch.left) and xs[1] < xs[2] < ch.right  # axis runs to step 10
    ys = {d.score: d.y for d in ch.dots}
    assert ys[0.5] < ys[0.3] < ys[0.1] <= ch.bottom  # higher score, higher on the page
    assert [d.first for d in ch.dots] == [True, True, False]
    assert [c.css for c in ch.strip] == (
        ["act-root", "act-gen", "act-eval", "act-fail"] + ["act-pending"] * 7
    )
    assert "failed" in ch.strip[3].label and "#2" in ch.strip[3].label
    for few in (1, 2, 10):  # cells stay on the canvas, centred on their step, however few
        cells = progress_chart(points, actions, planned_steps=few, width=500).strip
        assert all(0 <= c.x and c.x + c.width <= 500 and c.width <= 24 for c in cells)
    # the best line starts at the first evaluation and runs to the last committed step
    assert ch.best_path.startswith(f"M{ch.left:.1f},")
    assert ch.best_end[0] == pytest.approx(ch.dots[0].x + (ch.right - ch.left) * 3 / 10)


def test_progress_chart_of_a_run_before_any_evaluation():
    ch = progress_chart([], [], planned_steps=0)
    assert ch.best_path == "" and ch.dots == () and len(ch.strip) == 1
    assert ch.strip[0].css == "act-pending"


def test_axes_use_round_labels():
    assert score_axis([0.22]) == (0.0, 0.3, [0.0, 0.1, 0.2, 0.3])
    assert score_axis([0.1, 0.7])[2] == [0.0, 0.2, 0.4, 0.6, 0.8]
    lo, hi, ticks = score_axis([-0.15, 1.0])
    assert lo <= -0.15 and hi >= 1.0 and len(ticks) <= 6
    assert step_ticks(0) == [0] and step_ticks(7) == list(range(8))
    assert step_ticks(37) == [0, 5, 10, 15, 20, 25, 30, 35]


# --- diffs --------------------------------------------------------------------------------------


def test_side_by_side_pairs_changed_lines_and_collapses_unchanged_runs():
    old = "\n".join(f"line {i}" for i in range(30)) + "\nTOP_K = 10\n"
    new = "\n".join(f"line {i}" for i in range(30)) + "\nTOP_K = 12\nEXTRA = 1\n"
    rows = side_by_side(old, new, context=2)
    assert [r.kind for r in rows] == ["skip", "equal", "equal", "change", "insert"]
    assert rows[0].skipped == 28
    change = rows[3]
    assert (change.left_no, change.right_no) == (31, 31)
    assert "<del>0</del>" in change.left and "<ins>2</ins>" in change.right
    assert rows[4].right_no == 32 and rows[4].left_no is None
    assert diff_stats(old, new).added == 2 and diff_stats(old, new).removed == 1


def test_two_long_changed_lines_are_marked_whole_and_fast():
    import time

    # A crossover of crossovers holds each parent's source as one string literal: two such lines
    # of 200 000 characters would take hours to diff character by character.
    old, new = "SOURCE_A = " + repr("a = 1\n" * 30_000), "SOURCE_A = " + repr("a = 2\n" * 30_000)
    started = time.monotonic()
    left, right = mark_changes(old, new)
    assert time.monotonic() - started < 1.0
    assert left.startswith("<del>SOURCE_A") and right.startswith("<ins>SOURCE_A")


def test_identical_programs_have_no_diff_rows_and_text_is_escaped():
    assert side_by_side("a\nb\n", "a\nb\n") == []
    left, right = mark_changes("x = '<b>'", "x = '<i>'")
    assert "<b>" not in left and "&lt;" in left and "<ins>i</ins>" in right
