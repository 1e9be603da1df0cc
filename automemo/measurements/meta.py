"""`automemo bench meta`: meta completion tokens per valid child, SEARCH/REPLACE edits versus full
rewrites, with the same model and the same parents. Target: diff mode spends at most 40% of the
completion tokens full-rewrite mode spends per valid child.

Each parent (a seed program) is proposed a child `--samples` times in each mode by the real LLM
meta agent (analysis, then generate in the same conversation). A child is valid when it parses,
defines `class Memo`, and differs (normalised AST) from its parent and from every earlier child
of the run: the quick exam's sandbox is left out so that the figure is about the model's writing,
and so that it runs against any OpenAI-compatible `--base-url` in minutes. Without one, a
built-in fake server answers like a model that changes one tunable (a check of the machinery, not
a measurement of a model). Generate tokens count the generate calls with their retries and
continuations; the analysis, the same in both modes, is reported apart.
"""

from __future__ import annotations

import itertools
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_RATIO = 0.40
MODES = ("diff", "rewrite")
DEFAULT_PARENTS = "murag,trajectory_retrieval"
FEEDBACK = {"summary": "retrieval returns too much", "memory_relevance": [], "content_issues": [],
            "structural_issues": [], "suggestions": [{"priority": 1, "change": "tune the ranking",
                                                      "rationale": "precision"}]}
_TUNABLE = re.compile(r"^(?P<name>[A-Z_][A-Z0-9_]*) = (?P<value>\d+)(?P<rest>\s+# tunable: int.*)$", re.M)


def add_arguments(parser) -> None:
    parser.add_argument("--base-url", metavar="URL",
                        help="an OpenAI-compatible …/v1 URL to measure (default: a built-in fake server)")
    parser.add_argument("--model", default="bench-model", help="the model name sent to --base-url")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                        help="environment variable holding the key (default OPENAI_API_KEY)")
    parser.add_argument("--parents", default=DEFAULT_PARENTS, metavar="SEEDS",
                        help=f"comma-separated seed programs used as parents (default {DEFAULT_PARENTS})")
    parser.add_argument("--samples", type=int, default=1, help="children per parent and mode (default 1)")
    # Not --max-tokens: that is a run's token cap in every command (automemo.cli.flags).
    parser.add_argument("--max-call-tokens", dest="max_tokens", type=int, default=4096, metavar="N",
                        help="completion cap of one generate call (default 4096)")
    parser.add_argument("--context-tokens", type=int, default=0,
                        help="the model's context size, so prompts are fitted (default 0: unknown)")
    parser.add_argument("--stall-timeout", type=float, default=300.0, metavar="S",
                        help="seconds of silence before a streamed answer is given up (default 300)")
    parser.add_argument("--inspirations", type=int, default=0,
                        help="inspiration programs shown to generate (default 0: the figure is about "
                             "the answer, and a small local model's prompt stays short)")
    parser.add_argument("--prompt-profile", choices=("auto", "full", "compact"), default="auto",
                        help="the meta prompts: full (analysis, then generate), compact (one short call "
                             "asking for one small edit), auto (compact below a 16,384-token "
                             "--context-tokens; default)")
    parser.add_argument("--out", type=Path, metavar="FILE", help="also write the figures as JSON")


def _fake_model(parents: dict[str, str]):
    """A fake that diagnoses in one JSON and changes one tunable: as an edit when asked for
    SEARCH/REPLACE blocks, else as the whole program (a fresh value every time)."""
    counter = itertools.count(1)

    def answer(request: dict[str, Any]) -> str:
        text = json.dumps(request["messages"][-1]["content"])
        if "diagnose a memo program" in text:
            return "```json\n" + json.dumps(FEEDBACK) + "\n```"
        everything = json.dumps(request["messages"])
        # The programs' ends: the compact prompt leaves docstrings out, both show the last lines.
        source = next(s for name, s in parents.items() if json.dumps(s.rstrip())[-200:-1] in everything)
        match = _TUNABLE.search(source)
        if match is None:
            return "SUMMARY: this program declares no integer tunable; nothing to change"
        line = match.group(0)
        new = f"{match['name']} = {int(match['value']) + next(counter)}{match['rest']}"
        if "<<<<<<< SEARCH" in text:
            return f"SUMMARY: {match['name']} raised\n<<<<<<< SEARCH\n{line}\n=======\n{new}\n>>>>>>> REPLACE\n"
        return f"SUMMARY: {match['name']} raised\n```python\n{source.replace(line, new, 1)}```\n"

    return answer


def measure(base_url: str, args, parents: dict[str, str]) -> dict[str, Any]:
    from automemo.llm import Ledger, LLMClient, LLMConfig, RoleConfig
    from automemo.meta.base import MetaError, ParentView
    from automemo.meta.config import LLMMetaConfig, MetaConfig
    from automemo.meta.context import GenerationContext
    from automemo.meta.llm.agent import LLMMetaAgent
    from automemo.meta.llm.codeblock import CodeBlockError, check_program
    from automemo.meta.source.syntax import normalised

    role = RoleConfig(model=args.model, base_url=base_url, api_key_env=args.api_key_env,
                      max_tokens=args.max_tokens, context_tokens=args.context_tokens,
                      stall_timeout_s=args.stall_timeout, max_retries=1, vision=False)
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="automemo-bench-meta-") as tmp:
        for mode in MODES:
            ledger = Ledger(Path(tmp) / f"{mode}.db")
            client = LLMClient(LLMConfig(meta=role), ledger)
            config = MetaConfig(llm=LLMMetaConfig(
                edit_mode=mode, generate_max_tokens=args.max_tokens, analysis_max_tokens=min(args.max_tokens, 2048),
                inspirations=args.inspirations, prompt_profile=args.prompt_profile))
            agent = LLMMetaAgent(client, config, seeds_dir=None)
            seen = {normalised(s) for s in parents.values()}
            valid, failures, node = 0, [], 0
            started = time.monotonic()
            for (name, source), sample in itertools.product(parents.items(), range(args.samples)):
                node += 1
                parent = ParentView(node_id=0, source=source, score=0.0, n_evals=1, evaluation=None)
                try:
                    child = agent.propose(GenerationContext.build(parent, node_id=node, seed=sample)).source
                    check_program(child)
                except (MetaError, CodeBlockError) as exc:
                    failures.append(f"{name}: {str(exc)[:160]}")
                    continue
                if normalised(child) in seen:
                    failures.append(f"{name}: a duplicate child")
                    continue
                seen.add(normalised(child))
                valid += 1
            rows = ledger.rows()
            generate = [r for r in rows if r["purpose"].startswith("generate")]
            analysis = [r for r in rows if r["purpose"].startswith("analysis")]
            completion = sum(r["completion_tokens"] for r in generate)
            figures[mode] = {
                "proposals": node, "valid_children": valid, "generate_calls": len(generate),
                "generate_completion_tokens": completion,
                "generate_prompt_tokens": sum(r["prompt_tokens"] for r in generate),
                "prompt_tokens_per_valid_child": (sum(r["prompt_tokens"] for r in rows) / valid
                                                  if valid else None),
                "analysis_completion_tokens": sum(r["completion_tokens"] for r in analysis),
                "cached_prompt_tokens": sum(r["cached_tokens"] or 0 for r in rows),
                "completion_tokens_per_valid_child": completion / valid if valid else None,
                "wall_s_per_valid_child": (time.monotonic() - started) / valid if valid else None,
                "failures": failures,
            }
            ledger.close()
    diff, rewrite = (figures[m]["completion_tokens_per_valid_child"] for m in MODES)
    figures["ratio_diff_to_rewrite"] = diff / rewrite if diff is not None and rewrite else None
    return figures


def run(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from automemo.cli import UserError
    from automemo.measurements.stand_ins.fakellm import FakeLLM
    from automemo.paths import SEEDS_DIR, list_seeds

    names = [n.strip() for n in args.parents.split(",") if n.strip()]
    missing = [n for n in names if not (SEEDS_DIR / f"{n}.py").is_file()]
    if missing or not names:
        known = [p.stem for p in list_seeds()]
        raise UserError(f"--parents: no seed named {', '.join(missing) or '(none given)'}; seeds: {', '.join(known)}")
    if args.samples < 1:
        raise UserError(f"--samples must be at least 1, got {args.samples}")
    parents = {n: (SEEDS_DIR / f"{n}.py").read_text() for n in names}
    if args.base_url:
        figures = measure(args.base_url, args, parents)
    else:
        with FakeLLM() as fake:
            fake.set_handler(_fake_model(parents))
            figures = measure(fake.base_url, args, parents)
    figures["server"] = args.base_url or "built-in fake (a check of the machinery, not a model)"
    table = Table(title=f"meta completion tokens per valid child ({figures['server']})")
    for column in ("mode", "proposals", "valid", "generate calls", "completion / valid child",
                   "prompt tokens", "cached", "s / valid child"):
        table.add_column(column)
    for mode in MODES:
        f = figures[mode]
        per = f["completion_tokens_per_valid_child"]
        wall = f["wall_s_per_valid_child"]
        table.add_row(mode, str(f["proposals"]), str(f["valid_children"]), str(f["generate_calls"]),
                      "-" if per is None else f"{per:.0f}", str(f["generate_prompt_tokens"]),
                      str(f["cached_prompt_tokens"]), "-" if wall is None else f"{wall:.1f}")
    console = Console()
    console.print(table)
    ratio = figures["ratio_diff_to_rewrite"]
    if ratio is None:
        console.print("ratio: not measurable (a mode produced no valid child)")
    elif not args.base_url:
        # The fake's answers fix the ratio (a one-line edit against a whole program): judging
        # it against the target would pass a check that cannot fail.
        console.print(f"diff / rewrite completion tokens per valid child: {ratio:.2f} (the built-in "
                      f"fake's answers: not a measurement; pass --base-url and --model)")
    else:
        verdict = "meets" if ratio <= TARGET_RATIO else "misses"
        console.print(f"diff / rewrite completion tokens per valid child: {ratio:.2f} "
                      f"({verdict} the target ≤ {TARGET_RATIO:.2f})")
    for mode in MODES:
        for failure in figures[mode]["failures"]:
            console.print(f"[yellow]{mode}: {failure}[/yellow]")
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2))
    return 0
