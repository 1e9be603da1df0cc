"""The memo-program contract: the data a memo program sees and returns, and its base class.

Stdlib only: this module is imported inside the sandbox guest, whose image carries no
third-party packages beyond numpy, faiss, networkx, sqlite-utils and pillow.

Every type is a frozen dataclass that round-trips through JSON (`to_json` / `from_json`).
Parsing validates as it goes and raises `ContractError` naming the offending field, because
the data comes from LLM-written programs and from files users edit by hand.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pickle
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

from automemo.errors import DataError

INTERFACE_VERSION = "2"
"""Bumped when the memo-program interface changes in a way old programs would notice.
Version 2 gave `Step` its evidence `ref` and its `metadata`."""

SUPPORTED_INTERFACE_VERSIONS = ("1", "2")
"""Versions whose recorders and programs still load: version 1 differs only by lacking
`Step.ref` / `Step.metadata`, which default to None / {}, so its data parses unchanged."""


BUDGET_KEY = "budget"
"""`task.metadata[BUDGET_KEY]`: the run's retrieval budget as `Budget.to_dict()`
(`{"max_chars": ..., "max_images": ...}`), set by the harness on every retrieve task so that a
program can rank what fits first. Absent outside an evaluation."""

USER_KEY = "user"
"""`task.metadata[USER_KEY]`: the scope of a question, whose conversation or memory it is about."""

TIME_KEY = "time"
"""`task.metadata[TIME_KEY]`: when the question is asked, where the benchmark (or the caller) has a time."""

RETRIEVE_METADATA_KEYS = frozenset({USER_KEY, TIME_KEY, BUDGET_KEY})
"""The allow-list of what a retrieve task's metadata may carry on every benchmark: what an
application has at question time. Its other fields (instruction, task images, initial observation
and screenshot) are the `PartialRecorder`'s own. A benchmark adds the keys it knows at question
time (`Benchmark.question_time_keys`, e.g. a web task's `site` and `url`); every other key (a
category, question type, answer, clue, gold id, difficulty level, or anything unknown) is dropped
before `retrieve`, so labels stay on the host for scoring. Type-aware behaviour is learned from the
question text (`memolib.QuestionRouter`), never read."""


def retrieve_metadata(
    metadata: Mapping[str, Any], question_time_keys: Any = frozenset()
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """(the part of `metadata` a retrieve task may carry, the keys dropped, sorted): the keys
    of `RETRIEVE_METADATA_KEYS` and of `question_time_keys` (a benchmark's own) are kept."""
    allowed = RETRIEVE_METADATA_KEYS | frozenset(question_time_keys)
    kept = {k: v for k, v in metadata.items() if k in allowed}
    return kept, tuple(sorted(k for k in metadata if k not in allowed))


def question_time_task(
    partial: PartialRecorder, question_time_keys: Any = frozenset(), budget: Mapping[str, Any] | None = None
) -> tuple[PartialRecorder, tuple[str, ...]]:
    """(what `retrieve` is handed of `partial`, the metadata keys dropped): its metadata cut to the
    allow-list (`retrieve_metadata`) with the run's `budget` (`Budget.to_dict()`) under
    `BUDGET_KEY`. The one view every path shows a program or a meta agent of a retrieve task: the
    evaluation harness, `automemo exam`, the served memory and the LLM meta agent's data excerpt."""
    kept, dropped = retrieve_metadata(partial.metadata, question_time_keys)
    if budget is not None:
        kept[BUDGET_KEY] = dict(budget)
    return dataclasses.replace(partial, metadata=kept), dropped


class ContractError(DataError, ValueError):
    """Data does not fit the contract. The message names the field and what was expected."""


# --- validation helpers -------------------------------------------------------------------------


def _fail(path: str, expected: str, got: Any) -> ContractError:
    shown = repr(got)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return ContractError(f"{path}: expected {expected}, got {type(got).__name__} {shown}")


def _str(path: str, value: Any, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise _fail(path, "a string" + (" or null" if optional else ""), value)
    return value


def _int(path: str, value: Any, *, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(path, "an integer", value)
    if minimum is not None and value < minimum:
        raise ContractError(f"{path}: expected an integer >= {minimum}, got {value}")
    return value


def _float(path: str, value: Any, *, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _fail(path, "a finite number" + (" or null" if optional else ""), value)
    return float(value)


def _bool(path: str, value: Any, *, optional: bool = False) -> bool | None:
    if value is None and optional:
        return None
    if not isinstance(value, bool):
        raise _fail(path, "true or false" + (" or null" if optional else ""), value)
    return value


def check_json(path: str, value: Any) -> Any:
    """Check that `value` is plain JSON data (dict with str keys, list, str, number, bool, None).

    Tuples are accepted and become lists, so that frozen dataclasses may hold them.
    Returns a fresh copy so that callers cannot mutate the recorder through the input.
    """
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _fail(path, "a finite number (JSON has no NaN/inf)", value)
        return value
    if isinstance(value, (list, tuple)):
        return [check_json(f"{path}[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        for k in value:
            if not isinstance(k, str):
                raise _fail(f"{path} key", "a string key", k)
        # Keys in sorted order, as `to_json` writes them: a recorder made in memory and the same
        # recorder read back from the store must iterate alike, or a program that walks its
        # metadata builds different text (and scores) after a resume than before it.
        return {k: check_json(f"{path}.{k}", value[k]) for k in sorted(value)}
    raise _fail(path, "JSON data (dict, list, str, number, bool, null)", value)


def _mapping(path: str, value: Any) -> Mapping:
    if not isinstance(value, Mapping):
        raise _fail(path, "an object", value)
    return value


def _list(path: str, value: Any) -> list:
    if not isinstance(value, (list, tuple)):
        raise _fail(path, "a list", value)
    return list(value)


class _Record:
    """Shared JSON plumbing for the contract's dataclasses."""

    _required: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        return _to_plain(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ContractError(f"{cls.__name__}: not valid JSON ({exc})") from None
        return cls.from_dict(data)

    @classmethod
    def _check_keys(cls, data: Mapping, path: str) -> None:
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ContractError(
                f"{path}: unknown field(s) {unknown}; {cls.__name__} has {sorted(names)}"
            )
        missing = [k for k in cls._required if k not in data]
        if missing:
            raise ContractError(f"{path}: missing required field(s) {missing}")


def _to_plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_to_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _to_plain(v) for k, v in value.items()}
    return value


# --- data types ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImageRef(_Record):
    """An image in the run's episode store. `path` is relative to the store root, which the
    sandbox mounts read-only; `sha256` lets a memo program deduplicate without reading pixels."""

    path: str
    sha256: str
    caption: str | None = None

    _required: ClassVar[tuple[str, ...]] = ("path", "sha256")

    def __post_init__(self) -> None:
        _str("ImageRef.path", self.path)
        _str("ImageRef.sha256", self.sha256)
        _str("ImageRef.caption", self.caption, optional=True)
        if self.path.startswith("/") or ".." in self.path.split("/"):
            raise ContractError(
                f"ImageRef.path: must be relative to the episode store and stay inside it, "
                f"got {self.path!r}"
            )

    @classmethod
    def from_dict(cls, data: Any, path: str = "ImageRef") -> ImageRef:
        data = _mapping(path, data)
        cls._check_keys(data, path)
        return cls(
            path=_str(f"{path}.path", data["path"]),
            sha256=_str(f"{path}.sha256", data["sha256"]),
            caption=_str(f"{path}.caption", data.get("caption"), optional=True),
        )


def _image_or_none(path: str, value: Any) -> ImageRef | None:
    if value is None or isinstance(value, ImageRef):
        return value
    return ImageRef.from_dict(value, path)


def _images(path: str, value: Any) -> tuple[ImageRef, ...]:
    return tuple(
        v if isinstance(v, ImageRef) else ImageRef.from_dict(v, f"{path}[{i}]")
        for i, v in enumerate(_list(path, value))
    )


@dataclass(frozen=True)
class Step(_Record):
    """One agent turn (or one dialogue round): what it saw, what it did, why, and what went
    wrong if anything.

    `ref` is the step's stable id where the benchmark has one (a dialogue round "D1:3", a
    conversation turn, a page step): exactly the id a program cites in
    `MemoryPayload.metadata["evidence"]` when this step is the evidence. `metadata` holds the
    benchmark's extra facts about the step as JSON (speaker, time, image ids)."""

    index: int
    observation: str = ""
    screenshot: ImageRef | None = None
    action: str = ""
    thought: str = ""
    error: str | None = None
    ref: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    _required: ClassVar[tuple[str, ...]] = ("index",)

    def __post_init__(self) -> None:
        _int("Step.index", self.index, minimum=0)
        _str("Step.observation", self.observation)
        object.__setattr__(self, "screenshot", _image_or_none("Step.screenshot", self.screenshot))
        _str("Step.action", self.action)
        _str("Step.thought", self.thought)
        _str("Step.error", self.error, optional=True)
        _str("Step.ref", self.ref, optional=True)
        object.__setattr__(
            self, "metadata", check_json("Step.metadata", _mapping("Step.metadata", self.metadata))
        )

    @classmethod
    def from_dict(cls, data: Any, path: str = "Step") -> Step:
        data = _mapping(path, data)
        cls._check_keys(data, path)
        return cls(
            index=_int(f"{path}.index", data["index"], minimum=0),
            observation=_str(f"{path}.observation", data.get("observation", "")),
            screenshot=_image_or_none(f"{path}.screenshot", data.get("screenshot")),
            action=_str(f"{path}.action", data.get("action", "")),
            thought=_str(f"{path}.thought", data.get("thought", "")),
            error=_str(f"{path}.error", data.get("error"), optional=True),
            ref=_str(f"{path}.ref", data.get("ref"), optional=True),
            metadata=check_json(f"{path}.metadata", _mapping(f"{path}.metadata", data.get("metadata", {}))),
        )


@dataclass(frozen=True)
class PartialRecorder(_Record):
    """What is known about a task before the agent's first turn: the input of `retrieve`."""

    task_id: str
    benchmark: str
    instruction: str
    task_images: tuple[ImageRef, ...] = ()
    initial_observation: str = ""
    initial_screenshot: ImageRef | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    _required: ClassVar[tuple[str, ...]] = ("task_id", "benchmark", "instruction")

    def __post_init__(self) -> None:
        _validate_partial(self, type(self).__name__)

    @classmethod
    def from_dict(cls, data: Any, path: str = "PartialRecorder") -> PartialRecorder:
        data = _mapping(path, data)
        cls._check_keys(data, path)
        return cls(**_partial_fields(data, path))


def _partial_fields(data: Mapping, path: str) -> dict[str, Any]:
    return dict(
        task_id=_str(f"{path}.task_id", data["task_id"]),
        benchmark=_str(f"{path}.benchmark", data["benchmark"]),
        instruction=_str(f"{path}.instruction", data["instruction"]),
        task_images=_images(f"{path}.task_images", data.get("task_images", ())),
        initial_observation=_str(f"{path}.initial_observation", data.get("initial_observation", "")),
        initial_screenshot=_image_or_none(
            f"{path}.initial_screenshot", data.get("initial_screenshot")
        ),
        metadata=check_json(f"{path}.metadata", _mapping(f"{path}.metadata", data.get("metadata", {}))),
    )


def _validate_partial(rec: Any, path: str) -> None:
    # Normalise in place: lists become tuples (hashable, immutable) and metadata is checked as
    # JSON. object.__setattr__ is the documented way to do this in a frozen dataclass.
    _str(f"{path}.task_id", rec.task_id)
    _str(f"{path}.benchmark", rec.benchmark)
    _str(f"{path}.instruction", rec.instruction)
    object.__setattr__(rec, "task_images", _images(f"{path}.task_images", rec.task_images))
    _str(f"{path}.initial_observation", rec.initial_observation)
    object.__setattr__(
        rec, "initial_screenshot", _image_or_none(f"{path}.initial_screenshot", rec.initial_screenshot)
    )
    object.__setattr__(
        rec, "metadata", check_json(f"{path}.metadata", _mapping(f"{path}.metadata", rec.metadata))
    )


@dataclass(frozen=True)
class EpisodeRecorder(_Record):
    """A finished episode: the input of `update`. `reward` is the benchmark's score in [0, 1];
    `success` is the judge's binary verdict; `usage` holds tokens/steps/wall time."""

    task_id: str
    benchmark: str
    instruction: str
    task_images: tuple[ImageRef, ...] = ()
    initial_observation: str = ""
    initial_screenshot: ImageRef | None = None
    steps: tuple[Step, ...] = ()
    final_answer: str | None = None
    reward: float = 0.0
    success: bool = False
    judge_feedback: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    usage: Mapping[str, Any] = field(default_factory=dict)

    _required: ClassVar[tuple[str, ...]] = ("task_id", "benchmark", "instruction")

    def __post_init__(self) -> None:
        path = type(self).__name__
        _validate_partial(self, path)
        steps = []
        for i, s in enumerate(_list(f"{path}.steps", self.steps)):
            steps.append(s if isinstance(s, Step) else Step.from_dict(s, f"{path}.steps[{i}]"))
        object.__setattr__(self, "steps", tuple(steps))
        _str(f"{path}.final_answer", self.final_answer, optional=True)
        object.__setattr__(self, "reward", _float(f"{path}.reward", self.reward))
        _bool(f"{path}.success", self.success)
        _str(f"{path}.judge_feedback", self.judge_feedback, optional=True)
        object.__setattr__(
            self, "usage", check_json(f"{path}.usage", _mapping(f"{path}.usage", self.usage))
        )

    @classmethod
    def from_dict(cls, data: Any, path: str = "EpisodeRecorder") -> EpisodeRecorder:
        data = _mapping(path, data)
        cls._check_keys(data, path)
        return cls(
            **_partial_fields(data, path),
            steps=data.get("steps", ()),
            final_answer=_str(f"{path}.final_answer", data.get("final_answer"), optional=True),
            reward=_float(f"{path}.reward", data.get("reward", 0.0)),
            success=_bool(f"{path}.success", data.get("success", False)),
            judge_feedback=_str(f"{path}.judge_feedback", data.get("judge_feedback"), optional=True),
            usage=_mapping(f"{path}.usage", data.get("usage", {})),
        )

    def partial(self) -> PartialRecorder:
        """The part of this episode that was known before the first turn."""
        return PartialRecorder(
            task_id=self.task_id,
            benchmark=self.benchmark,
            instruction=self.instruction,
            task_images=self.task_images,
            initial_observation=self.initial_observation,
            initial_screenshot=self.initial_screenshot,
            metadata=self.metadata,
        )

    def images(self) -> list[ImageRef]:
        """Every image of the episode, task images first, then screenshots in step order."""
        out = list(self.task_images)
        if self.initial_screenshot:
            out.append(self.initial_screenshot)
        out += [s.screenshot for s in self.steps if s.screenshot]
        return out


@dataclass(frozen=True)
class Budget(_Record):
    """The retrieval budget, the same for every candidate of a run."""

    max_chars: int = 50_000  # characters (text + serialised metadata) a payload may carry; the paper's 50,000
    max_images: int = 2      # images a payload may attach; the paper's 2 (at most 8 in the agent's whole context)

    def __post_init__(self) -> None:
        _int("Budget.max_chars", self.max_chars, minimum=0)
        _int("Budget.max_images", self.max_images, minimum=0)

    @classmethod
    def from_dict(cls, data: Any, path: str = "Budget") -> Budget:
        data = _mapping(path, data)
        cls._check_keys(data, path)
        return cls(**dict(data))


@dataclass(frozen=True)
class MemoryPayload(_Record):
    """What `retrieve` returns: `text` goes into the agent prompt, `images` are attached as extra
    visual inputs, `metadata` is structured. `metadata["evidence"]` is the one way to cite: a
    ranked list of `Step.ref` values (the first k count where a benchmark scores evidence)."""

    text: str = ""
    images: tuple[ImageRef, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _str("MemoryPayload.text", self.text)
        object.__setattr__(self, "images", _images("MemoryPayload.images", self.images))
        object.__setattr__(
            self,
            "metadata",
            check_json("MemoryPayload.metadata", _mapping("MemoryPayload.metadata", self.metadata)),
        )

    @classmethod
    def from_dict(cls, data: Any, path: str = "MemoryPayload") -> MemoryPayload:
        data = _mapping(path, data)
        cls._check_keys(data, path)
        return cls(
            text=_str(f"{path}.text", data.get("text", "")),
            images=_images(f"{path}.images", data.get("images", ())),
            metadata=check_json(f"{path}.metadata", _mapping(f"{path}.metadata", data.get("metadata", {}))),
        )

    def size_chars(self) -> int:
        """Characters charged against the budget: the text plus the serialised metadata, since
        both reach the agent or the scorer."""
        meta = json.dumps(self.metadata, ensure_ascii=False, sort_keys=True) if self.metadata else ""
        return len(self.text) + len(meta)

    def violations(self, budget: Budget) -> list[str]:
        """Human-readable reasons this payload exceeds `budget`; empty when it fits."""
        out = []
        if self.size_chars() > budget.max_chars:
            out.append(
                f"payload has {self.size_chars()} characters (text + metadata), "
                f"budget is {budget.max_chars}"
            )
        if len(self.images) > budget.max_images:
            out.append(f"payload has {len(self.images)} images, budget is {budget.max_images}")
        return out

    def truncated(self, budget: Budget) -> MemoryPayload:
        """The payload cut to the budget: images beyond `max_images` dropped (the program ranks
        them, so the first ones are kept) and text cut so text + metadata fit `max_chars`.
        Metadata larger than the whole budget is dropped rather than cut, since cut JSON
        structure would mean something else."""
        images = self.images[: budget.max_images]
        meta = self.metadata
        meta_chars = len(json.dumps(meta, ensure_ascii=False, sort_keys=True)) if meta else 0
        if meta_chars > budget.max_chars:
            meta, meta_chars = {}, 0
        text = self.text[: max(0, budget.max_chars - meta_chars)]
        if images == self.images and text == self.text and meta is self.metadata:
            return self
        return MemoryPayload(text=text, images=images, metadata=meta)


# --- the program base class ---------------------------------------------------------------------


class MemoProgram:
    """Base class of every memo program. A program file defines `class Memo(MemoProgram)`.

    `toolkit` gives the toolkit's primitives (llm, embeddings, faiss, networkx, sqlite,
    images, a writable `state_dir`). One instance lives for one sandbox session: all `update`
    calls, then (memory frozen) all `retrieve` calls; served, updates and retrieves interleave.
    `save_state` / `load_state` (optional; the default pickles the instance) let a served
    memory restart from a snapshot.
    """

    def __init__(self, toolkit: Any) -> None:
        self.toolkit = toolkit

    def update(self, episode: EpisodeRecorder) -> None:
        raise NotImplementedError

    def retrieve(self, task: PartialRecorder) -> MemoryPayload:
        raise NotImplementedError

    # --- optional: snapshots ---------------------------------------------------------------
    # A served memory restarts from a snapshot of its state plus the episodes remembered since,
    # instead of replaying years of history. The default pickles the instance's attributes
    # (the toolkit and toolkit-made objects pickle as references to the live toolkit), so a
    # program built from plain Python, numpy and memolib state needs nothing more. A program
    # holding something pickle cannot carry overrides both; one that raises here is served by
    # replaying its episodes instead. Files the program wrote under `toolkit.state_dir` travel
    # with the snapshot.

    def save_state(self) -> bytes:
        """The program's memory as bytes that `load_state` takes back."""
        state = {name: value for name, value in vars(self).items() if name != "toolkit"}
        return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)

    def load_state(self, data: bytes) -> None:
        """Become the memory `save_state` described; called on a freshly built instance."""
        vars(self).update(pickle.loads(data))


def payload_from_result(value: Any) -> MemoryPayload:
    """Accept what a `retrieve` returned: a MemoryPayload or a dict of its fields. Anything else
    is a contract violation with a message the repair prompt can act on."""
    if isinstance(value, MemoryPayload):
        return value
    if isinstance(value, Mapping):
        return MemoryPayload.from_dict(value, "retrieve() result")
    raise _fail("retrieve() result", "a MemoryPayload (or a dict with text/images/metadata)", value)
