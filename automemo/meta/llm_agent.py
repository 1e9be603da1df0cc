"""The LLM meta agent: analysis → generate for a new child, repair after a failed
quick exam, initialize from nothing. Every call goes through the `meta` role of `LLMClient`,
which writes the run's ledger; each proposal also carries its own usage tally.

Built to survive small local models: prompts are fitted to the role's `context_tokens`, images
are left out for a role with `vision = false`, and an analysis the model cannot get into shape
falls back to the rule-based diagnosis (recorded under the diagnosis' "analysis" key) instead of
costing the step its child.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

from automemo.contract import Budget
from automemo.llm import system_message, user_message
from automemo.meta.analysis import FEEDBACK_SCHEMA, analyse, analysis_messages
from automemo.meta.base import Improvement, MetaAgent, ParentView, Proposal
from automemo.meta.codeblock import extract_program, extract_summary
from automemo.meta.config import MetaConfig
from automemo.meta.conversation import MetaConversation, PromptTooLong, UnusableReply
from automemo.meta.diagnosis import rule_based_diagnosis
from automemo.meta.evidence import clip, select_evidence
from automemo.meta.fitting import TRIMS, PromptRoom, Trim, fit, prompt_room
from automemo.meta.prompts import contract_context, helpers_context, improvements_context, render_meta
from automemo.prompting import render
from automemo.sandbox.base import Limits

T = TypeVar("T")


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

    # --- the model's limits -----------------------------------------------------------------

    def _role(self) -> Any:
        config = getattr(self.client, "config", None)
        return config.role("meta") if config is not None else None

    @property
    def vision(self) -> bool:
        role = self._role()
        return True if role is None else role.vision

    def _room(self, completion_tokens: int) -> PromptRoom:
        role = self._role()
        return prompt_room(role.context_tokens if role is not None else 0, completion_tokens)

    def _ask_fitted(
        self, conversation: MetaConversation, build: Callable[[Trim], tuple[list[dict], int]],
        ask: Callable[[list[dict]], T], *, completion_tokens: int,
    ) -> tuple[T, int]:
        """`ask(messages)` with the messages of the first trim level that fits the model's
        context; on a context-length refusal, once more one level further. (result, level)."""
        room = self._room(completion_tokens)
        messages, level = fit(build, room)
        try:
            return ask(messages), level
        except PromptTooLong:
            if level == len(TRIMS) - 1:
                raise
            messages, level = fit(build, room, start=level + 1)
            return ask(messages), level

    # --- propose: analysis → generate --------------------------------------------------------

    def propose(
        self, parent: ParentView, improvements: Sequence[Improvement], *, node_id: int, seed: int
    ) -> Proposal:
        conversation = MetaConversation(self.client, self.config, node_id=node_id)
        helpers = helpers_context(parent.source)
        shown: dict[str, Any] = {}

        def build_analysis(trim: Trim) -> tuple[list[dict], int]:
            config = trim.evidence_config(self.config)
            evidence = select_evidence(parent.evaluation, parent.evidence_dir, seed=seed,
                                       config=config, image_roots=self.image_roots)
            images = [img.path for img in evidence.images()] if self.vision else []
            prompt = render_meta(
                "meta_analysis", self.context, helpers=helpers if trim.helpers else "",
                task_description=self.task_description, parent=_parent_vars(parent, config),
                evidence=evidence.to_prompt(),
                image_labels=[img.label for img in evidence.images()] if self.vision else [],
                text_only=not self.vision,
                evidence_trimmed=trim.label, improvements=improvements_context(improvements, config),
                show_ideas=trim.ideas, schema=FEEDBACK_SCHEMA,
            )
            shown["evidence"] = evidence
            return analysis_messages(self.system, prompt, images), len(images)

        analysis_note: dict[str, Any]
        try:
            (feedback, repairs), level = self._ask_fitted(
                conversation, build_analysis, lambda m: analyse(conversation, m),
                completion_tokens=self.config.analysis_max_tokens,
            )
            analysis_note = {"source": "llm", "repairs": repairs, "trim": TRIMS[level].label}
        except (UnusableReply, PromptTooLong) as exc:
            # An unusable analysis costs the step its LLM diagnosis, not its child: the rules
            # read the same evidence, and the generate call still gets a diagnosis to act on.
            feedback = _rule_based(parent, seed=seed, config=self.config)
            analysis_note = {"source": "rule-based", "why": str(exc)[:500]}
        evidence = shown.get("evidence")

        def build_generate(trim: Trim) -> tuple[list[dict], int]:
            config = trim.evidence_config(self.config)
            prompt = render_meta(
                "meta_generate", self.context, helpers=helpers if trim.helpers else "",
                task_description=self.task_description, parent=_parent_vars(parent, config),
                feedback=feedback, improvements=improvements_context(improvements, config),
                show_ideas=trim.ideas,
            )
            return [system_message(self.system), user_message(prompt)], 0

        (source, summary), _ = self._ask_fitted(
            conversation, build_generate,
            lambda m: self._program(conversation, m, purpose="generate",
                                    fallback=_top_suggestion(feedback)),
            completion_tokens=self.config.generate_max_tokens,
        )
        diagnosis = {
            **feedback,
            "analysis": analysis_note,
            "evidence": [
                {"task_id": t.task_id, "outcome": t.outcome, "score": t.score}
                for t in (evidence.trajectories if evidence is not None else ())
            ],
        }
        return Proposal(source, summary, diagnosis=diagnosis, usage=conversation.usage.to_dict())

    # --- repair -------------------------------------------------------------------------------

    def repair(
        self, source: str, exam_report: Mapping[str, Any], attempt: int, *, node_id: int, seed: int
    ) -> Proposal:
        conversation = MetaConversation(self.client, self.config, node_id=node_id)
        failing = exam_report.get("failing_input")
        helpers = helpers_context(source)

        def build(trim: Trim) -> tuple[list[dict], int]:
            config = trim.evidence_config(self.config)
            prompt = render_meta(
                "meta_repair", self.context, helpers=helpers if trim.helpers else "",
                source=clip(source, config.source_chars), attempt=attempt,
                report=_report_view(exam_report),
                failing_input=clip(json.dumps(failing, indent=2, ensure_ascii=False, default=str),
                                   20_000 if trim.observation_chars is None else trim.observation_chars)
                if failing else "",
            )
            return [system_message(self.system), user_message(prompt)], 0

        fallback = f"repair: fix {exam_report.get('failed_check') or 'the failed exam check'}"
        (fixed, summary), _ = self._ask_fitted(
            conversation, build,
            lambda m: self._program(conversation, m, purpose=f"repair-{attempt}", fallback=fallback),
            completion_tokens=self.config.generate_max_tokens,
        )
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
        messages = [system_message(self.system), user_message(prompt)]
        source, summary = self._program(
            conversation, messages, purpose="initialize",
            fallback="initial program written from the task description",
        )
        return Proposal(source, summary, diagnosis={}, usage=conversation.usage.to_dict())

    # --- shared -------------------------------------------------------------------------------

    def _program(
        self, conversation: MetaConversation, messages: list[dict], *, purpose: str, fallback: str
    ) -> tuple[str, str]:
        def parse(text: str) -> tuple[str, str]:
            return extract_program(text), extract_summary(text, fallback)

        return conversation.ask(
            messages, parse, expected="program", purpose=purpose, max_tokens=self.config.generate_max_tokens
        )


def _parent_vars(parent: ParentView, config: MetaConfig) -> dict[str, Any]:
    return {"node_id": parent.node_id, "score": parent.score, "n_evals": parent.n_evals,
            "source": clip(parent.source, config.source_chars)}


def _rule_based(parent: ParentView, *, seed: int, config: MetaConfig) -> dict[str, Any]:
    """The offline mutator's rule-based diagnosis, without its mutation (none was made)."""
    mutation = {"kind": "none", "summary": "act on the weakest categories and the issues above"}
    feedback = rule_based_diagnosis(parent, mutation, seed=seed, config=config)
    return {k: v for k, v in feedback.items() if k not in ("mutation", "evidence")}


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
