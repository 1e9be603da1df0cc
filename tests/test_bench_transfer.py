"""`automemo bench transfer`: a run found on one benchmark (Mem-Gallery, a written run directory)
carried to another (a LongMemEval file): its selection and its best hand design scored on the
other's test split, and their paired difference equal to the one worked out by hand."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from automemo.benchmarks import load
from automemo.cli import main
from automemo.measurements.stand_ins.synthetic_run import write_synthetic_run
from longmemeval_data import write_longmemeval

# Cites the first N turns of the question's user, in the order they were stored (date order).
FIRST_N = '''
from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.refs = {{}}

    def update(self, episode):
        self.refs.setdefault(episode.metadata.get("user"), []).extend(s.ref for s in episode.steps if s.ref)

    def retrieve(self, task):
        return MemoryPayload(metadata={{"evidence": self.refs.get(task.metadata.get("user"), [])[:{n}]}})
'''

# Every haystack of the fixture is 3 filler sessions of 2 turns, then its evidence sessions of 2
# turns each: the 7th turn is the first evidence session's first turn, the 9th the second's.
# Recall@10 of citing the first 9 and the first 7 turns, question by question, by hand:
BY_HAND = {            # first 9, first 7
    "q-ssu/Q": (1.0, 1.0),   # gold ssu_1:1 is turn 7
    "q-ssa/Q": (1.0, 0.0),   # gold ssa_1:2 (the assistant's) is turn 8
    "q-ssp/Q": (1.0, 1.0),
    "q-ms/Q": (1.0, 0.5),    # gold ms_1:1 and ms_2:1 are turns 7 and 9
    "q-ku/Q": (1.0, 0.5),
    "q-tr/Q": (1.0, 1.0),
}                            # q-ssu_abs is an abstention question: not counted


def test_transfer_pairs_the_selection_with_the_hand_design_as_a_hand_computation(tmp_path, capsys):
    run = write_synthetic_run(tmp_path / "runs", nodes=4, seed=0)
    config = json.loads((run.path / "config.json").read_text())
    config["benchmark"] = {"name": "memgallery", "options": {"path": "@mem-gallery-sample"}}
    (run.path / "config.json").write_text(json.dumps(config))
    final = run.final()
    hand_design = 0                                  # the root: the run's one hand design
    selection = final["node_id"] if final["node_id"] != hand_design else 1
    run.write_final({**final, "node_id": selection})
    (run.path / "nodes" / str(selection) / "program.py").write_text(FIRST_N.format(n=9))
    (run.path / "nodes" / str(hand_design) / "program.py").write_text(FIRST_N.format(n=7))

    release = write_longmemeval(tmp_path / "longmemeval_s.json")
    options = {"path": str(release), "protocol": "paper"}  # 1:4 by question: most questions in test
    out = tmp_path / "transfer.json"
    code = main(["bench", "transfer", "--from", str(run.path), "--benchmark", "longmemeval",
                 *[a for k, v in options.items() for a in ("--option", f"{k}={v}")],
                 "--sandbox", "unsafe", "--out", str(out), "--workdir", str(tmp_path / "w")])
    assert code == 0
    doc = json.loads(out.read_text())

    test_questions = [t.task_id for t in load("longmemeval", options).split("test").retrieve if t.task_id in BY_HAND]
    assert len(test_questions) >= 5
    diffs = [BY_HAND[q][0] - BY_HAND[q][1] for q in test_questions]
    d = doc["selection_vs_hand_design"]
    assert d["tasks"] == len(test_questions)
    assert d["difference"] == pytest.approx(statistics.fmean(diffs))
    assert d["se"] == pytest.approx(statistics.stdev(diffs) / math.sqrt(len(diffs)))
    programs = doc["programs"]
    assert (programs["selection"]["node_id"], programs["hand_design"]["node_id"]) == (selection, hand_design)
    assert programs["selection"]["test"] == pytest.approx(statistics.fmean(BY_HAND[q][0] for q in test_questions))
    assert programs["hand_design"]["test"] == pytest.approx(statistics.fmean(BY_HAND[q][1] for q in test_questions))
    printed = capsys.readouterr().out
    assert f"{d['difference']:+.3f} ± {d['se']:.3f}" in printed

    # A run that kept its hand design: the selection is that seed, and the best generated
    # candidate of its confirmation is carried over beside it, paired the same way.
    run.write_final({**final, "node_id": hand_design, "confirmation": {
        "bar": hand_design, "candidates": [{"node_id": selection}]}})
    assert main(["bench", "transfer", "--from", str(run.path), "--benchmark", "longmemeval",
                 *[a for k, v in options.items() for a in ("--option", f"{k}={v}")],
                 "--sandbox", "unsafe", "--out", str(out), "--workdir", str(tmp_path / "w")]) == 0
    kept = json.loads(out.read_text())
    assert kept["kept_hand_design"] and kept["selection_vs_hand_design"]["difference"] == 0.0
    assert kept["programs"]["best_candidate"]["node_id"] == selection
    assert kept["best_candidate_vs_hand_design"] == pytest.approx(d)
    assert "kept its best hand design" in capsys.readouterr().out


def test_transfer_from_a_folder_that_is_no_finished_run_says_so(tmp_path, capsys):
    code = main(["bench", "transfer", "--from", str(tmp_path), "--benchmark", "longmemeval",
                 "--option", "path=x.json", "--sandbox", "unsafe"])
    assert code == 2 and "is not a run directory" in capsys.readouterr().err
    run = write_synthetic_run(tmp_path / "runs", nodes=3, seed=1, finished=False)
    code = main(["bench", "transfer", "--from", str(run.path), "--benchmark", "longmemeval",
                 "--option", "path=x.json", "--sandbox", "unsafe"])
    assert code == 2 and "no selection yet" in capsys.readouterr().err
