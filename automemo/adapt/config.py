"""Every default of adaptation (`automemo serve --adapt`, `automemo memory adapt`) in one place,
each with why it is what it is, and the one constructor that checks them: both commands build an
`AdaptConfig` from their flags here, and a round's child process gets the whole of it (`to_json`,
`from_json`), not a few fields with the rest defaulted."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from automemo.errors import AutomemoError, UsageError
from automemo.search.config import SearchConfig


PER_USER = "per-user"
POOLED = "pooled"
MODES = (PER_USER, POOLED)


class AdaptConfigRefused(UsageError, ValueError):
    """An adaptation setting asks for what a round cannot or must not do. `setting` is the
    field's name, so that each command can say it as its own flag."""

    def __init__(self, setting: str, reason: str) -> None:
        super().__init__(f"{setting} {reason}")
        self.setting = setting
        self.reason = reason


@dataclass(frozen=True)
class AdaptConfig:
    # A namespace is adapted once its history holds this many remembered sessions (episodes)
    # and turns (steps). Fewer give a search too few pseudo-questions to tell programs apart:
    # at 8 sessions and 120 turns a history yields about 25 held-out questions, a paired SE
    # near 0.05, about the size of the gains adaptation can find.
    min_sessions: int = 8
    min_turns: int = 120
    # A namespace adapted before is adapted again once its history grew by this share since
    # (a round on the same history would only repeat the last one's answer).
    regrow: float = 0.5
    # Search steps of one round (the label-free search, `--questions self`): children of the
    # live program and of the best among them; about one minute per 10 steps on a user's history
    # of 200 turns on one core.
    steps: int = 20
    # Whether a label-free round's search first transplants every seed under the live program.
    # Off: a round refines the program a user is served; swept, the pseudo-questions flattered a
    # design that the guard kinds then vetoed, round after round (docs/serve.md, "How the
    # round's rules came to be").
    sweep: bool = False
    # Whether a round on the agent's feedback sweeps the seeds and the discovered default first.
    # Its questions are real ones, not a proxy that rewards some designs by how it is written, so
    # the hand designs may compete as they do in a labelled search; without the sweep a round
    # of 20 steps from hybrid_rag found nothing on the development data (docs/serve.md, "Feedback").
    feedback_sweep: bool = True
    # CPU seconds one round may use, the search, the race and the rebuild together (its own
    # process and every process it starts; a Docker guest's CPU is the daemon's and not counted,
    # so rounds run their programs in bubblewrap where it exists). A round over its budget is
    # stopped and installs nothing.
    cpu_seconds: float = 900.0
    # Rounds running at once, each at the lowest CPU priority (SCHED_IDLE): they take only the
    # CPU that recalls and remembers leave, so one is enough on a small machine.
    max_parallel: int = 1
    # The race: the candidate replaces the live program only when its mean paired difference on
    # the held-out conversations' pseudo-questions is more than z paired SEs above 0: the
    # search's own confirmation rule, with the search's z.
    z: float = SearchConfig.z
    # The race's pseudo-questions are drawn with this seed, not the search's: a candidate is
    # judged on questions it was not chosen on.
    race_seed: int = 1
    # Draws of held-out turns the race asks (seeds race_seed, race_seed + 1, ...), each on the
    # conversations the search held out; a question asked by an earlier draw is not asked again.
    # A user's history of 200 turns gives one draw about 15-30 questions, a paired SE near 0.08:
    # three draw about three times as many questions from the same held-out sessions.
    race_draws: int = 3
    # The race's guard: pseudo-questions of these kinds (docs/label-free.md), which the candidate
    # must not lose by more than z paired SEs: a user's few scored questions can favour a design
    # these kinds show to be worse (docs/serve.md, "How the round's rules came to be").
    guard_kinds: dict[str, float] = field(default_factory=lambda: {"refer": 1.0, "cloze": 1.0, "date": 1.0})
    # A history is cut into conversations ("blocks") of about this many sessions for the
    # search's split (it needs conversations to hold out); fewer for a short history, so that
    # it has at least `min_blocks`.
    block_sessions: int = 10
    min_blocks: int = 4
    # Candidates a round races, one after another until one wins: the search's selection, then
    # its next best nodes by their pseudo-question mean (a selection the guard kinds veto is
    # often a design the scored kind flatters, and the next node is another design). As many as
    # the search's own exact confirmation pairs (pseudo-questions score exactly).
    race_candidates: int = SearchConfig.confirm_top
    # How often the server looks for namespaces to adapt (seconds).
    check_every_s: float = 30.0
    # The operator's run-config TOML (LLM roles, pseudo-question and search settings) over which
    # a round's search and race are resolved (`serve --adapt-run-config`, `memory adapt
    # --config`, which means what `--config` means to every other command). With the
    # pseudo-question LLM role configured, the LLM writes the questions.
    run_config: Path | None = None

    def __post_init__(self) -> None:
        at_least = {"min_sessions": 1, "min_turns": 1, "steps": 1, "max_parallel": 1, "race_draws": 1,
                    "block_sessions": 1, "min_blocks": 2, "race_candidates": 1}
        for name, least in at_least.items():
            if getattr(self, name) < least:
                raise AdaptConfigRefused(name, f"must be at least {least}, got {getattr(self, name)}")
        for name in ("cpu_seconds", "z", "check_every_s"):
            if not getattr(self, name) > 0:
                raise AdaptConfigRefused(name, f"must be above 0, got {getattr(self, name)}")
        if self.regrow < 0:
            raise AdaptConfigRefused("regrow", f"must be 0 or more, got {self.regrow}")
        if self.run_config is not None:
            object.__setattr__(self, "run_config", Path(self.run_config).resolve())
            _check_run_config(self.run_config)

    def to_json(self) -> str:
        """The whole config, for a round's child process (it holds no secret: a command line is
        readable in /proc)."""
        data = asdict(self)
        data["run_config"] = str(self.run_config) if self.run_config else None
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> AdaptConfig:
        """What `to_json` wrote; a key this version does not know is refused, not dropped."""
        data: dict[str, Any] = json.loads(text)
        unknown = sorted(set(data) - {f.name for f in fields(cls)})
        if unknown:
            raise AdaptConfigRefused(unknown[0], "is not a setting of this version's adaptation")
        return cls(**data)


def _check_run_config(path: Path) -> None:
    """The run-config file read as a round reads it, refused with a sentence when it cannot be, or
    when it names a shared embedding cache: every round would then write every user's vectors
    into one file that no forget cleans."""
    from automemo.resolution import load_run_config

    if not path.is_file():
        raise AdaptConfigRefused("run_config", f"{path}: no such file")
    try:
        resolved = load_run_config(None, path, {})
    except AutomemoError as exc:
        raise AdaptConfigRefused("run_config", f"{path}: {exc}") from None
    if resolved.embeddings.cache_path:
        raise AdaptConfigRefused(
            "run_config", f"{path} sets embeddings.cache_path = {resolved.embeddings.cache_path!r}: every round would "
            f"share that one embedding cache, which holds every user's vectors and which no forget cleans; remove "
            f"the key (each round caches in its own work folder, deleted when it ends)")

