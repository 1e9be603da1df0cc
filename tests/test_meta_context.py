"""The generation context: the parent is parsed once, when the context is built, and no module
of the meta agent parses it again during a propose (offline or LLM, full or compact profile);
the helpers the meta modules share (weak types, token estimate, seed listing)."""

from __future__ import annotations

import collections

import pytest

from automemo.meta.config import LLMMetaConfig
from automemo.evaluation.result import EvaluationResult, TaskResult
from automemo.llm import LLMClient, LLMConfig, Ledger, RoleConfig
from automemo.meta import MetaConfig, ParentView, build_meta_agent
from automemo.meta.source import syntax
from automemo.llm.tokens import estimate_tokens
from automemo.meta.context import GenerationContext, weak_types
from automemo.meta.offline.agent import OfflineMetaAgent
from automemo.meta.source.recipe import render_recipe
from automemo.meta.offline.moves import STARTERS
from automemo.paths import list_seeds

TUNABLE = ('"""a parent."""\nfrom automemo.contract import MemoProgram, MemoryPayload\n\n'
           "TOP_K = 5  # tunable: int 1..30\nMODE = 'dense'  # tunable: choice dense|sparse\n\n\n"
           "class Memo(MemoProgram):\n    def update(self, episode):\n        pass\n\n"
           "    def retrieve(self, task):\n        return MemoryPayload(text=MODE * TOP_K)\n")


def _evaluation() -> EvaluationResult:
    tasks = tuple(TaskResult(f"{c}{i}", c, s) for c, s in (("A", 0.2), ("B", 0.9)) for i in range(3))
    return EvaluationResult(mean=0.55, n_scored=6, per_category={"A": 0.2, "B": 0.9}, metrics={}, tasks=tasks)


@pytest.fixture
def parses(monkeypatch):
    """Counts `syntax.parse` calls by the source parsed."""
    counts: collections.Counter[str] = collections.Counter()
    real = syntax.parse

    def counting(source, *args, **kwargs):
        counts[source] += 1
        return real(source, *args, **kwargs)

    monkeypatch.setattr(syntax, "parse", counting)
    return counts


@pytest.mark.parametrize("parent_source", [TUNABLE, render_recipe(STARTERS[0]), "class Memo:\n    pass\n"],
                         ids=["tunable", "recipe", "bare"])
def test_the_offline_agent_never_re_parses_the_parent(parses, tmp_path, parent_source):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "alpha.py").write_text(TUNABLE.replace("5  #", "7  #"))
    parent = ParentView(2, parent_source, 0.55, 1, _evaluation())
    other = TUNABLE.replace("5  #", "9  #")
    for node_id in range(12):  # enough draws to go through perturb, transplant, compose, moves
        parses.clear()
        context = GenerationContext.build(parent, node_id=node_id, seed=3,
                                          tree_sources=[parent_source, other])
        OfflineMetaAgent(MetaConfig(), seeds_dir=seeds).propose(context)
        assert parses[parent_source] == 1, f"node {node_id}: the parent was parsed {parses[parent_source]} times"


def _client(fake, tmp_path, context_tokens=0) -> LLMClient:
    role = RoleConfig(model="m", base_url=fake.base_url, timeout_s=10.0, max_retries=1, retry_backoff_s=0.01,
                      retry_backoff_max_s=0.02, context_tokens=context_tokens)
    return LLMClient(LLMConfig(meta=role), Ledger(tmp_path / "tree.db"))


@pytest.mark.parametrize("profile", ["full", "compact"])
def test_the_llm_agent_never_re_parses_the_parent(parses, fake_llm, tmp_path, profile):
    agent = build_meta_agent(_client(fake_llm, tmp_path), MetaConfig(llm=LLMMetaConfig(prompt_profile=profile)))
    child = TUNABLE.replace("TOP_K = 5", "TOP_K = 8")
    analysis = '```json\n{"summary": "x", "memory_relevance": [], "content_issues": [], ' \
               '"structural_issues": [], "suggestions": [{"priority": 1, "change": "c", "rationale": "r"}]}\n```'
    # A whole program (the reply is read as one), after an edit that matches nowhere and whose
    # lines set no constant: the reply parser tries the parent's constants too.
    edit = "SUMMARY: s\n<<<<<<< SEARCH\nnot in the parent\n=======\nx = 1\n>>>>>>> REPLACE\n"
    replies = ([analysis] if profile == "full" else []) + [edit, f"SUMMARY: s\n```python\n{child}```\n"]
    fake_llm.script(replies)
    parent = ParentView(2, TUNABLE, 0.55, 1, _evaluation())
    context = GenerationContext.build(parent, node_id=4, seed=1, tree_sources=[TUNABLE])
    assert parses[TUNABLE] == 1
    proposal = agent.propose(context)
    assert proposal.source == child
    assert parses[TUNABLE] == 1, f"the parent was parsed {parses[TUNABLE]} times"


def test_weak_types_are_weakest_first_below_the_mean():
    scores = {"B": 0.3, "A": 0.3, "C": 0.9, "D": 0.1}
    assert weak_types(scores) == ["D", "A", "B", "C"]
    assert weak_types(scores, 0.5) == ["D", "A", "B"]
    assert weak_types(scores, limit=2) == ["D", "A"]
    context = GenerationContext.build(ParentView(1, TUNABLE, 0.55, 1, _evaluation()), node_id=2, seed=0)
    assert context.weak == ("A",) and context.scored_parent.per_category == {"A": 0.2, "B": 0.9}


def test_the_token_estimate_is_one_rule():
    assert estimate_tokens("x" * 300) == estimate_tokens(300) == 100


def test_seeds_are_listed_without_helper_files(tmp_path):
    for name in ("b.py", "a.py", "_helpers.py", "notes.txt"):
        (tmp_path / name).write_text("")
    assert [p.name for p in list_seeds(tmp_path)] == ["a.py", "b.py"]
