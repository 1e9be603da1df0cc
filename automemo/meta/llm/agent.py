"""The LLM meta agent: analysis → generate for a new child, repair after a failed
quick exam, initialize from nothing. Every call goes through the `meta` role of `LLMClient`,
which writes the run's ledger; each proposal also carries its own usage tally.

Built to survive small local models: prompts are fitted to the role's `context_tokens`, images
are left out for a role with `vision = false`, and an analysis the model cannot get into shape
falls back to the rule-based diagnosis (recorded under the diagnosis' "analysis" key) instead of
costing the step its child. What a propose and a repair send is the prompt profile's
(automemo.meta.llm.profiles: full, or compact for small models); the agent holds what the
profiles share: the client, the contract, fitting prompts to the context, reading replies.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Sequence, TypeVar

from automemo.contract import Budget
from automemo.evaluation.evidence import read_evidence
from automemo.llm import system_message, user_message
from automemo.meta.base import MetaAgent, Proposal
from automemo.meta.config import MetaConfig
from automemo.llm.tokens import estimate_tokens
from automemo.meta.context import GenerationContext, ParentView, ParsedSource, RepairContext
from automemo.meta.llm.codeblock import check_program, extract_program, extract_summary, program_blocks
from automemo.meta.llm.compact import profile_for
from automemo.meta.llm.conversation import MetaConversation, PromptTooLong
from automemo.meta.llm.edits import EditError, edited
from automemo.meta.llm.prompt_trimming import TRIMS, PromptRoom, Trim, estimate_prompt_tokens, fit, prompt_room
from automemo.meta.llm.profiles import PROFILES, PromptProfile
from automemo.meta.llm.prompts import contract_context, render_meta
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
        question_time_keys: Collection[str] = (),
    ) -> None:
        """`client` is an `automemo.llm.LLMClient` with the `meta` role configured;
        `task_description` tells the prompts what the agent using the memory does; `image_roots`
        are where evidence images resolve (the run's episode store, also where the data excerpts
        come from); `seeds_dir` holds seed programs shown as inspiration; `benchmark` is the
        benchmark's `describe()` (its metrics state the scoring rule); `question_time_keys` the
        metadata keys it declares known at question time (a data excerpt shows what `retrieve`
        will see, no more, no less)."""
        self.client = client
        self.config = config
        self.task_description = task_description
        self.budget = budget
        self.contract = contract_context(budget, limits, benchmark=benchmark)
        self.image_roots = tuple(image_roots)
        self.seeds_dir = seeds_dir
        self.question_time_keys = frozenset(question_time_keys)
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
    def profile(self) -> PromptProfile:
        """The configured prompt profile, "auto" resolved from the role's declared context size."""
        role = self._role()
        return PROFILES[profile_for(self.config.llm.prompt_profile, role.context_tokens if role is not None else 0)]

    def _room(self, completion_tokens: int) -> PromptRoom:
        role = self._role()
        return prompt_room(role.context_tokens if role is not None else 0, completion_tokens)

    def ask_fitted(
        self, conversation: MetaConversation, build: Callable[[Trim], tuple[list[dict], int]],
        ask: Callable[[list[dict]], T], *, completion_tokens: int, start: int = 0,
    ) -> tuple[T, int]:
        """`ask(messages)` with the messages of the first trim level from `start` that fits the
        model's context; on a context-length refusal, again one level further, until the last
        level (a refusal costs no completion; the estimate of an unknown context is a guess and
        the fixed part of the prompt grows with memolib). (result, level)."""
        room = self._room(completion_tokens)
        messages, level = fit(build, room, start=start)
        while True:
            try:
                return ask(messages), level
            except PromptTooLong:
                if level == len(TRIMS) - 1:
                    raise
                messages, level = fit(build, room, start=level + 1)

    # --- what the tree tells the agent ----------------------------------------------------------

    def contract_for(self, parent: ParentView) -> dict[str, Any]:
        """The shared contract variables with excerpts of this run's data (an update episode from
        the episode store, a retrieve task from the parent's evidence)."""
        retrieve_episode = None
        if parent.evidence_dir:
            try:
                tasks = read_evidence(parent.evidence_dir).tasks
                retrieve_episode = next((t.episode for t in tasks if t.episode is not None), None)
            except (FileNotFoundError, ValueError, KeyError):
                retrieve_episode = None
        samples = data_samples(self.image_roots, retrieve_episode, self.config.llm.sample_chars,
                               self.question_time_keys, self.budget.to_dict())
        return {**self.contract, "samples": samples}

    def seed_inspirations(self, context: GenerationContext) -> list[tuple[str, str]]:
        """Seed programs neither in the tree nor being written by another action in flight, in
        an order drawn from the context's seed (children of one parent see different ones)."""
        if self.seeds_dir is None or not Path(self.seeds_dir).is_dir():
            return []
        known = {context.parsed.normalised if s == context.parsed.source else normalised(s)
                 for s in context.tree_sources}
        known |= {normalised(s) for s in context.siblings_in_flight}
        seeds = [(p.stem, p.read_text()) for p in list_seeds(self.seeds_dir)]
        fresh = [(name, source) for name, source in seeds if normalised(source) not in known]
        random.Random(context.seed).shuffle(fresh)
        return fresh

    # --- propose: analysis → generate, one conversation ---------------------------------------

    def propose(self, context: GenerationContext) -> Proposal:
        return self.profile.propose(self, context)

    def child_parser(self, parent: ParsedSource, feedback: Mapping[str, Any],
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

    def generate(self, conversation: MetaConversation, messages: list[dict],
                  parse: Callable[[str], T], parent_source: str) -> T:
        """The generate call. An answer that does not parse or apply is re-asked once: for the
        whole program when it fits the completion cap, else (and always in the compact profile)
        for a short edit; an answer cut at the cap is re-asked for a short edit."""
        whole_fits = (self.profile.whole_program_retry and
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
        return min(room, context - estimate_prompt_tokens(messages)) if context else room

    # --- repair -------------------------------------------------------------------------------

    def repair(self, context: RepairContext) -> Proposal:
        # The failing program is read once here: it is not the parent the context holds.
        return self.profile.repair(self, context, ParsedSource.of(context.source))

    # --- initialize ---------------------------------------------------------------------------

    def initialize(self, task_description: str, *, node_id: int, seed: int) -> Proposal:
        conversation = MetaConversation(self.client, self.config, node_id=node_id)
        prompt = render_meta(
            "meta_initialize", self.contract, task_description=task_description or self.task_description
        )
        messages = [system_message(self.system), user_message(prompt)]
        source, summary = self.program(
            conversation, messages, purpose="initialize",
            fallback="initial program written from the task description",
        )
        return Proposal(source, summary, diagnosis={}, usage=conversation.usage.to_dict(), author="llm")

    # --- shared -------------------------------------------------------------------------------

    def program(
        self, conversation: MetaConversation, messages: list[dict], *, purpose: str, fallback: str
    ) -> tuple[str, str]:
        def parse(text: str) -> tuple[str, str]:
            return extract_program(text), extract_summary(text, fallback)

        return conversation.ask(
            messages, parse, expected="program", purpose=purpose, max_tokens=self.config.llm.generate_max_tokens
        )


def _program_tokens(source: str) -> int:
    """Completion tokens a whole program of about `source`'s size needs, with some room."""
    return int(estimate_tokens(source) * 1.15) + 64


def _top_suggestion(feedback: Mapping[str, Any]) -> str:
    suggestions = feedback.get("suggestions") or []
    return suggestions[0]["change"][:200] if suggestions else "child written from the analysis"
