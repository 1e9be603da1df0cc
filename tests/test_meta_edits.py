"""Edits instead of rewrites (SEARCH/REPLACE blocks applied exactly, then whitespace-
insensitively), the one request for the whole program when they do not apply, answers cut at
the completion cap, and duplicate children rejected before the exam."""

from __future__ import annotations

import json

import pytest

from automemo.meta.config import LLMMetaConfig
from automemo.meta.context import GenerationContext
from automemo.llm import LLMClient, LLMConfig, Ledger, RoleConfig
from automemo.meta import ParentView, build_meta_agent
from automemo.meta.base import ChildAttempt, MetaError, Proposal
from automemo.meta.config import MetaConfig
from automemo.meta.llm.conversation import TruncatedReply
from automemo.meta.llm.edits import EditError, apply_edits, edited, parse_edits
from automemo.meta.source.syntax import normalised
from automemo.search.generation import generate_child

PARENT = '''"""A parent."""
from automemo.contract import MemoProgram, MemoryPayload

TOP_K = 5  # tunable: int 1..30


class Memo(MemoProgram):
    def update(self, episode):
        self.seen = getattr(self, "seen", 0) + 1

    def retrieve(self, task):
        return MemoryPayload(text="k=%d" % TOP_K)
'''
FEEDBACK = {"summary": "s", "memory_relevance": [], "content_issues": [], "structural_issues": [],
            "suggestions": [{"priority": 1, "change": "raise TOP_K", "rationale": "recall"}]}


def _edit(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def test_edits_apply_exactly_then_with_whitespace_ignored():
    exact = parse_edits("SUMMARY: x\n" + _edit("TOP_K = 5  # tunable: int 1..30\n",
                                                "TOP_K = 9  # tunable: int 1..30\n"))
    assert "TOP_K = 9" in apply_edits(PARENT, exact)
    # the model dropped the method's indentation and a trailing space: still found, re-indented
    loose = parse_edits(_edit("def retrieve(self, task):  \n    return MemoryPayload(text=\"k=%d\" % TOP_K)\n",
                              "def retrieve(self, task):\n    return MemoryPayload(text=\"top %d\" % TOP_K)\n"))
    child = apply_edits(PARENT, loose)
    assert '        return MemoryPayload(text="top %d" % TOP_K)\n' in child
    assert "    def retrieve(self, task):\n" in child and "def update" in child
    with pytest.raises(EditError, match="edit 1: its SEARCH text"):
        apply_edits(PARENT, parse_edits(_edit("TOP_K = 6\n", "TOP_K = 7\n")))


def test_a_one_line_search_matches_part_of_a_line_and_keeps_its_tail():
    # a small model quotes the assignment without its marker comment
    child = apply_edits(PARENT, parse_edits(_edit("TOP_K = 5\n", "TOP_K = 9\n")))
    assert "TOP_K = 9  # tunable: int 1..30\n" in child
    # ... or repeats the comment in its REPLACE: not written twice
    child = apply_edits(PARENT, parse_edits(_edit("TOP_K = 5\n", "TOP_K = 9  # tunable: int 1..30\n")))
    assert "TOP_K = 9  # tunable: int 1..30\n" in child and child.count("tunable") == 1


def test_a_search_that_skips_lines_applies_where_it_changes_and_keeps_the_skipped_lines():
    search = "    def update(self, episode):\n    def retrieve(self, task):\n        return MemoryPayload(text=\"k=%d\" % TOP_K)\n"
    replace = "    def update(self, episode):\n    def retrieve(self, task):\n        return MemoryPayload(text=\"top %d\" % TOP_K)\n"
    child = apply_edits(PARENT, parse_edits(_edit(search, replace)))
    assert 'text="top %d"' in child and 'self.seen = getattr(self, "seen", 0) + 1' in child
    # a changed run of SEARCH lines that spans skipped lines is not guessed at
    with pytest.raises(EditError):
        apply_edits(PARENT, parse_edits(_edit("    def update(self, episode):\n    def retrieve(self, task):\n",
                                              "    def update(self, episode, extra):\n    def retrieve(self, task, extra):\n")))


def test_an_ambiguous_edit_is_never_applied():
    twice = PARENT + "\n\ndef helper():\n    return MemoryPayload(text=\"k=%d\" % TOP_K)\n"
    for search in ('return MemoryPayload(text="k=%d" % TOP_K)\n',           # exact, twice
                   'return MemoryPayload(text="k=%d"  %  TOP_K)\n',       # loose, twice
                   'MemoryPayload(text="k=%d"\n'):                         # part of two lines
        with pytest.raises(EditError, match="unique"):
            apply_edits(twice, parse_edits(_edit(search, "return None\n")))


def test_a_reply_that_only_sets_a_constant_is_an_edit_of_its_line():
    # what Qwen2.5-Coder-0.5B answers when shown an edit of a constant: the new line alone
    for reply in ("TOP_K = 9  # tunable: int 1..30\nSUMMARY: more", "```\nTOP_K = 9\n```",
                  "```python\nTOP_K = 9\n```",
                  "SUMMARY: TOP_K 5 -> 9, for recall", "**SEARCH**\nTOP_K = 9\n>>>>>>> REPLACE"):
        child, n = edited(PARENT, reply)
        assert n == 1 and "TOP_K = 9  # tunable: int 1..30\n" in child, reply
    # the blocks did not apply, but their REPLACE only sets a constant: that setting
    child, _ = edited(PARENT, _edit("TOP_K = 7  # tunable: int 1..30\n", "TOP_K = 9  # tunable: int 1..30\n"))
    assert "TOP_K = 9  #" in child
    # out of the declared range, of another kind, unknown, unchanged, or a whole program: no edit
    for reply in ("TOP_K = 99", "TOP_K = 'many'", "DEPTH = 3", "TOP_K = 5",
                  "```python\nTOP_K = 9\n\nclass Memo(MemoProgram):\n    pass\n```"):
        assert edited(PARENT, reply) is None, reply
    with pytest.raises(EditError):  # blocks that change more than a constant are not guessed at
        edited(PARENT, _edit("TOP_K = 7\n", "TOP_K = 9\nDEPTH = 2\nprint(1)\n"))


def test_normalised_identity_ignores_docstrings_comments_and_layout():
    same = PARENT.replace('"""A parent."""\n', "").replace("  # tunable: int 1..30", "")
    assert normalised(same) == normalised(PARENT)
    assert normalised(PARENT.replace("TOP_K = 5", "TOP_K = 6")) != normalised(PARENT)


def _client(fake, tmp_path) -> LLMClient:
    role = RoleConfig(model="gpt-4o-mini", base_url=fake.base_url, max_retries=0)
    return LLMClient(LLMConfig(meta=role), Ledger(tmp_path / "tree.db"))


def _parent() -> ParentView:
    return ParentView(node_id=0, source=PARENT, score=0.2, n_evals=1, evaluation=None,
                      children=(ChildAttempt(1, "lower TOP_K", 0.1), ChildAttempt(2, "graph index", None, "exam: import")))


def test_a_diff_child_and_one_request_for_the_whole_program_when_it_does_not_apply(fake_llm, tmp_path):
    agent = build_meta_agent(_client(fake_llm, tmp_path))
    whole = PARENT.replace("TOP_K = 5", "TOP_K = 11")
    fake_llm.script([
        "```json\n" + json.dumps(FEEDBACK) + "\n```",
        "SUMMARY: more\n" + _edit("TOP_K = 5  # tunable: int 1..30\n", "TOP_K = 8  # tunable: int 1..30\n"),
        "```json\n" + json.dumps(FEEDBACK) + "\n```",
        "SUMMARY: more\n" + _edit("    k = 50\n", "    k = 8\n"),      # quotes what is not there
        "SUMMARY: eleven\n```python\n" + whole + "```\n",
    ])
    first = agent.propose(GenerationContext.build(_parent(), node_id=3, seed=0))
    assert "TOP_K = 8" in first.source and first.diagnosis["generate"]["answer"] == "1 edit(s)"
    generate = fake_llm.requests[1]
    text = generate["messages"][-1]["content"]
    assert "node 1: lower TOP_K → scored 0.1000" in text and "failed: exam: import" in text
    assert "Other programs of this search" in text, "seeds fill the inspirations of a young tree"
    second = agent.propose(GenerationContext.build(_parent(), node_id=4, seed=1))
    assert second.source == whole and second.diagnosis["generate"]["answer"] == "whole program"
    retry = fake_llm.requests[-1]["messages"][-1]["content"]
    assert "is not in the parent program" in retry and "COMPLETE program" in retry


def test_a_cut_answer_is_continued_then_asked_for_an_edit_and_a_hopeless_one_says_it_was_cut(fake_llm, tmp_path):
    agent = build_meta_agent(_client(fake_llm, tmp_path))
    child = PARENT.replace("TOP_K = 5", "TOP_K = 12")
    half = len(child) // 2
    fake_llm.script([
        "```json\n" + json.dumps(FEEDBACK) + "\n```",
        {"content": "SUMMARY: twelve\n```python\n" + child[:half], "finish_reason": "length"},
        child[half:] + "```\n",
    ])
    proposal = agent.propose(GenerationContext.build(_parent(), node_id=5, seed=0))
    assert proposal.source == child
    assert "Continue exactly where it stopped" in fake_llm.requests[2]["messages"][-1]["content"]
    cut = {"content": "```python\nclass Memo:\n    x = '" + "y" * 2000, "finish_reason": "length"}
    fake_llm.script(["```json\n" + json.dumps(FEEDBACK) + "\n```"] + [cut] * 4)
    with pytest.raises(TruncatedReply, match="cut at the completion cap.*generate_max_tokens"):
        agent.propose(GenerationContext.build(_parent(), node_id=6, seed=0))
    asked = fake_llm.requests[-2]["messages"]
    assert "Do not write the whole program" in asked[-1]["content"], "re-asked for an edit first"
    assert len(asked[-2]["content"]) < 700, "the cut answer is not sent back whole"


def test_a_rewrite_cut_at_the_cap_is_asked_for_an_edit_instead(fake_llm, tmp_path):
    client = _client(fake_llm, tmp_path)
    agent = build_meta_agent(client, MetaConfig(llm=LLMMetaConfig(edit_mode="rewrite", prompt_profile="full")))
    cut = {"content": "SUMMARY: all\n```python\n" + PARENT[:80], "finish_reason": "length"}
    fake_llm.script(["```json\n" + json.dumps(FEEDBACK) + "\n```", cut, cut,
                     "SUMMARY: nine\n" + _edit("TOP_K = 5\n", "TOP_K = 9\n")])
    proposal = agent.propose(GenerationContext.build(_parent(), node_id=5, seed=0))
    assert "TOP_K = 9  # tunable: int 1..30" in proposal.source
    assert proposal.diagnosis["generate"]["answer"] == "1 edit(s)"
    assert [r["purpose"] for r in Ledger(tmp_path / "tree.db").rows()] == [
        "analysis", "generate", "generate-continue-1", "generate-retry"]


def test_an_edit_that_does_not_apply_is_asked_for_again_as_an_edit_when_the_program_would_not_fit(fake_llm, tmp_path):
    client = _client(fake_llm, tmp_path)
    agent = build_meta_agent(client, MetaConfig(llm=LLMMetaConfig(generate_max_tokens=64, prompt_profile="full")))
    fake_llm.script(["```json\n" + json.dumps(FEEDBACK) + "\n```",
                     "SUMMARY: x\n" + _edit("    k = 50\n", "    k = 8\n"),
                     "SUMMARY: eight\n" + _edit("TOP_K = 5\n", "TOP_K = 8\n")])
    proposal = agent.propose(GenerationContext.build(_parent(), node_id=5, seed=0))
    assert "TOP_K = 8" in proposal.source
    retry = fake_llm.requests[-1]["messages"][-1]["content"]
    assert "is not in the parent program" in retry and "Do not write the whole program" in retry
    assert "COMPLETE program" not in retry


def _context(*, node_id: int, seed: int) -> GenerationContext:
    """The parent as the tree holds it (a proposal equal to it is a duplicate)."""
    return GenerationContext.build(_parent(), node_id=node_id, seed=seed, tree_sources=[PARENT])


class _Repeating:
    """A meta agent that proposes the parent again (docstring dropped) before a real change."""

    def __init__(self, sources):
        self.sources = list(sources)
        self.seeds = []

    def propose(self, context):
        self.seeds.append(context.seed)
        if not self.sources:
            raise MetaError("nothing left")
        return Proposal(self.sources.pop(0), "s", usage={"calls": 1})


def test_duplicate_children_are_proposed_again_before_any_exam():
    exams = []
    same = PARENT.replace('"""A parent."""\n', "")
    new = PARENT.replace("TOP_K = 5", "TOP_K = 6")
    meta = _Repeating([same, new])
    gen = generate_child(meta, _context(node_id=3, seed=10), exam=lambda s: exams.append(s) or _Passed(),
                         repair_attempts=0, repair_seed=lambda a: a)
    assert gen.passed and gen.source == new and exams == [new], "the duplicate never reached the exam"
    assert len(set(meta.seeds)) == 2 and gen.diagnosis["duplicates_rejected"] == ["s"]
    stubborn = _Repeating([same] * 3)
    gen = generate_child(stubborn, _context(node_id=3, seed=10), exam=lambda s: exams.append(s),
                         repair_attempts=0, repair_seed=lambda a: a, duplicate_retries=2)
    assert not gen.passed and "repeated a program of the tree" in gen.failure and len(exams) == 1


class _Passed:
    passed = True

    def to_dict(self):
        return {"passed": True}


def test_a_child_a_sibling_in_flight_proposed_already_is_proposed_again():
    # Two actions in flight see the same tree; the second proposes what the first just did.
    claimed: set[str] = set()

    def claim(shape):
        if shape in claimed:
            return False
        claimed.add(shape)
        return True

    first_child = PARENT.replace("TOP_K = 5", "TOP_K = 6")
    other = PARENT.replace("TOP_K = 5", "TOP_K = 7")
    first = generate_child(_Repeating([first_child]), _context(node_id=3, seed=1), exam=lambda s: _Passed(),
                           repair_attempts=0, repair_seed=lambda a: a, claim=claim)
    second = generate_child(_Repeating([first_child.replace("TOP_K", "TOP_K "), other]), _context(node_id=4, seed=1),
                            exam=lambda s: _Passed(), repair_attempts=0, repair_seed=lambda a: a, claim=claim)
    assert first.source == first_child and second.source == other
    assert second.diagnosis["duplicates_rejected"] == ["s"]
