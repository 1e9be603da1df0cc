"""Build a search from a run directory and its `RunConfig`: the LLM client writing the run's
ledger, the benchmark and its fixed agent, the sandbox, host services, the evaluator and the
meta agent. Used by `automemo search`, `automemo bench search` and the end-to-end tests, so that
they all run the same assembly."""

from __future__ import annotations

import dataclasses
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from automemo.config import RunConfig
from automemo.paths import SEEDS_DIR
from automemo.runs.journal import recover
from automemo.runs.rundir import RunDir
from automemo.search.loop import Collaborators, SearchLoop


@dataclass
class AssembledSearch:
    loop: SearchLoop
    llm: Any
    benchmark: Any

    def close(self) -> None:
        self.benchmark.close()
        self.llm.ledger.close()


def build_search(run: RunDir, config: RunConfig, *, quiet: bool = False,
                 sandbox: Any = None) -> AssembledSearch:
    """`sandbox` overrides `config.sandbox.backend` (tests pass one they already built)."""
    from automemo import benchmarks
    from automemo.agents import build_agent
    from automemo.episode_store import EpisodeStore
    from automemo.evaluation import Evaluator
    from automemo.llm import LLMClient, Ledger
    from automemo.meta import build_meta_agent
    from automemo.sandbox import get_sandbox
    from automemo.toolkit.embedding import default_encoders
    from automemo.toolkit.services import MemoServices

    # Recover first: the LLM client counts what the run has spent from the ledger when it is
    # built, and rows of an interrupted step must not count.
    recover(run)
    llm = LLMClient(config.llm, Ledger(run.db_path))
    benchmark = benchmarks.load(config.benchmark.name, config.benchmark.options, llm=llm)
    try:
        agent = build_agent(benchmark, llm)
        sandbox = sandbox or get_sandbox(config.sandbox.backend)
        store = EpisodeStore(run.store_root)
        embeddings = config.embeddings
        if not embeddings.cache_path:
            # Keep the cache with the run: a resumed search re-embeds nothing it already did.
            embeddings = dataclasses.replace(embeddings, cache_path=str(run.path / "embeddings.db"))
        encoders = default_encoders(embeddings, llm=llm)
        memo_llm = llm if llm.configured("memo") else None

        def services(node_id: Any) -> MemoServices:
            return MemoServices(encoders, memo_llm, store.root, node=node_id)

        evaluation = config.evaluation
        if quiet:
            evaluation = dataclasses.replace(evaluation, quiet=True)
        evaluator = Evaluator(benchmark, sandbox, store, agent=agent, services_factory=services,
                              config=evaluation)
        seeds = snapshot_seeds(run)
        meta = build_meta_agent(
            llm, config.meta, seeds_dir=seeds, task_description=_task_description(benchmark),
            budget=config.budget, limits=config.sandbox.limits, image_roots=[store.root],
        )
    except BaseException:
        benchmark.close()
        raise
    parts = Collaborators(
        evaluator=evaluator, meta=meta, sandbox=sandbox, llm=llm, services_factory=services,
        budget=config.budget, limits=config.sandbox.limits, seeds_dir=seeds,
    )
    return AssembledSearch(SearchLoop(run, config.search, parts, quiet=quiet), llm, benchmark)


def snapshot_seeds(run: RunDir) -> Path:
    """The run's own copy of the seed programs, made once: the root and the mutator's
    transplants come from it, so a run resumed after the package's seeds changed still repeats
    exactly, and the run records what it started from."""
    target = run.path / "seeds"
    if not target.exists():
        scratch = run.path / ".seeds.tmp"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir()
        for seed in sorted(SEEDS_DIR.glob("*.py")):
            shutil.copy2(seed, scratch / seed.name)
        scratch.rename(target)
    return target


def _task_description(benchmark: Any) -> str:
    facts = json.dumps(benchmark.describe(), sort_keys=True, default=str)
    return f"Benchmark {benchmark.name} ({benchmark.family}). {facts}"
