"""The label-free search's benchmark: its train split asks pseudo-questions only (no labelled
question is read), its memory lacks the turns the questions were cut from, the test split keeps
labelled questions where the data has them, the LLM path writes questions through a real HTTP
server on the ledger and pays for none twice, the ranking stage is fitted on other kinds than it
is judged on, and `automemo search --questions self` runs on a user's own logs end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from automemo import benchmarks
from automemo.assembly import AssemblyError, load_benchmark
from automemo.benchmarks.conversation.model import Question
from automemo.benchmarks.pseudo.config import PseudoQuestionConfig
from automemo.benchmarks.pseudo.label_free import LabelFreeError, make_label_free
from automemo.config import build_run_config
from automemo.contract import MemoryPayload
from automemo.llm import Ledger, LLMClient
from automemo.llm.config import LLMConfig, RoleConfig
from conversation_data import write_user_logs_many
from longmemeval_data import write_longmemeval


def _logs(tmp_path: Path, **how) -> dict[str, str]:
    return {k: str(v) for k, v in write_user_logs_many(tmp_path, **how).items()}


def test_the_search_reads_no_labelled_question_and_the_test_split_keeps_them(tmp_path):
    bench = benchmarks.load("conversations", _logs(tmp_path, questions=True))
    labelled = {q.question_id: q for q in bench.data.questions}
    record = make_label_free(bench, "self", PseudoQuestionConfig())
    train, test = bench.split("train"), bench.split("test")
    scored = [t for t in train.retrieve if not t.data.get("guard")]  # guard questions: test_pseudo_scoring.py
    assert scored and all(t.category == "context" for t in scored)
    assert not {t.task_id for t in train.retrieve} & set(labelled)
    assert not {t.instruction for t in train.retrieve} & {q.question for q in labelled.values()}
    assert {t.task_id for t in test.retrieve} == {i for i, q in labelled.items() if q.scope in bench.split_scopes("test")}
    assert record.labelled_train_unread == 2 and record.test_labelled == 2 and record.test_pseudo == 0
    # The train memory lacks the held-out turns; the test memory is whole.
    store_turns = {t.ref for s in bench.data.sessions for t in s.turns}
    assert record.held_out_turns > 0
    held = sum(len(s.turns) for s in bench.data.sessions if s.scope in bench.split_scopes("train"))
    assert held == 2 * 6 * 10 - record.held_out_turns
    assert all(len(s.turns) == 10 for s in bench.data.sessions if s.scope in bench.split_scopes("test"))
    for task in train.retrieve:  # every clue is a turn the memory holds
        assert set(task.data["clues"]) <= store_turns
    assert bench.describe()["label_free"]["train_questions"] == len(scored)


def test_without_labelled_questions_the_test_conversations_get_pseudo_questions_of_their_own(tmp_path):
    bench = benchmarks.load("conversations", _logs(tmp_path))
    record = make_label_free(bench, "self", PseudoQuestionConfig())
    assert record.test_labelled == 0 and record.test_pseudo == len(bench.split("test").retrieve) > 0
    assert {t.data["user"] for t in bench.split("test").retrieve} == set(bench.split_scopes("test"))
    # Written from the test conversations alone: held out of their memory too.
    assert sum(len(s.turns) for s in bench.data.sessions) < 4 * 6 * 10


def _config(**benchmark) -> object:
    return build_run_config({"benchmark": benchmark})


def test_what_cannot_be_searched_without_labels_is_refused_with_what_to_do(tmp_path):
    logs = _logs(tmp_path)
    client = LLMClient(LLMConfig())
    with pytest.raises(AssemblyError, match="needs a conversation benchmark"):
        load_benchmark(_config(name="minigallery", questions="self"), client)
    with pytest.raises(AssemblyError, match='mode = "retrieval"'):
        load_benchmark(_config(name="conversations", options={**logs, "mode": "qa"}, questions="self"), client)
    with pytest.raises(AssemblyError, match="meta LLM role.*not configured"):
        load_benchmark(_config(name="conversations", options=logs, questions="llm"), client)
    tiny = tmp_path / "tiny.jsonl"
    tiny.write_text(json.dumps({"id": "s", "conversation": "a", "turns": [{"id": "t", "text": "hello there"}]}) + "\n"
                    + json.dumps({"id": "s", "conversation": "b", "turns": [{"id": "t", "text": "good day"}]}) + "\n")
    with pytest.raises(AssemblyError, match="no pseudo-question could be written"):
        load_benchmark(_config(name="conversations", options={"path": str(tiny)}, questions="self"), client)


def test_a_pseudo_question_of_a_longmemeval_haystack_is_scored_by_its_own_clues(tmp_path):
    bench = benchmarks.load("longmemeval", {"path": str(write_longmemeval(tmp_path / "lme.json"))})
    real = next(q for q in bench.data.questions if q.scope == "q-ms")
    filler = next(t.ref for s in bench.data.sessions if s.scope == "q-ms" for t in s.turns
                  if bench._session_of[t.ref] not in {bench._session_of[r] for r in bench.official_targets(real)})
    pseudo = Question("q-ms/P001", "q-ms", "context", "what did we discuss around the filler?", "", (filler,))
    bench.use_questions([pseudo], label_free=None)
    task = next(t for t in bench.split("train").retrieve + bench.split("test").retrieve if t.task_id == "q-ms/P001")
    score = bench.score(task, None, MemoryPayload(metadata={"evidence": [filler]}))
    assert score.metrics["session_recall_any@5"] == 1.0  # its clue's session, not the release's answer sessions
    assert score.value == 1.0


def test_the_llm_writes_questions_on_the_ledger_its_bad_ones_are_dropped_and_none_is_paid_twice(tmp_path, fake_llm):
    logs = _logs(tmp_path)

    def reply(request: dict) -> str:
        prompt = request["messages"][-1]["content"]
        copied = prompt.split("] ", 2)[1].split(": ", 1)[1].splitlines()[0]  # turn [1]'s text, verbatim
        return ("Here they are:\n```json\n" + json.dumps([
            {"question": "Which friend did I meet near the old corner, and when?", "evidence": [1, 2]},
            {"question": "What did the club talk about?", "evidence": [999]},      # no such turn
            {"question": copied, "evidence": [1]},                                   # a copied sentence
            {"evidence": [1]},                                                        # no question
        ]) + "\n```")

    fake_llm.set_handler(reply)
    role = RoleConfig(model="fake-writer", base_url=fake_llm.base_url, timeout_s=10.0, max_retries=0)
    ledger = Ledger(tmp_path / "tree.db")
    config = PseudoQuestionConfig(per_conversation=3, llm_questions_per_call=3)
    bench = benchmarks.load("conversations", logs)
    record = make_label_free(bench, "llm", config, llm=LLMClient(LLMConfig(meta=role), ledger),
                             cache=tmp_path / "pseudo.json")
    questions = bench.split("train").retrieve
    assert questions and all(t.category == "llm" for t in questions)
    assert all(t.instruction == "Which friend did I meet near the old corner, and when?" for t in questions)
    assert record.llm["calls"] >= 2 and record.llm["dropped"] >= 3 * record.llm["calls"]
    rows = ledger.rows()
    assert len(rows) == record.llm["calls"] and {r["purpose"] for r in rows} == {"pseudo-questions"}
    assert {r["role"] for r in rows} == {"meta"}
    calls = len(fake_llm.requests)
    again = benchmarks.load("conversations", logs)
    make_label_free(again, "llm", config, llm=LLMClient(LLMConfig(meta=role), ledger), cache=tmp_path / "pseudo.json")
    assert len(fake_llm.requests) == calls  # read from the cache
    assert [t.instruction for t in again.split("train").retrieve] == [t.instruction for t in questions]


def test_the_ranking_stage_is_fitted_on_other_kinds_and_judged_on_the_scored_ones(tmp_path, monkeypatch):
    from automemo import assembly
    from automemo.meta.offline import ranking
    from automemo.sandbox import get_sandbox

    seen = {}

    def fake_fit(episodes, questions, embed_text, dim, **kwargs):
        seen.update(questions=questions, **kwargs)
        return {"model": "linear", "weights": {}, "held_out_gain": 0.0}

    monkeypatch.setattr(ranking, "fit_ranker", fake_fit)
    # Two questions a session: the small fixture then leaves candidates of the fitting kinds to guard with.
    config = build_run_config({"benchmark": {"name": "conversations", "options": _logs(tmp_path), "questions": "self",
                                             "pseudo": {"per_session": 2.0}},
                               "embeddings": {"text": "minilm_static"}})
    with assembly.build_evaluation(config, store_root=tmp_path / "store", sandbox=get_sandbox("unsafe"),
                                   quiet=True) as setup:
        from automemo.host_fitting import ranker_fit

        ranker_fit(setup, tmp_path / "ranking", assembly.services_factory(setup.encoders, setup.store.root, None))(None)
        train = setup.evaluator.split("train").retrieve
        scored = {t.instruction for t in train if not t.data.get("guard")}
        guards = {t.instruction for t in train if t.data.get("guard")}
        fitting = setup.benchmark.fitting_questions
    assert {q.question for q in seen["questions"]} == {q.question for q in fitting} and fitting
    assert {q.question for q in seen["gain_on"]} == scored and guards  # judged on the scored kind alone
    assert not guards & {q.question for q in fitting}
    assert not scored & {q.question for q in fitting}
    assert seen["signals"] == ranking.MATCH_SIGNALS


def test_search_on_a_users_own_logs_without_one_question_says_what_it_was_scored_on(tmp_path):
    logs = _logs(tmp_path)
    config = tmp_path / "heldout.toml"
    config.write_text("[search]\nheldout_test = true\n[embeddings]\ntext = \"minilm_static\"\n")
    done = subprocess.run(
        [sys.executable, "-m", "automemo", "search", "--benchmark", "conversations",
         "--option", f"path={logs['path']}", "--questions", "self", "--steps", "3", "--config", str(config),
         "--sandbox", "bwrap", "--runs-dir", str(tmp_path / "runs"), "--run-id", "lf", "--no-report"],
        capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "pseudo-questions of conversations the search never saw" in done.stdout
    assert "the search read no labelled question" in done.stdout
    final = json.loads((tmp_path / "runs" / "lf" / "final.json").read_text())
    assert final["heldout_test"]["label_free"]["test_labelled"] == 0
    stored = json.loads((tmp_path / "runs" / "lf" / "config.json").read_text())
    assert stored["benchmark"]["questions"] == "self"
