"""`automemo bench labelfree`: on logs that have labelled questions, a labelled and a label-free
search at the same steps, every label-free node scored on the real validation questions, the rank
correlation of the two, and both selections' test leads over the best seed."""

from __future__ import annotations

import json

import pytest
from scipy.stats import spearmanr

from automemo.cli import main
from automemo.measurements.labelfree import spearman
from automemo.paths import list_seeds
from automemo.runs import RunDir
from automemo.search.view import RunView
from conversation_data import jsonl, write_user_logs_many


def test_spearman_takes_average_ranks_for_ties_as_scipy_does():
    cases = [([1, 2, 3, 4], [4, 3, 2, 1]), ([0.5, 0.5, 0.7, 0.1, 0.9], [0.2, 0.3, 0.3, 0.0, 0.8]),
             ([3, 1, 2, 2, 5, 4], [1, 1, 2, 3, 3, 9])]
    for a, b in cases:
        assert spearman(a, b) == pytest.approx(spearmanr(a, b).statistic)
    assert spearman([1, 1, 1], [1, 2, 3]) == 0.0  # a constant score ranks nothing


def _labelled_logs(root):
    """The four people's logs with a few labelled questions each (what the bench measures against)."""
    files = write_user_logs_many(root, sessions=6, turns=10)
    sessions = [json.loads(line) for line in files["path"].read_text().splitlines()]
    asked = []
    for record in sessions:
        person, s = record["conversation"], int(record["id"].rsplit("-", 1)[1])
        if s in (1, 3, 4):
            first = record["turns"][0]
            words = [w.strip(".,;?") for w in first["text"].split() if len(w) > 5][:3]
            asked.append({"id": f"q-{record['id']}", "conversation": person,
                          "question": f"When did I talk about the {' and the '.join(words)}?",
                          "evidence": [first["id"]]})
    files["questions"] = jsonl(root / "questions.jsonl", asked)
    return files


@pytest.mark.slow
def test_bench_labelfree_measures_the_proxy_against_real_questions(tmp_path, capsys):
    files = _labelled_logs(tmp_path / "logs")
    out = tmp_path / "labelfree.json"
    code = main(["bench", "labelfree", "--benchmark", "conversations", "--option", f"path={files['path']}",
                 "--option", f"questions={files['questions']}", "--steps", "4", "--sandbox", "unsafe",
                 "--out", str(out), "--workdir", str(tmp_path / "w")])
    assert code == 0
    doc = json.loads(out.read_text())
    searches = {s["questions"]: s for s in doc["searches"]}
    assert set(searches) == {"benchmark", "self"}
    free, labelled = searches["self"], searches["benchmark"]

    # Every node the label-free search evaluated is scored on the real questions; the seeds it swept
    # score there what the bench's own scoring of the seeds gave on validation.
    seeds = {s["name"]: s for s in doc["seeds"]}
    by_text = {path.read_text(): path.stem for path in list_seeds()}
    run = RunDir.open(tmp_path / "w" / "runs" / "self-steps4-seed0")
    view = RunView.load(run)
    evaluated = {n.id: n.mean for n in view.nodes if n.evaluated}
    assert {n for n, _, _ in free["nodes"]} == set(evaluated) and len(evaluated) >= 3
    swept = {n: by_text[run.program_source(n)] for n in evaluated if run.program_source(n) in by_text}
    assert len(swept) >= 2, "the sweep transplanted seeds into the label-free search"
    for node_id, pseudo, real in free["nodes"]:
        assert pseudo == pytest.approx(evaluated[node_id])  # the run's own (pseudo) score
        if node_id in swept:  # scored on the real questions as the bench scored the seed itself
            assert real == pytest.approx(seeds[swept[node_id]]["validation"])
    assert any(p != pytest.approx(r) for _, p, r in free["nodes"])  # other questions, other scores
    assert free["spearman"] == pytest.approx(spearman([p for _, p, _ in free["nodes"]], [r for _, _, r in free["nodes"]]))

    best = max(s["test"] for s in doc["seeds"])
    row = doc["summary"]["per_seed"][0]
    assert row["label_free_lead"] == pytest.approx(free["test"] - best)
    assert row["labelled_lead"] == pytest.approx(labelled["test"] - best)
    assert row["cost_ratio"] == pytest.approx(free["wall_s"] / labelled["wall_s"])
    assert "automemo bench labelfree" in doc["command"]
    printed = capsys.readouterr().out
    assert "label-free lead" in printed and "Spearman" in printed


def test_bench_labelfree_refuses_logs_without_questions(tmp_path, capsys):
    files = write_user_logs_many(tmp_path / "logs")
    code = main(["bench", "labelfree", "--benchmark", "conversations", "--option", f"path={files['path']}",
                 "--steps", "2", "--sandbox", "unsafe", "--out", str(tmp_path / "x.json")])
    assert code != 0
    err = capsys.readouterr().err
    assert "labelled questions" in err
    assert not (tmp_path / "x.json").exists()
