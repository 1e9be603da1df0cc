"""A whole search on a simulated landscape: the real search loop, run directory and LLM meta
agent (over HTTP, against the fake OpenAI-compatible server), with the benchmark, the quick exam
and the model replaced by a `Landscape`. The fake server plays the model: it answers the
analysis with fixed feedback and the generate call with a child the landscape draws from the
parent named in the prompt. What a strategy spends (meta calls, tokens) is therefore measured by
the real ledger, and what it finds is scored by the landscape's hidden true quality.

Used by `automemo bench strategies` (strategies at equal steps) and `automemo bench scale` (K
actions in flight, `search.parallel`, with evaluations that wait a fixed latency).
"""

from __future__ import annotations

import json
import re
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from automemo.evaluation.result import EvaluationResult
from automemo.llm import LLMClient, LLMConfig, Ledger, RoleConfig
from automemo.llm.messages import message_text
from automemo.measurements.stand_ins.fakellm import FakeLLM
from automemo.measurements.stand_ins.landscape import Landscape
from automemo.meta.config import MetaConfig
from automemo.meta.llm.agent import LLMMetaAgent
from automemo.runs import RunDir
from automemo.search.config import SearchConfig
from automemo.search.loop import Collaborators, SearchLoop
from automemo.search.view import RunView

PROGRAM = "LANDSCAPE_PROGRAM = {id}\n\n\nclass Memo:\n    pass\n"
_PROGRAM_ID = re.compile(r"LANDSCAPE_PROGRAM = (\d+|None)")
FEEDBACK = {"summary": "simulated", "memory_relevance": [], "content_issues": [],
            "structural_issues": [], "suggestions": [{"priority": 1, "change": "step", "rationale": "r"}]}


def program_id(source: str) -> int | None:
    match = _PROGRAM_ID.search(source)
    return None if match is None or match.group(1) == "None" else int(match.group(1))


class _Store:
    def __init__(self, root: Path) -> None:
        self.root = root


class LandscapeEvaluator:
    """Scores a program by a noisy draw of its landscape quality; the draw is the evaluation's
    sample seed, so a re-evaluation is a new draw and a replayed one the same. `latency_s` is how
    long an evaluation waits first (what a parallel search overlaps)."""

    def __init__(self, landscape: Landscape, store_root: Path, *, latency_s: float = 0.0) -> None:
        self.landscape, self.latency_s = landscape, latency_s
        self.store = _Store(store_root)

    def evaluate(self, source: str, *, split: str = "train", evidence_dir: Any = None,
                 node_id: int | None = None, sample_seed: int = 0) -> EvaluationResult:
        if self.latency_s > 0:
            time.sleep(self.latency_s)
        score = self.landscape.evaluate(program_id(source), sample_seed)
        return EvaluationResult(mean=score, n_scored=1, per_category={}, metrics={}, tasks=())

    def sample_for_exam(self, n: int = 5, seed: int = 0) -> tuple[list, list]:
        return [], []


@dataclass(frozen=True)
class _ExamReport:
    passed: bool
    failed_check: str | None = None
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "failed_check": self.failed_check, "error": self.error}


def landscape_exam(source: str, *args: Any, **kwargs: Any) -> _ExamReport:
    """A landscape program passes; a failed generation (`LANDSCAPE_PROGRAM = None`) does not."""
    if program_id(source) is None:
        return _ExamReport(False, "retrieve", "the landscape's generation failed")
    return _ExamReport(True)


def _model(landscape: Landscape):
    """The fake server's answers: fixed feedback for the analysis, a landscape child of the
    parent the generate prompt shows for the generate call. The server answers on several
    threads (a parallel search); a lock keeps the landscape's numbering of new programs whole."""
    lock = threading.Lock()

    def answer(request: dict[str, Any]) -> str:
        prompt = request["messages"][-1]["content"]
        prompt = prompt if isinstance(prompt, str) else json.dumps(prompt)
        if "# Task: diagnose" in prompt:
            return "```json\n" + json.dumps(FEEDBACK) + "\n```"
        # The parent program is in the generate prompt, or (analysis and generate being one
        # conversation) in the analysis request it continues.
        shown = "\n".join(message_text(m) for m in request["messages"])
        marker = "## The parent program" if "## The parent program" in shown else "## The program under analysis"
        parent = program_id(shown.split(marker, 1)[-1])
        with lock:
            child = landscape.child_of(parent if parent is not None else Landscape.root)
        return "SUMMARY: landscape step\n```python\n" + PROGRAM.format(id=child) + "```"

    return answer


@dataclass(frozen=True)
class LandscapeOutcome:
    strategy: str
    seed: int
    selected_quality: float      # true quality of the final selection
    best_quality: float          # best true quality among the programs the search evaluated
    regret: float                # best_quality − selected_quality
    meta_calls: int
    meta_tokens: int
    evaluations: int             # full evaluations, re-evaluations and the root's included
    generations: int             # generate actions (each one analysis and one generate call)
    failed_generations: int
    parallel: int = 1            # K: actions in flight (`search.parallel`)
    wall_s: float = 0.0          # wall-clock of the search loop alone
    max_meta_in_flight: int = 0  # the most meta requests the fake server answered at once


def run_landscape_search(strategy: str, seed: int, *, steps: int = 20, noise: float = 0.05,
                         gain: float = 0.0, spread: float = 0.1, failure_rate: float = 0.2,
                         parallel: int = 1, eval_latency_s: float = 0.0, llm_latency_s: float | None = None,
                         fake: FakeLLM | None = None, workdir: Path | None = None) -> LandscapeOutcome:
    """One search of `steps` steps with `strategy` and `parallel` actions in flight on the
    landscape of `seed`, each evaluation waiting `eval_latency_s` first and, when given, each
    meta answer `llm_latency_s` (the server's `latency`, else left as it is). Pass a started
    `fake` to share one server across searches (its handler is replaced)."""
    landscape = Landscape(seed, noise=noise, gain=gain, spread=spread, failure_rate=failure_rate)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        root = Path(tmp)
        seeds = root / "seeds"
        seeds.mkdir()
        (seeds / "landscape_root.py").write_text(PROGRAM.format(id=Landscape.root))
        own = fake is None
        server = (fake or FakeLLM()).start()
        server.set_handler(_model(landscape))
        if llm_latency_s is not None:
            server.latency = llm_latency_s
        server.reset_in_flight()
        try:
            run = RunDir.create(root / "runs", {"search": {"steps": steps, "strategy": strategy}}, "sim")
            role = RoleConfig(model="fake-meta", base_url=server.base_url, max_retries=0)
            client = LLMClient(LLMConfig(meta=role), Ledger(run.db_path))
            # Every failed generation of the landscape is the same text (LANDSCAPE_PROGRAM = None):
            # taken as the failure it stands for, not re-proposed as a duplicate of the last one.
            meta = LLMMetaAgent(client, MetaConfig(duplicate_retries=0), task_description="a simulated landscape")
            config = SearchConfig(steps=steps, strategy=strategy, seed=seed, root="landscape_root",
                                  repair_attempts=0, parallel=parallel)
            evaluator = LandscapeEvaluator(landscape, run.store_root, latency_s=eval_latency_s)
            parts = Collaborators(evaluator=evaluator, meta=meta, sandbox=None, llm=client,
                                  exam=landscape_exam, seeds_dir=seeds)
            started = time.perf_counter()
            final = SearchLoop(run, config, parts, quiet=True).run_search()
            wall = time.perf_counter() - started
            view = RunView.load(run)
            evaluated = [program_id(run.program_source(n.id)) for n in view.nodes if n.evaluated]
            failed = sum(1 for n in view.nodes if n.failed)
            chosen = program_id(run.program_source(final["node_id"]))
            generations = sum(1 for a in view.actions if a.kind == "generate")
            meta = next(r for r in view.spend if r.role == "meta")
            client.ledger.close()
        finally:
            if own:
                server.stop()
    selected = landscape.quality(chosen)
    best = max(landscape.quality(p) for p in evaluated)
    return LandscapeOutcome(
        strategy=strategy, seed=seed, selected_quality=selected, best_quality=best,
        regret=best - selected, meta_calls=meta.calls, meta_tokens=meta.tokens,
        evaluations=int(final["total_evaluations"]), generations=generations,
        failed_generations=failed, parallel=parallel, wall_s=wall, max_meta_in_flight=server.max_in_flight,
    )


def regrets(outcomes: list[LandscapeOutcome]) -> list[float]:
    """Each outcome's regret: the best true quality any of `outcomes` on the same seed (landscape)
    found, minus the true quality of its own final selection. Comparing searches on one landscape
    this way counts both how far each climbed and how well it chose."""
    best_on: dict[int, float] = {}
    for o in outcomes:
        best_on[o.seed] = max(best_on.get(o.seed, 0.0), o.best_quality)
    return [best_on[o.seed] - o.selected_quality for o in outcomes]
