"""The LLM meta agent's prompt profiles, one object each: what a propose and a repair send.

- full: analysis, then generate in the same conversation, with the whole contract, evidence,
  inspirations and earlier children, fitted to the model's context by trim levels; a repair
  shows the program, the exam report and the failing input;
- compact (automemo.meta.llm.compact): one short call each asking for one small edit, for small
  models and small contexts; the diagnosis is the rule-based one.

A profile is handed the agent (`Asker`: the client, the config, the contract and the reply
parsing the profiles share) and the call's context; it keeps nothing itself.
"""

from __future__ import annotations

import abc
import json
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping, Protocol, Sequence, TypeVar

from automemo.llm import assistant_message, system_message, user_message
from automemo.meta.base import Proposal
from automemo.meta.config import MetaConfig
from automemo.meta.context import GenerationContext, ParentView, ParsedSource, RepairContext
from automemo.meta.rule_diagnosis import rule_based_diagnosis
from automemo.meta.evidence_excerpts import clip, select_evidence
from automemo.meta.llm.analysis import FEEDBACK_SCHEMA, analyse, analysis_messages
from automemo.meta.llm.compact import example_edit, shown_source, tunable_lines, weak_spots
from automemo.meta.llm.conversation import MetaConversation, PromptTooLong, UnusableReply
from automemo.meta.llm.prompt_trimming import TRIMS, Trim, estimate_prompt_tokens
from automemo.meta.llm.prompts import (cost_context, helpers_context, improvements_context, inspirations_context,
                                       memolib_api, render_meta, siblings_context)

T = TypeVar("T")


class Asker(Protocol):
    """What a profile uses of the LLM meta agent."""

    client: Any
    config: MetaConfig
    task_description: str
    contract: Mapping[str, Any]       # the contract's prompt variables (budget, limits, scoring rule)
    system: str
    image_roots: Sequence[Path]
    vision: bool

    def contract_for(self, parent: ParentView) -> dict[str, Any]: ...

    def ask_fitted(self, conversation: MetaConversation, build: Callable[[Trim], tuple[list[dict], int]],
                   ask: Callable[[list[dict]], T], *, completion_tokens: int, start: int = 0) -> tuple[T, int]: ...

    def seed_inspirations(self, context: GenerationContext) -> list[tuple[str, str]]: ...

    def child_parser(self, parent: ParsedSource, feedback: Mapping[str, Any],
                     how: dict[str, str]) -> Callable[[str], tuple[str, str]]: ...

    def generate(self, conversation: MetaConversation, messages: list[dict], parse: Callable[[str], T],
                 parent_source: str) -> T: ...

    def program(self, conversation: MetaConversation, messages: list[dict], *, purpose: str,
                fallback: str) -> tuple[str, str]: ...


class PromptProfile(abc.ABC):
    name: ClassVar[str]
    # A generate answer that does not parse or apply is re-asked for the whole program when that
    # fits the completion cap (else for a short edit).
    whole_program_retry: ClassVar[bool]

    @abc.abstractmethod
    def propose(self, agent: Asker, context: GenerationContext) -> Proposal:
        """A child of `context.parent`."""

    @abc.abstractmethod
    def repair(self, agent: Asker, context: RepairContext, program: ParsedSource) -> Proposal:
        """A fix of `program` (`context.source`, parsed), which failed its quick exam."""


class FullProfile(PromptProfile):
    name = "full"
    whole_program_retry = True

    def propose(self, agent: Asker, context: GenerationContext) -> Proposal:
        parent, improvements, seed = context.parent, context.improvements, context.seed
        conversation = MetaConversation(agent.client, agent.config, node_id=context.node_id)
        helpers = helpers_context(context.parsed)
        contract = agent.contract_for(parent)
        shown: dict[str, Any] = {}

        def build_analysis(trim: Trim) -> tuple[list[dict], int]:
            config = trim.evidence_config(agent.config)
            evidence = select_evidence(parent.evaluation, parent.evidence_dir, seed=seed,
                                       config=config, image_roots=agent.image_roots)
            images = [img.path for img in evidence.images()] if agent.vision else []
            prompt = render_meta(
                "meta_analysis", contract, helpers=helpers if trim.helpers else "", memolib_api=memolib_api(described=trim.memolib_notes),
                task_description=agent.task_description, parent=_parent_vars(parent, config),
                evidence=evidence.to_prompt(),
                image_labels=[img.label for img in evidence.images()] if agent.vision else [],
                text_only=not agent.vision,
                evidence_trimmed=trim.label, improvements=improvements_context(improvements, config),
                show_ideas=trim.ideas, schema=FEEDBACK_SCHEMA,
            )
            shown["evidence"] = evidence
            messages = analysis_messages(agent.system, prompt, images)
            shown["analysis"] = (messages, len(images))
            return messages, len(images)

        analysis_note: dict[str, Any]
        prefix: tuple[list[dict], int, int] | None = None  # (messages, images, trim level)
        try:
            (feedback, repairs), level = agent.ask_fitted(
                conversation, build_analysis, lambda m: analyse(conversation, m),
                completion_tokens=agent.config.llm.analysis_max_tokens,
            )
            analysis_note = {"source": "llm", "repairs": repairs, "trim": TRIMS[level].label}
            messages, images = shown["analysis"]
            # The generate call continues this conversation: the model sees the evidence it
            # diagnosed, and a server can reuse the cached prefix.
            prefix = ([*messages, assistant_message(conversation.last_text)], images, level)
        except (UnusableReply, PromptTooLong) as exc:
            # An unusable analysis costs the step its LLM diagnosis, not its child: the rules
            # read the same evidence, and the generate call still gets a diagnosis to act on.
            feedback = _rule_based(parent, seed=seed, config=agent.config)
            analysis_note = {"source": "rule-based", "why": str(exc)[:500]}
        evidence = shown.get("evidence")
        siblings = siblings_context(parent.children, agent.config)
        categories = dict(parent.evaluation.per_category) if parent.evaluation is not None else {}
        inspirations = inspirations_context(context.scored, parent.node_id, categories, agent.config,
                                            agent.seed_inspirations(context))

        def build_generate(trim: Trim) -> tuple[list[dict], int]:
            config = trim.evidence_config(agent.config)
            level = TRIMS.index(trim)
            # Inspirations are the largest optional part: all of them at the first level, one
            # cut to half past it, none once the evidence itself is being cut hard.
            shown_inspirations = inspirations if level == 0 else [
                {**i, "source": i["source"][: agent.config.llm.inspiration_chars // 2]}
                for i in inspirations[:1]] if level == 1 else []
            variables = dict(
                helpers=helpers if trim.helpers else "", memolib_api=memolib_api(described=trim.memolib_notes), task_description=agent.task_description,
                parent=_parent_vars(parent, config), feedback=feedback,
                improvements=improvements_context(improvements, config), show_ideas=trim.ideas,
                siblings=siblings, inspirations=shown_inspirations,
                edit_mode=agent.config.llm.edit_mode, cost=cost_context(context),
            )
            if prefix is not None and level <= prefix[2]:
                prompt = render_meta("meta_generate", contract, in_conversation=True, **variables)
                return [*prefix[0], user_message(prompt)], prefix[1]
            prompt = render_meta("meta_generate", contract, in_conversation=False, **variables)
            return [system_message(agent.system), user_message(prompt)], 0

        how: dict[str, str] = {}
        parse_child = agent.child_parser(context.parsed, feedback, how)

        (source, summary), _ = agent.ask_fitted(
            conversation, build_generate,
            lambda m: agent.generate(conversation, m, parse_child, parent.source),
            completion_tokens=agent.config.llm.generate_max_tokens,
            # From the analysis' own level: the conversation there, standalone prompts past it.
            start=prefix[2] if prefix is not None else 0,
        )
        diagnosis = {
            **feedback,
            "analysis": analysis_note,
            "generate": {"edit_mode": agent.config.llm.edit_mode, "answer": how.get("answer", ""),
                         "in_conversation": prefix is not None,
                         "inspirations": [i["name"] for i in inspirations]},
            "evidence": [
                {"task_id": t.task_id, "outcome": t.outcome, "score": t.score}
                for t in (evidence.trajectories if evidence is not None else ())
            ],
        }
        return Proposal(source, summary, diagnosis=diagnosis, usage=conversation.usage.to_dict(), author="llm")

    def repair(self, agent: Asker, context: RepairContext, program: ParsedSource) -> Proposal:
        source, exam_report, attempt = context.source, context.exam_report, context.attempt
        conversation = MetaConversation(agent.client, agent.config, node_id=context.node_id)
        failing = exam_report.get("failing_input")
        helpers = helpers_context(program)

        def build(trim: Trim) -> tuple[list[dict], int]:
            config = trim.evidence_config(agent.config)
            prompt = render_meta(
                "meta_repair", agent.contract, helpers=helpers if trim.helpers else "", memolib_api=memolib_api(described=trim.memolib_notes),
                source=clip(source, config.llm.source_chars), attempt=attempt,
                report=_report_view(exam_report),
                failing_input=clip(json.dumps(failing, indent=2, ensure_ascii=False, default=str),
                                   20_000 if trim.observation_chars is None else trim.observation_chars)
                if failing else "",
            )
            return [system_message(agent.system), user_message(prompt)], 0

        fallback = f"repair: fix {exam_report.get('failed_check') or 'the failed exam check'}"
        (fixed, summary), _ = agent.ask_fitted(
            conversation, build,
            lambda m: agent.program(conversation, m, purpose=f"repair-{attempt}", fallback=fallback),
            completion_tokens=agent.config.llm.generate_max_tokens,
        )
        return Proposal(
            fixed,
            summary,
            diagnosis={"repair_of": exam_report.get("failed_check"), "attempt": attempt},
            usage=conversation.usage.to_dict(),
            author="llm",
        )


class CompactProfile(PromptProfile):
    name = "compact"
    whole_program_retry = False

    def propose(self, agent: Asker, context: GenerationContext) -> Proposal:
        """One generate call with the compact prompt (see automemo.meta.llm.compact); the diagnosis
        is the rule-based one."""
        parent, seed = context.parent, context.seed
        conversation = MetaConversation(agent.client, agent.config, node_id=context.node_id)
        feedback = _rule_based(parent, seed=seed, config=agent.config)
        # shown (and recorded) only where an edit is asked for
        example = (example_edit(context.parsed, seed, agent.config.offline.step_fraction)
                   if agent.config.llm.edit_mode == "diff" else None)
        prompt = render_meta(
            "meta_generate_compact", agent.contract, task_description=agent.task_description,
            parent={**_parent_vars(parent, agent.config),
                    "source": shown_source(context.parsed, agent.config.llm.source_chars)},
            tunables=tunable_lines(context.parsed), weak=weak_spots(parent),
            siblings=siblings_context(parent.children, agent.config),
            example=example, edit_mode=agent.config.llm.edit_mode, cost=cost_context(context),
        )
        messages = [system_message(agent.system), user_message(prompt)]
        how: dict[str, str] = {}
        source, summary = agent.generate(conversation, messages,
                                         agent.child_parser(context.parsed, feedback, how), parent.source)
        diagnosis = {**feedback, "analysis": {"source": "rule-based", "why": "compact prompt profile"},
                     "generate": {"edit_mode": agent.config.llm.edit_mode, "answer": how.get("answer", ""),
                                  "profile": "compact", "prompt_tokens_estimate": estimate_prompt_tokens(messages),
                                  # a small model often answers with the worked example itself:
                                  # record it, so that a measurement can tell its own edits apart
                                  "example": example.says if example else None,
                                  "copied_example": example is not None and source == parent.source.replace(
                                      example.search, example.replace, 1)}}
        return Proposal(source, summary, diagnosis=diagnosis, usage=conversation.usage.to_dict(), author="llm")

    def repair(self, agent: Asker, context: RepairContext, program: ParsedSource) -> Proposal:
        """The compact profile's repair: the program, the failed check and the traceback's end, in
        one short call asking for one edit of the failing program (a whole program is taken too)."""
        exam_report, attempt = context.exam_report, context.attempt
        conversation = MetaConversation(agent.client, agent.config, node_id=context.node_id)
        prompt = render_meta("meta_repair_compact", agent.contract, attempt=attempt,
                             source=shown_source(program, agent.config.llm.source_chars),
                             report=_report_view(exam_report))
        failed = exam_report.get("failed_check") or "the failed exam check"
        how: dict[str, str] = {}
        fixed, summary = conversation.ask(
            [system_message(agent.system), user_message(prompt)],
            agent.child_parser(program, {"suggestions": [{"change": f"repair: fix {failed}"}]}, how),
            expected="diff", purpose=f"repair-{attempt}", max_tokens=agent.config.llm.generate_max_tokens,
            # sampled: at the role's temperature 0 a small model gave the same unusable answer to
            # all three attempts of one failed exam
            temperature=agent.config.llm.generate_temperature, after_cut="diff")
        return Proposal(fixed, summary, usage=conversation.usage.to_dict(), author="llm",
                        diagnosis={"repair_of": exam_report.get("failed_check"), "attempt": attempt,
                                   "profile": "compact", "answer": how.get("answer", "")})


PROFILES: Mapping[str, PromptProfile] = {p.name: p for p in (FullProfile(), CompactProfile())}
"""The profiles by the name `meta.llm.prompt_profile` gives ("auto" resolves to one of them)."""


def _parent_vars(parent: ParentView, config: MetaConfig) -> dict[str, Any]:
    return {"node_id": parent.node_id, "score": parent.score, "n_evals": parent.n_evals,
            "source": clip(parent.source, config.llm.source_chars)}


def _rule_based(parent: ParentView, *, seed: int, config: MetaConfig) -> dict[str, Any]:
    """The offline mutator's rule-based diagnosis, without its mutation (none was made)."""
    mutation = {"kind": "none", "summary": "act on the weakest categories and the issues above"}
    feedback = rule_based_diagnosis(parent, mutation, seed=seed, config=config)
    return {k: v for k, v in feedback.items() if k not in ("mutation", "evidence")}


def _report_view(report: Mapping[str, Any]) -> dict[str, Any]:
    """The exam report's fields the repair prompt shows, present even when the report lacks them."""
    return {
        "failed_check": report.get("failed_check"),
        "error": clip(str(report.get("error") or ""), 4_000),
        "traceback_tail": clip(str(report.get("traceback_tail") or ""), 8_000),
    }
