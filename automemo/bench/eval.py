"""`automemo bench eval`: what concurrency buys an evaluation, and what the framework costs.

A small question-answering benchmark whose agent asks a real OpenAI-compatible server (the fake
one, `automemo.fakellm.FakeLLM`, answering after a fixed latency) a few times per episode, with a
real memo program in the chosen sandbox. The same evaluation runs at concurrency 1 and at
concurrency N; the figures are

- speed-up: wall time at 1 / wall time at N (target: >= 6x at N = 8);
- framework overhead per episode: wall time at concurrency 1 not spent waiting on the LLM,
  divided by the number of retrieve tasks (sandbox calls, payload handling, scoring, evidence).

Update episodes are collected before either timed run, so both measure the same work.
"""

from __future__ import annotations

import re
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from automemo.benchmarks.base import Benchmark, Split, Task, TaskScore
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

    def __init__(self, n_tasks: int, llm_calls: int) -> None:
        self.n_tasks = n_tasks
        self.llm_calls = llm_calls
        self._lock = threading.Lock()
        self.llm_wait_s = 0.0

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
        steps, waited, tokens = [], 0.0, 0
        for i in range(self.llm_calls):
            started = time.perf_counter()
            reply = agent.chat("agent", messages, purpose="bench-eval step")
            waited += time.perf_counter() - started
            tokens += reply.prompt_tokens + reply.completion_tokens
            steps.append(Step(index=i, action=reply.text))
        with self._lock:
            self.llm_wait_s += waited
        return EpisodeRecorder(
            task_id=task.task_id,
            benchmark=self.name,
            instruction=task.instruction,
            steps=tuple(steps),
            final_answer=steps[-1].action,
            usage={"tokens": tokens, "llm_s": waited},
        )

    def score(self, task: Task, episode: EpisodeRecorder, payload: MemoryPayload) -> TaskScore:
        expected = task.data["key"].replace("key", "value")
        hit = float(expected in (episode.final_answer or "").split())
        return TaskScore(hit, {"hit": hit})


def add_arguments(parser) -> None:
    parser.add_argument("--tasks", type=int, default=24, help="retrieve tasks (default 24)")
    parser.add_argument("--llm-calls", type=int, default=3, help="LLM calls per episode (default 3)")
    parser.add_argument("--latency", type=float, default=0.2, help="fake LLM latency, s (default 0.2)")
    parser.add_argument("--concurrency", type=int, default=8, help="compared with 1 (default 8)")
    parser.add_argument(
        "--sandbox",
        default="auto",
        choices=("auto", "docker", "bwrap", "unsafe"),
        help="where the memo program runs (default auto)",
    )


def run(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from automemo.cli import UserError
    from automemo.episode_store import EpisodeStore
    from automemo.evaluation import EvaluationConfig, Evaluator
    from automemo.fakellm import FakeLLM
    from automemo.llm import LLMClient, LLMConfig, RoleConfig
    from automemo.sandbox import SandboxError, get_sandbox

    if args.tasks < 1 or args.llm_calls < 1 or args.concurrency < 2:
        raise UserError("--tasks and --llm-calls must be >= 1 and --concurrency >= 2")
    try:
        sandbox = get_sandbox(args.sandbox)
    except SandboxError as exc:
        raise UserError(f"sandbox {args.sandbox!r} is not usable: {exc}") from None

    console = Console()
    with FakeLLM() as server, tempfile.TemporaryDirectory(prefix="automemo-bench-eval-") as tmp:
        server.set_handler(lambda body: _answer(body, args.latency))
        llm = LLMClient(
            LLMConfig(agent=RoleConfig(model="fake", base_url=server.base_url, api_key_env="AUTOMEMO_BENCH_KEY"))
        )
        store = EpisodeStore(Path(tmp) / "store")
        rows = []
        for workers in (1, args.concurrency):
            bench = FactsQABenchmark(args.tasks, args.llm_calls)
            evaluator = Evaluator(
                bench,
                sandbox,
                store,
                agent=llm,
                config=EvaluationConfig(concurrency=workers, quiet=True),
            )
            evaluator.update_episodes("test")  # collected once, outside the timing
            console.print(f"evaluating at concurrency {workers}…")
            result = evaluator.evaluate(FACTS_PROGRAM, split="test")
            if result.mean != 1.0:
                raise UserError(
                    f"the benchmark itself failed (score {result.mean}, errors {dict(result.errors)})"
                )
            rows.append((workers, result, bench.llm_wait_s))

    (_, serial, serial_wait), (workers, parallel, _) = rows
    overhead = (serial.wall_s - serial_wait) / args.tasks
    table = Table(title=f"evaluation speed ({sandbox.name} sandbox, fake LLM {args.latency:.2f} s)")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("retrieve tasks × LLM calls", f"{args.tasks} × {args.llm_calls}")
    table.add_row("wall time, concurrency 1 (s)", f"{serial.wall_s:.2f}")
    table.add_row(f"wall time, concurrency {workers} (s)", f"{parallel.wall_s:.2f}")
    table.add_row(f"speed-up {workers} vs 1 (target ≥ 6×)", f"{serial.wall_s / parallel.wall_s:.2f}×")
    table.add_row("LLM wait per episode (s)", f"{serial_wait / args.tasks:.3f}")
    table.add_row("framework overhead per episode (ms)", f"{overhead * 1000:.1f}")
    table.add_row("  of which update, per update episode (ms)", f"{serial.update_s / args.tasks * 1000:.1f}")
    table.add_row("  of which retrieve call, mean (ms)", f"{serial.info['retrieve_s_mean'] * 1000:.1f}")
    console.print(table)
    return 0


def _answer(body: dict, latency: float) -> dict:
    text = " ".join(
        m["content"] if isinstance(m.get("content"), str) else " ".join(
            p.get("text", "") for p in m.get("content", []) if isinstance(p, dict)
        )
        for m in body.get("messages", [])
    )
    values = re.findall(r"\bvalue\d+\b", text)
    return {"content": values[-1] if values else "unknown", "delay": latency}

