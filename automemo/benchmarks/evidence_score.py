"""Retrieval mode's score of one question, for every benchmark that scores cited evidence
(Mini-Gallery, Mem-Gallery, LoCoMo): the metrics of `automemo.interaction.evidence` as a
`TaskScore`, with feedback the meta agent can act on."""

from __future__ import annotations

from typing import Mapping, Sequence

from automemo.benchmarks.base import TaskScore
from automemo.contract import MemoryPayload
from automemo.interaction import evidence


def evidence_score(
    payload: MemoryPayload | None, clues: Sequence[str], k: int, aliases: Mapping[str, Sequence[str]] | None = None,
    *, refusal: bool = False, sessions: Mapping[str, str] | None = None, any_clue: bool = False,
) -> TaskScore:
    """Recall@k as the value, nDCG@k and Hit@k beside it, and feedback naming format problems
    and missed clues. With `any_clue` (the clues are alternatives, any one of them the answer) the
    value is Hit@k, the other metrics unchanged beside it. Questions without clues, and refusal
    questions (Mem-Gallery's AR, LoCoMo's adversarial category, whose released evidence they
    keep), are not counted, as in Mem-Gallery.

    With `sessions` (turn ref -> session), the figures published benchmarks quote are added for
    every question, counted or not: session_hit@k (questions with clues) and locomo_recall@k
    (every question; 1 without evidence, as LoCoMo's scorer has it). The aggregation reads them
    per category and with and without the adversarial category (automemo.evaluation.breakdown).
    """
    ranked, problems = evidence.cited_evidence(payload, k)
    published = _published(ranked, clues, k, aliases, sessions) if sessions is not None else {}
    if not clues or refusal:
        why = ("not counted: a refusal question (its answer was never given; left out of retrieval metrics)"
               if refusal else
               "not counted: this question has no gold evidence to retrieve (left out of retrieval metrics, as in Mem-Gallery)")
        return TaskScore(0.0, published, counted=False, feedback="; ".join([why, *problems]))
    matched = evidence.matched_clues(ranked, clues, k, aliases)
    metrics = {
        f"recall@{k}": evidence.recall_at_k(ranked, clues, k, aliases),
        f"ndcg@{k}": evidence.ndcg_at_k(ranked, clues, k, aliases),
        f"hit@{k}": evidence.hit_at_k(ranked, clues, k, aliases),
        **published,
    }
    # An any-clue question found by one clue misses nothing: naming the others would ask for them.
    missed = [] if any_clue and metrics[f"hit@{k}"] else [c for c in clues if c not in matched]
    feedback = [f"gold evidence: {', '.join(clues)}", *problems] + (
        [f"missed clues: {', '.join(missed)}"] if missed else []
    )
    if any_clue:
        # A label-free `context` question is answered by either turn around the one it was cut
        # from. Recall would give a program that returns those two as one block (a window of
        # adjacent turns) twice the credit of one that finds the turn the question is about, a
        # structure rewarded by how the question was written, not by what a user asks, whose
        # evidence is rarely adjacent turns (docs/label-free.md, "How context is scored"). Every
        # cited ref counts on its own (a window cites each of its turns), so finding one
        # neighbour is finding the block.
        feedback.append("any one of these clues answers it: scored by Hit@k")
        return TaskScore(metrics[f"hit@{k}"], metrics, counted=True, feedback="; ".join(feedback))
    return TaskScore(metrics[f"recall@{k}"], metrics, counted=True, feedback="; ".join(feedback))


def feedback_score(payload: MemoryPayload | None, clues: Sequence[str], shown: Sequence[str], k: int,
                   weights: Sequence[float] = (), aliases: Mapping[str, Sequence[str]] | None = None) -> TaskScore:
    """A question from an agent's feedback on a recall: the clues are the items it used, among
    the `shown` ones the recall returned. The value is the counterfactual learning-to-rank
    estimate of DCG (Joachims, Swaminathan and Schnabel 2017), normalised:

        feedback_ndcg@k = Σ w(c) / log2(1 + rank(c)) / Σ w(c) / log2(1 + ideal rank of c)

    where rank(c) is the used item c's place in the program's own order of the shown items (an
    item the recall never showed is unlabelled: citing it neither earns nor costs, so finding
    something new is no miss), 0 gain for a used item it does not cite in its first k, and w(c)
    the inverse propensity of the rank c was shown at (`Question.clue_weights`: a lower item is
    less often looked at, so its use stands for more). Rank-sensitive, not recall: every used item
    was in the live program's own first k, so by recall the program that logged the feedback
    would score 1 on every question and nothing could ever beat it; by rank, a program that puts
    what the agent used first does. `feedback_recall@k` stays beside it."""
    import math

    # Every citation, then the shown ones in the program's order: its order among the items
    # feedback could label.
    ranked, problems = evidence.cited_evidence(payload, 10 ** 9)
    visible = set(shown)
    among = [r for r in ranked if r in visible or any(a in visible for a in (aliases or {}).get(r, ()))]
    if not clues:
        return TaskScore(0.0, {}, counted=False, feedback="not counted: the agent used no item of this recall")
    w = dict(zip(clues, weights)) if len(weights) == len(clues) else {c: 1.0 for c in clues}
    place = {clue: i + 1 for i, clue in enumerate(evidence.matched_clues(among, clues, k, aliases)) if clue is not None}
    gain = sum(w[c] / math.log2(1 + place[c]) for c in clues if c in place)
    ideal = sum(wc / math.log2(2 + i) for i, wc in enumerate(sorted(w.values(), reverse=True)))
    total = sum(w.values())
    metrics = {f"feedback_ndcg@{k}": gain / ideal if ideal > 0 else 0.0,
               f"feedback_recall@{k}": sum(w[c] for c in place) / total if total > 0 else 0.0,
               f"recall@{k}": evidence.recall_at_k(among, clues, k, aliases),
               f"hit@{k}": evidence.hit_at_k(among, clues, k, aliases)}
    missed = [c for c in clues if c not in place]
    feedback = [f"used by the agent: {', '.join(clues)} (of {len(shown)} shown), placed "
                + ", ".join(f"{c} {place[c]}" for c in clues if c in place), *problems] + (
        [f"missed used items: {', '.join(missed)}"] if missed else [])
    return TaskScore(metrics[f"feedback_ndcg@{k}"], metrics, counted=True, feedback="; ".join(feedback))


def _published(ranked: Sequence[str], clues: Sequence[str], k: int, aliases: Mapping[str, Sequence[str]] | None,
               sessions: Mapping[str, str]) -> dict[str, float]:
    out = {f"locomo_recall@{k}": evidence.locomo_recall_at_k(ranked, clues, k, aliases)}
    if any(c in sessions for c in clues):
        out[f"session_hit@{k}"] = evidence.session_hit_at_k(ranked, clues, k, sessions, aliases)
    return out
