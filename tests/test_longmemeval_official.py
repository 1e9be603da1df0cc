"""LongMemEval's official retrieval figures against values worked out by hand from the official
definitions (xiaowu0162/LongMemEval, src/retrieval/eval_utils.py and run_retrieval.py), on a file
in the published format holding their edge cases (tests/longmemeval_data.py, OFFICIAL_QUESTIONS).

How the hand values are derived (see automemo/benchmarks/conversation/longmemeval_metrics.py):
- dcg weighs rank 1 by 1 and rank i ≥ 2 by 1/log2(i): w1 = w2 = 1, w3 = 1/log2 3, w4 = 1/2, ...
- q-boats' targets (user turns marked has_answer of answer sessions) are B1:1, B2:3, B2:5 (three
  corpus items: the ideal dcg is w1 + w2 + w3 = 2 + 1/log2 3 at every cut ≥ 3); its gold sessions
  are B1 and B2 (B3 holds no target: only its assistant turn is marked).
- turn_*@k: the first k cited turns against the targets.
- session_*@k (turn-to-session): a target reads as its session, another turn of B1 or B2 as
  that session's noans twin (N1, N2), a turn of any other session as its session; the cut grows
  until it holds k distinct entries (a ranking that runs out counts one uncited item per missing
  entry); each cited target is a relevant item, the ideal is as at turn level.
- session_gran_*@k: the cited turns' distinct sessions, first k, against B1 and B2; ideal w1 + w2 = 2.
"""

from __future__ import annotations

import math

import pytest

from automemo.benchmarks import load
from automemo.benchmarks.conversation.longmemeval_metrics import NAMES, dcg
from automemo.benchmarks.conversation.model import Question
from automemo.contract import MemoryPayload
from longmemeval_data import official_items, question, write_longmemeval

W3, W4, W5, W7, W8, W11 = (1 / math.log2(i) for i in (3, 4, 5, 7, 8, 11))
IDEAL_TARGETS = 2 + W3   # three targets: w1 + w2 + w3
IDEAL_SESSIONS = 2       # two gold sessions: w1 + w2

F1, F2, F3 = "sharegpt_fill_1", "ultrachat_fill_2", "sharegpt_fill_3"
B1, B2, B3 = "answer_boats_1", "answer_boats_2", "answer_boats_3"


def _figures(**by_family: tuple[float, ...]) -> dict[str, float]:
    """{family_figure@k: value} from family=(any@5, all@5, ndcg@5, any@10, all@10, ndcg@10)."""
    out = {}
    for family, values in by_family.items():
        for (k, figure), value in zip([(k, f) for k in (5, 10) for f in ("recall_any", "recall_all", "ndcg_any")],
                                      values):
            out[f"{family}_{figure}@{k}"] = value
    return out


# Cited ids of q-boats (local to its haystack), and every official figure they give.
RANKINGS = {
    # After the repeat of B1:1 is dropped: p1 B1:2 p2 F1:1 p3 B1:1 p4 F1:2 p5 B1:3 p6 F2:1 p7 B3:1
    # p8 B2:3 p9 F3:1 p10 B2:1 p11 B2:5 p12 nonsense p13 F2:2.
    "long": [f"{B1}:2", f"{F1}:1", f"{B1}:1", f"{B1}:1", f"{F1}:2", f"{B1}:3", f"{F2}:1", f"{B3}:1", f"{B2}:3",
             f"{F3}:1", f"{B2}:1", f"{B2}:5", "nonsense", f"{F2}:2"],
    # One target only: the ideal still counts all three targets.
    "short": [f"{B2}:3"],
    # Only non-target turns of the answer sessions (an assistant turn marked has_answer among them).
    "noans": [f"{B1}:2", f"{B1}:3", f"{B2}:1", f"{F1}:1", f"{F2}:1", f"{F3}:1"],
    # Six turns of three sessions, then a target: seventh turn, fourth session.
    "widened": [f"{F1}:1", f"{F1}:2", f"{F2}:1", f"{F2}:2", f"{F3}:1", f"{F3}:2", f"{B2}:3"],
}
EXPECTED = {
    "long": _figures(
        # @5: targets within p1..p5: p3 → any 1, all 0, ndcg w3 / ideal.
        # @10: p3 and p8 (p11 B2:5 is past the cut) → any 1, all 0, ndcg (w3 + w8) / ideal.
        turn=(1, 0, W3 / IDEAL_TARGETS, 1, 0, (W3 + W8) / IDEAL_TARGETS),
        # entries N1 F1 B1 F1 N1 F2 B3 B2 F3 N2 B2 X F2: the fifth distinct entry (B3) is p7, so
        # the @5 cut is 7 (B1 in, B2 not): any 1, all 0, relevant p3 → w3 / ideal. Only nine
        # distinct entries in all: the @10 cut is 13 + 1 (everything cited): both sessions,
        # relevant p3, p8 and p11 → (w3 + w8 + w11) / ideal (B2 counts twice).
        session=(1, 0, W3 / IDEAL_TARGETS, 1, 1, (W3 + W8 + W11) / IDEAL_TARGETS),
        # documents B1 F1 F2 B3 B2 F3 X: B1 first, B2 fifth → any 1, all 1, (w1 + w5) / 2 at
        # both cuts (B3, listed as an answer session, is no gold session).
        session_gran=(1, 1, (1 + W5) / IDEAL_SESSIONS, 1, 1, (1 + W5) / IDEAL_SESSIONS),
    ),
    "short": _figures(
        # B2:3 first: any 1, all 0 (two targets missing), ndcg w1 / ideal.
        turn=(1, 0, 1 / IDEAL_TARGETS, 1, 0, 1 / IDEAL_TARGETS),
        # one entry: the cuts are 1 + 4 and 1 + 9 (uncited items of new sessions), past the
        # third rank, so the ideal is all three targets: the same w1 / ideal (not 1 / w1).
        session=(1, 0, 1 / IDEAL_TARGETS, 1, 0, 1 / IDEAL_TARGETS),
        # one document, B2: any 1, all 0, w1 / 2.
        session_gran=(1, 0, 1 / IDEAL_SESSIONS, 1, 0, 1 / IDEAL_SESSIONS),
    ),
    "noans": _figures(
        # no target cited: 0 everywhere at turn level and in the turn-to-session reading (N1 N1
        # N2 F1 F2 F3: no gold entry whatever the cut) ...
        turn=(0, 0, 0, 0, 0, 0),
        session=(0, 0, 0, 0, 0, 0),
        # ... while one document per session finds both: B1 B2 F1 F2 F3 → (w1 + w2) / 2 = 1.
        session_gran=(1, 1, 1, 1, 1, 1),
    ),
    "widened": _figures(
        # B2:3 is the seventh turn: not within 5, within 10 → ndcg w7 / ideal at 10.
        turn=(0, 0, 0, 1, 0, W7 / IDEAL_TARGETS),
        # F1 F1 F2 F2 F3 F3 B2: four distinct entries, so the @5 cut is 7 + 1 and holds B2.
        session=(1, 0, W7 / IDEAL_TARGETS, 1, 0, W7 / IDEAL_TARGETS),
        # documents F1 F2 F3 B2: B2 fourth → w4 / 2.
        session_gran=(1, 0, W4 / IDEAL_SESSIONS, 1, 0, W4 / IDEAL_SESSIONS),
    ),
}


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return load("longmemeval", {"path": str(write_longmemeval(tmp_path_factory.mktemp("lme") / "official.json",
                                                              items=official_items()))})


def _tasks(bench) -> dict:
    return {t.task_id.split("/")[0]: t for split in ("train", "test") for t in bench.split(split).retrieve}


def _payload(scope: str, ranked: list[str]) -> MemoryPayload:
    return MemoryPayload(metadata={"evidence": [f"{scope}/{r}" for r in ranked]})


def test_the_dcg_weighs_ranks_one_and_two_alike():
    assert dcg([True, False]) == dcg([False, True]) == 1.0
    assert dcg([False, False, True]) == pytest.approx(1 / math.log2(3))
    assert dcg([True, True, True, True]) == pytest.approx(2 + 1 / math.log2(3) + 1 / 2)


def test_targets_are_the_user_turns_marked_has_answer_of_answer_sessions(bench):
    questions = {q.scope: q for q in bench.data.questions}
    assert bench.official_targets(questions["q-boats"]) == (
        f"q-boats/{B1}:1", f"q-boats/{B2}:3", f"q-boats/{B2}:5")
    # The project's clues keep every marked turn, the assistant's too.
    assert questions["q-boats"].clues == (
        f"q-boats/{B1}:1", f"q-boats/{B1}:2", f"q-boats/{B2}:3", f"q-boats/{B2}:5", f"q-boats/{B3}:2")
    assert bench.official_targets(questions["q-advice"]) == ()


@pytest.mark.parametrize("name", list(RANKINGS))
def test_each_official_figure_agrees_with_its_hand_computed_value(bench, name):
    score = bench.score(_tasks(bench)["q-boats"], None, _payload("q-boats", RANKINGS[name]))
    official = {m: v for m, v in score.metrics.items() if m in NAMES}
    assert official == pytest.approx(EXPECTED[name]), name
    assert set(official) == set(NAMES) and score.counted


def test_a_session_listed_without_a_target_is_no_gold_session(bench):
    """B3 is among answer_session_ids, but only its assistant turn is marked: citing it is a
    session hit for the project's session_hit@10 (it holds a clue), not for any official figure."""
    m = bench.score(_tasks(bench)["q-boats"], None, _payload("q-boats", [f"{B3}:2", f"{B3}:1"])).metrics
    assert m["session_hit@10"] == 1.0
    assert m["session_gran_recall_any@5"] == m["session_recall_any@5"] == m["turn_recall_any@5"] == 0.0


def test_questions_without_a_target_and_abstention_questions_have_no_official_figure(bench):
    tasks = _tasks(bench)
    # q-advice: its evidence is an assistant turn. Counted by the project's figures (its clue is
    # cited first: recall@10 = 1), but no official figure, as the official evaluation skips it.
    advice = bench.score(tasks["q-advice"], None, _payload("q-advice", ["answer_advice_1:2"]))
    assert advice.counted and advice.metrics["recall@10"] == 1.0
    assert not set(advice.metrics) & set(NAMES)
    assert "official figures left out" in advice.feedback
    # q-boats_abs has a target, but an abstention question has no figure at all.
    abstention = bench.score(tasks["q-boats_abs"], None, _payload("q-boats_abs", ["answer_boats_abs_1:1"]))
    assert not abstention.counted and abstention.metrics == {}


def test_a_pseudo_questions_clues_are_its_evidence_for_every_figure(bench):
    """A label-free search's question on q-boats' haystack, its clues an assistant turn of a
    filler (F2:2) and a non-target turn of B1 (B1:3). Cited: B1:1 (a release target, not this
    question's) F2:1 B1:3 F2:2.
    - turn: clues at p3 and p4 → any 1, all 1, (w3 + w4) / (w1 + w2) at both cuts;
    - turn-to-session: N(B1) N(F2) B1 F2, four entries → cuts 5 and 10, relevant p3 and p4: the same;
    - session granularity: documents B1 F2, both gold → (w1 + w2) / 2 = 1."""
    pseudo = Question("q-boats/P001", "q-boats", "context", "what did we say about the kayak?", "",
                      (f"q-boats/{F2}:2", f"q-boats/{B1}:3"))
    released = bench.data.questions
    bench.use_questions([pseudo])
    try:
        task = _tasks(bench)["q-boats"]
        m = bench.score(task, None, _payload("q-boats", [f"{B1}:1", f"{F2}:1", f"{B1}:3", f"{F2}:2"])).metrics
    finally:
        bench.use_questions(released)
    both = (W3 + W4) / 2
    assert {k: v for k, v in m.items() if k in NAMES} == pytest.approx(_figures(
        turn=(1, 1, both, 1, 1, both), session=(1, 1, both, 1, 1, both), session_gran=(1, 1, 1, 1, 1, 1)))


def test_every_official_figure_can_rank_a_search(bench, tmp_path):
    """metric_names declares them (and not LoCoMo's recall, which LongMemEval does not report):
    `--option metric=session_recall_any@5` ranks by it, a question without it is not counted."""
    names = type(bench).metric_names(bench.options)
    assert names[0] == "recall@10" and set(NAMES) <= set(names) and not any(m.startswith("locomo_") for m in names)
    assert all(m in bench.describe()["metrics"] for m in NAMES)
    ranked = load("longmemeval", {"path": bench.options.path, "metric": "session_recall_any@5"})
    tasks = _tasks(ranked)
    noans = ranked.ranked_score(tasks["q-boats"], None, _payload("q-boats", RANKINGS["noans"]))
    assert noans.value == 0.0 and noans.counted and noans.metrics["recall@10"] > 0
    assert not ranked.ranked_score(tasks["q-advice"], None, _payload("q-advice", ["answer_advice_1:2"])).counted
    with pytest.raises(ValueError, match="session_gran_ndcg_any@10"):
        load("longmemeval", {"path": bench.options.path, "metric": "locomo_recall@10"})


def test_answer_sessions_are_read_by_their_ids_as_the_official_code_does(tmp_path, capsys):
    """A file naming an evidence session without `answer` in its id: the official code does not
    read it as one (no target, no official figure); said once when the file is read."""
    item = question("q-odd", "single-session-user", "What breed is my dog?", "a beagle", "2023/05/30 (Tue) 10:00", {
        "evidence_1": ("2023/05/20 (Sat) 02:21", [
            {"role": "user", "content": "I adopted a beagle.", "has_answer": True}])})
    odd = load("longmemeval", {"path": str(write_longmemeval(tmp_path / "odd.json", items=[item]))})
    assert "1 haystack session(s) whose id disagrees with answer_session_ids" in capsys.readouterr().err
    assert odd.official_targets(odd.data.questions[0]) == ()
    assert odd.data.questions[0].clues == ("q-odd/evidence_1:1",)

