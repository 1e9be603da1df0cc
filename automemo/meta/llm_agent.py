"""The LLM meta agent (DESIGN §8): analysis → generate for a new child, repair after a failed
quick exam, initialize from nothing. Every call goes through the `meta` role of `LLMClient`,
which writes the run's ledger; each proposal also carries its own usage tally.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from automemo.contract import Budget
from automemo.llm import system_message, user_message
from automemo.meta.analysis import FEEDBACK_SCHEMA, analyse
from automemo.meta.base import Improvement, MetaAgent, ParentView, Proposal
from automemo.meta.codeblock import extract_program, extract_summary
from automemo.meta.config import MetaConfig
from automemo.meta.conversation import MetaConversation
from automemo.meta.evidence import clip, select_evidence
from automemo.meta.prompts import contract_context, improvements_context, render_meta
from automemo.prompting import render
from automemo.sandbox.base import Limits


class LLMMetaAgent(MetaAgent):
    def __init__(
        self,
        client: Any,
        config: MetaConfig = MetaConfig(),
        *,
        task_description: str = "",
        budget: Budget = Budget(),
        limits: Limits = Limits(),
        image_roots: Sequence[Path] = (),
    ) -> None:
        """`client` is an `automemo.llm.LLMClient` with the `meta` role configured;
        `task_description` tells the prompts what the agent using the memory does; `image_roots`
        are where evidence images resolve (the run's episode store)."""
        self.client = client
        self.config = config
        self.task_description = task_description
        self.context = contract_context(budget, limits)
        self.image_roots = tuple(image_roots)
        self.system = render("meta_system")

    # --- propose: analysis → generate --------------------------------------------------------

    def propose(
        self, parent: ParentView, improvements: Sequence[Improvement], *, node_id: int, seed: int
    ) -> Proposal:
        conversation = MetaConversation(self.client, self.config, node_id=node_id)
        evidence = select_evidence(
            parent.evaluation,
            parent.evidence_dir,
            seed=seed,
            config=self.config,
            image_roots=self.image_roots,
        )
        parent_vars = {
            "node_id": parent.node_id,
            "score": parent.score,
            "n_evals": parent.n_evals,
            "source": clip(parent.source, self.config.source_chars),
        }
        examples = improvements_context(improvements, self.config)
        analysis_prompt = render_meta(
            "meta_analysis",
            self.context,
            task_description=self.task_description,
            parent=parent_vars,
            evidence=evidence.to_prompt(),
            image_labels=[img.label for img in evidence.images()],
            improvements=examples,
            schema=FEEDBACK_SCHEMA,
        )
        feedback = analyse(conversation, system=self.system, prompt=analysis_prompt, evidence=evidence)
        generate_prompt = render_meta(
            "meta_generate",
            self.context,
            task_description=self.task_description,
            parent=parent_vars,
            feedback=feedback,
            improvements=examples,
        )
        source, summary = self._program(
            conversation, generate_prompt, purpose="generate", fallback=_top_suggestion(feedback)
        )
        diagnosis = {
            **feedback,
            "evidence": [
                {"task_id": t.task_id, "outcome": t.outcome, "score": t.score}
                for t in evidence.trajectories
            ],
        }
        return Proposal(source, summary, diagnosis=diagnosis, usage=conversation.usage.to_dict())

    # --- repair -------------------------------------------------------------------------------

    def repair(
        self, source: str, exam_report: Mapping[str, Any], attempt: int, *, node_id: int, seed: int
    ) -> Proposal:
        conversation = MetaConversation(self.client, self.config, node_id=node_id)
        failing = exam_report.get("failing_input")
        prompt = render_meta(
            "meta_repair",
            self.context,
            source=clip(source, self.config.source_chars),
            attempt=attempt,
            report=_report_view(exam_report),
            failing_input=clip(json.dumps(failing, indent=2, ensure_ascii=False, default=str), 20_000)
            if failing
            else "",
        )
        fallback = f"repair: fix {exam_report.get('failed_check') or 'the failed exam check'}"
        fixed, summary = self._program(conversation, prompt, purpose=f"repair-{attempt}", fallback=fallback)
        return Proposal(
            fixed,
            summary,
            diagnosis={"repair_of": exam_report.get("failed_check"), "attempt": attempt},
            usage=conversation.usage.to_dict(),
        )

    # --- initialize ---------------------------------------------------------------------------

    def initialize(self, task_description: str, *, node_id: int, seed: int) -> Proposal:
        conversation = MetaConversation(self.client, self.config, node_id=node_id)
        prompt = render_meta(
            "meta_initialize", self.context, task_description=task_description or self.task_description
        )
        source, summary = self._program(
            conversation, prompt, purpose="initialize", fallback="initial program written from the task description"
        )
        return Proposal(source, summary, diagnosis={}, usage=conversation.usage.to_dict())

    # --- shared -------------------------------------------------------------------------------

    def _program(
        self, conversation: MetaConversation, prompt: str, *, purpose: str, fallback: str
    ) -> tuple[str, str]:
        def parse(text: str) -> tuple[str, str]:
            return extract_program(text), extract_summary(text, fallback)

        messages = [system_message(self.system), user_message(prompt)]
        return conversation.ask(
            messages, parse, expected="program", purpose=purpose, max_tokens=self.config.generate_max_tokens
        )


def _top_suggestion(feedback: Mapping[str, Any]) -> str:
    suggestions = feedback.get("suggestions") or []
    return suggestions[0]["change"][:200] if suggestions else "child written from the analysis"


def _report_view(report: Mapping[str, Any]) -> dict[str, Any]:
    """The exam report's fields the repair prompt shows, present even when the report lacks them."""
    return {
        "failed_check": report.get("failed_check"),
        "error": clip(str(report.get("error") or ""), 4_000),
        "traceback_tail": clip(str(report.get("traceback_tail") or ""), 8_000),
    }
