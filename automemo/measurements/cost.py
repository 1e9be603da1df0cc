"""`automemo bench cost`: what one QA-mode evaluation costs in LLM calls and tokens, and the cost
of a search with and without a question budget projected from it (docs/question-budget.md).

    automemo bench cost [PROGRAM ...] [--sandbox bwrap] [--price IN,OUT]

For each program (default: the seeds no_memory, bm25_rag and murag, and fill_budget, a program
whose payload fills the retrieval budget, as a search's child may) it scores the search's
validation questions (the train split) of `memgallery` on the embedded sample in QA mode with
the LLM judge, agent and judge both served by the project's fake OpenAI-compatible server
(automemo.measurements.stand_ins.fakellm), and reads the token ledger: calls per role and prompt tokens per
call. The fake counts prompt tokens as a server's tokenizer roughly would, one per 4 characters
of the text it is sent (images are not counted: the embedded sample has none). Its answers are
fixed short texts, so completion tokens are not measured; the projection takes them from
--agent-completion and --judge-completion (the agent's answer is capped at 256 tokens).
The second table prices a question, an evaluation and a search with --price.
"""

from __future__ import annotations

import math
import sqlite3
import tempfile
import time
from pathlib import Path

AGENT_REPLY = "The memory mentions it in the second session.\nAnswer: not mentioned"
FILLING = "fill_budget"
# A program whose payload fills the retrieval budget (budget.max_chars, 50,000 by default): every
# turn it was shown, newest first, cut at the budget by memolib.make_payload.
FILLING_SOURCE = """\
from automemo.contract import EpisodeRecorder, MemoProgram, MemoryPayload, PartialRecorder
from automemo.toolkit import memolib


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.texts = []

    def update(self, episode: EpisodeRecorder) -> None:
        self.texts += [unit.text for unit in memolib.episode_units(episode)]

    def retrieve(self, task: PartialRecorder) -> MemoryPayload:
        return memolib.make_payload(["\\n".join(reversed(self.texts))], budget=memolib.budget_of(task))
"""
JUDGE_REPLY = "The answer does not state the reference fact.\nVerdict: FAILURE"


def add_arguments(parser) -> None:
    parser.add_argument("seeds", nargs="*", default=["no_memory", "bm25_rag", "murag", FILLING],
                        help=f"seed names, or {FILLING} (a program that fills the retrieval budget)")
    parser.add_argument("--path", default="@mem-gallery-sample", help="memgallery release (default the sample)")
    parser.add_argument("--sandbox", default="auto", help="sandbox backend (default auto)")
    parser.add_argument("--price", default="0.40,1.60", metavar="IN,OUT",
                        help="USD per million prompt and completion tokens (default 0.40,1.60: gpt-4.1-mini)")
    parser.add_argument("--agent-completion", type=int, default=60, metavar="TOKENS",
                        help="completion tokens per agent answer in the projection (default 60)")
    parser.add_argument("--judge-completion", type=int, default=30, metavar="TOKENS",
                        help="completion tokens per judge verdict in the projection (default 30)")
    parser.add_argument("--evaluations", type=int, default=21,
                        help="full evaluations of the exhaustive search in the projection (default 21: the "
                             "root and one per step of a 20-step search)")
    parser.add_argument("--fraction", type=float, default=0.25,
                        help="question budget as a fraction of the exhaustive search's (default 0.25)")


def run(args) -> int:
    price_in, price_out = (float(p) for p in args.price.split(","))

    measured = [(seed, *_measure(seed, args)) for seed in args.seeds]
    print("| program | questions | agent calls | judge calls | agent prompt tokens / call | "
          "judge prompt tokens / call | payload chars / question | wall |")
    print("|---|---|---|---|---|---|---|---|")
    for seed, questions, agent, judge, payload, wall in measured:
        print(f"| {seed} | {questions} | {agent[0]} | {judge[0]} | {_per(agent, 1)} | {_per(judge, 1)} | "
              f"{'—' if payload is None else f'{payload:,.0f}'} | {wall:.0f} s |")
    print()
    print(f"Projection: one agent call and one judge call per question (an upper bound: an answer equal "
          f"to the reference skips the judge), {args.agent_completion} + {args.judge_completion} completion "
          f"tokens, USD {price_in:g} / {price_out:g} per million prompt / completion tokens, "
          f"{args.evaluations} full evaluations for the exhaustive search, {args.fraction:g} of its questions "
          f"for the budgeted one.")
    print()
    print("| program | tokens / question | USD / question | USD / evaluation | exhaustive search: questions, "
          "tokens, USD | budgeted search: questions, tokens, USD |")
    print("|---|---|---|---|---|---|")
    for seed, questions, agent, judge, _, _ in measured:
        prompt = (agent[1] / agent[0] if agent[0] else 0.0) + (judge[1] / judge[0] if judge[0] else 0.0)
        completion = args.agent_completion + args.judge_completion
        per_question = (prompt * price_in + completion * price_out) / 1e6
        exhaustive = args.evaluations * questions
        budgeted = math.ceil(round(args.fraction * exhaustive, 9))
        tokens = prompt + completion
        print(f"| {seed} | {tokens:,.0f} | {per_question:.5f} | {per_question * questions:.2f} | "
              f"{exhaustive:,}, {exhaustive * tokens / 1e6:.1f} M, {exhaustive * per_question:.2f} | "
              f"{budgeted:,}, {budgeted * tokens / 1e6:.1f} M, {budgeted * per_question:.2f} |")
    return 0


def _measure(seed: str, args) -> tuple[int, tuple[int, int, int], tuple[int, int, int], float | None, float]:
    """One QA-mode evaluation of `seed` on the validation questions: (questions, agent and judge
    (calls, prompt tokens, completion tokens), mean payload chars, wall seconds)."""
    from automemo.assembly import build_evaluation
    from automemo.llm import Ledger
    from automemo.measurements.stand_ins.fakellm import FakeLLM
    from automemo.paths import list_seeds
    from automemo.resolution import load_run_config

    source = FILLING_SOURCE if seed == FILLING else next(p.read_text() for p in list_seeds() if p.stem == seed)
    with FakeLLM() as fake, tempfile.TemporaryDirectory(prefix="qa-cost-") as tmp:
        # The judge's prompt asks for a `Verdict:` line; the agent's does not.
        fake.set_handler(lambda body: JUDGE_REPLY if "Verdict:" in _text(body) else AGENT_REPLY)
        role = {"model": "fake-model", "base_url": fake.base_url, "api_key_env": "QA_COST_UNUSED_KEY"}
        config = load_run_config(None, None, {
            "benchmark": {"name": "memgallery", "options": {"path": args.path, "mode": "qa", "judge": "llm"}},
            "llm": {"agent": role, "judge": role},
            "sandbox": {"backend": args.sandbox},
            "embeddings": {"cache_path": str(Path(tmp) / "embeddings.sqlite")}})
        ledger_path = Path(tmp) / "ledger.sqlite"
        setup = build_evaluation(config, store_root=Path(tmp) / "store", quiet=True,
                                 ledger=Ledger(ledger_path), unsafe_confirmed=args.sandbox == "unsafe")
        with setup:
            started = time.monotonic()
            result = setup.evaluator.evaluate(source, split="train")
            wall = time.monotonic() - started
        rows = _ledger(ledger_path)
    payloads = [len(t.payload.text) for t in result.tasks if t.payload is not None]
    return (len(result.tasks), rows.get("agent", (0, 0, 0)), rows.get("judge", (0, 0, 0)),
            sum(payloads) / len(payloads) if payloads else None, wall)


def _text(body: dict) -> str:
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [p.get("text", "") for p in content if isinstance(p, dict)]
    return "\n".join(parts)


def _ledger(path: Path) -> dict[str, tuple[int, int, int]]:
    """{role: (calls, prompt tokens, completion tokens)} of the successful chat calls."""
    with sqlite3.connect(path) as conn:
        return {role: (calls, prompt or 0, completion or 0) for role, calls, prompt, completion in conn.execute(
            "SELECT role, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens) FROM ledger "
            "WHERE kind = 'chat' AND status = 'ok' GROUP BY role")}


def _per(row: tuple[int, int, int], index: int) -> str:
    return "—" if not row[0] else f"{row[index] / row[0]:,.0f}"

