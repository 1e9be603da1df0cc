"""The settings of pseudo-questions (`[benchmark.pseudo]`), read when `benchmark.questions` is
"self" or "llm"."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

QUESTION_SOURCES = ("benchmark", "self", "llm", "feedback")
QuestionSource = Literal["benchmark", "self", "llm", "feedback"]


def _default_kinds() -> dict[str, float]:
    return {"context": 1.0}


def _default_fit_kinds() -> dict[str, float]:
    return {"refer": 1.0, "cloze": 1.0, "date": 1.0, "picture": 1.0}


def _default_guard_kinds() -> dict[str, float]:
    return {"refer": 1.0, "cloze": 1.0, "date": 1.0, "picture": 1.0}


@dataclass(frozen=True)
class PseudoQuestionConfig:
    # Pseudo-questions per session of a conversation (a conversation of 12 sessions gets 60 at
    # 5.0), at most per_conversation each, at most max_questions in all (shared among the
    # conversations in proportion): about as many as a labelled release asks of its dialogues
    # (Mem-Gallery ~57 per scenario), so a label-free search costs what a labelled one does.
    per_session: float = 5.0
    per_conversation: int = 60
    max_questions: int = 600
    # The offline kinds the search is scored on, each with its share of a conversation's
    # questions (docs/label-free.md says what each captures); a kind with no candidates in a
    # conversation leaves its share to the others; a kind left out is off. "context" (the inverse
    # cloze task) alone: on the dev data its scores ranked 45 programs as the labelled questions
    # did (Spearman 0.97), where every kind whose answers are found by shared words ranked them
    # against (-0.4): those favour lexical search by construction.
    kinds: dict[str, float] = field(default_factory=_default_kinds)
    # The kinds a fitted ranking stage is fitted on: other kinds than the search is scored on, so
    # that a fit that learnt one writer's quirks does not look good on that writer's questions
    # (the stage is composed only when it gains on the scored kinds). Empty: fitted on the
    # scored questions themselves.
    fit_kinds: dict[str, float] = field(default_factory=_default_fit_kinds)
    # The kinds a selection must not lose on (offline questions only): as many more questions of
    # the train conversations as are scored, from the candidates the fitting draw leaves, asked
    # and scored but not counted in the mean; their Recall@k is the guard metric guard_recall@k,
    # on which a candidate may not trail the bar by more than one paired SE. On the dev data
    # hybrid_rag with windows of adjacent turns trails hybrid_rag on them by 0.24 (SE 0.03), as on
    # the real questions; they favour lexical matching, so they also hold a dense program back
    # against a lexical one (MuRAG vs BM25: -0.41, where the real questions give MuRAG +0.04;
    # docs/label-free.md). A kind the search is scored on is not guarded again. Empty: none.
    guard_kinds: dict[str, float] = field(default_factory=_default_guard_kinds)
    # Share of a conversation's turns taken out of the search's memory to be the questions'
    # sources (a later message asking what the memory holds; docs/label-free.md). Turns that
    # share a picture stay.
    held_out: float = 0.2
    # Fixes which candidates are drawn (and which sessions the LLM is shown), with the run seed.
    seed: int = 0
    # questions = "llm": the LLM role that writes them (on the run's ledger, its caps apply), the
    # questions asked per call and the sessions shown in one call (the later one and an earlier one).
    llm_role: Literal["meta", "agent", "judge", "memo"] = "meta"
    llm_questions_per_call: int = 6

    @property
    def guarded_kinds(self) -> dict[str, float]:
        """The guard kinds that are asked: weighed above 0 and not a kind the search is scored on."""
        return {k: w for k, w in self.guard_kinds.items() if w > 0 and self.kinds.get(k, 0) <= 0}

    def __post_init__(self) -> None:
        from automemo.configtools import ConfigError
        from automemo.benchmarks.pseudo.offline import WRITERS

        for name, kinds in (("kinds", self.kinds), ("fit_kinds", self.fit_kinds), ("guard_kinds", self.guard_kinds)):
            unknown = sorted(set(kinds) - set(WRITERS))
            if unknown:
                raise ConfigError(f"benchmark.pseudo.{name}: unknown kind(s) {', '.join(unknown)}; "
                                  f"the offline kinds are {', '.join(WRITERS)}")
            if any(w < 0 for w in kinds.values()):
                raise ConfigError(f"benchmark.pseudo.{name}: weights must be >= 0")
        if not any(w > 0 for w in self.kinds.values()):
            raise ConfigError("benchmark.pseudo.kinds: at least one kind needs a weight above 0")
        if not 0.0 <= self.held_out < 0.5:
            raise ConfigError(f"benchmark.pseudo.held_out must be within [0, 0.5), got {self.held_out}")
        if self.per_session <= 0 or self.per_conversation < 1 or self.max_questions < 1:
            raise ConfigError("benchmark.pseudo: per_session must be > 0, per_conversation and "
                              "max_questions at least 1")
        if self.llm_questions_per_call < 1:
            raise ConfigError("benchmark.pseudo.llm_questions_per_call must be at least 1")
