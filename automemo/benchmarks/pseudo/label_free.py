"""A conversation benchmark made label-free: its train split's questions replaced by
pseudo-questions written from the train conversations' own sessions, so that a search ranks,
fits (router, ranking stage) and selects without reading one labelled question.

The test split keeps the release's labelled questions where it has any: the held-out verdict then
scores the selection on real questions the search never read. Without any, the test
conversations get pseudo-questions of their own, written from their sessions alone.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from automemo.benchmarks.conversation.benchmark import ConversationBenchmark, guard_metric
from automemo.benchmarks.conversation.model import Question, Session, qualified
from automemo.benchmarks.pseudo.config import PseudoQuestionConfig
from automemo.benchmarks.pseudo.conversation import Conversation, conversations
from automemo.benchmarks.pseudo.model import PseudoQuestion, normalized
from automemo.benchmarks.pseudo.offline import WRITERS
from automemo.benchmarks.pseudo.sampling import Quota, conversation_counts, draw
from automemo.errors import DataError


FEW_QUESTIONS = 100
"""Fewer pseudo-questions than this get a warning: their paired SE is then about 0.05 or more."""


class LabelFreeError(DataError, ValueError):
    """The benchmark or its options cannot be searched without labels; the message says why."""


@dataclass(frozen=True)
class LabelFree:
    """What a label-free benchmark holds instead of its release's questions (the run's record,
    `describe()["label_free"]`, and the held-out verdict's words)."""

    source: str                         # "self" or "llm"
    train_questions: int                # pseudo-questions the search is scored on
    train_by_kind: Mapping[str, int]
    fitting_questions: int              # pseudo-questions of other kinds a ranking stage is fitted on
    labelled_train_unread: int          # labelled questions of the train conversations, never read
    held_out_turns: int                 # turns taken out of the memory as the questions' sources
    test_labelled: int                  # labelled test questions kept for the held-out verdict
    test_pseudo: int                    # pseudo-questions of the test conversations (none labelled)
    conversations_without: tuple[str, ...] = ()  # train conversations no question could be written for
    llm: Mapping[str, Any] = field(default_factory=dict)  # questions = "llm": calls, dropped answers
    # Guard questions asked in the train split besides the scored ones, not counted in its mean
    # (none of the counts above holds them): their Recall@k is the guard metric `guard_metric`.
    guard_questions: int = 0
    guard_by_kind: Mapping[str, int] = field(default_factory=dict)
    guard_metric: str = ""              # "" when no guard question was asked

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "train_questions": self.train_questions,
                "train_by_kind": dict(self.train_by_kind),
                "guard_questions": self.guard_questions, "guard_by_kind": dict(self.guard_by_kind),
                "guard_metric": self.guard_metric,
                "fitting_questions": self.fitting_questions, "labelled_train_unread": self.labelled_train_unread,
                "held_out_turns": self.held_out_turns,
                "test_labelled": self.test_labelled, "test_pseudo": self.test_pseudo,
                "conversations_without": list(self.conversations_without), **({"llm": dict(self.llm)} if self.llm else {})}


def write_offline(convs: Sequence[Conversation], config: PseudoQuestionConfig, salt: str = "",
                  kinds: Mapping[str, float] | None = None,
                  apart_from: Sequence[PseudoQuestion] = ()) -> list[PseudoQuestion]:
    """The offline pseudo-questions of the conversations `convs` of `kinds` (default: the scored
    ones, `config.kinds`), drawn as `config` says, none asking what a question of `apart_from`
    asks (by its normalized text)."""
    kinds = {k: w for k, w in (config.kinds if kinds is None else kinds).items() if w > 0}
    quota = Quota(config.per_session, config.per_conversation, config.max_questions, kinds)
    counts = conversation_counts({c.scope: c.sessions for c in convs}, quota)
    taken = {normalized(q.question) for q in apart_from}
    out: list[PseudoQuestion] = []
    for conv in convs:
        candidates = {kind: [q for q in WRITERS[kind](conv) if normalized(q.question) not in taken] for kind in kinds}
        out += draw(candidates, counts[conv.scope], kinds, conv.by_ref(),
                    seed=f"{config.seed}/{salt}/{conv.scope}")
    return out


SCORED_PREFIX, FITTING_PREFIX, GUARD_PREFIX = "P", "F", "G"
"""Question ids of the scored, fitting and guard pseudo-questions: `<scope>/P001`, `F001`, `G001`."""


def guard_type(kind: str) -> str:
    """A guard question's type: its kind, apart from the types of counted questions. The evaluator
    gives a task the program failed the counting and metrics of its type (`_failure_shape`), a
    router fitted on the train split learns types, and per-type tables show it apart."""
    return f"guard:{kind}"


def as_questions(pseudo: Sequence[PseudoQuestion], prefix: str = SCORED_PREFIX, *, guard: bool = False) -> list[Question]:
    """Pseudo-questions as the benchmark's `Question`s: the kind is the question type, no gold
    answer (a label-free search scores cited evidence only). `guard`: asked, not counted, typed
    `guard_type(kind)` (`Question.guard`)."""
    numbered: dict[str, int] = {}
    out = []
    for p in pseudo:
        numbered[p.scope] = numbered.get(p.scope, 0) + 1
        out.append(Question(qualified(p.scope, f"{prefix}{numbered[p.scope]:03d}"), p.scope,
                            guard_type(p.kind) if guard else p.kind, p.question, "", p.clues,
                            any_clue=p.any_clue, guard=guard))
    return out


def make_label_free(benchmark: Any, source: str, config: PseudoQuestionConfig, *, llm: Any = None,
                    cache: Path | None = None) -> LabelFree:
    """Replace `benchmark`'s questions as the module docstring says; returns what it did (also
    on `benchmark.label_free`). Raises `LabelFreeError` for a benchmark that has no sessions of
    turns to write from, or one not scored by cited evidence."""
    if not isinstance(benchmark, ConversationBenchmark):
        raise LabelFreeError(
            f"questions = {source!r} needs a conversation benchmark (sessions of turns to write questions "
            f"from: memgallery, locomo, longmemeval or conversations); {benchmark.name} is not one. Use "
            f"questions = \"benchmark\"")
    if benchmark.options.mode != "retrieval":
        raise LabelFreeError(
            f"questions = {source!r} scores the turns a program cites (mode = \"retrieval\"): a pseudo-question "
            f"has no gold answer for an agent to be judged by. Drop the option mode = {benchmark.options.mode!r}")
    train, test = benchmark.split_scopes("train"), benchmark.split_scopes("test")
    data = benchmark.data
    labelled_test = [q for q in data.questions if q.scope in test]
    llm_record: dict[str, Any] = {}
    if source not in ("self", "llm"):
        raise LabelFreeError(f"questions = {source!r}: a label-free search writes its questions itself "
                             f"(\"self\") or with an LLM (\"llm\")")
    # Offline questions are cut from turns held out of the memory; an LLM writes from sessions
    # and needs none held out.
    held_out = config.held_out if source == "self" else 0.0
    convs = {"train": conversations(data.sessions, train, held_out=held_out, seed=f"{config.seed}/train"),
             "test": [] if labelled_test else conversations(data.sessions, test, held_out=held_out,
                                                            seed=f"{config.seed}/test")}

    def write(split: str) -> list[PseudoQuestion]:
        if source == "self":
            return write_offline(convs[split], config, split)
        from automemo.benchmarks.pseudo.llm_writer import write_with_llm

        written, record = write_with_llm(convs[split], config, llm, cache=cache, salt=split)
        for key, value in record.items():
            llm_record[key] = llm_record.get(key, 0) + value
        return written

    train_pseudo, test_pseudo = write("train"), write("test")
    fitting = (write_offline(convs["train"], config, "fit", config.fit_kinds)
               if source == "self" and any(w > 0 for w in config.fit_kinds.values()) else [])
    # Guard questions: another draw (salt) than the fitting ones and none asking what one of them
    # asks, so that a ranking stage fitted on those is not judged by them. Offline only, as the
    # fitting ones: without held-out turns (questions = "llm") only pictures could be asked.
    guard = (write_offline(convs["train"], config, "guard", config.guarded_kinds, apart_from=[*fitting, *train_pseudo])
             if source == "self" and config.guarded_kinds else [])
    held = {c.turns[i].ref for split in convs.values() for c in split for i in c.held}
    if not train_pseudo:
        raise LabelFreeError(
            f"questions = {source!r}: no pseudo-question could be written from the {len(train)} train "
            f"conversation(s) ({sum(len(c.turns) for c in convs['train'])} turns): a question needs a turn held out "
            f"of the memory with a turn beside it in its session. Give more or longer sessions (docs/label-free.md: "
            f"how many a search needs)")
    by_kind: dict[str, int] = {}
    for q in train_pseudo:
        by_kind[q.kind] = by_kind.get(q.kind, 0) + 1
    guard_by_kind: dict[str, int] = {}
    for q in guard:
        guard_by_kind[q.kind] = guard_by_kind.get(q.kind, 0) + 1
    asked = {q.scope for q in train_pseudo}
    record = LabelFree(
        source, len(train_pseudo), dict(sorted(by_kind.items())), len(fitting),
        sum(1 for q in data.questions if q.scope in train), len(held), len(labelled_test), len(test_pseudo),
        tuple(sorted(set(train) - asked)), llm_record, len(guard), dict(sorted(guard_by_kind.items())),
        guard_metric(benchmark.options.k) if guard else "",
    )
    benchmark.use_questions([*as_questions(train_pseudo), *as_questions(guard, GUARD_PREFIX, guard=True),
                             *as_questions(test_pseudo), *labelled_test], record,
                            sessions=without_turns(data.sessions, held), fitting=as_questions(fitting, FITTING_PREFIX))
    if record.train_questions < FEW_QUESTIONS:
        print(f"{benchmark.name}: only {record.train_questions} pseudo-questions: two programs closer than about "
              f"{1 / record.train_questions ** 0.5:.2f} in score cannot be told apart, and the search will mostly keep "
              f"the hand design; more sessions give more questions (docs/label-free.md)", file=sys.stderr)
    print(f"{benchmark.name}: label-free ({source}): {record.train_questions} pseudo-questions written from "
          f"{len(asked)} train conversation(s) ({', '.join(f'{k} {n}' for k, n in by_kind.items())}), "
          f"{record.fitting_questions} more of other kinds to fit on, {record.guard_questions} to guard "
          f"({record.guard_metric or 'none'}); "
          f"{record.held_out_turns} turn(s) held out of the memory as their sources; "
          f"{record.labelled_train_unread} labelled train question(s) set aside unread; the test split keeps "
          + (f"{record.test_labelled} labelled question(s)" if labelled_test else
             f"no labelled question, and gets {record.test_pseudo} pseudo-questions"), file=sys.stderr)
    return record


def without_turns(sessions: Sequence[Session], refs: set[str]) -> list[Session]:
    """`sessions` without the turns `refs` (the held-out question sources)."""
    if not refs:
        return list(sessions)
    return [dataclasses.replace(s, turns=tuple(t for t in s.turns if t.ref not in refs)) for s in sessions]
