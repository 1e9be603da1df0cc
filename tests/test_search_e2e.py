"""End to end: `automemo search` (6 steps, real Docker sandbox, real MiniLM, Mini-Gallery) with
the meta agent served by the fake OpenAI-compatible server, scripted to answer the analysis, to
write a good program, a broken one that its repair fixes and one that never passes; then
`automemo tree`, `automemo show`, `automemo export` and `load_memory` in a fresh process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from automemo.search.view import RunView

from automemo.paths import seed_path
from automemo.runs import RunDir
from tests.searchtools import run_search, search_env, write_config

pytestmark = [pytest.mark.docker, pytest.mark.slow]

MURAG = seed_path("murag").read_text()
TRAJECTORY = seed_path("trajectory_retrieval").read_text()
# Valid Python that fails the exam's update check; the repair removes the marked line. Its
# repaired form is a program of its own (TOP_K 9): a repair that lands on a program the tree
# already has is a duplicate, not examined again.
FIXABLE = MURAG.replace("TOP_K = 10  # tunable", "TOP_K = 9  # tunable").replace(
    "        order = self.episodes\n",
    "        raise RuntimeError('BROKEN_FIXABLE')\n        order = self.episodes\n", 1,
)
# Fails the payload check (retrieve returns a string), and the "repair" changes nothing.
HOPELESS = TRAJECTORY.replace(
    "    def retrieve(self, task: PartialRecorder) -> MemoryPayload:\n",
    "    def retrieve(self, task: PartialRecorder) -> MemoryPayload:\n        return 'NEVER_PASSES'\n", 1,
)
assert FIXABLE != MURAG and HOPELESS != TRAJECTORY

FEEDBACK = {
    "summary": "Memory is missing: the root returns nothing.",
    "memory_relevance": [{"task_id": "t", "label": "missing", "reason": "no payload"}],
    "content_issues": ["empty payload"],
    "structural_issues": ["no store"],
    "suggestions": [{"priority": 1, "change": "index every round", "rationale": "recall"}],
}


def fenced(lang: str, body: str) -> str:
    return f"```{lang}\n{body}```"


class MetaScript:
    """Answers by prompt kind; generated programs come in a fixed order, then GOOD with a smaller
    top-k each time (each a new program: a repeat of the tree would be a duplicate step)."""

    def __init__(self) -> None:
        self.programs = [("index rounds densely", MURAG), ("add a store that breaks", FIXABLE),
                         ("return a string", HOPELESS)]
        self.kinds: list[str] = []
        self.top_k = 9
        self._lock = threading.Lock()

    def _smaller(self) -> str:
        self.top_k -= 1
        return MURAG.replace("TOP_K = 10  # tunable", f"TOP_K = {self.top_k}  # tunable")

    def __call__(self, request: dict) -> str:
        content = request["messages"][-1]["content"]
        text = content if isinstance(content, str) else " ".join(
            p.get("text", "") for p in content if p.get("type") == "text")
        with self._lock:
            if text.startswith("# Task: diagnose"):
                self.kinds.append("analysis")
                return fenced("json", json.dumps(FEEDBACK) + "\n")
            if text.startswith("# Task: write an improved"):
                self.kinds.append("generate")
                summary, program = self.programs.pop(0) if self.programs else ("smaller top-k", self._smaller())
                return f"SUMMARY: {summary}\n" + fenced("python", program)
            if text.startswith("# Task: repair"):
                self.kinds.append("repair")
                if "NEVER_PASSES" in text:
                    return "SUMMARY: try again\n" + fenced("python", HOPELESS)
                return "SUMMARY: drop the stray raise\n" + fenced(
                    "python", FIXABLE.replace("        raise RuntimeError('BROKEN_FIXABLE')\n", ""))
        raise AssertionError(f"unexpected meta prompt: {text[:200]}")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "automemo", *args], env=search_env(),
                          capture_output=True, text=True, timeout=300)


def test_search_with_llm_meta_agent_then_inspect_export_and_deploy(tmp_path, fake_llm):
    script = MetaScript()
    fake_llm.set_handler(script)
    config = write_config(tmp_path / "search.toml", steps=6, backend="docker")
    env_key = "AUTOMEMO_TEST_META_KEY"
    os.environ[env_key] = "not-a-real-key"  # the subprocess inherits it; the fake ignores it
    try:
        (tmp_path / "meta.toml").write_text(
            config.read_text() + f'\n[llm.meta]\napi_key_env = "{env_key}"\n')
        result = run_search("--config", str(tmp_path / "meta.toml"), "--runs-dir", str(tmp_path / "runs"),
                            "--run-id", "e2e", "--meta-model", "fake-meta",
                            "--meta-base-url", fake_llm.base_url)
    finally:
        del os.environ[env_key]
    assert result.returncode == 0, result.stderr[-4000:]
    run = RunDir.open(tmp_path / "runs" / "e2e")
    assert "not-a-real-key" not in (run.path / "config.json").read_text()

    actions = run.actions()
    assert len(actions) == 7 and actions[0]["kind"] == "evaluate_root"
    nodes = {n["id"]: n for n in run.nodes()}
    assert nodes[1]["status"] == "evaluated" and nodes[1]["summary"] == "index rounds densely"
    assert nodes[2]["status"] == "evaluated" and nodes[2]["repair_attempts"] == 1
    assert "BROKEN_FIXABLE" not in run.program_source(2)
    assert nodes[3]["status"] == "failed" and nodes[3]["repair_attempts"] == 3
    assert not run.evaluations(3)  # the failed generation used its step, no evaluation
    exam = run.node_json(3, "exam.json")
    assert [a["passed"] for a in exam] == [False] * 4
    assert [a["passed"] for a in run.node_json(2, "exam.json")] == [False, True]
    assert run.node_json(1, "diagnosis.json")["diagnosis"]["summary"] == FEEDBACK["summary"]
    # every meta request is in the run's ledger, under the meta role
    assert script.kinds.count("repair") == 4
    assert {r.role: r for r in RunView.load(run).spend}["meta"].calls == len(script.kinds)
    final = run.final()
    assert final["stop_reason"] == "steps" and final["steps_done"] == 6
    assert nodes[final["node_id"]]["status"] == "evaluated"  # never the failed generation

    tree = cli("tree", str(run.path))
    assert tree.returncode == 0, tree.stderr
    assert "✗ #3" in tree.stdout and f"★ #{final['node_id']}" in tree.stdout
    assert "index rounds densely" in tree.stdout

    show = cli("show", str(run.path), "2")
    assert show.returncode == 0, show.stderr
    assert "attempt 1: passed" in show.stdout and "+++ node 2" in show.stdout
    assert "U1:Q" in show.stdout or "U2:Q" in show.stdout  # per-task scores
    missing = cli("show", str(run.path), "42")
    assert missing.returncode == 2 and "no node 42" in missing.stderr

    out = tmp_path / "export"
    exported = cli("export", str(run.path), "--out", str(out))
    assert exported.returncode == 0, exported.stderr
    probe = (
        "import json, sys\n"
        "from automemo.deploy import load_memory\n"
        "from automemo.runs import RunDir\n"
        "from automemo.evaluation.evidence import read_evidence\n"
        f"run = RunDir.open({str(run.path)!r})\n"
        "final = run.final()\n"
        "ev = run.evaluations(final['node_id'])[0]\n"
        "task = next(t for t in read_evidence(run.path / ev['evidence_dir']).result.tasks if t.payload)\n"
        f"partial = json.load(open({str(tmp_path / 'probe.json')!r}))\n"
        f"with load_memory({str(out)!r}, sandbox='docker') as mem:\n"
        "    payload = mem.retrieve(partial)\n"
        "print(json.dumps({'evidence': payload.metadata.get('evidence', []),\n"
        "                  'expected': task.payload.metadata.get('evidence', [])}))\n"
    )
    # a retrieve task's partial recorder, as the search saw it
    from automemo import benchmarks
    from automemo.episode_store import EpisodeStore

    bench = benchmarks.load("minigallery", RunDir.open(run.path).config()["benchmark"]["options"])
    final_ev = run.evaluations(final["node_id"])[0]
    from automemo.evaluation.evidence import read_evidence

    first = next(t for t in read_evidence(run.path / final_ev["evidence_dir"]).result.tasks if t.payload)
    task = next(t for t in bench.split("train").retrieve if t.task_id == first.task_id)
    partial = bench.partial(task, EpisodeStore(run.store_root))
    (tmp_path / "probe.json").write_text(partial.to_json())
    deployed = subprocess.run([sys.executable, "-c", probe], env=search_env(), capture_output=True,
                              text=True, timeout=300)
    assert deployed.returncode == 0, deployed.stderr[-3000:]
    answer = json.loads(deployed.stdout.strip().splitlines()[-1])
    # the deployed program, warmed with the exported experience, retrieves what it did in search
    assert answer["evidence"] and answer["evidence"] == answer["expected"]
