"""The final confirmation with a question budget is a race by successive halving
(automemo.search.halving): the rounds' prefixes by hand, the bar raced in every round, the duel,
the truly best program picked where first samples rank programs wrongly, and a race interrupted
mid-way that resumes to the same choice."""

from __future__ import annotations

import dataclasses
import random

import pytest

from automemo.runs import RunDir
from automemo.search import halving, question_policy
from automemo.search.config import SearchConfig
from automemo.search.policy import NodeStats, TreeStats
from automemo.search.questions import Race, load_race
from tests.test_question_budget import _search

ORDER = tuple(f"q{j:03d}" for j in range(240))
SAMPLE = 20


def _stats(tables: dict[int, list[float]], asked: dict[int, int], race: Race | None = None,
           reference: int = 1) -> TreeStats:
    """Root #0, the hand design #1 under it, every other table a child of #1; node v was asked
    the first asked[v] questions of the order; μ is the paired mean, as the tree computes it."""
    scores = {v: dict(zip(ORDER[:asked[v]], table)) for v, table in tables.items()}
    means = question_policy.paired_means(scores)
    children = [v for v in tables if v > reference]
    nodes = [NodeStats(id=v, parent=None if v == 0 else 0 if v == reference else reference, mean=means[v], n=1,
                       m={0: 1, reference: len(children)}.get(v, 0), task_scores=scores[v], exact=False,
                       reference=v == reference, questions=asked[v])
             for v in tables]
    return TreeStats(tuple(nodes), len(nodes), sample_size=SAMPLE, validation_questions=len(ORDER),
                     order=ORDER, race=race)


def _race(tables, asked, left, config) -> tuple[int, TreeStats]:
    """Plan the race with `left` questions, run it step by step as the scheduler does, decide."""
    asked = dict(asked)
    race = halving.plan_race(_stats(tables, asked), config, left)
    while True:
        stats = _stats(tables, asked, race)
        step = question_policy.next_confirmation(stats, config, left)
        if step is None:
            return halving.tree_final(stats, config).id, stats
        assert 0 < step.questions <= left
        asked[step.node_id] += step.questions
        left -= step.questions


def test_round_prefixes_split_the_budget_evenly_between_rounds_and_arms():
    # 4 candidates: 2 halving rounds share 300 questions, 150 each; round 1: 4 candidates + the
    # bar, +30 each (L 50); round 2: 2 + the bar, +50 (L 100); the rest goes to the duel
    tables = {v: [0.0 if v == 0 else 0.5] * len(ORDER) for v in range(6)}
    stats = _stats(tables, dict.fromkeys(tables, SAMPLE))
    # identical tables: every candidate its own arm (race_distinct < 0) to see four arms' prefixes
    race = halving.plan_race(stats, SearchConfig(question_budget=999, race_distinct=-1.0), 300)
    assert race == Race(bar=1, arms=(2, 3, 4, 5), prefixes=(50, 100), budget=999)
    one = halving.plan_race(_stats({0: [0.0], 1: [0.0], 2: [1.0]}, {0: 1, 1: 1, 2: 1}), SearchConfig(), 50)
    assert one.arms == (2,) and one.prefixes == ()  # a single candidate goes straight to the duel


def test_each_round_asks_the_bar_and_every_survivor_the_same_questions_and_halves():
    rng = random.Random(1)
    quality = {0: 0.0, 1: 0.5, 2: 0.55, 3: 0.6, 4: 0.65, 5: 0.8}
    tables = {v: [float(rng.random() < q) for _ in ORDER] for v, q in quality.items()}
    config = SearchConfig(question_budget=500, race_candidates=4)
    # the bar was asked 60 questions already: rounds at L 50 and 100 cost it 40, not 80, and the
    # 40 saved go to the duel: the winner and the bar both to L = 120
    chosen, stats = _race(tables, {**dict.fromkeys(tables, SAMPLE), 1: 60}, 300, config)
    c = halving.decide(stats, config)
    assert [len(r.kept) for r in c.rounds] == [2, 1] and [len(r.dropped) for r in c.rounds] == [2, 1]
    for r in c.rounds:  # the kept half had the higher means on the round's questions
        means = dict(r.means)
        assert min(means[k] for k in r.kept) >= max(means[d] for d in r.dropped)
    winner = c.rounds[-1].kept[0]
    # the duel: the winner and the bar on the same questions, more than the last round's
    assert [r.prefix for r in c.rounds] == [50, 100]
    assert stats.node(winner).questions == stats.node(1).questions == 120
    # a dropped arm is asked nothing after its round
    for i, r in enumerate(c.rounds):
        for d in r.dropped:
            assert stats.node(d).questions == r.prefix
            assert next(x for x in c.candidates if x.node_id == d).dropped_in == i
    assert chosen == winner == 5  # far better than the bar: it clears the paired bound


def _misleading_tables(seed: int) -> tuple[dict[int, list[float]], int]:
    """Per-question scores whose first-sample order is wrong: a weak program (#2) was lucky on
    the first sample, the truly best (#4) unlucky; questions share a difficulty, as real
    programs' do. Returns the tables and the truly best node (best mean on every question)."""
    rng = random.Random(seed)
    difficulty = [rng.random() for _ in ORDER]
    quality = {0: 0.0, 1: 0.56, 2: 0.5, 3: 0.6, 4: 0.68, 5: 0.58, 6: 0.55}
    first = {2: 17, 3: 14, 4: 13, 5: 12, 6: 11}  # first-sample scores out of 20, planted
    tables = {}
    for v, q in quality.items():
        row = [float((rng.random() + difficulty[j]) / 2 < q) for j in range(len(ORDER))]
        if v in first:
            ones = set(rng.sample(range(SAMPLE), first[v]))
            row[:SAMPLE] = [float(j in ones) for j in range(SAMPLE)]
        tables[v] = row
    best = max((v for v in tables if v > 1), key=lambda v: sum(tables[v]))
    return tables, best


def test_the_race_picks_the_truly_best_where_first_samples_rank_programs_wrongly():
    config = SearchConfig(question_budget=1000)  # the default race of 4 candidates
    left = 2 * (len(ORDER) - SAMPLE)  # the reserve a search keeps: the bar and one candidate whole
    right, misled = 0, 0
    for seed in range(10):
        tables, best = _misleading_tables(seed)
        asked = dict.fromkeys(tables, SAMPLE)
        first = _stats(tables, asked)
        leader = max((v for v in first.nodes if v.id > 1), key=lambda v: v.mean).id
        assert best == 4 and leader == 2 != best  # the fixture misleads a first-sample ranking
        # today's bet would pay the first-sample leader whole: it loses to the truly best
        misled += sum(tables[leader]) < sum(tables[best])
        chosen, _ = _race(tables, asked, left, config)
        right += chosen == best
    assert misled == 10
    assert right >= 9, f"the race picked the truly best in {right} of 10 seeds"


def test_without_a_lead_over_the_bar_the_hand_design_is_kept():
    rng = random.Random(3)
    tables = {0: [0.0] * len(ORDER), 1: [float(rng.random() < 0.6) for _ in ORDER]}
    tables[2] = list(tables[1])  # the same answers as the bar: d = 0
    tables[3] = [float(rng.random() < 0.3) for _ in ORDER]
    config = SearchConfig(question_budget=1000)
    chosen, stats = _race(tables, dict.fromkeys(tables, SAMPLE), 200, config)
    assert chosen == 1 and halving.decide(stats, config).chosen == 1


class Killed(BaseException):
    """Stands for kill -9 in the middle of a confirmation step: the step is never committed."""


def test_a_race_interrupted_mid_way_resumes_to_the_same_choice(tmp_path, monkeypatch):
    whole, _, final, _ = _search(tmp_path / "whole", steps=10, budget=330, sample=10, best_at=4)
    assert final["confirmation"]["race"], "no race round was run: this test could not fail"
    race = load_race(whole.path)

    from tests import test_question_budget as planted

    evaluate = planted.PlantedQuestions.evaluate
    race_file = tmp_path / "cut" / "runs" / "r" / "confirmation.json"
    confirms = []

    def dies_on_the_third_confirmation(self, source, **kw):
        if race_file.exists():  # written when the race starts, before its first step
            confirms.append(kw.get("node_id"))
            if len(confirms) == 3:
                raise Killed()
        return evaluate(self, source, **kw)

    monkeypatch.setattr(planted.PlantedQuestions, "evaluate", dies_on_the_third_confirmation)
    with pytest.raises(Killed):
        _search(tmp_path / "cut", steps=10, budget=330, sample=10, best_at=4)
    monkeypatch.setattr(planted.PlantedQuestions, "evaluate", evaluate)
    cut = RunDir.open(tmp_path / "cut" / "runs" / "r")
    assert load_race(cut.path) == race and cut.final() is None
    _, _, resumed, _ = _search(tmp_path / "cut", steps=10, budget=330, sample=10, best_at=4)
    assert resumed["node_id"] == final["node_id"]
    assert resumed["confirmation"] == final["confirmation"]
    assert resumed["questions"]["scored"] == final["questions"]["scored"] <= 330


def test_a_confirmation_whose_evaluation_breaks_ends_the_race_instead_of_asking_again(tmp_path, monkeypatch):
    from tests import test_question_budget as planted

    evaluate = planted.PlantedQuestions.evaluate
    race_file = tmp_path / "runs" / "r" / "confirmation.json"

    def breaks_in_the_race(self, source, **kw):
        if race_file.exists():
            raise RuntimeError("the scorer broke")
        return evaluate(self, source, **kw)

    monkeypatch.setattr(planted.PlantedQuestions, "evaluate", breaks_in_the_race)
    run, _, final, _ = _search(tmp_path, steps=6, budget=200, sample=10)
    confirms = [a for a in run.actions() if a["kind"] == "confirm"]
    assert len(confirms) == 1 and confirms[0]["outcome"] == "eval_error"
    assert any(e["kind"] == "race" and "ended" in e["message"] for e in run.events())
    assert final["node_id"] is not None


def _unlike_tables(seed: int) -> dict[int, list[float]]:
    """The bar #1 and four near-copies of it (#2-#5: its answers with a few more right) whose first
    samples put them ahead, and #6, a program unlike the bar and truly far better, whose first
    sample was unlucky: fifth by μ on it, below every copy."""
    rng = random.Random(seed)
    bar = [float(rng.random() < 0.55) for _ in ORDER]
    bar[:SAMPLE] = [float(j < SAMPLE // 2) for j in range(SAMPLE)]           # 10 of 20
    tables = {0: [0.0] * len(ORDER), 1: bar}
    for v in range(2, 6):
        row = [1.0 if s == 0.0 and rng.random() < 0.05 else s for s in bar]
        row[:SAMPLE] = bar[:SAMPLE]
        row[SAMPLE // 2 + v - 2], row[SAMPLE // 2 + v - 1] = 1.0, 1.0        # 12 of 20: +0.10
        tables[v] = row
    unlike = [float(rng.random() < 0.8) for _ in ORDER]
    ones = set(rng.sample(range(SAMPLE), 11))                                  # 11 of 20: +0.05
    unlike[:SAMPLE] = [float(j in ones) for j in range(SAMPLE)]
    tables[6] = unlike
    return tables


def test_a_program_unlike_the_bar_races_though_near_copies_lead_it_on_first_samples():
    config = SearchConfig(question_budget=1000)  # the default race of 4 candidates
    left = 2 * (len(ORDER) - SAMPLE)
    for seed in range(10):
        tables = _unlike_tables(seed)
        asked = dict.fromkeys(tables, SAMPLE)
        first = _stats(tables, asked)
        by_mean = sorted((v for v in first.nodes if v.id > 1), key=lambda v: (-v.mean, v.id))
        assert 6 not in [v.id for v in by_mean[:config.race_candidates]]  # μ alone leaves it out
        assert 6 in [v.id for v in halving.race_arms(first, config)]
        chosen, _ = _race(tables, asked, left, config)
        assert chosen == 6, f"seed {seed}: the race chose #{chosen}"


def _copies_tables(seed: int, first: int) -> dict[int, list[float]]:
    """Four near-copies of one program (#2-#5: the same answers but for a question in fifty,
    their first `first` answers identical and far ahead of the bar's) and #6, a program unlike
    them and truly better, whose first answers were the less lucky: the copies' bounds all lie
    above its."""
    rng = random.Random(seed)
    bar = [float(rng.random() < 0.55) for _ in ORDER]
    bar[:first] = [float(j % 2 == 0) for j in range(first)]                  # half right
    tables = {0: [0.0] * len(ORDER), 1: bar}
    base = [float(rng.random() < 0.68) for _ in ORDER]
    base[:first] = [float(j % 5 != 0) for j in range(first)]                  # 80% right
    for v in range(2, 6):
        tables[v] = [1.0 - s if j >= first and rng.random() < 0.02 else s for j, s in enumerate(base)]
    unlike = [float(rng.random() < 0.8) for _ in ORDER]
    ones = set(rng.sample(range(first), round(0.65 * first)))                # 65% right
    unlike[:first] = [float(j in ones) for j in range(first)]
    tables[6] = unlike
    return tables


def test_near_copies_race_as_one_arm_so_a_program_unlike_them_races_and_wins():
    config = SearchConfig(question_budget=1000)  # the default race: 4 candidates, race_distinct 0.1
    every = dataclasses.replace(config, race_distinct=-1.0)  # the rule before: every copy an arm
    first = 60
    left = 2 * (len(ORDER) - first)
    right, before = 0, 0
    for seed in range(10):
        tables = _copies_tables(seed, first)
        assert max(tables, key=lambda v: sum(tables[v])) == 6   # the truly best
        asked = dict.fromkeys(tables, first)
        stats = _stats(tables, asked)
        assert [v.id for v in halving.race_arms(stats, every)] == [2, 3, 4, 5]  # copies take every arm
        arms = [v.id for v in halving.race_arms(stats, config)]
        assert 6 in arms and len([a for a in arms if 2 <= a <= 5]) == 1
        right += _race(tables, asked, left, config)[0] == 6
        before += _race(tables, asked, left, every)[0] == 6
    assert before == 0
    assert right >= 9, f"the race picked the truly best in {right} of 10 seeds"


def test_two_programs_that_agree_on_a_small_sample_are_not_taken_for_copies():
    """Agreeing on every one of 12 shared questions bounds the share they differ on only at 0.25
    (Wilson, z = 2): two good programs often agree on a small sample; on 60 at 0.06: copies."""
    config = SearchConfig(question_budget=1000)
    small = {0: [0.0] * 12, 1: [0.5] * 12, 2: [1.0] * 12, 3: [1.0] * 12}
    assert [v.id for v in halving.race_arms(_stats(small, dict.fromkeys(small, 12)), config)] == [2, 3]
    large = {0: [0.0] * 60, 1: [0.5] * 60, 2: [1.0] * 60, 3: [1.0] * 60}
    assert [v.id for v in halving.race_arms(_stats(large, dict.fromkeys(large, 60)), config)] == [2]
