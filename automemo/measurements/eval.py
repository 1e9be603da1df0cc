"""`automemo bench eval`: what concurrency buys an evaluation, and what the framework costs.

Mini-Gallery in QA mode (the MuRAG seed in the chosen sandbox, real MiniLM embeddings, the
fixed visual agent), or a built-in fact-lookup benchmark (`--benchmark facts`: a trivial program,
an agent making several calls per episode), with the agent asking a real OpenAI-compatible server
(`automemo.measurements.stand_ins.fakellm.FakeLLM`) that answers after a fixed latency. The same evaluation runs at
concurrency 1 and at concurrency N; the figures are

- speed-up: wall time at 1 / wall time at N (target: >= 6x at N = 8), for the whole evaluation
  and for its retrieve-task phase alone: opening the sandbox session and feeding it the updates
  happen once per candidate, in order, and do not parallelise by design;
- framework overhead per episode: wall time at concurrency 1 not spent waiting on the LLM,
  divided by the number of retrieve tasks (sandbox calls, payload handling, scoring, evidence).

An untimed warm-up evaluation collects the update episodes and fills the embedding cache first,
so both timed runs measure the steady state a search sees from its second candidate on.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

from automemo.benchmarks.base import Benchmark, Split, Task, TaskScore
from automemo.cli.flags import add_sandbox_flag, sandbox_choice
from automemo.contract import EpisodeRecorder, MemoryPayload, PartialRecorder, Step

# The memo program under measurement: a fact table filled by `update`, looked up by `retrieve`.
# Deliberately cheap, so that the figures show the harness and not the program.
FACTS_PROGRAM = """
from automemo.contract import MemoProgram, MemoryPayload

class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.facts = {}

    def update(self, episode):
        key, value = episode.final_answer.split(" is ")
        self.facts[key] = value

    def retrieve(self, task):
        key = task.metadata["key"]
        return MemoryPayload(text=f"{key} is {self.facts.get(key, 'unknown')}",
                             metadata={"evidence": [key]})
"""


class FactsQABenchmark(Benchmark):
    """Update episodes state "keyN is valueN"; retrieve tasks ask for valueN. The agent reads
    the memory payload through `prompts/memory_injection` and asks the LLM `llm_calls` times,
    as a multi-step agent would; a task scores 1 when the final answer names the value."""

    name = "bench-facts-qa"
    family = "conversation"
    question_time_keys = frozenset({"key"})  # the fact asked about, as an application would pass it

    def __init__(self, n_tasks: int, llm_calls: int) -> None:
        self.n_tasks = n_tasks
        self.llm_calls = llm_calls

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "n_tasks": self.n_tasks}

    def split(self, name: str) -> Split:
        update = tuple(
            Task(f"{name}-fact{i}", self.name, "fact", f"key{i} is value{i}")
            for i in range(self.n_tasks)
        )
        retrieve = tuple(
            Task(f"{name}-q{i}", self.name, "lookup", f"What is key{i}?", {"key": f"key{i}"})
            for i in range(self.n_tasks)
        )
        return Split(name, update, retrieve)

    def partial(self, task: Task, store) -> PartialRecorder:
        return PartialRecorder(
            task_id=task.task_id,
            benchmark=self.name,
            instruction=task.instruction,
            metadata={"key": task.data.get("key", "")},
        )

    def run_episode(self, task: Task, agent: Any, payload: MemoryPayload | None, store) -> EpisodeRecorder:
        if payload is None:  # an update task: the fact itself is the episode
            return EpisodeRecorder(
                task_id=task.task_id,
                benchmark=self.name,
                instruction=task.instruction,
                final_answer=task.instruction,
                reward=1.0,
                success=True,
            )
        from automemo.llm import user_message
        from automemo.prompting import render

        memory = render("memory_injection", text=payload.text, n_images=0, captions=[])
        messages = [user_message(f"{memory}\n\n{task.instruction}")]
        steps, tokens = [], 0
        for i in range(self.llm_calls):
            reply = agent.chat("agent", messages, purpose="bench-eval step")
            tokens += reply.prompt_tokens + reply.completion_tokens
            steps.append(Step(index=i, action=reply.text))
        return EpisodeRecorder(
            task_id=task.task_id,
            benchmark=self.name,
            instruction=task.instruction,
            steps=tuple(steps),
            final_answer=steps[-1].action,
            usage={"tokens": tokens},
        )

    def score(self, task: Task, episode: EpisodeRecorder, payload: MemoryPayload) -> TaskScore:
        expected = task.data["key"].replace("key", "value")
        hit = float(expected in (episode.final_answer or "").split())
        return TaskScore(hit, {"hit": hit})


def add_arguments(parser) -> None:
    parser.add_argument(
        "--benchmark",
        default="minigallery",
        choices=("minigallery", "facts"),
        help="minigallery: QA mode with the visual agent and the MuRAG seed (real MiniLM); "
        "facts: a built-in fact-lookup benchmark with a trivial program (default minigallery)",
    )
    parser.add_argument("--users", type=int, default=2, help="minigallery users per split (default 2)")
    parser.add_argument("--tasks", type=int, default=24, help="facts: retrieve tasks (default 24)")
    parser.add_argument("--llm-calls", type=int, default=3, help="facts: LLM calls per episode (default 3)")
    parser.add_argument("--latency", type=float, default=0.2, help="fake LLM latency, s (default 0.2)")
    parser.add_argument("--concurrency", type=int, default=8, help="compared with 1 (default 8)")
    add_sandbox_flag(parser, default="auto")


def run(args) -> int:
    from rich.console import Console

    from automemo.assembly import AssemblyError, open_sandbox
    from automemo.cli import UserError
    from automemo.episode_store import EpisodeStore
    from automemo.llm import Ledger, RoleConfig
    from automemo.measurements.stand_ins.fakellm import FakeLLM

    if min(args.tasks, args.llm_calls, args.users) < 1 or args.concurrency < 2:
        raise UserError("--tasks, --llm-calls and --users must be >= 1 and --concurrency >= 2")
    try:  # --sandbox unsafe is an explicit choice on this command line
        sandbox = open_sandbox(sandbox_choice(args), unsafe_confirmed=True)
    except AssemblyError as exc:
        raise UserError(str(exc)) from None

    console = Console()
    rows = []
    with FakeLLM() as server, tempfile.TemporaryDirectory(prefix="automemo-bench-eval-") as tmp:
        server.set_handler(lambda body: _answer(body, args.latency))
        agent_role = RoleConfig(model="fake", base_url=server.base_url, api_key_env="AUTOMEMO_BENCH_KEY")
        store = EpisodeStore(Path(tmp) / "store")
        setup = _minigallery if args.benchmark == "minigallery" else _facts
        # An untimed warm-up first: it collects the update episodes and fills the embedding
        # cache, so that both timed runs measure the same, steady-state work.
        for timed, workers in ((False, args.concurrency), (True, 1), (True, args.concurrency)):
            ledger = Ledger()
            evaluator, program, close = setup(args, agent_role, ledger, store, sandbox, workers)
            try:
                evaluator.update_episodes("test")
                evaluator.partials("test")
                console.print(f"evaluating at concurrency {workers}{'' if timed else ' (warm-up)'}…")
                result = evaluator.evaluate(program, split="test")
                calls = ledger.rows(role="agent")
            finally:
                close()
            if result.errors or not result.n_scored:
                raise UserError(f"the evaluation itself failed: {dict(result.errors)}")
            if timed:
                rows.append((workers, result, sum(row["latency_s"] for row in calls), len(calls)))
    console.print(_table(args, sandbox.name, rows))
    return 0


def _facts(args, agent_role, ledger, store, sandbox, workers):
    """A benchmark made up here, so the evaluator is built directly: no embeddings, no judge."""
    from automemo.evaluation import EvaluationConfig, Evaluator
    from automemo.llm import LLMClient, LLMConfig

    llm = LLMClient(LLMConfig(agent=agent_role), ledger=ledger)
    evaluator = Evaluator(FactsQABenchmark(args.tasks, args.llm_calls), sandbox, store, agent=llm,
                          config=EvaluationConfig(concurrency=workers, quiet=True))
    return evaluator, FACTS_PROGRAM, lambda: None


def _minigallery(args, agent_role, ledger, store, sandbox, workers):
    """Built as `automemo eval` builds it; the embedding cache lives in the store, so after the
    warm-up, candidates re-embedding the same episodes hit it, as they do in a search."""
    from automemo.assembly import build_evaluation
    from automemo.config import build_run_config
    from automemo.paths import seed_path

    config = build_run_config({
        "benchmark": {"name": "minigallery", "options": {"mode": "qa", "users_per_split": args.users}},
        "llm": {"agent": {"model": agent_role.model, "base_url": agent_role.base_url,
                          "api_key_env": agent_role.api_key_env}},
        "evaluation": {"concurrency": workers, "quiet": True},
    })
    setup = build_evaluation(config, store_root=store.root, ledger=ledger, sandbox=sandbox)
    return setup.evaluator, seed_path("murag").read_text(), setup.close


def _table(args, sandbox_name: str, rows):
    from rich.table import Table

    (_, serial, serial_wait, calls), (workers, parallel, _, _) = rows
    n = len(serial.tasks)
    table = Table(
        title=f"evaluation speed: {args.benchmark}, {sandbox_name} sandbox, fake LLM {args.latency:.2f} s"
    )
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("retrieve tasks / LLM calls", f"{n} / {calls}")
    table.add_row("wall time, concurrency 1 (s)", f"{serial.wall_s:.2f}")
    table.add_row(f"wall time, concurrency {workers} (s)", f"{parallel.wall_s:.2f}")
    table.add_row(f"speed-up {workers} vs 1, whole evaluation", f"{serial.wall_s / parallel.wall_s:.2f}×")
    table.add_row(
        f"speed-up {workers} vs 1, retrieve tasks (target ≥ 6×)",
        f"{serial.info['retrieve_phase_s'] / parallel.info['retrieve_phase_s']:.2f}×",
    )
    table.add_row("sandbox session open (s)", f"{serial.info['open_s']:.2f}")
    table.add_row("LLM wait per episode (s)", f"{serial_wait / n:.3f}")
    table.add_row(
        "framework overhead per episode, whole evaluation (ms)",
        f"{(serial.wall_s - serial_wait) / n * 1000:.1f}",
    )
    table.add_row(
        "framework overhead per episode, retrieve phase (ms)",
        f"{(serial.info['retrieve_phase_s'] - serial_wait) / n * 1000:.1f}",
    )
    table.add_row("  of which the sandboxed retrieve call, mean (ms)", f"{serial.info['retrieve_s_mean'] * 1000:.1f}")
    table.add_row("updates, all episodes, in the sandbox (s)", f"{serial.update_s:.2f}")
    return table


def _answer(body: dict, latency: float) -> dict:
    text = " ".join(
        m["content"] if isinstance(m.get("content"), str) else " ".join(
            p.get("text", "") for p in m.get("content", []) if isinstance(p, dict)
        )
        for m in body.get("messages", [])
    )
    values = re.findall(r"\bvalue\d+\b", text)
    return {"content": values[-1] if values else "unknown", "delay": latency}

