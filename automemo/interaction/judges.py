"""Binary LLM-as-judge prompts (`prompts/judge.j2`): for trajectories (at most 5 screenshots, the
last ones, as in the WebVoyager protocol) and for answers against a reference. Benchmarks own
their judges; agents never see them."""

from __future__ import annotations

import re
from typing import Any, Sequence

from automemo.interaction.answers import normalize_answer
from automemo.llm.messages import user_message
from automemo.prompting import render

MAX_JUDGE_SCREENSHOTS = 5

_VERDICT = re.compile(r"verdict\s*:\s*\**\s*(success|failure|yes|no|pass|fail|correct|incorrect)\b", re.IGNORECASE)
_POSITIVE = {"success", "yes", "pass", "correct"}


def parse_verdict(reply: str) -> bool | None:
    """True / False from the last `Verdict:` line; None when there is none (the caller decides,
    and says so in the feedback, rather than guessing from free text)."""
    found = _VERDICT.findall(reply or "")
    if not found:
        return None
    return found[-1].lower() in _POSITIVE


class _LLMJudge:
    def __init__(self, llm: Any) -> None:
        if llm is None or not llm.configured("judge"):
            raise ValueError("an LLM judge needs the judge role configured (llm.judge.model)")
        self.llm = llm

    def _ask(self, text: str, images: Sequence[bytes], node: Any, purpose: str) -> tuple[bool, str]:
        result = self.llm.chat("judge", [user_message(text, list(images))], node=node, purpose=purpose, max_tokens=256)
        verdict = parse_verdict(result.text)
        if verdict is None:
            return False, f"judge reply had no verdict line, counted as failure: {result.text[:300]}"
        return verdict, result.text.strip()[:1000]


class TrajectoryJudge(_LLMJudge):
    def judge(
        self, instruction: str, actions: Sequence[str], answer: str | None, screenshots: Sequence[bytes], *,
        reference: str = "", node: Any = None,
    ) -> tuple[bool, str]:
        shots = list(screenshots)[-MAX_JUDGE_SCREENSHOTS:]
        text = render("judge", mode="trajectory", instruction=instruction, actions=list(actions), answer=answer or "",
                      n_screenshots=len(shots), max_screenshots=MAX_JUDGE_SCREENSHOTS, reference=reference)
        return self._ask(text, shots, node, "judge-trajectory")


class AnswerJudge(_LLMJudge):
    def judge(
        self, question: str, gold: str, answer: str, *, qtype: str | None = None, node: Any = None
    ) -> tuple[bool, str]:
        """`qtype` (a conversation benchmark's question type, e.g. VS, CD, AR or LoCoMo's cat5)
        tells the judge that type's answer convention: image ids, yes/no, a refusal."""
        if normalize_answer(answer) == normalize_answer(gold):  # no need to pay for the obvious
            return True, "exact match with the reference"
        mode = "answer" if qtype is None else "conversation"
        text = render("judge", mode=mode, question=question, gold=gold, answer=answer, qtype=qtype or "")
        return self._ask(text, (), node, "judge-answer")


class LongMemEvalJudge(_LLMJudge):
    """LongMemEval's per-type judge instructions (`prompts/judge_longmemeval.j2`): off-by-one day
    counts pass on temporal reasoning, an updated answer passes on knowledge updates, preference
    questions are judged against a rubric, abstention questions on whether the answer declines."""

    def judge(self, question: str, gold: str, answer: str, *, qtype: str, abstention: bool = False,
              node: Any = None) -> tuple[bool, str]:
        if not abstention and normalize_answer(answer) == normalize_answer(gold):
            return True, "exact match with the reference"
        text = render("judge_longmemeval", question=question, gold=gold, answer=answer, qtype=qtype,
                      abstention=abstention)
        return self._ask(text, (), node, "judge-answer")
