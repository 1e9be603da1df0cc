"""Every default of adaptation (`automemo serve --adapt`, `automemo memory adapt`) in one place,
each with why it is what it is."""

from __future__ import annotations

from dataclasses import dataclass, field


PER_USER = "per-user"
POOLED = "pooled"
MODES = (PER_USER, POOLED)


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
    # the held-out conversations' pseudo-questions is more than z paired SEs above 0 (the
    # search's own confirmation rule, search.z).
    z: float = 1.0
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
    # often a design the scored kind flatters, and the next node is another design).
    race_candidates: int = 3
    # How often the server looks for namespaces to adapt (seconds).
    check_every_s: float = 30.0

