"""The scheduler's bookkeeping with K = 3 actions in flight: evaluations that fail and that finish
out of order, generations that read the latest evaluation, and a meta agent that keeps what it
is told. The actions are scripted (a strategy double) and the order in which they finish is
forced with events released from the `on_commit` hook, so every interleaving below is certain,
not a matter of timing.
"""

from __future__ import annotations

import re
import threading

from automemo.evaluation.evidence import write_summary
from automemo.evaluation.result import EvaluationResult, TaskResult
from automemo.llm import BudgetExceeded
from automemo.meta.base import MetaAgent, MetaError, Proposal
from automemo.runs import RunDir
from automemo.runs.journal import inflight
from automemo.search.config import SearchConfig
from automemo.search.loop import Collaborators, SearchLoop
from automemo.search.policy import Action
from test_search_loop import exam_double

K = 3
WAIT = 20.0  # seconds a gated evaluation waits for its release before the test fails


class ScriptedStrategy:
    """The actions of steps 1, 2, ... in order (the scheduler asks in step order)."""

    def __init__(self, actions: list[Action]) -> None:
        self.actions = list(actions)

    def choose(self, stats, *, seed: int) -> Action:
        return self.actions.pop(0)

    def candidates(self, stats) -> list[Action]:
        return []


class _Store:
    def __init__(self, root) -> None:
        self.root = root


class GatedEvaluator:
    """Scores `SCORE = x` over two tasks and writes real evidence. An evaluation (node, k) listed
    in `gates` first waits for its event; one listed in `failing` then raises."""

    def __init__(self, root, gates: dict[tuple[int, int], threading.Event] = (),
                 failing: set[tuple[int, int]] = frozenset()) -> None:
        self.store = _Store(root)
        self.gates = dict(gates)
        self.failing = set(failing)
        self.started: list[tuple[int, int]] = []

    def evaluate(self, source, *, split="train", evidence_dir=None, node_id=None, sample_seed=0):
        k = int(re.split(r"[-/]", str(evidence_dir))[-1])
        self.started.append((node_id, k))
        gate = self.gates.get((node_id, k))
        if gate is not None:
            assert gate.wait(WAIT), f"evaluation {(node_id, k)} was never released"
        if (node_id, k) in self.failing:
            raise RuntimeError(f"the browser pool died under evaluation {(node_id, k)}")
        m = re.search(r"SCORE = ([0-9.]+)", source)
        score = float(m.group(1)) if m else 0.8
        tasks = tuple(TaskResult(task_id=f"t{i}", category="c", score=score) for i in range(2))
        result = EvaluationResult(mean=score, n_scored=2, per_category={"c": score}, metrics={},
                                  tasks=tasks)
        write_summary(evidence_dir, result, store_root=None)
        return result

    def sample_for_exam(self, n=5, seed=0):
        return [], []


class RecordingMeta(MetaAgent):
    """Proposes `SCORE = 0.5` and records the parent each proposal was shown."""

    def __init__(self) -> None:
        self.parents = []

    def propose(self, context):
        self.parents.append(context.parent)
        return Proposal(source=f"SCORE = 0.5\nCHILD = {context.node_id}\n", summary=f"child {context.node_id}")

    def repair(self, context):
        raise MetaError("not used")

    def initialize(self, task_description, *, node_id, seed):
        raise MetaError("not used")


def _search(tmp_path, evaluator_args, actions, meta, on_commit, steps):
    run = RunDir.create(tmp_path / "runs", {"search": {"steps": steps}}, "r")
    evaluator = GatedEvaluator(run.store_root, **evaluator_args)
    parts = Collaborators(evaluator=evaluator, meta=meta, sandbox=None, exam=exam_double,
                          on_commit=on_commit, strategy=ScriptedStrategy(actions))
    config = SearchConfig(steps=steps, root="murag", parallel=K)
    return run, evaluator, SearchLoop(run, config, parts, quiet=True)


def test_failed_and_out_of_order_evaluations_keep_rows_files_and_indices_in_step(tmp_path):
    """Steps 1-3 re-evaluate the root (k = 1, 2, 3). Step 2 finishes first; step 1 waits for it,
    then fails; step 3 waits for step 1. So step 4 (a generation from the root) is chosen when the
    root's evaluations are k = 0 and 2: its meta agent must be shown k = 2, not the missing
    k = n - 1 = 1 ("0 scored tasks"). Step 5 (another re-evaluation) is chosen with k = 1 lost
    and k = 3 in flight: counting n + pending gives 3 again, which collided at commit."""
    released = {step: threading.Event() for step in (1, 2)}
    gates = {(0, 1): released[2], (0, 3): released[1]}
    commits: list[int] = []

    def on_commit(record):
        commits.append(record.step)
        if record.step in released:
            released[record.step].set()

    meta = RecordingMeta()
    actions = [Action("evaluate", 0, 0.5)] * 3 + [Action("generate", 0, 0.5),
                                                   Action("evaluate", 0, 0.5)]
    run, evaluator, loop = _search(tmp_path, {"gates": gates, "failing": {(0, 1)}}, actions,
                                   meta, on_commit, steps=5)
    final = loop.run_search()

    assert final["stop_reason"] == "steps"
    assert commits[:3] == [0, 2, 1]  # the root, then completion order
    outcomes = {a["step"]: a["outcome"] for a in run.actions()}
    assert outcomes == {0: "evaluated", 1: "eval_error", 2: "evaluated", 3: "evaluated",
                        4: "evaluated", 5: "evaluated"}
    # the failed index 1 stays unused; nothing was written twice
    assert sorted(e["k"] for e in run.evaluations(0)) == [0, 2, 3, 4]
    assert (0, 4) in evaluator.started
    # every evaluation folder has its row and every row its folder
    folders = sorted(int(p.name) for p in (run.path / "nodes" / "0" / "evaluations").iterdir())
    assert folders == [0, 2, 3, 4]
    # the generation saw the root's latest evaluation with its scored tasks
    (parent,) = meta.parents
    assert parent.evaluation is not None and parent.evaluation.n_scored == 2
    assert parent.evidence_dir.endswith("evaluations/2") and parent.n_evals == 2
    assert not (run.path / ".pending").exists()


class MeetingMeta(RecordingMeta):
    """Proposes only once every generation in flight is inside `propose` at the same time (a
    barrier): a lock around the meta agent would make the first proposal wait forever (here,
    until the barrier's timeout breaks it)."""

    def __init__(self, parties: int) -> None:
        super().__init__()
        self.barrier = threading.Barrier(parties, timeout=10)
        self.contexts = []

    def propose(self, context):
        self.contexts.append(context)
        self.barrier.wait()
        return super().propose(context)


def test_generations_in_flight_call_the_meta_agent_at_once_each_with_its_own_context(tmp_path):
    """Three generations at once: all three are inside the meta agent together (no lock), and
    each was told the tree it was chosen on, with its own child id and seed."""
    meta = MeetingMeta(3)
    actions = [Action("generate", 0, 0.5)] * 3
    run, _, loop = _search(tmp_path, {}, actions, meta, None, steps=3)
    loop.run_search()
    assert not meta.barrier.broken
    assert sorted(c.node_id for c in meta.contexts) == [1, 2, 3]
    assert len({c.seed for c in meta.contexts}) == 3
    assert all(len(c.tree_sources) == 1 and c.parent.node_id == 0 for c in meta.contexts)
    assert sorted(n["id"] for n in run.nodes()) == [0, 1, 2, 3]


class SiblingsMeta(RecordingMeta):
    """Records the siblings in flight each generation was told; the generation of node 4 lets
    node 2's evaluation go on."""

    def __init__(self, release: threading.Event) -> None:
        super().__init__()
        self.release = release
        self.told: dict[int, tuple[str, ...]] = {}

    def propose(self, context):
        self.told[context.node_id] = context.siblings_in_flight
        if context.node_id == 4:
            self.release.set()
        return super().propose(context)


def test_a_generation_is_told_what_the_generations_in_flight_proposed(tmp_path):
    """Steps 1-3 generate at once; node 2's evaluation waits until step 4 (started when step 1
    or 3 commits) has proposed: step 4 is told node 2's program, which its tree lacks."""
    released = threading.Event()
    meta = SiblingsMeta(released)
    run, _, loop = _search(tmp_path, {"gates": {(2, 0): released}}, [Action("generate", 0, 0.5)] * 4,
                           meta, None, steps=4)
    loop.run_search()
    assert "SCORE = 0.5\nCHILD = 2\n" in meta.told[4]
    assert not any("CHILD = 4" in source for source in meta.told[4])
    assert sorted(n["id"] for n in run.nodes()) == [0, 1, 2, 3, 4]


class _Budget(GatedEvaluator):
    def evaluate(self, source, **kwargs):
        result = super().evaluate(source, **kwargs)
        if "0-1" in str(kwargs["evidence_dir"]):
            raise BudgetExceeded("USD cap reached")
        return result


def test_a_stop_mid_step_keeps_the_others_and_resume_restarts_the_step_as_chosen(tmp_path):
    """Step 1 hits a cap after steps 2 and 3 have committed: they stay, step 1 is abandoned but
    recorded in flight, and the resumed search restarts it as it was chosen (its node and
    evaluation index), whatever the strategy would choose now."""
    later_done = threading.Event()

    def on_commit(record):
        if record.step == 3:
            later_done.set()

    run = RunDir.create(tmp_path / "runs", {"search": {"steps": 3}}, "r")
    config = SearchConfig(steps=3, root="murag", parallel=K)
    evaluator = _Budget(run.store_root, gates={(0, 1): later_done})
    parts = Collaborators(evaluator=evaluator, meta=RecordingMeta(), sandbox=None,
                          exam=exam_double, on_commit=on_commit,
                          strategy=ScriptedStrategy([Action("evaluate", 0, 0.5)] * 3))
    assert SearchLoop(run, config, parts, quiet=True).run_search()["stop_reason"] == "budget"
    assert sorted(a["step"] for a in run.actions()) == [0, 2, 3]
    assert [(a["step"], a["action"]["k"]) for a in inflight(run)] == [(1, 1)]

    resumed = Collaborators(evaluator=GatedEvaluator(run.store_root), meta=RecordingMeta(),
                            sandbox=None, exam=exam_double,
                            strategy=ScriptedStrategy([Action("generate", 0, 0.5)]))
    final = SearchLoop(run, config, resumed, quiet=True).run_search()
    assert final["stop_reason"] == "steps" and inflight(run) == []
    assert {a["step"]: a["kind"] for a in run.actions()} == {
        0: "evaluate_root", 1: "evaluate", 2: "evaluate", 3: "evaluate"}
    assert sorted(e["k"] for e in run.evaluations(0)) == [0, 1, 2, 3]
