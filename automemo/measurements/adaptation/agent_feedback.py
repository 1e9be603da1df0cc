"""The agent `automemo bench adapt --feedback` plays: it asks a user's real questions through
`/v1/recall` and tells the server, through `/v1/feedback`, which returned items it used.

An agent that cites what it used reports as used the returned items that hold the question's
evidence. It sees a question's evidence only through what recall returned: an evidence turn the
recall missed is never reported (no agent can use what it was not shown). Two kinds of noise,
each drawn per item with a seeded generator:
- `miss`: a used item it fails to report (a citation left out);
- `false`: an unused shown item it reports anyway (a citation of something it read but did not use).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence


@dataclass(frozen=True)
class FeedbackNoise:
    miss: float = 0.0     # share of used items not reported
    false: float = 0.0    # share of unused shown items reported as used
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("miss", "false"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"--feedback-{name} must be a share within [0, 1], got {value}")


def reported(shown: Sequence[str], evidence: Iterable[str], noise: FeedbackNoise, rng: random.Random) -> list[str]:
    """The items an agent reports as used among `shown`, in the order shown."""
    gold = set(evidence)
    out = []
    for item in shown:
        if item in gold:
            if rng.random() >= noise.miss:
                out.append(item)
        elif rng.random() < noise.false:
            out.append(item)
    return out


@dataclass(frozen=True)
class Played:
    recalls: int          # questions asked
    with_feedback: int    # recalls the agent reported at least one used item for
    used: int             # items reported used, in all


def play(post: Callable[[str, dict[str, Any]], tuple[int, dict[str, Any]]], asked: Sequence[tuple[str, Any]],
         noise: FeedbackNoise) -> Played:
    """Ask each (user, task) in order through recall and give feedback on what came back. `post`
    is the REST call (path, body) -> (status, answer); a refused feedback stops the bench with
    the server's reason (the agent only names items the recall returned, once)."""
    rng = random.Random(noise.seed)
    with_feedback = used_total = 0
    for user, task in asked:
        status, answer = post("/v1/recall", {"user": user, "instruction": task.instruction})
        if status != 200:
            raise RuntimeError(f"recall failed ({status}): {answer}")
        used = reported(list(answer.get("evidence") or ()), task.data["clues"], noise, rng)
        if not used:
            continue
        status, reply = post("/v1/feedback", {"user": user, "recall_id": answer["recall_id"], "used": used})
        if status != 200:
            raise RuntimeError(f"feedback refused ({status}): {reply}")
        with_feedback += 1
        used_total += len(used)
    return Played(len(asked), with_feedback, used_total)


def halves(questions: Sequence[Any]) -> tuple[list[tuple[str, Any]], list[Any]]:
    """Each user's questions in their order: the first half asked with feedback (as (user, task)),
    the second half kept unseen for scoring before and after."""
    by_user: dict[str, list[Any]] = {}
    for task in questions:
        by_user.setdefault(str(task.data["user"]), []).append(task)
    first: list[tuple[str, Any]] = []
    second: list[Any] = []
    for user, tasks in by_user.items():
        cut = len(tasks) // 2
        first += [(user, t) for t in tasks[:cut]]
        second += tasks[cut:]
    return first, second


def round_and_trial(asked: Sequence[tuple[str, Any]]) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """The asked questions split by order within each user: the older half is asked before the
    round (what it fits and races on), the newer half after it, with a trial open (what decides
    the trial, `automemo.adapt.trial`)."""
    by_user: dict[str, list[tuple[str, Any]]] = {}
    for user, task in asked:
        by_user.setdefault(user, []).append((user, task))
    older: list[tuple[str, Any]] = []
    newer: list[tuple[str, Any]] = []
    for pairs in by_user.values():
        cut = (len(pairs) + 1) // 2
        older += pairs[:cut]
        newer += pairs[cut:]
    return older, newer
