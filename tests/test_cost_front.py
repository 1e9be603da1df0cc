"""The quality / cost front of a run (automemo.search.cost_front) and the report's chart of it
(automemo.report.front_chart, drawn by the `front_svg` macro)."""

from __future__ import annotations

from automemo.evaluation.cost_bounds import CostBounds
from automemo.report.build import environment
from automemo.report.front_chart import front_chart
from automemo.search.cost_front import cost_front
from automemo.search.tree import Node, Tree

TASKS = [f"q{i}" for i in range(8)]


def _node(i, parent, values, ingest, action="generate"):
    return Node(id=i, parent=parent, source_path="", summary="", scores=(sum(values) / len(values),), ks=(0,),
                action=action, task_scores=dict(zip(TASKS, values)), exact=True,
                cost={} if ingest is None else {"ingest_cpu_ms_per_turn": ingest, "recall_cpu_ms": 2.0})


def stats(bounds=CostBounds()):
    """#1 best (60 ms a turn); #2 one question behind it (0.3 ms): within one paired SE; #3 far
    behind and cheapest; #4 unmeasured."""
    return Tree([
        _node(0, None, [0] * 8, 0.05, "root"),
        _node(1, 0, [1, 1, 1, 1, 1, 1, 1, 1], 60.0),
        _node(2, 0, [1, 1, 1, 1, 1, 1, 1, 0], 0.3),
        _node(3, 0, [1, 0, 0, 0, 0, 0, 0, 0], 0.1),
        _node(4, 0, [1, 1, 1, 1, 1, 1, 1, 1], None),
    ], bounds=bounds).stats()


def test_the_front_and_the_cheapest_within_one_se_of_the_best():
    front = cost_front(stats())
    assert [p.node_id for p in front.points] == [0, 1, 2, 3]  # #4's cost was not measured
    assert front.pareto == (0, 3, 2, 1)   # each dearer point is better than every cheaper one
    assert front.best == 1 and front.cheapest == 2
    assert "#2" in front.sentence() and "200.0x less ingest CPU" in front.sentence()
    strict = cost_front(stats(), z=0.0)   # no room: only the best itself is within 0 SE
    assert strict.cheapest == 1 and "also the cheapest" in strict.sentence()


def test_the_chart_places_every_measured_node_and_the_bound():
    front = cost_front(stats(CostBounds(max_ingest_ms_per_turn=1.0)))
    chart = front_chart(front, bound_ms=1.0)
    by_id = {d.node_id: d for d in chart.dots}
    assert set(by_id) == {0, 1, 2, 3} and not by_id[1].fits and by_id[2].fits
    assert by_id[1].role == "best" and by_id[2].role == "cheapest"
    assert by_id[3].x < by_id[2].x < chart.bound_x < by_id[1].x  # cheaper is further left (log scale)
    assert by_id[1].y < by_id[2].y < by_id[3].y                   # better is higher
    assert [t.label for t in chart.x_ticks] == ["0.01", "0.1", "1", "10", "100"]
    svg = environment().from_string('{% from "_macros.html" import front_svg %}{{ front_svg(ch) }}').render(ch=chart)
    assert svg.count('<circle class="dot') == 4 and 'class="bound"' in svg and "cheapest within 1 SE" in svg
    assert 'class="best" d="M' in svg  # the front's step line


def test_no_measured_node_draws_nothing():
    tree = Tree([_node(0, None, [0] * 8, None, "root")])
    front = cost_front(tree.stats())
    assert front.best is None and front.sentence() is None and front_chart(front).dots == ()
