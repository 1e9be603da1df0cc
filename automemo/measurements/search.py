"""`automemo bench search`: the framework's own time per search step — policy, meta-agent round
trips, quick exam and full evaluation in the sandbox, step commit — with a zero-latency fake
meta LLM (or the offline mutator) on a tiny Mini-Gallery, so that what is timed is the framework
and not a model. Target: under 2 s per step."""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any
from automemo.cli.flags import add_sandbox_flag, sandbox_choice, unsafe_confirmed

TARGET_S = 2.0
KEY_ENV = "AUTOMEMO_BENCH_FAKE_KEY"
TINY_GALLERY = {"mode": "retrieval", "users_per_split": 1, "sessions_per_user": 2,
                "rounds_per_session": 24}
FEEDBACK = {"summary": "bench", "memory_relevance": [], "content_issues": [],
            "structural_issues": [], "suggestions": [{"priority": 1, "change": "c", "rationale": "r"}]}


def add_arguments(parser) -> None:
    parser.add_argument("--steps", type=int, default=10, help="search steps to time (default 10)")
    add_sandbox_flag(parser, default="auto")
    parser.add_argument("--meta", default="fake", choices=("fake", "mutator"),
                        help="fake: zero-latency LLM meta agent writing a trivial program; mutator: "
                             "the offline parameter mutator (its seeds embed with MiniLM)")


def _fake_meta_answer(program: str):
    def answer(request: dict[str, Any]) -> str:
        prompt = request["messages"][-1]["content"]
        prompt = prompt if isinstance(prompt, str) else json.dumps(prompt)
        if "# Task: diagnose" in prompt:
            return "```json\n" + json.dumps(FEEDBACK) + "\n```"
        return "SUMMARY: bench child\n```python\n" + program + "```"

    return answer


def run(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from automemo.assembly import build_search
    from automemo.cli import UserError
    from automemo.config import run_config_to_dict
    from automemo.measurements.stand_ins.fakellm import FakeLLM
    from automemo.paths import seed_path
    from automemo.resolution import load_run_config
    from automemo.runs import RunDir

    if args.steps < 1:
        raise UserError(f"--steps must be at least 1, got {args.steps}")
    console = Console()
    with tempfile.TemporaryDirectory(prefix="automemo-bench-search-") as tmp, FakeLLM() as fake:
        overrides: dict[str, Any] = {
            "benchmark": {"name": "minigallery", "options": TINY_GALLERY},
            "sandbox": {"backend": sandbox_choice(args)},
            "search": {"steps": args.steps},
        }
        if args.meta == "fake":
            fake.set_handler(_fake_meta_answer(seed_path("no_memory").read_text()))
            os.environ[KEY_ENV] = "fake"  # the fake server ignores it; the client wants one
            overrides["llm"] = {"meta": {"model": "fake", "base_url": fake.base_url, "api_key_env": KEY_ENV}}
        config = load_run_config(overrides=overrides, benchmark_defaults=False)
        run_dir = RunDir.create(Path(tmp), run_config_to_dict(config), "bench")
        started = time.perf_counter()
        search = build_search(run_dir, config, quiet=True, unsafe_confirmed=unsafe_confirmed(args))
        built = time.perf_counter() - started
        try:
            search.loop.run_search()
        finally:
            search.close()
        total = time.perf_counter() - started
        actions = run_dir.actions()
        requests = len(fake.requests)
    root, steps = actions[0], actions[1:]
    walls = [a["wall_s"] for a in steps]
    table = Table(title=f"automemo bench search: {args.steps} steps, sandbox {args.sandbox}, meta {args.meta}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("assembly (benchmark, sandbox, encoders)", f"{built:.2f} s")
    table.add_row("root evaluation (collects update episodes once)", f"{root['wall_s']:.2f} s")
    table.add_row("per step, mean", f"{statistics.mean(walls):.2f} s")
    table.add_row("per step, median", f"{statistics.median(walls):.2f} s")
    table.add_row("per step, max", f"{max(walls):.2f} s")
    for kind in ("generate", "evaluate"):
        of_kind = [a["wall_s"] for a in steps if a["kind"] == kind]
        if of_kind:
            table.add_row(f"  {kind} steps ({len(of_kind)})", f"{statistics.mean(of_kind):.2f} s mean")
    table.add_row("meta LLM requests", str(requests))
    table.add_row("whole run", f"{total:.2f} s")
    verdict = "meets" if statistics.mean(walls) < TARGET_S else "MISSES"
    table.add_row("target < 2 s per step", verdict)
    console.print(table)
    return 0
