"""A released conversation benchmark as a `Benchmark`: sessions are update episodes (one step per
turn, `Step.ref` = the turn's qualified id, no agent needed), questions are retrieve tasks.

Retrieval mode scores the refs a payload cites against the question's clues (Recall/nDCG/Hit@k;
refusal questions not counted). QA mode has the visual agent answer from the payload, scored by
token F1 / exact match (a refusal counts as right when the gold is a refusal) or by a binary LLM
judge that knows the answer conventions of each question type. Splits are by conversation,
stratified, seeded: by default half the conversations (rounded up) go to the search
(`protocol = "search"`), `protocol = "paper"` keeps the papers' 1:4 train:test.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence

from automemo.benchmarks.base import RETRIEVAL_SEARCH_DEFAULTS, Benchmark, Split, Task, TaskScore
from automemo.benchmarks.conversation.model import Conversations, Question, Session, TurnImage
from automemo.benchmarks.evidence_score import evidence_score, feedback_score
from automemo.benchmarks.splits import stratified_split
from automemo.contract import TIME_KEY, EpisodeRecorder, ImageRef, MemoryPayload, PartialRecorder, Step
from automemo.episode_store import EpisodeStore
from automemo.interaction import answers
from automemo.paths import shipped_data


@dataclass(frozen=True)
class TextConversationOptions:
    """The options of every conversation benchmark; `ConversationOptions` adds `image_dir` for the
    releases that hold images (Mem-Gallery, LoCoMo). LongMemEval is text only and has none."""

    path: str = ""                    # the release on disk (required), or @mem-gallery-sample (shipped)
    seed: int = 0                     # fixes which conversations are train and which are test
    # Which conversations the search gets. "search": train_fraction 0.5, rounded up per stratum,
    # so the search scores its candidates on at least half the conversations (at 1:4, ten
    # conversations left it two, and a real lead could not clear one paired SE); "paper": the
    # papers' 1:4 (train_fraction 0.2, rounded to the nearest), the split of their figures.
    protocol: Literal["search", "paper"] = "search"
    train_fraction: float = 0.0       # share of conversations in train; 0 = the protocol's
    mode: Literal["retrieval", "qa"] = "retrieval"  # retrieval: no agent, score cited refs
    judge: Literal["f1", "llm"] = "f1"  # qa mode: token F1 of the answer, or a binary LLM judge
    k: int = 10                       # cited refs that count (Recall@k, nDCG@k, Hit@k)
    # A gold clue naming no turn of its conversation (published releases hold a few): "drop"
    # leaves it out of its question and says so once; "error" refuses the file.
    unknown_clues: Literal["drop", "error"] = "drop"
    # The per-question metric a search ranks programs by (and `eval` averages as the value): ""
    # = recall@k in retrieval mode, the answer's score in QA mode; else one of `metric_names`,
    # e.g. session_hit@10 (session any-hit, what most published memory benchmarks quote).
    metric: str = ""


@dataclass(frozen=True)
class ConversationOptions(TextConversationOptions):
    image_dir: str = ""               # where images live; "" = where the release files point


PROTOCOL_TRAIN_FRACTION = {"search": 0.5, "paper": 0.2}
"""The train share of each protocol when `train_fraction` is not set."""


# Phrases that mean "the conversation never said": a refusal answers a refusal question.
_REFUSALS = ("not mentioned", "no information", "not available", "never mentioned", "unknown",
             "cannot be determined", "not answerable", "no mention", "not stated", "don't know")


def is_refusal(answer: str) -> bool:
    text = answers.normalize_answer(answer)
    return any(phrase.replace("'", " ") in text or phrase in text for phrase in _REFUSALS)


class ConversationBenchmark(Benchmark):
    """Shared by the release readers; a subclass sets `name` and implements `read()`."""

    family = "conversation"
    Options = ConversationOptions
    format_hint = ""
    missing_images_are = "are missing or git-LFS pointer files"

    def __init__(self, options: TextConversationOptions = ConversationOptions(), *, llm: Any = None) -> None:
        if not options.path:
            raise ValueError(f"{self.name}: set the option `path` ({self.format_hint})")
        try:  # `@mem-gallery-sample`: a data set shipped inside the package
            options = dataclasses.replace(options, path=shipped_data(options.path))
        except FileNotFoundError as exc:
            raise ValueError(f"{self.name}: {exc}") from None
        if not 0.0 <= options.train_fraction < 1.0:
            raise ValueError(f"{self.name}: train_fraction must be within (0, 1) (0 = the protocol's), "
                             f"got {options.train_fraction}")
        if options.k < 1:
            raise ValueError(f"{self.name}: k must be at least 1, got {options.k}")
        if options.mode == "qa" and options.judge == "llm" and (llm is None or not llm.configured("judge")):
            raise ValueError(
                f'{self.name}: judge = "llm" needs the judge role configured (llm.judge.model); '
                'use judge = "f1" to score answers without an LLM'
            )
        self.options, self.llm = options, llm
        self.data: Conversations = self.read()
        if self.data.images_missing:
            # Said once, when the release is read: the run goes on with captions in their place.
            print(
                f"{self.name}: {self.data.images_missing} of {self.data.images_total} images {self.missing_images_are} "
                f"({self.data.source}); those turns and questions keep their captions only",
                file=sys.stderr,
            )
        if self.data.dropped_clues:
            dropped = self.data.dropped_clues
            shown = "; ".join(f"{d.where}: {d.clue!r}" for d in dropped[:5]) + ("; ..." if len(dropped) > 5 else "")
            print(
                f"{self.name}: dropped {len(dropped)} gold clue(s) naming no turn of their conversation "
                f"({self.data.source}): {shown}; set unknown_clues = \"error\" to refuse such a file",
                file=sys.stderr,
            )
        if self.data.repaired_clues:
            repaired = self.data.repaired_clues
            shown = "; ".join(f"{r.where}: {r.clue!r} as {', '.join(r.read_as)}" for r in repaired[:5]) + (
                "; ..." if len(repaired) > 5 else "")
            print(f"{self.name}: read {len(repaired)} joined or misspelled gold clue(s) as the turns they name "
                  f"({self.data.source}): {shown}", file=sys.stderr)
        if self.data.dropped:
            dropped = self.data.dropped
            shown = "; ".join(f"{d.where}: {d.what}" for d in dropped[:5]) + ("; ..." if len(dropped) > 5 else "")
            print(f"{self.name}: left out {len(dropped)} unusable part(s) of the release ({self.data.source}): "
                  f"{shown}", file=sys.stderr)
        self._sessions = {s.session_id: s for s in self.data.sessions}
        self._questions = {q.question_id: q for q in self.data.questions}
        # Turn ref -> its session, for session-level figures; scoring only (labels stay on the host).
        self._session_of = {t.ref: s.session_id for s in self.data.sessions for t in s.turns}
        rest, taken = stratified_split(
            list(self.data.scopes), lambda s: self.data.strata.get(s, ""), self.train_fraction,
            options.seed, salt=f"{self.name}-scopes", round_up=options.protocol == "search",
        )
        self._scopes = {"train": set(taken), "test": set(rest)}

    def read(self) -> Conversations:
        raise NotImplementedError

    label_free: Any = None
    """What replaced the release's questions (`benchmarks.pseudo.label_free.LabelFree`), or None."""
    fitting_questions: tuple[Question, ...] = ()
    """A label-free search's questions to fit on (the ranking stage), of other kinds than the ones
    it is scored on; empty: fits read the train split's questions."""

    question_split: Mapping[str, frozenset[str]] | None = None
    """Splits by question instead of by conversation (`use_question_split`: feedback questions,
    older in train, newer in test); None: by conversation."""

    def use_question_split(self, question_ids: Mapping[str, Sequence[str]]) -> None:
        """Split by question: each split asks the questions named for it over every conversation's
        sessions (questions from an agent's feedback are split by time, and every one of them was
        asked of the whole memory; benchmarks/conversation/feedback.py)."""
        if set(question_ids) != {"train", "test"}:
            raise ValueError(f"a question split names train and test, got {sorted(question_ids)}")
        self.question_split = {name: frozenset(ids) for name, ids in question_ids.items()}

    def split_scopes(self, name: str) -> frozenset[str]:
        """The conversations of split `name` ("train" or "test")."""
        return frozenset(self._scopes[name])

    def use_questions(self, questions: Sequence[Question], label_free: Any = None,
                      sessions: Sequence[Session] | None = None, fitting: Sequence[Question] = ()) -> None:
        """Ask `questions` instead of the release's: a label-free search's pseudo-questions (with
        `label_free`, what it did), over `sessions` when given (the release's less the turns held
        out as their sources), and `fitting` to fit on. Splits, partials and scores read them from here on."""
        sessions = tuple(sessions) if sessions is not None else self.data.sessions
        self.data = dataclasses.replace(self.data, questions=tuple(questions), sessions=sessions)
        self._questions = {q.question_id: q for q in self.data.questions}
        self._sessions = {s.session_id: s for s in sessions}
        self._session_of = {t.ref: s.session_id for s in sessions for t in s.turns}
        self.label_free = label_free
        self.fitting_questions = tuple(fitting)

    @property
    def train_fraction(self) -> float:
        """The share of conversations in train: the option, or its protocol's (0.5 / 0.2)."""
        return self.options.train_fraction or PROTOCOL_TRAIN_FRACTION[self.options.protocol]

    def agent_kind(self) -> str | None:
        """The agent `automemo.agents.build_agent` must build: none in retrieval mode."""
        return None if self.options.mode == "retrieval" else "visual"

    def adversarial_categories(self) -> frozenset[str]:
        """The types of the refusal questions: Mem-Gallery's AR ("not mentioned" answers, no
        clues), LoCoMo's cat5 (adversarial, with the evidence the release cites)."""
        return frozenset(q.qtype for q in self.data.questions if q.refusal)

    def scoring_is_deterministic(self) -> bool:
        """Retrieval mode scores cited refs against clues: the same payload, the same score."""
        return self.options.mode == "retrieval"

    @classmethod
    def search_defaults(cls, options: Any) -> Mapping[str, Any]:
        return RETRIEVAL_SEARCH_DEFAULTS if options.mode == "retrieval" else {}

    # splits ----------------------------------------------------------------------------------

    def split(self, name: str) -> Split:
        if name not in self._scopes:
            raise ValueError(f"{self.name} has splits 'train' and 'test', not {name!r}")
        scopes = self._scopes[name] if self.question_split is None else set(self.data.scopes)
        asked = None if self.question_split is None else self.question_split[name]
        update = tuple(
            Task(s.session_id, self.name, "session", self._session_instruction(s), {"kind": "session"})
            for s in self.data.sessions if s.scope in scopes
        )
        retrieve = tuple(
            # The task's text is what retrieve reads (`partial`), so a router fitted on the train
            # tasks' texts keys and reads the same question it is asked at retrieve time. A guard
            # question says so (`guard`): what is fitted on the train split's questions leaves it out.
            Task(q.question_id, self.name, q.qtype, _with_lost_captions(q.question, q.images),
                 {"kind": "question", "answer": q.answer, "clues": list(q.clues), "refusal": q.refusal,
                  "user": q.scope, **({"guard": True} if q.guard else {})})
            for q in self.data.questions if q.scope in scopes and (asked is None or q.question_id in asked)
        )
        return Split(name, update, retrieve)

    @staticmethod
    def _session_instruction(session: Session) -> str:
        when = f" ({session.date})" if session.date else ""
        return f"Conversation session {session.session_id}{when}"

    # episodes --------------------------------------------------------------------------------

    def _put(self, images: tuple[TurnImage, ...], store: EpisodeStore) -> list[ImageRef]:
        return [store.put_image(i.file, caption=i.caption) for i in images if i.file is not None]

    def _session_episode(self, session: Session, store: EpisodeStore) -> EpisodeRecorder:
        steps = []
        for i, turn in enumerate(session.turns):
            refs = self._put(turn.images, store)
            steps.append(Step(
                index=i, observation=_with_lost_captions(turn.text, turn.images), screenshot=refs[0] if refs else None, ref=turn.ref,
                metadata={"speaker": turn.speaker, "time": session.date,
                          "image_ids": [im.image_id for im in turn.images],
                          "image_captions": [im.caption or "" for im in turn.images]},
            ))
        return EpisodeRecorder(
            task_id=session.session_id, benchmark=self.name, instruction=self._session_instruction(session),
            steps=tuple(steps), reward=1.0, success=True,
            metadata={"conversation": True, "user": session.scope, "session_id": session.session_id,
                      "time": session.date},
        )

    def partial(self, task: Task, store: EpisodeStore) -> PartialRecorder:
        if task.data["kind"] == "session":
            return self._session_episode(self._sessions[task.task_id], store).partial()
        q: Question = self._questions[task.task_id]
        return PartialRecorder(
            task_id=q.question_id, benchmark=self.name, instruction=task.instruction,
            task_images=tuple(self._put(q.images, store)),
            # The question type stays on the Task: retrieve never sees a label. Its date, where the
            # release gives one (LongMemEval's question_date), is known when it is asked.
            metadata={"user": q.scope, **({TIME_KEY: q.date} if q.date else {})},
        )

    def run_episode(self, task: Task, agent: Any, payload: MemoryPayload | None, store: EpisodeStore) -> EpisodeRecorder:
        if task.data["kind"] == "session":
            return self._session_episode(self._sessions[task.task_id], store)
        partial = self.partial(task, store)
        fields = {**partial.to_dict(), "task_images": partial.task_images}
        if self.options.mode == "retrieval":
            result = self._retrieval_score(task, payload)
            return EpisodeRecorder(**fields, reward=result.value,
                                   success=result.metrics.get(f"hit@{self.options.k}", 0.0) > 0,
                                   judge_feedback=result.feedback or None)
        if agent is None:
            raise ValueError(f"{self.name} qa mode needs an answering agent (configure the agent role)")
        answer = agent.answer(partial, payload, store)
        gold = task.data["answer"]
        if self.options.judge == "llm":
            verdict, feedback = self._judge(task, answer.text)
            reward = float(verdict)
        else:
            reward = self._answer_f1(task, answer.text)
            verdict, feedback = reward >= 0.5, f"gold: {gold}"
        return EpisodeRecorder(**fields, steps=answer.steps, final_answer=answer.text, reward=reward,
                               success=bool(verdict), judge_feedback=feedback, usage=answer.usage)

    # scoring ---------------------------------------------------------------------------------

    def _judge(self, task: Task, answer: str) -> tuple[bool, str]:
        """The LLM judge's verdict on `answer` (qa mode, judge = "llm"); a release with judge
        instructions of its own overrides it."""
        from automemo.interaction.judges import AnswerJudge

        return AnswerJudge(self.llm).judge(task.instruction, task.data["answer"], answer, qtype=task.category)

    def _retrieval_score(self, task: Task, payload: MemoryPayload | None) -> TaskScore:
        question = self._questions.get(task.task_id)
        if question is not None and question.shown:  # from an agent's feedback: only shown items are labelled
            return feedback_score(payload, question.clues, question.shown, self.options.k, question.clue_weights,
                                  self.data.aliases)
        score = evidence_score(payload, task.data["clues"], self.options.k, self.data.aliases,
                               refusal=task.data["refusal"], sessions=self._session_of,
                               any_clue=question is not None and question.any_clue)
        if question is not None and question.guard:
            return as_guard(score, self.options.k)
        return score

    def guard_metric_names(self) -> tuple[str, ...]:
        """The guard metrics of this benchmark as loaded (the evaluator asks it, not the class):
        the class's for its options (`guard_metrics`), and, when the split asks guard questions
        (a label-free benchmark, `benchmarks.pseudo.label_free`), their Recall@k, `guard_metric`."""
        declared = tuple(type(self).guard_metrics(self.options))
        if any(q.guard for q in self.data.questions):
            declared += (guard_metric(self.options.k),)
        return declared

    @staticmethod
    def _answer_f1(task: Task, answer: str) -> float:
        if task.data["refusal"]:
            return 1.0 if is_refusal(answer) else 0.0
        return answers.token_f1(answer, task.data["answer"])

    def score(self, task: Task, episode: EpisodeRecorder, payload: MemoryPayload) -> TaskScore:
        if self.options.mode == "retrieval":
            return self._retrieval_score(task, payload)
        gold, answer = task.data["answer"], episode.final_answer or ""
        refusal = task.data["refusal"]
        metrics = {"f1": self._answer_f1(task, answer),
                   "em": float(is_refusal(answer)) if refusal else answers.exact_match(answer, gold)}
        if self.options.judge == "llm":
            metrics["judge"] = 1.0 if episode.success else 0.0
            return TaskScore(metrics["judge"], metrics, feedback=episode.judge_feedback or "")
        return TaskScore(metrics["f1"], metrics, feedback=f"answered {answer!r}, gold {gold!r}")

    @classmethod
    def metric_names(cls, options: TextConversationOptions) -> tuple[str, ...]:
        k = options.k
        if options.mode == "retrieval":
            return (f"recall@{k}", f"session_hit@{k}", f"locomo_recall@{k}", f"ndcg@{k}", f"hit@{k}")
        return ("judge", "f1", "em") if options.judge == "llm" else ("f1", "em")

    def describe(self) -> dict[str, Any]:
        o = self.options
        if self.label_free is not None:
            return self._describe_label_free()
        per_type: dict[str, int] = {}
        for q in self.data.questions:
            if not q.guard:  # counted by the label-free record (`label_free.guard_questions`)
                per_type[q.qtype] = per_type.get(q.qtype, 0) + 1
        return {
            "name": self.name, "family": self.family,
            "options": {k: getattr(o, k) for k in o.__dataclass_fields__},
            "train_fraction": self.train_fraction,
            "conversations": {name: sorted(scopes) for name, scopes in self._scopes.items()},
            "sessions": len(self.data.sessions), "questions": per_type,
            "images": {"total": self.data.images_total, "missing": self.data.images_missing},
            "dropped_clues": {"source": self.data.source, "count": len(self.data.dropped_clues),
                              "items": [f"{d.where}: {d.clue}" for d in self.data.dropped_clues]},
            "dropped": {"count": len(self.data.dropped),
                        "items": [f"{d.where}: {d.what}" for d in self.data.dropped]},
            "repaired_clues": {"count": len(self.data.repaired_clues),
                               "items": [f"{r.where}: {r.clue} -> {' '.join(r.read_as)}"
                                         for r in self.data.repaired_clues]},
            "metrics": ", ".join(f"{m} (value)" if m == self.ranking_metric(o) else m
                                 for m in self.metric_names(o)),
            **({"label_free": self.label_free.to_dict()} if self.label_free is not None else {}),
        }


    # What a label-free search's record says of the labelled questions: counts it set aside or
    # keeps for the test split, which the search itself must not see.
    LABELLED_COUNTS = ("labelled_train_unread", "test_labelled")

    def _describe_label_free(self) -> dict[str, Any]:
        """What a label-free search may see (an LLM meta agent reads it as its task): the options,
        the conversations, the sessions and their images, the metrics and the pseudo-questions'
        own record. Nothing of the labelled questions: not their types or counts (the test
        split keeps them), nor the clue ids of the clues the data dropped or repaired."""
        o = self.options
        record = {k: v for k, v in self.label_free.to_dict().items() if k not in self.LABELLED_COUNTS}
        return {
            "name": self.name, "family": self.family,
            "options": {k: getattr(o, k) for k in o.__dataclass_fields__},
            "train_fraction": self.train_fraction,
            "conversations": {name: sorted(scopes) for name, scopes in self._scopes.items()},
            "sessions": len(self.data.sessions),
            "images": {"total": self.data.images_total, "missing": self.data.images_missing},
            "metrics": ", ".join(f"{m} (value)" if m == self.ranking_metric(o) else m
                                 for m in self.metric_names(o)),
            "label_free": record,
        }


def guard_metric(k: int) -> str:
    """The metric a guard question carries (`Question.guard`): its Recall@k."""
    return f"guard_recall@{k}"


def as_guard(score: TaskScore, k: int) -> TaskScore:
    """A guard question's score: not counted in the mean, its Recall@k as `guard_metric(k)` and
    no other metric. The search pairs a candidate with the bar on that metric alone
    (`search.policy.guard_checks`); a guard question carrying recall@k or session_hit@k would mix
    into the figures of the scored questions (their per-category and published breakdowns read
    uncounted questions too) and into the benchmark's own guards."""
    if not score.counted:  # no clue to recall: nothing to guard
        return score
    recall = float(score.metrics[f"recall@{k}"])
    return TaskScore(recall, {guard_metric(k): recall}, counted=False,
                     feedback="; ".join(["not counted: a guard question (a selection must not lose on "
                                         f"{guard_metric(k)})", score.feedback]))


def _with_lost_captions(text: str, images: tuple[TurnImage, ...]) -> str:
    """`text` followed by the caption of every image that has no pixels: where the image itself
    would have reached the memory (its pixels, and its caption on the `ImageRef`), the caption
    alone still does. A question's image counts like a turn's: the application has it when the
    question is asked."""
    for image in images:
        if image.file is None and image.caption:
            text += f"\n[image {image.image_id}: {image.caption}]"
    return text
