"""The figures published memory benchmarks quote, against values computed by hand: session-level
any-hit@k, LoCoMo's official fractional evidence recall, and both per category, over all
questions and over all but the adversarial ones."""

from __future__ import annotations

import json

import pytest

from automemo.benchmarks import load
from automemo.contract import MemoryPayload
from automemo.evaluation.aggregate import summarize
from automemo.evaluation.breakdown import ALL, NON_ADVERSARIAL, breakdown_of, metric_breakdown
from automemo.evaluation.result import TaskResult
from automemo.interaction.evidence import locomo_recall_at_k, session_hit_at_k
from conversation_data import write_locomo

SESSION_OF = {"a/D1:1": "a/D1", "a/D1:2": "a/D1", "a/D2:1": "a/D2", "a/D2:2": "a/D2", "a/D3:1": "a/D3"}
ALIASES = {"a/D2:1:IMG1": ("a/D2:1",)}


def test_session_hit_counts_a_cited_turn_of_a_gold_session_within_the_first_k():
    gold = ["a/D1:1", "a/D2:2"]
    assert session_hit_at_k(["a/D3:1", "a/D1:2"], gold, 10, SESSION_OF) == 1.0  # D1:2 lies in D1
    assert session_hit_at_k(["a/D3:1"], gold, 10, SESSION_OF) == 0.0
    assert session_hit_at_k(["a/D3:1", "a/D1:2"], gold, 1, SESSION_OF) == 0.0  # past k
    assert session_hit_at_k(["a/D2:1:IMG1"], gold, 10, SESSION_OF, ALIASES) == 1.0  # the image's turn lies in D2
    assert session_hit_at_k(["nonsense"], gold, 10, SESSION_OF) == 0.0
    with pytest.raises(ValueError):
        session_hit_at_k(["a/D1:1"], [], 10, SESSION_OF)


def test_locomo_recall_is_the_fraction_of_gold_ids_retrieved_and_1_without_evidence():
    assert locomo_recall_at_k(["a/D3:1", "a/D1:2"], ["a/D1:1", "a/D2:2"], 10) == 0.0  # right session, wrong turns
    assert locomo_recall_at_k(["a/D2:1:IMG1", "a/D1:1"], ["a/D2:1", "a/D3:1", "a/D1:1"], 10, ALIASES) == pytest.approx(2 / 3)
    assert locomo_recall_at_k(["a/D3:1", "a/D1:1"], ["a/D1:1"], 1) == 0.0  # past k
    assert locomo_recall_at_k([], [], 10) == 1.0  # as the official scorer has it


def test_breakdown_per_category_with_and_without_the_adversarial_category(tmp_path):
    path = write_locomo(tmp_path / "locomo10.json")
    data = json.loads(path.read_text())
    # A question without evidence, as four of the published file's category-3 questions are.
    data[0]["qa"].append({"question": "Why pottery?", "answer": "calm", "evidence": [], "category": 3})
    path.write_text(json.dumps(data))
    bench = load("locomo", {"path": str(path)})
    tasks = {t.task_id: t for t in bench.split("train").retrieve + bench.split("test").retrieve}
    cited = {  # conv-1: sessions D1 (D1:1-3) and D2 (D2:1-3)
        "Q001": ["D1:2"],          # cat4, gold D1:1: right session, wrong turn
        "Q002": ["D2:1"],          # cat1, gold D2:1: found
        "Q003": ["D2:3", "D1:1"],  # cat2, gold D2:1 D2:3: half
        "Q004": ["D2:2"],          # cat3, gold D1:3: wrong session
        "Q005": ["D2:3"],          # cat5 (adversarial), its released evidence D2:3: found
        "Q006": [],                # cat3 without evidence
    }
    results = []
    for q, refs in cited.items():
        task = tasks[f"conv-1/{q}"]
        score = bench.score(task, None, MemoryPayload(metadata={"evidence": [f"conv-1/{r}" for r in refs]}))
        results.append(TaskResult(task.task_id, task.category, score.value, score.metrics, counted=score.counted))
    assert bench.adversarial_categories() == frozenset({"cat5"})
    result = summarize(results, update_s=0.0, wall_s=0.0, info={"adversarial_categories": ["cat5"]})
    # The score's own mean counts Q001-Q004 only.
    assert result.n_scored == 4 and result.mean == pytest.approx((0 + 1 + 0.5 + 0) / 4)
    assert result.metrics["session_hit@10"] == pytest.approx(3 / 4)
    rows = metric_breakdown(result)
    every, non_adversarial = rows.row(ALL), rows.row(NON_ADVERSARIAL)
    assert every.questions == 6 and non_adversarial.questions == 5
    assert every.metrics["session_hit@10"] == pytest.approx((1 + 1 + 1 + 0 + 1) / 5)
    assert non_adversarial.metrics["session_hit@10"] == pytest.approx((1 + 1 + 1 + 0) / 4)
    assert every.metrics["locomo_recall@10"] == pytest.approx((0 + 1 + 0.5 + 0 + 1 + 1) / 6)
    assert non_adversarial.metrics["locomo_recall@10"] == pytest.approx((0 + 1 + 0.5 + 0 + 1) / 5)
    assert every.metrics["recall@10"] == non_adversarial.metrics["recall@10"] == pytest.approx(1.5 / 4)
    cat3 = rows.row("cat3")
    assert cat3.questions == 2 and cat3.metrics == pytest.approx(
        {"locomo_recall@10": 0.5, "session_hit@10": 0.0, "recall@10": 0.0, "ndcg@10": 0.0, "hit@10": 0.0})
    assert rows.row("cat5").metrics == {"locomo_recall@10": 1.0, "session_hit@10": 1.0}
    # Without adversarial categories there is no second total; excluded tasks are left out.
    plain = breakdown_of([*results, TaskResult("x", "cat1", 0.0, {"session_hit@10": 0.0}, excluded=True)])
    assert [r.name for r in plain.rows][-1] == ALL and plain.row(ALL).questions == 6


def test_the_report_node_page_shows_the_breakdown(tmp_path):
    from automemo.measurements.stand_ins.synthetic_run import write_synthetic_run
    from automemo.report.build import build_report

    run = write_synthetic_run(tmp_path, nodes=3, tasks_per_eval=3, screenshots_per_task=0, run_id="t")
    node = next(n for n in run.nodes() if n["status"] != "failed")
    ev = run.evaluations(node["id"])[-1]
    summary_file = run.path / ev["evidence_dir"] / "summary.json"
    summary = json.loads(summary_file.read_text())
    tasks = summary["result"]["tasks"]
    tasks[0].update(category="cat1", metrics={"recall@10": 0.5, "session_hit@10": 1.0, "locomo_recall@10": 0.5})
    tasks[1].update(category="cat1", metrics={"recall@10": 0.0, "session_hit@10": 0.0, "locomo_recall@10": 0.0})
    tasks[2].update(category="cat5", counted=False, metrics={"session_hit@10": 1.0, "locomo_recall@10": 1.0})
    summary["result"]["info"]["adversarial_categories"] = ["cat5"]
    summary_file.write_text(json.dumps(summary))
    page = (build_report(run, quiet=True).parent / "nodes" / f"{node['id']}.html").read_text()
    table = page[page.index('id="breakdown"'):]
    table = table[:table.index("</table>")]
    assert "all but adversarial" in table and "all questions" in table and "session_hit@10" in table
    rows = {name: next(r for r in table.split("<tr>") if f"<strong>{name}</strong>" in r)
            for name in ("all questions", "all but adversarial")}
    # locomo_recall@10 and session_hit@10 over all questions: (0.5 + 0 + 1) / 3 and (1 + 0 + 1) / 3;
    # over all but cat5: (0.5 + 0) / 2 and (1 + 0) / 2; recall@10 0.25 in both.
    assert [c for c in ("0.500", "0.667", "0.250") if c in rows["all questions"]] == ["0.500", "0.667", "0.250"]
    assert "0.667" not in rows["all but adversarial"] and rows["all but adversarial"].count("0.250") == 2
