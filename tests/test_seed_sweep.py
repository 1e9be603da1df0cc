"""The seed sweep (`search.seed_sweep`): every seed is transplanted under the root, one step
each and in name order, before the strategy chooses; a seed that fails its exam is a failed
node; a search stopped mid-sweep resumes where it was; with exact evaluation the final
selection is held to the best swept seed."""

from __future__ import annotations

import json
import re

from automemo.evaluation.evidence import write_summary
from automemo.evaluation.result import EvaluationResult, TaskResult
from automemo.report.node_page import diagnosis_view
from automemo.runs import RunDir
from automemo.search.config import SearchConfig
from automemo.search.loop import Collaborators, SearchLoop
from automemo.search.policy import Action
from automemo.search.sweep import sweep_order
from automemo.search.view import RunView
from test_scheduler import RecordingMeta, ScriptedStrategy, _Store
from test_search_loop import exam_double

TASKS = 4


class TaskEvaluator:
    """Exact evaluations: `SCORES = a, b, c, d` in a program are its per-task scores."""

    def __init__(self, root, stop_after: int | None = None) -> None:
        self.store = _Store(root)
        self.calls = 0
        self.stop_after = stop_after

    def evaluate(self, source, *, split="train", evidence_dir=None, node_id=None, sample_seed=0):
        self.calls += 1
        if self.stop_after is not None and self.calls > self.stop_after:
            raise KeyboardInterrupt  # the process is stopped mid-step
        m = re.search(r"SCORES = ([0-9., ]+)", source)
        values = [float(x) for x in m.group(1).split(",")] if m else [0.0] * TASKS
        tasks = tuple(TaskResult(task_id=f"t{i}", category="c", score=v) for i, v in enumerate(values))
        mean = sum(values) / len(values)
        result = EvaluationResult(mean=mean, n_scored=len(values), per_category={"c": mean},
                                  metrics={}, tasks=tasks, exact=True)
        write_summary(evidence_dir, result, store_root=None)
        return result

    def sample_for_exam(self, n=5, seed=0):
        return [], []


def _seeds(folder):
    folder.mkdir()
    (folder / "no_memory.py").write_text("SCORES = 0, 0, 0, 0\n")
    (folder / "alpha.py").write_text("SCORES = 0.5, 0.5, 0.5, 0.5\n")
    (folder / "broken.py").write_text("BROKEN\n")
    (folder / "gamma.py").write_text("SCORES = 0.75, 0.5, 0.5, 0.5\n")
    (folder / "_helpers.py").write_text("# not a seed\n")
    return folder


class LuckyMeta(RecordingMeta):
    """Proposes a child one lucky task ahead of gamma: a higher μ, no paired lead."""

    def propose(self, context):
        proposal = super().propose(context)
        return type(proposal)(source=f"SCORES = 1, 0.5, 0.5, 0.5\nCHILD = {context.node_id}\n",
                              summary=proposal.summary)


def _loop(tmp_path, *, steps, parallel, evaluator=None, run=None):
    seeds = tmp_path / "seeds" if (tmp_path / "seeds").exists() else _seeds(tmp_path / "seeds")
    run = run or RunDir.create(tmp_path / "runs", {"search": {"steps": steps}}, "r")
    evaluator = evaluator or TaskEvaluator(run.store_root)
    meta = LuckyMeta()
    strategy = ScriptedStrategy([Action("generate", 0, 1.0)] * steps)
    parts = Collaborators(evaluator=evaluator, meta=meta, sandbox=None, exam=exam_double,
                          strategy=strategy, seeds_dir=seeds)
    # The fixture's seeds are the whole sweep: the package's discovered default is not theirs.
    config = SearchConfig(steps=steps, root="no_memory", parallel=parallel, seed_sweep=True, sweep_discovered=False)
    return run, meta, SearchLoop(run, config, parts, quiet=True)


def test_the_sweep_transplants_every_seed_first_then_the_strategy_chooses(tmp_path):
    assert sweep_order(_seeds(tmp_path / "seeds"), "no_memory", discovered=False) == ("alpha", "broken", "gamma")
    assert sweep_order(tmp_path / "seeds", "no_memory")[-1] == "discovered"  # last, by default
    run, meta, loop = _loop(tmp_path, steps=5, parallel=2)
    loop.run_search()
    nodes = {n["id"]: n for n in run.nodes()}
    assert [(nodes[i]["action"], nodes[i]["summary"], nodes[i]["status"]) for i in (1, 2, 3)] == [
        ("transplant", "seed alpha (sweep)", "evaluated"),
        ("transplant", "seed broken (sweep)", "failed"),   # examined, never repaired
        ("transplant", "seed gamma (sweep)", "evaluated"),
    ]
    assert run.program_source(1) == (tmp_path / "seeds" / "alpha.py").read_text()
    page = diagnosis_view(json.loads((run.path / "nodes" / "1" / "diagnosis.json").read_text()))
    assert page.swept and page.calls == 0 and "alpha" in page.move  # the report says who made it
    assert len(meta.parents) == 2  # steps 4 and 5 only: the sweep never asks the meta agent
    assert {nodes[i]["action"] for i in (4, 5)} == {"generate"}
    # Children 4 and 5 have the highest μ (.75) but only one lucky task over gamma (.5625):
    # the selection stays with the best hand design, and final.json says what it was held to.
    final = run.final()
    assert final["node_id"] == 3
    assert final["lead"]["bar"] == 3
    bounds = {c["node_id"]: c["bound"] for c in final["candidates"]}
    # d = (.25, 0, 0, 0): .5625 + .0625 − 1 · .0625, a tie with the bar, which keeps it
    assert bounds[4] == bounds[3] == 0.5625


def test_a_search_stopped_mid_sweep_resumes_with_the_next_seed(tmp_path):
    run, _, loop = _loop(tmp_path, steps=4, parallel=1)
    first = TaskEvaluator(run.store_root, stop_after=2)  # the root, then alpha; gamma's is cut
    run, _, loop = _loop(tmp_path, steps=4, parallel=1, evaluator=first, run=run)
    try:
        loop.run_search()
    except KeyboardInterrupt:
        pass
    assert [n["summary"] for n in run.nodes()] == ["seed no_memory", "seed alpha (sweep)",
                                                   "seed broken (sweep)"]
    run, meta, loop = _loop(tmp_path, steps=4, parallel=1, run=RunDir.open(run.path))
    loop.run_search()
    view = RunView.load(run)
    assert [n.record.summary for n in view.nodes][:4] == [
        "seed no_memory", "seed alpha (sweep)", "seed broken (sweep)", "seed gamma (sweep)"]
    assert len(meta.parents) == 1
