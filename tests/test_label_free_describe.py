"""What a label-free search's task description says (issue 56): an LLM meta agent reads
`benchmark.describe()` as its task, so a label-free benchmark describes only what such a search
may see: nothing of the labelled questions the test split keeps (their types, their counts) nor
the clue ids of clues the data dropped or repaired."""

from __future__ import annotations

import json
from pathlib import Path

from automemo import benchmarks
from automemo.assembly import task_description
from automemo.benchmarks.pseudo.config import PseudoQuestionConfig
from automemo.benchmarks.pseudo.label_free import make_label_free
from conversation_data import write_user_logs_many


def test_a_label_free_benchmark_describes_nothing_labelled(tmp_path: Path):
    logs = {k: str(v) for k, v in write_user_logs_many(tmp_path, questions=True).items()}
    bench = benchmarks.load("conversations", logs)
    labelled = list(bench.data.questions)
    assert labelled
    record = make_label_free(bench, "self", PseudoQuestionConfig())
    described = bench.describe()
    told = task_description(bench)
    for question in labelled:
        assert question.question_id not in told and question.question not in told
        for clue in question.clues:
            assert str(clue) not in json.dumps(described.get("dropped_clues", {}))
    assert "questions" not in described and "dropped_clues" not in described and "repaired_clues" not in described
    assert "test_labelled" not in described["label_free"] and "labelled_train_unread" not in described["label_free"]
    assert described["label_free"]["train_questions"] == record.train_questions  # its own questions stay
    assert {q.qtype for q in labelled} - {"context"} and not any(
        f'"{t}"' in told for t in {q.qtype for q in labelled} - {"context", "refer", "cloze", "date"})
