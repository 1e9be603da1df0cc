"""Mini-Gallery as a `Benchmark`: sessions are update episodes (no agent needed), questions are
retrieve tasks, scored by retrieval quality of the cited evidence or, in "qa" mode, by the
answer of a fixed LLM agent."""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import Any, Literal, Mapping

from automemo.benchmarks.base import RETRIEVAL_SEARCH_DEFAULTS, Benchmark, Split, Task, TaskScore
from automemo.benchmarks.evidence_score import evidence_score
from automemo.interaction import answers
from automemo.benchmarks.minigallery.generator import GeneratorConfig, generate_split
from automemo.benchmarks.minigallery import vocabulary as V
from automemo.benchmarks.minigallery.images import ImageSpec, render_png
from automemo.benchmarks.minigallery.model import GallerySplit, Question, Session, UserLog
from automemo.contract import EpisodeRecorder, MemoryPayload, PartialRecorder, Step
from automemo.episode_store import EpisodeStore


@dataclass(frozen=True)
class MiniGalleryOptions:
    seed: int = 0                     # same seed -> byte-identical conversations, images, questions
    users_per_split: int = 4          # train and test users are different people
    sessions_per_user: int = 4        # at least 2 (corrections come in a later session)
    rounds_per_session: int = 16      # user line + assistant reply pairs; 16 -> 8 user lines
    image_size: int = 128             # pixels per side of the generated pictures
    captions: Literal["partial", "full", "none"] = "partial"  # ImageRef.caption a text memory sees
    mode: Literal["retrieval", "qa"] = "retrieval"  # retrieval: no agent, score cited evidence
    judge: Literal["f1", "llm"] = "f1"  # qa mode: token F1 of the answer, or a binary LLM judge
    k: int = 10                       # evidence ids that count (Recall@k, nDCG@k)


@functools.lru_cache(maxsize=8192)
def _png(spec: ImageSpec, size: int) -> bytes:
    return render_png(spec, size)


class MiniGallery(Benchmark):
    name = "minigallery"
    family = "conversation"
    Options = MiniGalleryOptions

    def __init__(self, options: MiniGalleryOptions = MiniGalleryOptions(), *, llm: Any = None) -> None:
        self.options = options
        self.llm = llm
        most = len(V.USER_NAMES) // 2  # train and test users are different people with distinct names
        if not 1 <= options.users_per_split <= most:
            raise ValueError(f"minigallery: users_per_split must be within 1..{most} (the generator has "
                             f"{len(V.USER_NAMES)} user names for both splits), got {options.users_per_split}")
        if options.mode == "qa" and options.judge == "llm" and (llm is None or not llm.configured("judge")):
            raise ValueError(
                "minigallery: judge = \"llm\" needs the judge role configured (llm.judge.model); "
                "use judge = \"f1\" to score answers without an LLM"
            )
        self._lock = threading.Lock()
        self._splits: dict[str, GallerySplit] = {}
        self._aliases: dict[str, dict[str, list[str]]] = {}

    def __getstate__(self) -> dict[str, Any]:
        # Shipped to a Ray worker: the worker regenerates the (seeded) splits it needs.
        return {"options": self.options, "llm": self.llm}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["options"], llm=state["llm"])

    def agent_kind(self) -> str | None:
        """The agent `automemo.agents.build_agent` must build: none in retrieval mode."""
        return None if self.options.mode == "retrieval" else "visual"

    def scoring_is_deterministic(self) -> bool:
        """Retrieval mode scores cited refs against clues: the same payload, the same score."""
        return self.options.mode == "retrieval"

    @classmethod
    def search_defaults(cls, options: Any) -> Mapping[str, Any]:
        return RETRIEVAL_SEARCH_DEFAULTS if options.mode == "retrieval" else {}

    # data ------------------------------------------------------------------------------------

    def data(self, name: str) -> GallerySplit:
        if name not in ("train", "test"):
            raise ValueError(f"minigallery has splits 'train' and 'test', not {name!r}")
        with self._lock:
            if name not in self._splits:
                o = self.options
                config = GeneratorConfig(o.users_per_split, o.sessions_per_user, o.rounds_per_session, o.captions)
                self._splits[name] = generate_split(o.seed, name, config)
            return self._splits[name]

    def image_png(self, spec: ImageSpec) -> bytes:
        return _png(spec, self.options.image_size)

    def split(self, name: str) -> Split:
        data = self.data(name)
        update = tuple(
            Task(s.session_id, self.name, "session", f"Conversation session {s.session_id} with {u.name}",
                 {"kind": "session", "user": u.user_id, "split": name})
            for u in data.users for s in u.sessions
        )
        retrieve = tuple(
            Task(q.question_id, self.name, q.qtype, q.question,
                 {"kind": "question", "user": q.user_id, "split": name, "answer": q.answer, "clues": list(q.clues)})
            for q in data.questions
        )
        return Split(name, update, retrieve)

    def _session(self, task: Task) -> tuple[UserLog, Session]:
        for user in self.data(task.data["split"]).users:
            for session in user.sessions:
                if session.session_id == task.task_id:
                    return user, session
        raise KeyError(f"minigallery: no session {task.task_id!r}")

    def _image_of_round(self, split: str) -> dict[str, list[str]]:
        with self._lock:
            cached = self._aliases.get(split)
        if cached is None:
            cached = {r.round_id: [r.image.image_id] for u in self.data(split).users
                      for s in u.sessions for r in s.rounds if r.image}
            with self._lock:
                self._aliases[split] = cached
        return cached

    def _question(self, task: Task) -> Question:
        for q in self.data(task.data["split"]).questions:
            if q.question_id == task.task_id:
                return q
        raise KeyError(f"minigallery: no question {task.task_id!r}")

    # episodes --------------------------------------------------------------------------------

    def partial(self, task: Task, store: EpisodeStore) -> PartialRecorder:
        if task.data["kind"] == "session":
            return self._session_episode(task, store).partial()
        q = self._question(task)
        images = (store.put_image(self.image_png(q.image)),) if q.image else ()
        return PartialRecorder(
            task_id=q.question_id,
            benchmark=self.name,
            instruction=q.question,
            task_images=images,
            # What an application has at question time: no type, answer or clue (those stay on the Task).
            metadata={"user": q.user_id, "time": q.time},
        )

    def _session_episode(self, task: Task, store: EpisodeStore) -> EpisodeRecorder:
        user, session = self._session(task)
        steps, rounds = [], []
        for i, r in enumerate(session.rounds):
            shot = store.put_image(self.image_png(r.image.spec), caption=r.image.caption) if r.image else None
            image_ids = [r.image.image_id] if r.image else []
            steps.append(Step(index=i, observation=f"{r.speaker}: {r.text}", screenshot=shot, ref=r.round_id,
                              metadata={"speaker": r.speaker, "time": r.time, "image_ids": image_ids}))
            rounds.append({"round_id": r.round_id, "speaker": r.speaker, "time": r.time,
                           "image_id": r.image.image_id if r.image else None})
        return EpisodeRecorder(
            task_id=session.session_id,
            benchmark=self.name,
            instruction=task.instruction,
            steps=tuple(steps),
            reward=1.0,
            success=True,
            # `rounds[i]` describes `steps[i]` as in interface version 1 (round id, time, image
            # id), kept for programs written before `Step.ref`.
            metadata={"conversation": True, "user": user.user_id, "user_name": user.name,
                      "session_id": session.session_id, "time": session.time, "rounds": rounds},
        )

    def run_episode(self, task: Task, agent: Any, payload: MemoryPayload | None, store: EpisodeStore) -> EpisodeRecorder:
        if task.data["kind"] == "session":
            return self._session_episode(task, store)
        partial = self.partial(task, store)
        fields = dict(partial.to_dict())
        if self.options.mode == "retrieval":
            result = self._retrieval_score(task, payload)
            return EpisodeRecorder(**{**fields, "task_images": partial.task_images},
                                   reward=result.value, success=result.metrics.get(f"hit@{self.options.k}", 0.0) > 0,
                                   judge_feedback=result.feedback or None)
        if agent is None:
            raise ValueError("minigallery qa mode needs an answering agent (configure the agent role)")
        answer = agent.answer(partial, payload, store)
        gold = task.data["answer"]
        f1 = answers.token_f1(answer.text, gold)
        verdict, feedback = f1 >= 0.5, f"gold: {gold}"
        if self.options.judge == "llm":
            from automemo.interaction.judges import AnswerJudge

            verdict, feedback = AnswerJudge(self.llm).judge(task.instruction, gold, answer.text, node=None)
        return EpisodeRecorder(
            **{**fields, "task_images": partial.task_images},
            steps=answer.steps,
            final_answer=answer.text,
            reward=float(verdict) if self.options.judge == "llm" else f1,
            success=bool(verdict),
            judge_feedback=feedback,
            usage=answer.usage,
        )

    # scoring ---------------------------------------------------------------------------------

    def _retrieval_score(self, task: Task, payload: MemoryPayload | None) -> TaskScore:
        # A round's ref also stands for the picture shown in it, so a program that cites only
        # `Step.ref` can answer the image-id clues of VS / TTL questions.
        aliases = self._image_of_round(task.data["split"])
        return evidence_score(payload, task.data["clues"], self.options.k, aliases)

    def score(self, task: Task, episode: EpisodeRecorder, payload: MemoryPayload) -> TaskScore:
        if self.options.mode == "retrieval":
            return self._retrieval_score(task, payload)
        gold, answer = task.data["answer"], episode.final_answer or ""
        metrics = {"f1": answers.token_f1(answer, gold), "em": answers.exact_match(answer, gold)}
        if self.options.judge == "llm":
            metrics["judge"] = 1.0 if episode.success else 0.0
            return TaskScore(metrics["judge"], metrics, feedback=episode.judge_feedback or "")
        return TaskScore(metrics["f1"], metrics, feedback=f"answered {answer!r}, gold {gold!r}")

    def describe(self) -> dict[str, Any]:
        train, test = self.data("train"), self.data("test")
        return {
            "name": self.name,
            "family": self.family,
            "options": {k: getattr(self.options, k) for k in self.options.__dataclass_fields__},
            "train": {"users": len(train.users), "questions": len(train.questions)},
            "test": {"users": len(test.users), "questions": len(test.questions)},
            "metrics": f"recall@{self.options.k} (value), ndcg@{self.options.k}, hit@{self.options.k}" if self.options.mode == "retrieval" else
                       ("judge (value), f1, em" if self.options.judge == "llm" else "f1 (value), em"),
        }
