"""The LLM meta agent: analysis → generate for a new child, repair after a failed
quick exam, initialize from nothing. Every call goes through the `meta` role of `LLMClient`,
which writes the run's ledger; each proposal also carries its own usage tally.

Built to survive small local models: prompts are fitted to the role's `context_tokens`, images
are left out for a role with `vision = false`, and an analysis the model cannot get into shape
falls back to the rule-based diagnosis (recorded under the diagnosis' "analysis" key) instead of
costing the step its child. The compact prompt profile (automemo.meta.llm.compact) replaces analysis
→ generate, and the repair prompt, by one short call each asking for one small edit.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

from automemo.contract import Budget
from automemo.evaluation.evidence import read_evidence
from automemo.llm import assistant_message, system_message, user_message
from automemo.meta.llm.analysis import FEEDBACK_SCHEMA, analyse, analysis_messages
from automemo.meta.base import MetaAgent, Proposal
from automemo.meta.context import GenerationContext, ParentView, ParsedSource, RepairContext, estimate_text_tokens
from automemo.meta.llm.codeblock import check_program, extract_program, extract_summary, program_blocks
from automemo.meta.config import MetaConfig
from automemo.meta.llm.conversation import MetaConversation, PromptTooLong, UnusableReply
from automemo.meta.diagnosis import rule_based_diagnosis
from automemo.meta.evidence import clip, select_evidence
from automemo.meta.llm.compact import example_edit, profile_for, shown_source, tunable_lines, weak_spots
from automemo.meta.llm.fitting import TRIMS, PromptRoom, Trim, estimate_tokens, fit, prompt_room
from automemo.meta.llm.edits import EditError, edited
from automemo.meta.llm.prompts import (contract_context, helpers_context, improvements_context, memolib_api,
                                   inspirations_context, render_meta, siblings_context)
from automemo.meta.llm.samples import data_samples
from automemo.meta.source.syntax import normalised
from automemo.paths import list_seeds
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
        seeds_dir: str | Path | None = None,
        benchmark: Mapping[str, Any] | None = None,
    ) -> None:
        """`client` is an `automemo.llm.LLMClient` with the `meta` role configured;
        `task_description` tells the prompts what the agent using the memory does; `image_roots`
        are where evidence images resolve (the run's episode store, also where the data excerpts
        come from); `seeds_dir` holds seed programs shown as inspiration; `benchmark` is the
        benchmark's `describe()` (its metrics state the scoring rule)."""
        self.client = client
        self.config = config
        self.task_description = task_description
        self.context = contract_context(budget, limits, benchmark=benchmark)
        self.image_roots = tuple(image_roots)
        self.seeds_dir = seeds_dir
        self.system = render("meta_system")

    # --- the model's limits -----------------------------------------------------------------

    def _role(self) -> Any:
        config = getattr(self.client, "config", None)
        return config.role("meta") if config is not None else None

    @property
    def vision(self) -> bool:
        """Images go out unless the role is text-only by config, or its server refused them."""
        vision = getattr(self.client, "vision", None)
        if callable(vision):
            return vision("meta")
        role = self._role()
        return True if role is None else role.vision

    @property
    def profile(self) -> str:
        """"full" or "compact": the configured prompt profile, "auto" resolved from the role's
        declared context size."""
        role = self._role()
        return profile_for(self.config.llm.prompt_profile, role.context_tokens if role is not None else 0)

    def _room(self, completion_tokens: int) -> PromptRoom:
        role = self._role()
        return prompt_room(role.context_tokens if role is not None else 0, completion_tokens)

    def _ask_fitted(
        self, conversation: MetaConversation, build: Callable[[Trim], tuple[list[dict], int]],
        ask: Callable[[list[dict]], T], *, completion_tokens: int, start: int = 0,
    ) -> tuple[T, int]:
        """`ask(messages)` with the messages of the first trim level from `start` that fits the
        model's context; on a context-length refusal, once more one level further. (result, level)."""
        room = self._room(completion_tokens)
        messages, level = fit(build, room, start=start)
        try:
            return ask(messages), level
        except PromptTooLong:
            if level == len(TRIMS) - 1:
                raise
            messages, level = fit(build, room, start=level + 1)
            return ask(messages), level

    # --- what the tree tells the agent ----------------------------------------------------------

    def _contract_for(self, parent: ParentView) -> dict[str, Any]:
        """The shared contract variables with excerpts of this run's data (an update episode from
        the episode store, a retrieve task from the parent's evidence)."""
        retrieve_episode = None
        if parent.evidence_dir:
            try:
                tasks = read_evidence(parent.evidence_dir).tasks
                retrieve_episode = next((t.episode for t in tasks if t.episode is not None), None)
            except (FileNotFoundError, ValueError, KeyError):
                retrieve_episode = None
        samples = data_samples(self.image_roots, retrieve_episode, self.config.llm.sample_chars)
        return {**self.context, "samples": samples}

    def _seed_inspirations(self, context: GenerationContext) -> list[tuple[str, str]]:
        """Seed programs neither in the tree nor being written by another action in flight, in
        an order drawn from the context's seed (children of one parent see different ones)."""
        if self.seeds_dir is None or not Path(self.seeds_dir).is_dir():
            return []
        known = {p.normalised for p in context.tree_programs}
        known |= {normalised(s) for s in context.siblings_in_flight}
        seeds = [(p.stem, p.read_text()) for p in list_seeds(self.seeds_dir)]
        fresh = [(name, source) for name, source in seeds if normalised(source) not in known]
        random.Random(context.seed).shuffle(fresh)
        return fresh

    # --- propose: analysis → generate, one conversation ---------------------------------------

    def propose(self, context: GenerationContext) -> Proposal:
        if self.profile == "compact":
            return self._propose_compact(context)
        parent, improvements, seed = context.parent, context.improvements, context.seed
        conversation = MetaConversation(self.client, self.config, node_id=context.node_id)
        helpers = helpers_context(context.parsed)
        contract = self._contract_for(parent)
        shown: dict[str, Any] = {}

        def build_analysis(trim: Trim) -> tuple[list[dict], int]:
            config = trim.evidence_config(self.config)
            evidence = select_evidence(parent.evaluation, parent.evidence_dir, seed=seed,
                                       config=config, image_roots=self.image_roots)
            images = [img.path for img in evidence.images()] if self.vision else []
            prompt = render_meta(
                "meta_analysis", contract, helpers=helpers if trim.helpers else "", memolib_api=memolib_api(described=trim.memolib_notes),
                task_description=self.task_description, parent=_parent_vars(parent, config),
                evidence=evidence.to_prompt(),
                image_labels=[img.label for img in evidence.images()] if self.vision else [],
                text_only=not self.vision,
                evidence_trimmed=trim.label, improvements=improvements_context(improvements, config),
                show_ideas=trim.ideas, schema=FEEDBACK_SCHEMA,
            )
            shown["evidence"] = evidence
            messages = analysis_messages(self.system, prompt, images)
            shown["analysis"] = (messages, len(images))
            return messages, len(images)

        analysis_note: dict[str, Any]
        prefix: tuple[list[dict], int, int] | None = None  # (messages, images, trim level)
        try:
            (feedback, repairs), level = self._ask_fitted(
                conversation, build_analysis, lambda m: analyse(conversation, m),
                completion_tokens=self.config.llm.analysis_max_tokens,
            )
            analysis_note = {"source": "llm", "repairs": repairs, "trim": TRIMS[level].label}
            messages, images = shown["analysis"]
            # The generate call continues this conversation: the model sees the evidence it
            # diagnosed, and a server can reuse the cached prefix.
            prefix = ([*messages, assistant_message(conversation.last_text)], images, level)
        except (UnusableReply, PromptTooLong) as exc:
            # An unusable analysis costs the step its LLM diagnosis, not its child: the rules
            # read the same evidence, and the generate call still gets a diagnosis to act on.
            feedback = _rule_based(parent, seed=seed, config=self.config)
            analysis_note = {"source": "rule-based", "why": str(exc)[:500]}
        evidence = shown.get("evidence")
        siblings = siblings_context(parent.children, self.config)
        categories = dict(parent.evaluation.per_category) if parent.evaluation is not None else {}
        inspirations = inspirations_context(context.scored, parent.node_id, categories, self.config,
                                            self._seed_inspirations(context))

        def build_generate(trim: Trim) -> tuple[list[dict], int]:
            config = trim.evidence_config(self.config)
            level = TRIMS.index(trim)
            # Inspirations are the largest optional part: all of them at the first level, one
            # cut to half past it, none once the evidence itself is being cut hard.
            shown_inspirations = inspirations if level == 0 else [
                {**i, "source": i["source"][: self.config.llm.inspiration_chars // 2]}
                for i in inspirations[:1]] if level == 1 else []
            variables = dict(
                helpers=helpers if trim.helpers else "", memolib_api=memolib_api(described=trim.memolib_notes), task_description=self.task_description,
                parent=_parent_vars(parent, config), feedback=feedback,
                improvements=improvements_context(improvements, config), show_ideas=trim.ideas,
                siblings=siblings, inspirations=shown_inspirations,
                edit_mode=self.config.llm.edit_mode,
            )
            if prefix is not None and level <= prefix[2]:
                prompt = render_meta("meta_generate", contract, in_conversation=True, **variables)
                return [*prefix[0], user_message(prompt)], prefix[1]
            prompt = render_meta("meta_generate", contract, in_conversation=False, **variables)
            return [system_message(self.system), user_message(prompt)], 0

        how: dict[str, str] = {}
        parse_child = self._child_parser(context.parsed, feedback, how)

        (source, summary), _ = self._ask_fitted(
            conversation, build_generate,
            lambda m: self._generate(conversation, m, parse_child, parent.source),
            completion_tokens=self.config.llm.generate_max_tokens,
            # From the analysis' own level: the conversation there, standalone prompts past it.
            start=prefix[2] if prefix is not None else 0,
        )
        diagnosis = {
            **feedback,
            "analysis": analysis_note,
            "generate": {"edit_mode": self.config.llm.edit_mode, "answer": how.get("answer", ""),
                         "in_conversation": prefix is not None,
                         "inspirations": [i["name"] for i in inspirations]},
            "evidence": [
                {"task_id": t.task_id, "outcome": t.outcome, "score": t.score}
                for t in (evidence.trajectories if evidence is not None else ())
            ],
        }
        return Proposal(source, summary, diagnosis=diagnosis, usage=conversation.usage.to_dict(), author="llm")

    def _child_parser(self, parent: ParsedSource, feedback: Mapping[str, Any],
                      how: dict[str, str]) -> Callable[[str], tuple[str, str]]:
        """Reads a generate answer: edits of the parent when it holds any (in either mode: a cut
        rewrite is re-asked for edits; see `edited`), else the whole program."""
        def parse_child(text: str) -> tuple[str, str]:
            summary = extract_summary(text, _top_suggestion(feedback))
            child = edited(parent.source, text, program=parent)
            if child is not None:
                source, n_edits = child
                check_program(source)
                how["answer"] = f"{n_edits} edit(s)"
                return (source if source.endswith("\n") else source + "\n"), summary
            if self.config.llm.edit_mode == "diff" and not program_blocks(text):
                raise EditError("the reply holds no SEARCH/REPLACE edit")
            source = extract_program(text)
            how["answer"] = "whole program"
            return source, summary

        return parse_child

    def _generate(self, conversation: MetaConversation, messages: list[dict],
                  parse: Callable[[str], T], parent_source: str) -> T:
        """The generate call. An answer that does not parse or apply is re-asked once: for the
        whole program when it fits the completion cap, else (and always in the compact profile)
        for a short edit; an answer cut at the cap is re-asked for a short edit."""
        whole_fits = (self.profile == "full" and
                      _program_tokens(parent_source) <= self._completion_room(messages))
        return conversation.ask(messages, parse, expected="program" if whole_fits else "diff",
                                purpose="generate", max_tokens=self.config.llm.generate_max_tokens,
                                temperature=self.config.llm.generate_temperature, after_cut="diff")

    def _completion_room(self, messages: list[dict]) -> int:
        """Completion tokens a call can have: the cap, and in a declared context what the prompt
        leaves of it."""
        role = self._role()
        context = role.context_tokens if role is not None else 0
        room = self.config.llm.generate_max_tokens
        return min(room, context - estimate_tokens(messages)) if context else room

    def _propose_compact(self, context: GenerationContext) -> Proposal:
        """One generate call with the compact prompt (see automemo.meta.llm.compact); the diagnosis
        is the rule-based one."""
        parent, seed = context.parent, context.seed
        conversation = MetaConversation(self.client, self.config, node_id=context.node_id)
        feedback = _rule_based(parent, seed=seed, config=self.config)
        # shown (and recorded) only where an edit is asked for
        example = (example_edit(context.parsed, seed, self.config.offline.step_fraction)
                   if self.config.llm.edit_mode == "diff" else None)
        prompt = render_meta(
            "meta_generate_compact", self.context, task_description=self.task_description,
            parent={**_parent_vars(parent, self.config),
                    "source": shown_source(context.parsed, self.config.llm.source_chars)},
            tunables=tunable_lines(context.parsed), weak=weak_spots(parent),
            siblings=siblings_context(parent.children, self.config),
            example=example, edit_mode=self.config.llm.edit_mode,
        )
        messages = [system_message(self.system), user_message(prompt)]
        how: dict[str, str] = {}
        source, summary = self._generate(conversation, messages,
                                         self._child_parser(context.parsed, feedback, how), parent.source)
        diagnosis = {**feedback, "analysis": {"source": "rule-based", "why": "compact prompt profile"},
                     "generate": {"edit_mode": self.config.llm.edit_mode, "answer": how.get("answer", ""),
                                  "profile": "compact", "prompt_tokens_estimate": estimate_tokens(messages),
                                  # a small model often answers with the worked example itself:
                                  # record it, so that a measurement can tell its own edits apart
                                  "example": example.says if example else None,
                                  "copied_example": example is not None and source == parent.source.replace(
                                      example.search, example.replace, 1)}}
        return Proposal(source, summary, diagnosis=diagnosis, usage=conversation.usage.to_dict(), author="llm")

    # --- repair -------------------------------------------------------------------------------

    def repair(self, context: RepairContext) -> Proposal:
        # The failing program is read once here: it is not the parent the context holds.
        program = ParsedSource.of(context.source)
        if self.profile == "compact":
            return self._repair_compact(context, program)
        source, exam_report, attempt = context.source, context.exam_report, context.attempt
        conversation = MetaConversation(self.client, self.config, node_id=context.node_id)
        failing = exam_report.get("failing_input")
        helpers = helpers_context(program)

        def build(trim: Trim) -> tuple[list[dict], int]:
            config = trim.evidence_config(self.config)
            prompt = render_meta(
                "meta_repair", self.context, helpers=helpers if trim.helpers else "", memolib_api=memolib_api(described=trim.memolib_notes),
                source=clip(source, config.llm.source_chars), attempt=attempt,
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
            completion_tokens=self.config.llm.generate_max_tokens,
        )
        return Proposal(
            fixed,
            summary,
            diagnosis={"repair_of": exam_report.get("failed_check"), "attempt": attempt},
            usage=conversation.usage.to_dict(),
            author="llm",
        )

    def _repair_compact(self, context: RepairContext, program: ParsedSource) -> Proposal:
        """The compact profile's repair: the program, the failed check and the traceback's end, in
        one short call asking for one edit of the failing program (a whole program is taken too)."""
        exam_report, attempt = context.exam_report, context.attempt
        conversation = MetaConversation(self.client, self.config, node_id=context.node_id)
        prompt = render_meta("meta_repair_compact", self.context, attempt=attempt,
                             source=shown_source(program, self.config.llm.source_chars),
                             report=_report_view(exam_report))
        failed = exam_report.get("failed_check") or "the failed exam check"
        how: dict[str, str] = {}
        fixed, summary = conversation.ask(
            [system_message(self.system), user_message(prompt)],
            self._child_parser(program, {"suggestions": [{"change": f"repair: fix {failed}"}]}, how),
            expected="diff", purpose=f"repair-{attempt}", max_tokens=self.config.llm.generate_max_tokens,
            # sampled: at the role's temperature 0 a small model gave the same unusable answer to
            # all three attempts of one failed exam
            temperature=self.config.llm.generate_temperature, after_cut="diff")
        return Proposal(fixed, summary, usage=conversation.usage.to_dict(), author="llm",
                        diagnosis={"repair_of": exam_report.get("failed_check"), "attempt": attempt,
                                   "profile": "compact", "answer": how.get("answer", "")})

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
        return Proposal(source, summary, diagnosis={}, usage=conversation.usage.to_dict(), author="llm")

    # --- shared -------------------------------------------------------------------------------

    def _program(
        self, conversation: MetaConversation, messages: list[dict], *, purpose: str, fallback: str
    ) -> tuple[str, str]:
        def parse(text: str) -> tuple[str, str]:
            return extract_program(text), extract_summary(text, fallback)

        return conversation.ask(
            messages, parse, expected="program", purpose=purpose, max_tokens=self.config.llm.generate_max_tokens
        )


def _parent_vars(parent: ParentView, config: MetaConfig) -> dict[str, Any]:
    return {"node_id": parent.node_id, "score": parent.score, "n_evals": parent.n_evals,
            "source": clip(parent.source, config.llm.source_chars)}


def _program_tokens(source: str) -> int:
    """Completion tokens a whole program of about `source`'s size needs, with some room."""
    return int(estimate_text_tokens(source) * 1.15) + 64


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
