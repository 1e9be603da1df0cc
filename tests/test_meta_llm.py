"""The LLM meta agent against the real fake OpenAI-compatible server: analysis JSON validated, one
retry on invalid JSON then MetaError, the program taken from a fenced block, repair and
initialize flows, images attached to the analysis call, usage recorded in the ledger."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from automemo.meta.context import GenerationContext, RepairContext
from automemo.contract import EpisodeRecorder, MemoryPayload, Step
from automemo.episode_store import EpisodeStore
from automemo.evaluation.evidence import TaskEvidence, episode_rel_path, write_summary, write_task
from automemo.evaluation.result import EvaluationResult, TaskResult
from automemo.llm import BudgetExceeded, LLMClient, LLMConfig, Ledger, RoleConfig
from automemo.meta import MetaError, ParentView, build_meta_agent
from automemo.meta.base import Improvement
from automemo.meta.llm.codeblock import CodeBlockError, extract_program, extract_summary
from automemo.meta.llm.agent import LLMMetaAgent

PARENT = "from automemo.contract import MemoProgram, MemoryPayload\n\n\nclass Memo(MemoProgram):\n    def update(self, episode):\n        pass\n\n    def retrieve(self, task):\n        return MemoryPayload()\n"
CHILD = PARENT.replace("MemoryPayload()", 'MemoryPayload(text="remember")')

FEEDBACK = {
    "summary": "the program stores nothing",
    "memory_relevance": [{"task_id": "f0", "label": "missing", "reason": "nothing retrieved"}],
    "content_issues": ["no content"],
    "structural_issues": ["no index"],
    "suggestions": [
        {"priority": 2, "change": "cite evidence ids", "rationale": "scored by recall"},
        {"priority": 1, "change": "store each round with its embedding", "rationale": "recall"},
    ],
}


def _reply_json(obj) -> str:
    return "Here is my analysis.\n```json\n" + json.dumps(obj, indent=1) + "\n```\n"


def _reply_program(source: str, summary: str = "store rounds and return the closest") -> str:
    return f"SUMMARY: {summary}\n\nA snippet first:\n```python\nx = 1\n```\nThe program:\n```python\n{source}```\n"


def _client(fake, tmp_path, **top) -> LLMClient:
    role = RoleConfig(model="gpt-4o-mini", base_url=fake.base_url, timeout_s=10.0, max_retries=1,
                      retry_backoff_s=0.01, retry_backoff_max_s=0.02)
    return LLMClient(LLMConfig(meta=role, **top), Ledger(tmp_path / "tree.db"))


@pytest.fixture
def parent(tmp_path) -> ParentView:
    """A parent with a real evidence directory: 2 successes and 2 failures with screenshots."""
    store = EpisodeStore(tmp_path / "store")
    folder = tmp_path / "nodes" / "3" / "evaluations" / "0"
    results = []
    for task_id, score in (("s0", 1.0), ("s1", 1.0), ("f0", 0.0), ("f1", 0.0)):
        shot = store.put_image(Image.new("RGB", (4, 4), (len(results) * 40, 0, 0)))
        episode = EpisodeRecorder(task_id=task_id, benchmark="toy", instruction=f"do {task_id}",
                                  steps=(Step(index=0, observation="page", action="click", screenshot=shot),))
        result = TaskResult(task_id, "A", score, payload=MemoryPayload(text=f"memory for {task_id}"),
                            episode_path=episode_rel_path(task_id))
        write_task(folder, TaskEvidence(result=result, episode=episode))
        results.append(result)
    evaluation = EvaluationResult(mean=0.5, n_scored=4, per_category={"A": 0.5}, metrics={}, tasks=tuple(results))
    write_summary(folder, evaluation, store_root=store.root)
    return ParentView(node_id=3, source=PARENT, score=0.5, n_evals=1, evaluation=evaluation,
                      evidence_dir=str(folder))


def _user_text(request: dict) -> str:
    content = request["messages"][-1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def test_propose_runs_analysis_then_generate(fake_llm, tmp_path, parent):
    client = _client(fake_llm, tmp_path)
    agent = build_meta_agent(client, task_description="answer questions about a conversation")
    assert isinstance(agent, LLMMetaAgent)
    fake_llm.script([_reply_json(FEEDBACK), _reply_program(CHILD)])
    improvements = [Improvement(1, 3, 0.1, 0.5, "transplant murag", diff="+ murag")]
    proposal = agent.propose(GenerationContext.build(parent, improvements=improvements, node_id=9, seed=4))

    assert proposal.source == CHILD
    assert proposal.summary == "store rounds and return the closest"
    assert [s["priority"] for s in proposal.diagnosis["suggestions"]] == [1, 2]
    assert proposal.diagnosis["memory_relevance"][0]["label"] == "missing"
    assert {e["task_id"] for e in proposal.diagnosis["evidence"]} == {"s0", "s1", "f0", "f1"}
    assert proposal.usage["calls"] == 2 and proposal.usage["prompt_tokens"] > 0

    analysis, generate = fake_llm.requests
    parts = analysis["messages"][-1]["content"]
    images = [p for p in parts if p["type"] == "image_url"]
    assert len(images) == 4 and images[0]["image_url"]["url"].startswith("data:image/png;base64,")
    text = parts[0]["text"]
    assert "answer questions about a conversation" in text and "memory for f0" in text
    assert "node 1 -> node 3" in text and "+ murag" in text
    assert analysis["messages"][0]["role"] == "system"
    # generate continues the analysis conversation: the same prefix (cacheable by the server),
    # the analysis answer, then the request for edits
    assert generate["messages"][:2] == analysis["messages"]
    assert generate["messages"][2] == {"role": "assistant", "content": _reply_json(FEEDBACK)}
    gen_text = _user_text(generate)
    assert "diagnosis above" in gen_text and "<<<<<<< SEARCH" in gen_text
    assert generate["temperature"] == 0.8 and analysis["temperature"] == 0.0
    assert proposal.diagnosis["generate"]["in_conversation"] is True

    rows = Ledger(tmp_path / "tree.db").rows()
    assert [(r["role"], r["node"], r["purpose"]) for r in rows] == [
        ("meta", "9", "analysis"), ("meta", "9", "generate")]


def test_schema_breaking_analysis_is_repaired_without_a_retry(fake_llm, tmp_path, parent):
    agent = build_meta_agent(_client(fake_llm, tmp_path))
    bad = {k: v for k, v in FEEDBACK.items() if k != "summary"}
    bad["memory_relevance"] = [{"task_id": "f0", "label": "useless", "reason": ""},
                               {"task_id": "f1", "label": "missing"}]
    fake_llm.script([_reply_json(bad), _reply_program(CHILD)])
    proposal = agent.propose(GenerationContext.build(parent, node_id=5, seed=0))
    assert proposal.source == CHILD and proposal.usage["calls"] == 2
    d = proposal.diagnosis
    assert d["memory_relevance"] == [{"task_id": "f1", "label": "missing", "reason": ""}]
    assert d["summary"] == "store each round with its embedding; no content; no index"
    assert d["analysis"]["source"] == "llm"
    repairs = " | ".join(d["analysis"]["repairs"])
    assert "filled missing summary" in repairs and "useless" in repairs
    assert [r["purpose"] for r in Ledger(tmp_path / "tree.db").rows()] == ["analysis", "generate"]


def test_a_reply_without_json_gets_one_retry_that_says_what_was_wrong(fake_llm, tmp_path, parent):
    agent = build_meta_agent(_client(fake_llm, tmp_path))
    fake_llm.script(["I think the program is fine.", _reply_json(FEEDBACK), _reply_program(CHILD)])
    proposal = agent.propose(GenerationContext.build(parent, node_id=5, seed=0))
    assert proposal.diagnosis["analysis"] == {"source": "llm", "repairs": [], "trim": ""}
    retry = fake_llm.requests[1]
    assert retry["messages"][-2]["role"] == "assistant"
    assert "holds no JSON object" in _user_text(retry)
    assert [r["purpose"] for r in Ledger(tmp_path / "tree.db").rows()] == ["analysis", "analysis-retry", "generate"]


def test_an_unusable_analysis_falls_back_to_the_rule_based_diagnosis(fake_llm, tmp_path, parent):
    agent = build_meta_agent(_client(fake_llm, tmp_path))
    fake_llm.script(["I think the program is fine.", "```json\n{\"summary\": \"x\",}\n```",
                     _reply_program(CHILD)])
    proposal = agent.propose(GenerationContext.build(parent, node_id=5, seed=0))
    assert proposal.source == CHILD, "the step keeps its child"
    d = proposal.diagnosis
    assert d["analysis"]["source"] == "rule-based" and "does not parse" in d["analysis"]["why"]
    assert d["summary"].startswith("mean 0.500 over 4 scored tasks")
    assert "mean 0.500 over 4 scored tasks" in _user_text(fake_llm.requests[2])
    assert len(fake_llm.requests) == 3, "exactly one retry, then the generate call"


def test_a_reply_without_a_code_block_is_retried_then_fails(fake_llm, tmp_path, parent):
    agent = build_meta_agent(_client(fake_llm, tmp_path))
    fake_llm.script([_reply_json(FEEDBACK), "SUMMARY: x\nclass Memo: pass", "```python\ndef broken(:\n```"])
    with pytest.raises(MetaError, match="generate: .*does not parse"):
        agent.propose(GenerationContext.build(parent, node_id=5, seed=0))
    retry = _user_text(fake_llm.requests[2])
    assert "no SEARCH/REPLACE edit" in retry and "COMPLETE program" in retry


def test_repair_sends_the_exam_report_and_returns_the_fixed_program(fake_llm, tmp_path):
    agent = build_meta_agent(_client(fake_llm, tmp_path))
    report = {"passed": False, "failed_check": "retrieve", "error": "KeyError: 'rounds'",
              "traceback_tail": "File \"program.py\", line 9, in retrieve", "failing_input": {"task": {"task_id": "q7"}}}
    fake_llm.script([_reply_program(CHILD, "guard the missing key")])
    fixed = agent.repair(RepairContext(PARENT, report, 2, node_id=6, seed=0))
    assert fixed.source == CHILD and fixed.summary == "guard the missing key"
    assert fixed.diagnosis == {"repair_of": "retrieve", "attempt": 2}
    text = _user_text(fake_llm.requests[0])
    assert "repair attempt 2" in text and "KeyError: 'rounds'" in text and '"task_id": "q7"' in text
    assert "line 9, in retrieve" in text and PARENT.strip() in text


def test_initialize_writes_a_program_from_the_task_description(fake_llm, tmp_path):
    agent = build_meta_agent(_client(fake_llm, tmp_path))
    fake_llm.script(["```python\n" + CHILD + "```"])  # no SUMMARY line: a fallback summary is used
    proposal = agent.initialize("navigate web pages", node_id=0, seed=0)
    assert proposal.source == CHILD and proposal.summary.startswith("initial program")
    assert "navigate web pages" in _user_text(fake_llm.requests[0])


def test_budget_exceeded_is_not_swallowed(fake_llm, tmp_path, parent):
    client = _client(fake_llm, tmp_path, max_total_tokens=10)
    fake_llm.script([{"content": _reply_json(FEEDBACK), "usage": {"prompt_tokens": 50, "completion_tokens": 50}}])
    agent = build_meta_agent(client)
    with pytest.raises(BudgetExceeded):
        agent.propose(GenerationContext.build(parent, node_id=1, seed=0))


def test_a_dead_endpoint_fails_the_step_cleanly(fake_llm, tmp_path, parent):
    agent = build_meta_agent(_client(fake_llm, tmp_path))
    # twice the same 500 on a request with images: tried once more text-only, which fails too
    fake_llm.script([{"status": 500}, {"status": 500}, {"status": 500}])
    with pytest.raises(MetaError, match="analysis: the meta LLM call failed"):
        agent.propose(GenerationContext.build(parent, node_id=1, seed=0))


def test_without_the_meta_role_the_mutator_is_built(tmp_path):
    client = LLMClient(LLMConfig(), Ledger(tmp_path / "tree.db"))
    assert type(build_meta_agent(client)).__name__ == "OfflineMetaAgent"


def test_code_block_extraction_rules():
    text = "```py\nshort = 1\n```\nthen\n```python\n" + CHILD + "```\nand\n```bash\nrm -rf /\n```\n"
    assert extract_program(text) == CHILD
    same_length = "```python\nclass Memo: a = 1\n```\n```python\nclass Memo: b = 2\n```"
    assert extract_program(same_length) == "class Memo: b = 2\n"
    with pytest.raises(CodeBlockError, match="no top-level `class Memo"):
        extract_program("```python\nclass Other: pass\n```")
    with pytest.raises(CodeBlockError, match="no fenced"):
        extract_program("class Memo: pass")
    # an unlabelled fence holding the program (what a 0.5B model wrote), but not any other one
    assert extract_program("```\n" + CHILD + "```\n```\nls\n```") == CHILD
    assert extract_program("```\nclass Memo: a = 1\n```\n```python\nclass Memo: b = 2\n```") == "class Memo: b = 2\n"
    with pytest.raises(CodeBlockError, match="no fenced"):
        extract_program("```\nNAME = 1\n```")
    assert extract_summary("**Summary:** add an index\n```python\nSUMMARY: no\n```", "f") == "add an index"
    assert extract_summary("nothing", "fallback") == "fallback"
