"""Replay a budgeted search's final race offline, on every candidate's full validation scores,
under each arm rule: which node the race would choose from the run's own first samples, and
over other question orders (stratified like the run's, other seeds) how often it chooses each.

    python3 scripts/race_replay.py RUN_DIR EVAL_DIR [ORDERS]

RUN_DIR: a run with a question budget whose every evaluation before the race was a first sample
(the seed sweep and the steps; its questions.json gives the order and the sample size). EVAL_DIR:
`automemo eval NODE_PROGRAM --split train --out EVAL_DIR/<node>.json` of the bar and of every
generated node, run from the folder holding their evidence (`evals/`). Hand designs other than
the bar are left out (the bar is the best hand design by μ).
"""

from __future__ import annotations

import glob
import json
import os
import sys
from pathlib import Path

from automemo.search import halving, question_policy
from automemo.search import questions as Q
from automemo.search.config import SearchConfig
from automemo.search.policy import NodeStats, TreeStats


def load(eval_dir: Path) -> tuple[dict[int, dict[str, float]], dict[str, str]]:
    full, category = {}, {}
    for f in glob.glob(str(eval_dir / "*.json")):
        ev = json.load(open(f))["evaluations"][-1]
        scores = {}
        for r in glob.glob(os.path.join(ev["evidence_dir"], "tasks", "*", "result.json")):
            x = json.load(open(r))
            category[x["task_id"]] = x["category"]
            if x["counted"] and not x["excluded"] and x["error"] is None:
                scores[x["task_id"]] = x["score"]
        full[int(Path(f).stem)] = scores
    return full, category


def race(full, bar, order, sample, budget, left, arms, rule):
    asked = dict.fromkeys(full, sample)
    nodes = sorted(full)

    def stats(r=None):
        scores = {v: {q: full[v][q] for q in order[:asked[v]] if q in full[v]} for v in nodes}
        means = question_policy.paired_means(scores)
        return TreeStats(tuple(NodeStats(id=v, parent=None if v == 0 else 0, mean=means.get(v, 0.0), n=1,
                                         m=len(nodes) - 1 if v == 0 else 0, task_scores=scores[v],
                                         reference=v in (0, bar), questions=asked[v]) for v in nodes),
                         len(nodes), sample_size=sample, validation_questions=len(order), order=order, race=r)

    config = SearchConfig(question_budget=budget, race_candidates=arms)
    rules = {"bound": halving.race_arms,
             "mean": lambda s, c: sorted([v for v in s.nodes if v.n > 0 and not v.stopped and not v.reference
                                          and v.parent is not None], key=lambda v: (-v.mean, v.id))[:c.race_candidates]}
    kept, halving.race_arms = halving.race_arms, rules[rule]
    try:
        planned = halving.plan_race(stats(), config, left)
        while True:
            s = stats(planned)
            step = question_policy.next_confirmation(s, config, left)
            if step is None:
                return halving.tree_final(s, config).id, planned.arms
            asked[step.node_id] += step.questions
            left -= step.questions
    finally:
        halving.race_arms = kept


def main(run_dir: str, eval_dir: str, orders: int = 40) -> None:
    run = Path(run_dir)
    plan = json.load(open(run / "questions.json"))
    final = json.load(open(run / "final.json"))
    budget, sample, order = final["questions"]["budget"], plan["sample_size"], tuple(plan["order"])
    full, category = load(Path(eval_dir))
    bar = json.load(open(run / "confirmation.json"))["bar"]
    full[0] = dict.fromkeys(full[bar], 0.0)  # the root (no memory) scores nothing
    mean = {v: sum(s.values()) / len(s) for v, s in full.items() if v}
    steps = json.load(open(run / "config.json"))["search"]["steps"]
    left = budget - (steps + 1) * sample
    print("full validation:", ", ".join(f"#{v} {m:.3f}" for v, m in sorted(mean.items(), key=lambda kv: -kv[1])))
    pairs = [(q, category[q]) for q in order]
    for rule in ("mean", "bound"):
        for arms in (4, 8):
            chosen, raced = race(full, bar, order, sample, budget, left, arms, rule)
            wins: dict[int, int] = {}
            for seed in range(orders):
                w, _ = race(full, bar, Q.stratified_order(pairs, 1000 + seed), sample, budget, left, arms, rule)
                wins[w] = wins.get(w, 0) + 1
            print(f"{rule:5s} {arms} arms: the run's order -> #{chosen} (arms {list(raced)}); over {orders} orders "
                  + ", ".join(f"#{w} {c}" for w, c in sorted(wins.items(), key=lambda kv: -kv[1]))
                  + f"; the chosen's mean full validation {sum(mean[w] * c for w, c in wins.items()) / orders:.4f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *(int(a) for a in sys.argv[3:]))
