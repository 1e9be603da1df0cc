"""A child whose normalised source equals a program of the tree is never examined nor evaluated
(automemo.search.generation): its draw is retried, and when every draw or a repair repeats the
tree the step is recorded as a duplicate. The real loop, scheduler and run directory, in process,
on the planted landscape of tests/test_question_budget.py."""

from __future__ import annotations

from automemo.meta.base import MetaAgent, MetaError, Proposal
from automemo.runs import RunDir
from automemo.search.config import SearchConfig
from automemo.search.loop import Collaborators, SearchLoop
from tests.test_question_budget import PlantedQuestions, program

ROOT = program("root", 0.5)


class Repeats(MetaAgent):
    """Proposes the parent again (with a comment: the same program), then, from the draw
    `fresh_from` on, a new program that fails its exam and is repaired back into the root."""

    def __init__(self, fresh_from: int | None = None):
        self.fresh_from, self.draws = fresh_from, 0

    def propose(self, context):
        self.draws += 1
        if self.fresh_from is not None and self.draws >= self.fresh_from:
            return Proposal(source=program(f"new{self.draws}", 0.7) + "BROKEN = True\n", summary="new")
        return Proposal(source="# the same, said again\n" + context.parent.source, summary="same")

    def repair(self, context):
        return Proposal(source=ROOT.replace("NAME = root", "NAME = root  # fixed"), summary="back to the root")

    def initialize(self, task_description, *, node_id, seed):
        raise MetaError("not used")


class _Report:
    def __init__(self, passed):
        self.passed = passed

    def to_dict(self):
        return {"passed": self.passed, "failed_check": None if self.passed else "exam", "error": ""}


def _search(tmp_path, meta, examined):
    seeds = tmp_path / "seeds"
    seeds.mkdir(exist_ok=True)
    (seeds / "planted_root.py").write_text(ROOT)

    def exam(source, sandbox, episodes, partials, **kwargs):
        examined.append(source)
        return _Report("BROKEN" not in source)

    run = RunDir.create(tmp_path / "runs", {"search": {"steps": 2}}, "r")
    evaluator = PlantedQuestions(run.store_root)
    config = SearchConfig(steps=2, root="planted_root", repair_attempts=2)
    final = SearchLoop(run, config, Collaborators(evaluator=evaluator, meta=meta, sandbox=None, exam=exam,
                                                  seeds_dir=seeds), quiet=True).run_search()
    return run, evaluator, final


def test_a_child_that_repeats_the_tree_is_not_examined_nor_evaluated(tmp_path):
    examined: list[str] = []
    meta = Repeats()
    run, evaluator, final = _search(tmp_path, meta, examined)
    assert set(evaluator.asked) == {0}, "only the root was ever evaluated"
    assert examined == []
    actions = [a for a in run.actions() if a["kind"] == "generate"]
    assert [a["outcome"] for a in actions] == ["duplicate", "duplicate"]
    assert meta.draws == 2 * 3  # each step drew the proposal, then retried it twice
    children = [n for n in run.nodes() if n["parent"] is not None]
    assert all(n["status"] == "failed" and n["failure"].startswith("duplicate") for n in children)
    assert final["node_id"] == 0


def test_a_repair_that_lands_on_a_program_of_the_tree_is_not_examined_again(tmp_path):
    examined: list[str] = []
    run, evaluator, final = _search(tmp_path, Repeats(fresh_from=1), examined)
    assert set(evaluator.asked) == {0}
    # each step examined its (broken) proposal once; the repair back to the root was not examined
    assert len(examined) == 2 and all("BROKEN" in s for s in examined)
    assert [a["outcome"] for a in run.actions() if a["kind"] == "generate"] == ["duplicate", "duplicate"]
