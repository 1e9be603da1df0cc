"""`automemo bench cost`, the measurement behind docs/question-budget.md: one QA-mode evaluation
with the fake LLM as agent and judge, read from the ledger, and its projection to a search."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _rows(table_text: str, header: str) -> list[list[str]]:
    lines = table_text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_a_budget_filling_program_costs_one_agent_call_per_question_with_the_payload_in_its_prompt():
    done = subprocess.run([sys.executable, "-m", "automemo", "bench", "cost", "fill_budget", "--sandbox",
                           "unsafe", "--price", "1,2", "--evaluations", "10", "--fraction", "0.5"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    [measured] = _rows(done.stdout, "| program | questions")
    name, questions, agent_calls, judge_calls, agent_prompt, judge_prompt, payload = measured[:7]
    questions = int(questions)
    assert name == "fill_budget" and questions > 0
    assert int(agent_calls) == questions and 0 < int(judge_calls) <= questions
    payload_chars = float(payload.replace(",", ""))
    assert 45_000 < payload_chars <= 50_000  # the default retrieval budget, filled
    # The payload dominates the agent's prompt: about a token per four characters of it.
    agent_tokens = float(agent_prompt.replace(",", ""))
    assert payload_chars / 4 < agent_tokens < payload_chars / 4 + 1_000
    # The projection prices what was measured: (prompt × 1 + completion × 2) / 10^6 per question,
    # 60 + 30 completion tokens by default, 10 evaluations, half of their questions.
    [projected] = _rows(done.stdout, "| program | tokens / question")
    prompt = agent_tokens + float(judge_prompt.replace(",", ""))
    per_question = (prompt + 2 * 90) / 1e6
    assert abs(float(projected[2]) - per_question) < 1e-5
    exhaustive, budgeted = projected[4].split(", "), projected[5].split(", ")
    assert int(exhaustive[0].replace(",", "")) == 10 * questions
    assert int(budgeted[0].replace(",", "")) == 5 * questions
    assert abs(float(exhaustive[2]) - 10 * questions * per_question) < 0.01
