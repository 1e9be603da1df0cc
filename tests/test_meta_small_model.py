"""The LLM meta agent against a server scripted to answer like a small local model behind
llama.cpp (text-only, 8,192-token context, sloppy JSON): the cases found by running a search
against Qwen2.5-Coder-0.5B-Instruct. Each must end in a child or in a clean, explained failure."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from automemo.contract import EpisodeRecorder, MemoryPayload, Step
from automemo.episode_store import EpisodeStore
from automemo.evaluation.evidence import TaskEvidence, episode_rel_path, write_summary, write_task
from automemo.evaluation.result import EvaluationResult, TaskResult
from automemo.llm import LLMClient, LLMConfig, Ledger, RoleConfig
from automemo.llm.messages import message_text
from automemo.measurements.stand_ins.fakellm import estimate_tokens
from automemo.meta import MetaError, ParentView, build_meta_agent
from automemo.meta.config import LLMMetaConfig
from automemo.meta.config import MetaConfig
from automemo.meta.context import GenerationContext, RepairContext
from automemo.paths import SEEDS_DIR

CONTEXT = 8192
# the analysis → generate conversation, fitted by trimming
FULL = MetaConfig(llm=LLMMetaConfig(prompt_profile="full"))
TEMPLATE_ERROR = 'can only concatenate str (not "list") to str'
OVERFLOW = "the request exceeds the available context size, try increasing it"
PARENT = (SEEDS_DIR / "murag.py").read_text()  # imports automemo.toolkit.memolib
CHILD = PARENT.replace("TOP_K = ", "TOP_K = 1 + ")
SLOPPY_ANALYSIS = {  # what the 0.5B model wrote: no summary, no memory_relevance
    "content_issues": ["payloads repeat the question"],
    "structural_issues": [],
    "suggestions": [{"priority": 1, "change": "return fewer, more relevant rounds", "rationale": "precision"}],
}


def small_model(body: dict) -> dict | str:
    """llama.cpp serving a text-only model with an 8,192-token context."""
    messages = body["messages"]
    if any(isinstance(m.get("content"), list) for m in messages):
        return {"status": 500, "content": TEMPLATE_ERROR}
    if sum(estimate_tokens(message_text(m)) for m in messages) > CONTEXT:
        return {"status": 400, "content": OVERFLOW}
    if "diagnose a memo program" in message_text(messages[-1]):
        return "```json\n" + json.dumps(SLOPPY_ANALYSIS) + "\n```"
    return f"SUMMARY: fewer rounds\n```python\n{CHILD}```\n"


def _client(fake, tmp_path, **role) -> LLMClient:
    meta = RoleConfig(model="qwen2.5-coder-0.5b-instruct", base_url=fake.base_url, timeout_s=10.0,
                      max_retries=4, retry_backoff_s=0.01, retry_backoff_max_s=0.02, **role)
    return LLMClient(LLMConfig(meta=meta), Ledger(tmp_path / "tree.db"))


@pytest.fixture
def parent(tmp_path) -> ParentView:
    """A parent whose evidence is far larger than 8,192 tokens: long observations and images."""
    store = EpisodeStore(tmp_path / "store")
    folder = tmp_path / "nodes" / "2" / "evaluations" / "0"
    results = []
    for i, (task_id, score) in enumerate((("s0", 1.0), ("s1", 1.0), ("f0", 0.0), ("f1", 0.0))):
        shot = store.put_image(Image.new("RGB", (4, 4), (i * 40, 0, 0)))
        steps = tuple(Step(index=k, observation=f"round {k} " + "words " * 1500, screenshot=shot)
                      for k in range(6))
        episode = EpisodeRecorder(task_id=task_id, benchmark="toy", instruction=f"answer {task_id}", steps=steps)
        result = TaskResult(task_id, "A", score, payload=MemoryPayload(text="memory " * 2000),
                            episode_path=episode_rel_path(task_id))
        write_task(folder, TaskEvidence(result=result, episode=episode))
        results.append(result)
    evaluation = EvaluationResult(mean=0.5, n_scored=4, per_category={"A": 0.5}, metrics={}, tasks=tuple(results))
    write_summary(folder, evaluation, store_root=store.root)
    return ParentView(node_id=2, source=PARENT, score=0.5, n_evals=1, evaluation=evaluation,
                      evidence_dir=str(folder))


def _sent(fake) -> list[str]:
    return [message_text(r["messages"][-1]) for r in fake.requests]


def test_a_text_only_model_with_its_context_declared_writes_a_child(fake_llm, tmp_path, parent):
    fake_llm.set_handler(small_model)
    agent = build_meta_agent(_client(fake_llm, tmp_path, vision=False, context_tokens=CONTEXT), FULL)
    proposal = agent.propose(GenerationContext.build(parent, node_id=7, seed=0))

    assert proposal.source == CHILD
    assert len(fake_llm.requests) == 2, "fitted before the call: no refusal, no retry"
    for request in fake_llm.requests:
        assert all(isinstance(m["content"], str) for m in request["messages"])
        assert sum(estimate_tokens(message_text(m)) for m in request["messages"]) <= CONTEXT
        assert request["max_tokens"] < CONTEXT
    analysis_text, generate_text = _sent(fake_llm)
    assert "the model reading this prompt takes text only" in analysis_text
    assert "shortened to fit the model's context" in analysis_text
    note = proposal.diagnosis["analysis"]
    assert note["source"] == "llm" and note["trim"]
    assert "filled missing summary" in note["repairs"] and "filled missing memory_relevance" in note["repairs"]
    assert proposal.diagnosis["summary"] == "return fewer, more relevant rounds; payloads repeat the question"


def test_images_to_a_text_only_server_turn_the_role_text_only_with_one_warning(fake_llm, tmp_path, parent):
    fake_llm.set_handler(small_model)
    warnings: list[str] = []
    client = _client(fake_llm, tmp_path)  # vision left on, context unknown
    client.warn = warnings.append
    agent = build_meta_agent(client)
    proposal = agent.propose(GenerationContext.build(parent, node_id=7, seed=0))
    assert proposal.source == CHILD
    with_images = [any(isinstance(m["content"], list) for m in r["messages"]) for r in fake_llm.requests]
    assert with_images[:2] == [True, True] and not any(with_images[2:]), \
        "the same template error twice, then text only for the rest of the run"
    assert len(warnings) == 1 and "llm.meta.vision = false" in warnings[0]
    before = len(fake_llm.requests)
    agent.propose(GenerationContext.build(parent, node_id=8, seed=1))
    assert len(warnings) == 1 and not any(isinstance(m["content"], list)
                                          for r in fake_llm.requests[before:] for m in r["messages"])


def test_an_unknown_context_is_trimmed_after_the_refusal(fake_llm, tmp_path, parent):
    fake_llm.set_handler(small_model)
    agent = build_meta_agent(_client(fake_llm, tmp_path, vision=False))  # context_tokens unknown
    proposal = agent.propose(GenerationContext.build(parent, node_id=7, seed=0))
    assert proposal.source == CHILD, "the step keeps its child"
    purposes = [(r["purpose"], r["status"]) for r in Ledger(tmp_path / "tree.db").rows()]
    assert purposes[0] == ("analysis", "http 400")
    analyses = [status for purpose, status in purposes if purpose == "analysis"]
    # Each refusal moves one trim level further, until a level fits: the LLM analysed trimmed
    # evidence rather than handing the step to the rules.
    assert len(analyses) >= 2 and analyses[-1] == "ok" and set(analyses[:-1]) == {"http 400"}, analyses
    assert proposal.diagnosis["analysis"]["trim"]


def test_prompts_show_the_helpers_the_parent_imports(fake_llm, tmp_path, parent):
    fake_llm.set_handler(small_model)
    agent = build_meta_agent(_client(fake_llm, tmp_path, vision=False, context_tokens=CONTEXT), FULL)
    agent.propose(GenerationContext.build(parent, node_id=7, seed=0))
    generate_text = "\n".join(message_text(m) for m in fake_llm.requests[1]["messages"])
    assert "from automemo.toolkit import memolib" in generate_text
    assert "def memolib.make_payload(sections: Sequence[str], *, budget: Budget" in generate_text
    # An 8k context takes memolib's listing by signature alone (its notes would not leave room)
    assert "def memolib.units(episode: EpisodeRecorder) -> list[Unit]\n" in generate_text
    assert "self-contained" not in generate_text
    repair_agent = build_meta_agent(_client(fake_llm, tmp_path, vision=False, context_tokens=CONTEXT), FULL)
    repair_agent.repair(RepairContext(PARENT, {"failed_check": "retrieve", "error": "KeyError"}, 1, node_id=8, seed=0))
    assert "def memolib.make_payload(" in _sent(fake_llm)[-1]


# --- the compact prompt profile ----------------------------------------------------------------

def _copies_the_example(body: dict) -> str:
    """A small model that copies the worked example of its prompt."""
    prompt = message_text(body["messages"][-1])
    example = prompt[prompt.index("Example of a complete answer"):]
    return example[example.index("SUMMARY:"):]


def test_the_compact_profile_asks_once_in_a_short_prompt_and_its_example_is_a_valid_edit(fake_llm, tmp_path, parent):
    import dataclasses

    from automemo.meta.base import ChildAttempt
    from automemo.meta.source.syntax import normalised

    fake_llm.set_handler(_copies_the_example)
    agent = build_meta_agent(_client(fake_llm, tmp_path, vision=False, context_tokens=CONTEXT))  # auto
    parent = dataclasses.replace(parent, children=(ChildAttempt(3, "TOP_K 10 -> 14 " + "why " * 80, 0.61),))
    children = [agent.propose(GenerationContext.build(parent, node_id=7, seed=seed)) for seed in (0, 1)]

    assert len(fake_llm.requests) == 2, "one call per child: no analysis call"
    prompt = message_text(fake_llm.requests[0]["messages"][-1])
    assert sum(estimate_tokens(message_text(m)) for m in fake_llm.requests[0]["messages"]) <= 3000
    assert "TOP_K = 10 (int 1..30)" in prompt, "the tunables are listed"
    assert "- A: 0.500" in prompt and "'answer f0' scored 0.00" in prompt, "weakest type with its failures"
    assert "Follows: MuRAG" not in prompt and "memo " * 50 not in prompt, "no docstrings, no evidence dumps"
    sibling = next(line for line in prompt.splitlines() if "TOP_K 10 -> 14" in line)
    assert len(sibling) < 140 and sibling.endswith("scored 0.6100"), "one line per earlier child"
    sources = {normalised(PARENT)}
    for child in children:
        assert child.diagnosis["generate"] == {**child.diagnosis["generate"], "profile": "compact",
                                               "answer": "1 edit(s)", "copied_example": True}
        assert child.diagnosis["analysis"]["source"] == "rule-based"
        sources.add(normalised(child.source))
    assert len(sources) == 3, "the copied example is a real change, and differs between seeds"


def test_the_compact_profile_asks_again_for_an_edit_never_for_the_whole_program(fake_llm, tmp_path, parent):
    fake_llm.script(["SUMMARY: x\n<<<<<<< SEARCH\n    k = 99\n=======\n    k = 3\n>>>>>>> REPLACE\n",
                     "SUMMARY: three\n<<<<<<< SEARCH\nTOP_K = 10\n=======\nTOP_K = 3\n>>>>>>> REPLACE\n"])
    config = MetaConfig(llm=LLMMetaConfig(prompt_profile="compact", generate_max_tokens=100_000))
    agent = build_meta_agent(_client(fake_llm, tmp_path, vision=False), config)  # context unknown
    proposal = agent.propose(GenerationContext.build(parent, node_id=7, seed=0))
    assert "TOP_K = 3  # tunable: int 1..30" in proposal.source
    retry = message_text(fake_llm.requests[1]["messages"][-1])
    assert "is not in the parent program" in retry and "Do not write the whole program" in retry
    assert "COMPLETE program" not in retry
    fake_llm.script(["I would rank the rounds by recency."] * 2)
    with pytest.raises(MetaError, match="no SEARCH/REPLACE edit; it began 'I would rank the rounds by recency.'"):
        agent.propose(GenerationContext.build(parent, node_id=8, seed=0))


def test_the_prompt_profile_is_chosen_by_config_or_from_the_declared_context():
    from automemo.configtools import ConfigError
    from automemo.meta.llm.compact import profile_for

    assert profile_for("auto", 8192) == "compact" and profile_for("auto", 0) == "full"
    assert profile_for("auto", 32768) == "full" and profile_for("full", 4096) == "full"
    assert profile_for("compact", 0) == "compact"
    with pytest.raises(ConfigError, match="meta.llm.prompt_profile must be one of auto, full, compact"):
        MetaConfig(llm=LLMMetaConfig(prompt_profile="tiny"))


def test_the_compact_profile_repairs_with_one_short_call_asking_for_an_edit(fake_llm, tmp_path):
    broken = PARENT.replace("import numpy as np\n", "import numpy as np\nimport no_such_module\n")
    fake_llm.script(["<<<<<<< SEARCH\nimport no_such_module\n=======\nimport json\n>>>>>>> REPLACE\nSUMMARY: drop it"])
    agent = build_meta_agent(_client(fake_llm, tmp_path, vision=False, context_tokens=CONTEXT))
    report = {"failed_check": "import", "error": "ModuleNotFoundError: No module named 'no_such_module'",
              "traceback_tail": "Traceback ...\n" + "  frame\n" * 2000}
    fixed = agent.repair(RepairContext(broken, report, 1, node_id=8, seed=0))
    assert fixed.source == PARENT.replace("import numpy as np\n", "import numpy as np\nimport json\n")
    assert fixed.summary == "drop it" and fixed.diagnosis["profile"] == "compact"
    (request,) = fake_llm.requests
    assert request["temperature"] == MetaConfig().llm.generate_temperature, "attempts of one exam differ"
    prompt = message_text(request["messages"][-1])
    assert sum(estimate_tokens(message_text(m)) for m in request["messages"]) <= 3000
    assert "No module named 'no_such_module'" in prompt and "ONE SEARCH/REPLACE edit" in prompt
    assert "def memolib." not in prompt, "no library listing in the compact profile"
