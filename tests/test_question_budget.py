"""A search with a question budget (docs/search.md, "Samples that grow"): the one question order,
samples that grow without asking a node any question twice, paired comparisons on shared
questions only, early stopping that spares the eventual best, the final confirmation, and a
budget that stops the search cleanly and resumes larger.

The searches here run the real loop, scheduler, policy and run directory in process; the
benchmark is a planted landscape: program p answers question j right when the mean of two fixed
draws, one its own u(p, j) and one the question's difficulty u(j), is below p's hidden quality.
Per-question scores are deterministic; programs disagree on questions, and agree on the hard
ones, as real programs do (which is what pairing on shared questions exploits)."""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections import Counter
from dataclasses import dataclass

import pytest

from automemo.evaluation.result import EvaluationResult, TaskResult
from automemo.meta.base import MetaAgent, MetaError, Proposal
from automemo.runs import RunDir
from automemo.search import question_policy
from automemo.search.config import SearchConfig
from automemo.search.loop import Collaborators, SearchLoop
from automemo.search.policy import NodeStats, TreeStats, candidates, paired
from automemo.search.questions import QuestionPlan, auto_sample_size, stratified_order
from automemo.search.tree import Tree
from automemo.search.view import RunView

CATEGORIES = ("single", "multi", "temporal")
QUESTIONS = 60


def _uniform(*key: object) -> float:
    digest = hashlib.sha256(":".join(map(str, key)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass(frozen=True)
class _Task:
    task_id: str
    category: str


@dataclass(frozen=True)
class _Split:
    retrieve: tuple[_Task, ...]

    @property
    def scored(self) -> tuple[_Task, ...]:  # no guard questions here
        return self.retrieve


class _Store:
    def __init__(self, root):
        self.root = root


class PlantedQuestions:
    """`QUALITY = q` in a program's source is its hidden quality; question j of category c is
    answered right (1) when u(program, j) < q, else 0. Records every question each node was
    asked, evaluation by evaluation."""

    def __init__(self, root, questions: int = QUESTIONS):
        self.store = _Store(root)
        self.tasks = tuple(_Task(f"q{j:03d}", CATEGORIES[j % 3]) for j in range(questions))
        self.asked: dict[int, list[tuple[str, ...]]] = {}

    def split(self, name):
        return _Split(self.tasks)

    def evaluate(self, source, *, split="train", evidence_dir=None, node_id=None, sample_seed=0,
                 questions=None):
        asked = tuple(questions) if questions is not None else tuple(t.task_id for t in self.tasks)
        self.asked.setdefault(node_id, []).append(asked)
        quality = float(re.search(r"QUALITY = ([0-9.]+)", source).group(1))
        name = re.search(r"NAME = (\S+)", source).group(1)
        tasks = tuple(TaskResult(q, "c", float((_uniform(name, q) + _uniform("difficulty", q)) / 2 < quality))
                      for q in asked)
        mean = sum(t.score for t in tasks) / len(tasks)
        return EvaluationResult(mean=mean, n_scored=len(tasks), per_category={}, metrics={}, tasks=tasks,
                                exact=questions is None)

    def sample_for_exam(self, n=5, seed=0):
        return [], []


def program(name: str, quality: float) -> str:
    return f"NAME = {name}\nQUALITY = {quality}\n\nclass Memo:\n    pass\n"


class PlantedChildren(MetaAgent):
    """A child's quality is its parent's plus a draw from (seed, node): most children are a bit
    worse, a few better; one planted child (`best_at`) is far better than anything else."""

    def __init__(self, seed: int, best_at: int | None = None, best_quality: float = 0.9):
        self.seed, self.best_at, self.best_quality = seed, best_at, best_quality

    def propose(self, context):
        parent = float(re.search(r"QUALITY = ([0-9.]+)", context.parent.source).group(1))
        if context.node_id == self.best_at:
            quality = self.best_quality
        else:
            quality = min(0.8, max(0.05, parent + random.Random(f"{self.seed}:{context.node_id}").gauss(-0.03, 0.08)))
        return Proposal(source=program(f"n{self.seed}-{context.node_id}", round(quality, 4)),
                        summary=f"child {context.node_id} q={quality:.3f}")

    def repair(self, context):
        raise MetaError("no repairs here")

    def initialize(self, task_description, *, node_id, seed):
        raise MetaError("not used")


@dataclass(frozen=True)
class _Passed:
    passed: bool = True
    failed_check: str | None = None
    error: str = ""

    def to_dict(self):
        return {"passed": True, "failed_check": None, "error": ""}


def _pass(source, sandbox, episodes, partials, **kwargs):
    return _Passed()


def _search(tmp_path, *, seed=0, steps=12, budget=200, sample=10, best_at=None, run_id="r",
            root_quality=0.5, **search):
    seeds = tmp_path / "seeds"
    seeds.mkdir(parents=True, exist_ok=True)
    (seeds / "planted_root.py").write_text(program("root", root_quality))
    config = SearchConfig(steps=steps, seed=seed, root="planted_root", question_budget=budget,
                          sample_questions=sample, kappa=0.0, **search)
    runs = tmp_path / "runs"
    path = runs / run_id
    run = RunDir.open(path) if path.exists() else RunDir.create(runs, {"search": {"steps": steps}}, run_id)
    evaluator = PlantedQuestions(run.store_root)
    parts = Collaborators(evaluator=evaluator, meta=PlantedChildren(seed, best_at), sandbox=None,
                          exam=_pass, seeds_dir=seeds)
    final = SearchLoop(run, config, parts, quiet=True).run_search()
    return run, evaluator, final, config


def _quality(run: RunDir, node_id: int) -> float:
    return float(re.search(r"QUALITY = ([0-9.]+)", run.program_source(node_id)).group(1))


# the question order and the sample size ----------------------------------------------------------


def test_every_prefix_of_the_order_holds_each_category_in_its_share():
    questions = [(f"q{j}", "a" if j < 60 else "b") for j in range(90)]  # two thirds a, one third b
    order = stratified_order(questions, seed=3)
    assert sorted(order) == sorted(q for q, _ in questions)
    category = dict(questions)
    for prefix in (9, 30, 45):
        counts = Counter(category[q] for q in order[:prefix])
        assert abs(counts["a"] - prefix * 2 / 3) <= 1, (prefix, counts)
    assert stratified_order(questions, seed=3) == order != stratified_order(questions, seed=4)


def test_the_automatic_sample_spreads_half_the_budget_over_the_steps():
    assert auto_sample_size(1628, 20, 367) == 39          # ceil(1628 / 42)
    assert auto_sample_size(100, 20, 367) == 10           # never below 10 questions
    assert auto_sample_size(100_000, 20, 367) == 367      # never above every question
    plan = QuestionPlan(("a", "b", "c", "d", "e"), 2)
    assert plan.next_questions(()) == ("a", "b")
    assert plan.next_questions({"a", "c"}) == ("b", "d")
    assert plan.remaining({"a", "b", "c"}) == ("d", "e")
    with pytest.raises(ValueError, match="sample size"):
        QuestionPlan(("a",), 2)


# the policy with samples -------------------------------------------------------------------------


def _node(i, parent, scores, **kw):
    mean = sum(scores.values()) / len(scores)
    return NodeStats(id=i, parent=parent, mean=mean, n=kw.pop("n", 1), m=kw.pop("m", 0), first_score=mean,
                     parent_snapshot=0.0 if parent is not None else None, task_scores=scores,
                     questions=kw.pop("questions", len(scores)), **kw)


def test_paired_comparisons_use_only_the_questions_both_were_scored_on():
    a = _node(1, 0, {"q1": 1, "q2": 0, "q3": 1, "q4": 1})
    b = _node(2, 0, {"q1": 0, "q2": 0, "q9": 1})  # q9: only b; q3, q4: only a
    d = paired(a, b)
    assert (d.tasks, d.difference) == (2, pytest.approx(0.5))  # q1: +1, q2: 0
    # paired means: the anchor (a, most questions) keeps .75; b gets .75 + mean(b − a) on q1, q2
    means = question_policy.paired_means({1: a.task_scores, 2: b.task_scores})
    assert means == {1: pytest.approx(0.75), 2: pytest.approx(0.75 - 0.5)}


def test_with_samples_a_step_may_buy_more_questions_and_counts_are_in_samples():
    root = _node(0, None, {f"q{j}": 0.0 for j in range(4)}, m=3)
    done = _node(1, 0, {f"q{j}": 1.0 for j in range(8)}, questions=8)        # every question
    young = _node(2, 0, {"q0": 1.0, "q1": 0.0, "q2": 1.0, "q3": 1.0})          # one sample
    stopped = _node(3, 0, {"q0": 0.0, "q1": 0.0, "q2": 0.0, "q3": 0.0}, stopped="below #1")
    stats = TreeStats((root, done, young, stopped), 4, sample_size=4, validation_questions=8)
    config = SearchConfig(kappa=0.0)
    evaluate = {a.node_id: a.score for a in candidates(stats, config) if a.kind == "evaluate"}
    assert set(evaluate) == {0, 2}  # not #1 (asked everything) nor #3 (stopped early)
    # N = (4 + 8 + 4 + 4) / 4 = 5 samples; #2's scores (1, 0, 1, 1): sd .5, SE .25;
    # U_eval(2) = .75 + 1·.25·sqrt(ln 5)
    assert evaluate[2] == pytest.approx(0.75 + 0.25 * math.sqrt(math.log(5)))


def test_the_confirmation_duels_the_last_candidate_and_the_bar_on_the_same_questions():
    bar = _node(1, 0, {"q0": 1.0, "q1": 0.0}, reference=True)
    child = _node(2, 0, {"q0": 1.0, "q1": 1.0})
    root = _node(0, None, {"q0": 0.0, "q1": 0.0}, m=2)
    stats = TreeStats((root, bar, child), 3, sample_size=2, validation_questions=6)
    config = SearchConfig()
    assert question_policy.confirmation_reserve(stats, config) == 8  # 4 for the bar, 4 for #2
    # one candidate: no halving round; with 3 questions left both reach L = 3 (cost 2; L = 4
    # would cost 4), the bar first
    assert question_policy.next_confirmation(stats, config, 3) == question_policy.ConfirmationStep(1, 1)
    whole_bar = _node(1, 0, {f"q{j}": 0.5 for j in range(6)}, reference=True)
    stats = TreeStats((root, whole_bar, child), 3, sample_size=2, validation_questions=6)
    assert question_policy.next_confirmation(stats, config, 3) == question_policy.ConfirmationStep(2, 3)
    assert question_policy.next_confirmation(stats, config, 0) is None


# searches -----------------------------------------------------------------------------------------


def test_a_re_evaluation_never_asks_a_node_a_question_twice(tmp_path):
    run, evaluator, final, _ = _search(tmp_path, steps=14, budget=300, sample=8)
    assert any(len(asked) > 1 for asked in evaluator.asked.values()), "no node was re-evaluated"
    for node_id, evaluations in evaluator.asked.items():
        flat = [q for asked in evaluations for q in asked]
        assert len(flat) == len(set(flat)), f"node {node_id} was asked a question twice"
    rows = run.evaluations()
    assert sum(len(e["questions"]) for e in rows) == final["questions"]["scored"] <= 300
    # every node was asked a prefix of the one order: any two compare on their shared prefix
    plan = Tree.from_rundir(run).plan
    for node_id, evaluations in evaluator.asked.items():
        flat = [q for asked in evaluations for q in asked]
        assert sorted(flat) == sorted(plan.order[:len(flat)])


def test_the_final_choice_is_confirmed_on_every_question(tmp_path):
    run, evaluator, final, _ = _search(tmp_path, steps=10, budget=400, sample=10, best_at=4)
    confirmation = final["confirmation"]
    assert confirmation["tasks"] == QUESTIONS  # the bar was asked every question
    chosen = final["node_id"]
    assert chosen == 4 and _quality(run, 4) == 0.9
    assert sum(len(a) for a in evaluator.asked[4]) == QUESTIONS
    confirms = [a for a in run.actions() if a["kind"] == "confirm"]
    assert confirms and all(a["step"] > 10 for a in confirms)
    assert final["steps_done"] == 10 and final["questions"]["scored"] <= 400


def test_early_stopping_never_stops_the_eventual_best_on_a_planted_landscape(tmp_path):
    stopped = 0
    for seed in range(8):
        run, _, final, _ = _search(tmp_path / str(seed), seed=seed, steps=14, budget=500, sample=12,
                                   best_at=3 + seed % 3)
        view = RunView.load(run)
        evaluated = [n for n in view.nodes if n.evaluated]
        best = max(evaluated, key=lambda n: _quality(run, n.id))
        assert _quality(run, best.id) == 0.9
        assert not best.stopped, f"seed {seed}: the best program #{best.id} was stopped: {best.stopped}"
        assert final["node_id"] == best.id, f"seed {seed}: selected #{final['node_id']}, the best is #{best.id}"
        stopped += sum(1 for n in evaluated if n.stopped)
    assert stopped, "the rule never stopped a child: this test could not fail"


def test_budget_exhaustion_stops_cleanly_and_resumes_with_a_larger_budget(tmp_path):
    run, evaluator, final, _ = _search(tmp_path, steps=20, budget=150, sample=10)
    assert final["stop_reason"] == "questions" and final["steps_done"] < 20
    assert final["questions"]["scored"] <= 150 and final["node_id"] is not None
    assert any(e["kind"] == "questions" for e in run.events())
    first = final["steps_done"]
    asked_before = {n: [q for a in ev for q in a] for n, ev in evaluator.asked.items()}

    run, evaluator, final, _ = _search(tmp_path, steps=20, budget=600, sample=10)
    assert final["stop_reason"] == "steps" and final["steps_done"] == 20 > first
    assert final["questions"]["scored"] <= 600
    for node_id, evaluations in evaluator.asked.items():  # nothing asked again after the resume
        again = set(asked_before.get(node_id, ())) & {q for a in evaluations for q in a}
        assert not again, f"node {node_id} was asked {sorted(again)} again"
    steps = [a["step"] for a in run.actions() if a["kind"] in ("evaluate", "generate", "transplant")]
    assert sorted(steps) == list(range(1, 21))


def test_random_and_greedy_select_by_their_own_rule_without_a_confirmation(tmp_path):
    run, evaluator, final, _ = _search(tmp_path, steps=6, budget=400, sample=10, strategy="greedy")
    assert not [a for a in run.actions() if a["kind"] == "confirm"]
    assert final["selection"] == "mean" and final["questions"]["scored"] == 7 * 10


# the command line ---------------------------------------------------------------------------------


def test_a_budget_below_one_sample_is_refused_before_a_run_exists(tmp_path, capsys):
    from automemo.cli import main

    code = main(["search", "--preset", "minigallery", "--sandbox", "unsafe", "--runs-dir", str(tmp_path),
                 "--run-id", "r", "--quiet", "--question-budget", "5"])
    assert code == 2
    err = capsys.readouterr().err
    assert "question_budget 5 is below one sample of 10 questions" in err
    assert not (tmp_path / "r").exists()


def test_resume_may_raise_the_question_budget_and_nothing_else(tmp_path):
    from automemo.cli import UserError, build_parser
    from automemo.cli.search_cmd import resolve_config
    from automemo.config import run_config_to_dict
    from automemo.resolution import load_run_config

    config = load_run_config("minigallery", None, {"search": {"question_budget": 100}})
    run = RunDir.create(tmp_path, run_config_to_dict(config), "r")
    parse = build_parser().parse_args
    _, extended = resolve_config(parse(["search", "--resume", str(run.path), "--question-budget", "400"]))
    assert extended.search.question_budget == 400
    assert run.config()["search"]["question_budget"] == 400
    with pytest.raises(UserError, match="--question-budget"):
        resolve_config(parse(["search", "--resume", str(run.path), "--seed", "2"]))


def test_resume_refuses_a_question_budget_at_or_below_what_was_asked(tmp_path):
    from automemo.cli import UserError, build_parser
    from automemo.cli.search_cmd import resolve_config

    run, _, final, _ = _search(tmp_path, steps=4, budget=100, sample=10)
    spent = final["questions"]["scored"]
    parse = build_parser().parse_args
    for budget in ("0", str(spent)):
        with pytest.raises(UserError, match=rf"asked {spent} validation questions already.*more than {spent}"):
            resolve_config(parse(["search", "--resume", str(run.path), "--question-budget", budget]))
