"""Questions from what an agent used: a logged recall with the agent's feedback (which of the
items it showed were used) becomes a question of the `conversations` questions file, its evidence
the used items, with the items shown and a weight per used item (docs/serve.md, "Feedback").

Clicks are biased by position: an item shown lower is less often examined, so it is less often
marked used though it would have been. Two corrections, both applied:
- compared only among shown items (`Question.shown`): a program is scored by its own order of
  the items the recall showed, so an item no recall showed (which no feedback could label) is
  neither right nor wrong;
- weighted by inverse propensity: a used item shown at rank r stands for 1 / p(r) of them, with
  p(r) = (1 / r) ** eta the examination probability of rank r (eta = 1: the classic estimate for
  web search result lists, Joachims et al. 2017; eta = 0: no correction).
Pure functions: the service logs recalls, the adaptation round writes the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from automemo.errors import DataError

FEEDBACK_TYPE = "feedback"
DEFAULT_ETA = 1.0


def propensity(rank: int, eta: float = DEFAULT_ETA) -> float:
    """The probability that an item shown at `rank` (1 = first) was examined."""
    if rank < 1:
        raise ValueError(f"ranks start at 1, got {rank}")
    return (1.0 / rank) ** eta


@dataclass(frozen=True)
class RecallFeedback:
    """One recall an agent gave feedback on, with the items as turn ids of the questions file."""

    recall_id: str
    question: str
    time: str                      # when it was asked (ISO), the question's date
    shown: tuple[str, ...]         # the turn ids it returned, in its order
    used: tuple[str, ...]          # the shown ids the agent used
    conversation: str = ""


def question_line(recall: RecallFeedback, eta: float = DEFAULT_ETA) -> dict[str, Any] | None:
    """The recall as a line of the questions file, or None when the agent used nothing shown (a
    recall with no used item labels nothing: it is left out, not scored 0)."""
    rank = {ref: i + 1 for i, ref in enumerate(recall.shown)}
    used = [u for u in dict.fromkeys(recall.used) if u in rank]
    if not used:
        return None
    line: dict[str, Any] = {"id": recall.recall_id, "question": recall.question, "evidence": used,
                            "shown": list(recall.shown), "type": FEEDBACK_TYPE,
                            "weights": {u: 1.0 / propensity(rank[u], eta) for u in used}}
    if recall.time:
        line["date"] = recall.time
    if recall.conversation:
        line["conversation"] = recall.conversation
    return line


RACE_SHARE = 0.5
"""The share of feedback questions, the newest, a candidate is raced on; the older ones fit."""


class FeedbackError(DataError, ValueError):
    """The benchmark cannot be searched on feedback questions; the message says why."""


def use_feedback_split(benchmark: Any, race_share: float = RACE_SHARE) -> dict[str, int]:
    """Make `benchmark` (a conversation benchmark in retrieval mode, its questions file holding
    questions from feedback, `shown` set) ask its older feedback questions in train and its newer
    ones in test, each split over every session; questions without feedback are left out.
    Returns the counts (what a run's record and its verdict say)."""
    from automemo.benchmarks.conversation.benchmark import ConversationBenchmark

    if not isinstance(benchmark, ConversationBenchmark) or benchmark.options.mode != "retrieval":
        raise FeedbackError('questions = "feedback" needs a conversation benchmark in retrieval mode whose questions '
                            'file holds questions from an agent\'s feedback (each with "shown")')
    asked = [q for q in benchmark.data.questions if q.shown and q.clues]
    if len(asked) < 2:
        raise FeedbackError(f'questions = "feedback": {len(asked)} question(s) with feedback ("shown" and used '
                            f'"evidence"); one split fits and the other races, so at least 2 are needed')
    order = sorted(range(len(asked)), key=lambda i: (asked[i].date, i))
    cut = len(order) - max(1, round(len(order) * race_share))
    train = [asked[i].question_id for i in order[:cut]]
    test = [asked[i].question_id for i in order[cut:]]
    benchmark.use_question_split({"train": train, "test": test})
    return {"fit": len(train), "race": len(test), "left_out": len(benchmark.data.questions) - len(asked)}
