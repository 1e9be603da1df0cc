"""The offline parameter mutator: moves stay in the declared ranges, choices are deterministic per
(seed, node id), the root gets a seed transplanted (untried ones first), repair re-perturbs then
reverts, and the diagnosis has the LLM analysis's JSON shape."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

from automemo.meta.config import OfflineMetaConfig
from automemo.meta.context import GenerationContext, RepairContext
from automemo.contract import ImageRef, MemoryPayload
from automemo.evaluation.result import EvaluationResult, TaskResult
from automemo.meta import MetaConfig, ParentView, build_meta_agent
from automemo.meta.base import ScoredProgram
from automemo.meta.llm.analysis import FEEDBACK_SCHEMA, parse_feedback
from automemo.meta.llm.codeblock import check_program
from automemo.meta.offline.agent import OfflineMetaAgent
from automemo.meta.source.tunables import parse_tunables
from automemo.paths import SEEDS_DIR

ROOT = '''from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def update(self, episode):
        pass

    def retrieve(self, task):
        return MemoryPayload()
'''


def _seed(top_k: int, mode: str) -> str:
    return (
        f'"""A seed with mode {mode}."""\n'
        "from automemo.contract import MemoProgram, MemoryPayload\n\n"
        f"TOP_K = {top_k}  # tunable: int 1..30\n"
        "THRESHOLD = 0.35  # tunable: float 0.0..0.9\n"
        f'MODE = "{mode}"  # tunable: choice dense|hybrid|graph\n'
        "USE_IMAGES = True  # tunable: bool\n\n\n"
        "class Memo(MemoProgram):\n"
        "    def update(self, episode):\n        pass\n\n"
        "    def retrieve(self, task):\n"
        "        text = MODE * TOP_K if USE_IMAGES or THRESHOLD > 0.5 else MODE\n"
        "        return MemoryPayload(text=text)\n"
    )


@pytest.fixture
def seeds_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "seeds"
    folder.mkdir()
    (folder / "no_memory.py").write_text(ROOT)
    (folder / "alpha.py").write_text(_seed(5, "dense"))
    (folder / "beta.py").write_text(_seed(10, "hybrid"))
    (folder / "gamma.py").write_text(_seed(15, "graph"))
    (folder / "_helpers.py").write_text("X = 1\n")
    return folder


def _evaluation() -> EvaluationResult:
    def task(i: int, category: str, score: float, text: str = "memo", error: str | None = None) -> TaskResult:
        payload = MemoryPayload(text=text, metadata={"evidence": ["r1"]} if text else {})
        return TaskResult(f"t{i}", category, score, payload=payload, error=error)

    tasks = (
        task(1, "FR", 1.0), task(2, "FR", 0.8), task(3, "VS", 0.0, text=""),
        task(4, "VS", 0.1), task(5, "TR", 0.0, error="timeout: retrieve ran past 30 s"), task(6, "TR", 0.9),
    )
    return EvaluationResult(
        mean=0.4667, n_scored=6, per_category={"FR": 0.9, "VS": 0.05, "TR": 0.45}, metrics={},
        tasks=tasks, errors={"timeout": 1},
    )


def _parent(source: str, node_id: int = 3) -> ParentView:
    return ParentView(node_id=node_id, source=source, score=0.4667, n_evals=1, evaluation=_evaluation())


# These tests are about perturbation and transplants: no recipe is composed in their place.
NO_COMPOSE = MetaConfig(offline=OfflineMetaConfig(compose_rate=0.0))
PERTURB_ONLY = MetaConfig(offline=OfflineMetaConfig(compose_rate=0.0, transplant_rate=0.0))


def test_perturbations_stay_in_range_and_change_one_or_two_tunables(seeds_dir):
    mutator = OfflineMetaAgent(PERTURB_ONLY, seeds_dir=seeds_dir)
    parent = _seed(10, "hybrid")
    before = {t.name: t for t in parse_tunables(parent)}
    seen_counts = set()
    for node_id in range(60):
        child = mutator.propose(GenerationContext.build(_parent(parent), node_id=node_id, seed=7))
        after = {t.name: t.value for t in parse_tunables(child.source)}  # re-parsing re-checks ranges
        changed = {n for n in after if after[n] != before[n].value}
        assert 1 <= len(changed) <= 2, child.summary
        seen_counts.add(len(changed))
        for name in changed:
            t = before[name]
            if t.kind in ("int", "float"):
                assert t.low <= after[name] <= t.high
            assert name in child.summary
        check_program(child.source)
        assert child.diagnosis["mutation"]["kind"] == "perturb"
    assert seen_counts == {1, 2}


def test_numeric_moves_at_a_range_boundary_go_inward(seeds_dir):
    one = MetaConfig(offline=OfflineMetaConfig(compose_rate=0.0, max_perturbed=1))
    mutator = OfflineMetaAgent(one, seeds_dir=seeds_dir)
    parent = 'K = 30  # tunable: int 1..30\nclass Memo:\n    def retrieve(self, task):\n        return K\n'
    values = {parse_tunables(mutator.propose(GenerationContext.build(_parent(parent), node_id=i, seed=1)).source)[0].value for i in range(20)}
    assert values and all(1 <= v < 30 for v in values)


def test_choices_are_deterministic_per_seed_and_node(seeds_dir):
    a = OfflineMetaAgent(NO_COMPOSE, seeds_dir=seeds_dir)
    b = OfflineMetaAgent(NO_COMPOSE, seeds_dir=seeds_dir)
    parent = _parent(_seed(10, "hybrid"))
    runs_a = [a.propose(GenerationContext.build(parent, node_id=n, seed=s)).source for s in (1, 2) for n in (4, 5)]
    runs_b = [b.propose(GenerationContext.build(parent, node_id=n, seed=s)).source for s in (1, 2) for n in (4, 5)]
    assert runs_a == runs_b
    assert len(set(runs_a)) > 1, "different (seed, node) pairs should not all give the same child"


def test_root_gets_an_untried_seed_transplanted(seeds_dir):
    mutator = OfflineMetaAgent(PERTURB_ONLY, seeds_dir=seeds_dir)
    expected = {p.stem: p.read_text() for p in seeds_dir.glob("*.py")}
    first = mutator.propose(GenerationContext.build(_parent(ROOT, 0), node_id=1, seed=0))
    assert first.diagnosis["mutation"]["kind"] == "transplant"
    name = first.diagnosis["mutation"]["seed"]
    assert name in {"alpha", "beta", "gamma"}
    assert first.source == expected[name]
    assert f"transplant seed {name}" in first.summary

    # The tree now holds the root, the first transplant and a perturbed variant of it: those
    # seeds count as tried, so the next transplants are the other two, then any seed again.
    variant = mutator.propose(GenerationContext.build(_parent(first.source), node_id=2, seed=0)).source
    tried = [ROOT, first.source, variant]
    names = []
    for node_id in (3, 4):
        child = mutator.propose(GenerationContext.build(_parent(ROOT, 0), node_id=node_id, seed=0,
                                                        tree_sources=tried))
        names.append(child.diagnosis["mutation"]["seed"])
        tried.append(child.source)
    assert sorted([name, *names]) == ["alpha", "beta", "gamma"]
    again = mutator.propose(GenerationContext.build(_parent(ROOT, 0), node_id=5, seed=0, tree_sources=tried))
    assert "every seed was tried already" in again.summary


def test_a_tunable_parent_sometimes_gets_an_untried_seed_while_one_remains(seeds_dir):
    """transplant_rate keeps other designs in reach below the root (here as likely as a
    perturbation); once every seed is in the tree, a tunable parent is always perturbed."""
    even = MetaConfig(offline=OfflineMetaConfig(compose_rate=0.0, transplant_rate=0.5, perturb_rate=0.5))
    mutator = OfflineMetaAgent(even, seeds_dir=seeds_dir)
    parent = _seed(10, "hybrid")
    kinds = [mutator.propose(GenerationContext.build(_parent(parent), node_id=i, seed=3)).diagnosis["mutation"]["kind"]
             for i in range(40)]
    assert 8 <= kinds.count("transplant") <= 32 and "perturb" in kinds
    again = [mutator.propose(GenerationContext.build(_parent(parent), node_id=i, seed=3)).diagnosis["mutation"]["kind"]
             for i in range(40)]
    assert again == kinds  # the coin is seeded by (seed, node)
    every_seed = [(seeds_dir / f"{n}.py").read_text() for n in ("alpha", "beta", "gamma")]
    assert {mutator.propose(GenerationContext.build(_parent(parent), node_id=i, seed=3, tree_sources=every_seed))
            .diagnosis["mutation"]["kind"] for i in range(40)} == {"perturb"}


def test_program_with_malformed_markers_is_treated_as_untunable(seeds_dir):
    mutator = OfflineMetaAgent(NO_COMPOSE, seeds_dir=seeds_dir)
    broken = "K = 99  # tunable: int 1..30\nclass Memo:\n    pass\n"
    child = mutator.propose(GenerationContext.build(_parent(broken), node_id=2, seed=0))
    assert child.diagnosis["mutation"]["kind"] == "transplant"


def test_repair_re_perturbs_the_passing_parent_then_reverts_to_it(seeds_dir):
    mutator = OfflineMetaAgent(NO_COMPOSE, seeds_dir=seeds_dir)
    parent = _seed(10, "hybrid")
    context = GenerationContext.build(_parent(parent), node_id=8, seed=3)
    child = mutator.propose(context)
    report = {"passed": False, "failed_check": "retrieve", "error": "boom"}
    # The repair context carries the generation's (its parent is what a repair reverts to).
    first = mutator.repair(RepairContext(child.source, report, 1, node_id=8, seed=11, generation=context))
    assert first.source not in (child.source, parent)
    assert first.summary.startswith("re-perturb after retrieve failed")
    parse_tunables(first.source)
    third = mutator.repair(RepairContext(first.source, report, 2, node_id=8, seed=13, generation=context))
    assert third.source == parent
    assert "revert to the last passing variant" in third.summary


def test_repair_of_a_foreign_untunable_program_transplants(seeds_dir):
    mutator = OfflineMetaAgent(NO_COMPOSE, seeds_dir=seeds_dir)
    fixed = mutator.repair(RepairContext(ROOT.replace("pass", "raise ValueError"), {"failed_check": "update"}, 1, node_id=2, seed=0))
    assert fixed.diagnosis["mutation"]["kind"] == "transplant"


def test_diagnosis_is_rule_based_and_has_the_analysis_shape(seeds_dir):
    mutator = OfflineMetaAgent(NO_COMPOSE, seeds_dir=seeds_dir)
    proposal = mutator.propose(GenerationContext.build(_parent(_seed(10, "dense")), node_id=4, seed=2))
    d = proposal.diagnosis
    feedback = parse_feedback(json.dumps({k: d[k] for k in FEEDBACK_SCHEMA["required"]}))
    assert "mean 0.467 over 6 scored tasks" in feedback["summary"]
    assert "weakest categories: VS 0.050, TR 0.450, FR 0.900" in feedback["summary"]
    assert any("1 of 6 payloads are empty" in c for c in feedback["content_issues"])
    assert any("timeout x1" in s for s in feedback["structural_issues"])
    assert any("below-average categories: TR, VS" in s for s in feedback["structural_issues"])
    assert feedback["suggestions"][0]["change"] == proposal.summary
    labels = {r["task_id"]: r["label"] for r in feedback["memory_relevance"]}
    outcomes = {e["task_id"]: e["outcome"] for e in d["evidence"]}
    assert sum(1 for o in outcomes.values() if o == "success") == 2
    assert sum(1 for o in outcomes.values() if o == "failure") == 2
    for task_id, label in labels.items():
        expected = {"t3": "missing", "t5": "missing"}.get(task_id, "helpful" if outcomes[task_id] == "success" else "irrelevant")
        assert label == expected, (task_id, label)


def test_real_seeds_transplant_from_the_root():
    seeds = sorted(p.stem for p in SEEDS_DIR.glob("*.py") if not p.name.startswith("_") and p.stem != "no_memory")
    assert seeds, "the repository ships seed programs"
    mutator = build_meta_agent(None, seeds_dir=SEEDS_DIR)
    assert isinstance(mutator, OfflineMetaAgent)
    child = mutator.propose(GenerationContext.build(_parent(ROOT, 0), node_id=1, seed=0))
    assert child.diagnosis["mutation"]["seed"] in seeds
    check_program(child.source)
    assert parse_tunables(child.source), "seeds declare tunables for the mutator to turn next"


def test_seeds_folder_without_seeds_is_a_clear_error(tmp_path):
    (tmp_path / "no_memory.py").write_text(ROOT)
    with pytest.raises(Exception, match="no seed programs in .* besides 'no_memory'"):
        OfflineMetaAgent(NO_COMPOSE, seeds_dir=tmp_path)


def test_image_refs_in_payloads_do_not_break_the_diagnosis(seeds_dir):
    ref = ImageRef(path="images/ab/abc.png", sha256="abc")
    evaluation = EvaluationResult(
        mean=1.0, n_scored=1, per_category={"VS": 1.0}, metrics={},
        tasks=(TaskResult("t1", "VS", 1.0, payload=MemoryPayload(text="x", images=(ref,))),),
    )
    parent = ParentView(node_id=1, source=_seed(3, "graph"), score=1.0, n_evals=1, evaluation=evaluation)
    d = OfflineMetaAgent(NO_COMPOSE, seeds_dir=seeds_dir).propose(GenerationContext.build(parent, node_id=2, seed=0)).diagnosis
    assert any("mean images 1.0" in c for c in d["content_issues"])


def test_the_diagnosis_of_a_transplant_says_why_it_was_one(seeds_dir):
    """A tunable parent transplanted by the operator draw is not described as untunable."""
    only_transplant = MetaConfig(offline=OfflineMetaConfig(compose_rate=0.0, transplant_rate=1.0, perturb_rate=0.0))
    mutator = OfflineMetaAgent(only_transplant, seeds_dir=seeds_dir)
    tunable = mutator.propose(GenerationContext.build(_parent(_seed(10, "hybrid")), node_id=4, seed=0)).diagnosis
    assert tunable["mutation"]["kind"] == "transplant"
    (why,) = [s for s in tunable["structural_issues"] if "transplant" in s or "seed" in s]
    assert "no tunable constants" not in why and "tunable constant(s)" in why and "transplant_rate 1.0" in why
    bare = mutator.propose(GenerationContext.build(_parent("class Memo:\n    pass\n"), node_id=5, seed=0)).diagnosis
    assert "the parent declares no tunable constants" in " ".join(bare["structural_issues"])


LEFTOVER = '''from automemo.contract import MemoProgram, MemoryPayload

OLD_K = 4  # tunable: int 1..30
SCALE = 2  # tunable: int 1..9
WIDTH = SCALE * 10
TOP_K = 5  # tunable: int 1..30


def _unused(items):
    return items[:OLD_K]


def _top(items):
    return items[:TOP_K]


class Memo(MemoProgram):
    def update(self, episode):
        pass

    def retrieve(self, task):
        return MemoryPayload(text=" ".join(self._pick(["a", "b"])))

    def _pick(self, items):
        return _top(items) * WIDTH
'''


def test_only_tunables_that_reachable_code_reads_are_perturbed(seeds_dir):
    # OLD_K is read only by a function nothing calls: turning it could never change a score.
    # SCALE is read through another constant, TOP_K through a helper a method calls.
    mutator = OfflineMetaAgent(PERTURB_ONLY, seeds_dir=seeds_dir)
    changed: set[str] = set()
    for node_id in range(40):
        child = parse_tunables(mutator.propose(GenerationContext.build(_parent(LEFTOVER), node_id=node_id, seed=3)).source)
        changed |= {t.name for t in child if t.value != {"OLD_K": 4, "SCALE": 2, "TOP_K": 5}[t.name]}
    assert changed == {"SCALE", "TOP_K"}


def test_code_the_analysis_cannot_follow_keeps_every_tunable_live():
    from automemo.meta.source.liveness import live_tunables

    opaque = LEFTOVER.replace('return items[:TOP_K]', 'return items[:globals()["TOP_K"]]')
    assert [t.name for t in live_tunables(opaque, parse_tunables(opaque))] == ["OLD_K", "SCALE", "TOP_K"]
    no_memo = LEFTOVER.replace("class Memo(", "class Other(")
    assert len(live_tunables(no_memo, parse_tunables(no_memo))) == 3
    # Every real seed reads every tunable it declares.
    for path in sorted(SEEDS_DIR.glob("*.py")):
        declared = parse_tunables(path.read_text())
        assert live_tunables(path.read_text(), declared) == declared, path.name


def test_an_operators_rate_is_its_probability_among_the_operators_that_apply(seeds_dir):
    """perturb 0.2, transplant 0.1, crossover 0.2 apply to a tunable parent with a partner that
    leads it where it is weak (compose is off, the stage moves need a recipe): 0.4, 0.2, 0.4."""
    mutator = OfflineMetaAgent(MetaConfig(offline=OfflineMetaConfig(compose_rate=0.0)), seeds_dir=seeds_dir)
    parent = _parent(_seed(10, "dense"))   # weak on VS
    partner = ScoredProgram(8, _seed(5, "hybrid"), 0.5, 1, {"FR": 0.2, "VS": 0.9, "TR": 0.5})
    n = 300
    kinds = collections.Counter(
        mutator.propose(GenerationContext.build(parent, node_id=i, seed=5, scored=[partner])).diagnosis["mutation"]["kind"]
        for i in range(n))
    assert set(kinds) == {"perturb", "transplant", "crossover"}
    for kind, share in (("perturb", 0.4), ("transplant", 0.2), ("crossover", 0.4)):
        assert abs(kinds[kind] / n - share) < 0.08, kinds
