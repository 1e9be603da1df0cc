"""LongMemEval read from a small file in its published format: every field, the dirt a release
holds (said once), each question its own memory, the project's retrieval metrics against
hand-computed values per question type (the official ones: test_longmemeval_official.py), no label
reaching retrieve, a shared session embedded once, and the per-type judge instructions in QA mode."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from automemo.benchmarks import load
from automemo.benchmarks.conversation.longmemeval_metrics import NAMES as OFFICIAL_NAMES
from automemo.benchmarks.conversation.model import DatasetError
from automemo.contract import MemoryPayload
from automemo.episode_store import EpisodeStore
from automemo.evaluation import EvaluationConfig, Evaluator
from automemo.paths import SEEDS_DIR
from automemo.sandbox import get_sandbox
from longmemeval_data import FILLERS, longmemeval_items, write_longmemeval


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return write_longmemeval(tmp_path_factory.mktemp("lme") / "longmemeval_s.json")


def _bench(path: Path, **options):
    return load("longmemeval", {"path": str(path), **options})


def test_every_field_is_read_and_each_question_is_its_own_memory(tmp_path):
    items = longmemeval_items()
    ku = next(q for q in items if q["question_id"] == "q-ku")
    for key in ("haystack_session_ids", "haystack_dates", "haystack_sessions"):
        ku[key].reverse()  # released out of date order: read back in date order
    bench = _bench(write_longmemeval(tmp_path / "s.json", items=items))
    data = bench.data
    assert data.scopes == tuple(q["question_id"] for q in items)
    assert data.strata["q-ms"] == "multi-session"
    questions = {q.scope: q for q in data.questions}
    ms = questions["q-ms"]
    assert (ms.question, ms.answer, ms.date) == ("How many musical instruments do I play?", "two", "2023-08-15 20:00 (Tue)")
    assert ms.clues == ("q-ms/answer_ms_1:1", "q-ms/answer_ms_2:1")  # the user turns marked has_answer
    assert questions["q-ssa"].clues == ("q-ssa/answer_ssa_1:2",)       # an assistant turn is evidence too
    # LongMemEval's official scorer reads the user turns marked has_answer only
    assert bench.official_targets(ms) == ms.clues and bench.official_targets(questions["q-ssa"]) == ()
    assert questions["q-ssu_abs"].refusal and not questions["q-ssu"].refusal
    ku_sessions = [s for s in data.sessions if s.scope == "q-ku"]
    assert [s.session_id.split("/")[1] for s in ku_sessions] == [
        "sharegpt_fill_1", "ultrachat_fill_2", "sharegpt_fill_3", "answer_ku_1", "answer_ku_2"]
    assert ku_sessions[3].date == "2023-09-01 09:00 (Fri)"
    assert ku_sessions[3].turns[0].text == "user: I started a job at the city library today."
    # A filler session is in every haystack, under each question's own ids, with the same text.
    fills = [s for s in data.sessions if s.session_id.endswith("/sharegpt_fill_1")]
    assert len(fills) == len(items) and len({s.turns[0].text for s in fills}) == 1
    assert len({s.turns[0].ref for s in fills}) == len(items)
    # Update episodes: one per session, under its question's user, one step per turn with its ref.
    store = EpisodeStore(tmp_path / "store")
    split = bench.split("train")
    for task in split.update:
        episode = bench.run_episode(task, None, None, store)
        user = episode.metadata["user"]
        own = next(q for q in items if q["question_id"] == user)
        assert task.task_id.split("/", 1)[1] in own["haystack_session_ids"]
        assert all(step.ref.startswith(f"{user}/") for step in episode.steps)
    assert {t.category for t in split.retrieve} <= set(data.strata.values())
    assert not ({t.task_id for t in split.retrieve} & {t.task_id for t in bench.split("test").retrieve})


def test_a_dirty_release_loads_and_says_what_it_left_out(tmp_path, capsys):
    bench = _bench(write_longmemeval(tmp_path / "dirty.json", dirty=True))
    err = capsys.readouterr().err
    dropped = {d.what for d in bench.data.dropped}
    assert "an empty session (no turns)" in dropped
    assert "a turn without text" in dropped
    assert "a question without its text" in dropped
    assert "a question without a usable haystack session" in dropped
    assert "a second question with this question_id" in dropped
    assert any("question_date 'yesterday'" in d for d in dropped)
    assert "left out 7 unusable part(s)" in err
    assert "1 turn(s) of answer sessions without has_answer" in err
    assert "dropped 1 gold clue(s)" in err and "answer_ku_9" in err
    questions = {q.scope: q for q in bench.data.questions}
    assert set(questions) == {q["question_id"] for q in longmemeval_items()}  # the usable ones, once each
    assert questions["q-ssp"].date == ""                    # asked without a time
    assert questions["q-tr"].clues == ("q-tr/answer_tr_1:1",)  # the unmarked turn is not evidence
    assert [s.session_id for s in bench.data.sessions if s.scope == "q-ssu"][0] == "q-ssu/ultrachat_fill_2"
    assert bench.describe()["dropped"]["count"] == 7
    with pytest.raises(DatasetError, match="answer_ku_9.*not in its haystack"):
        _bench(tmp_path / "dirty.json", unknown_clues="error")


def test_a_file_that_is_not_longmemeval_is_a_clear_error(tmp_path):
    with pytest.raises(DatasetError, match="does not exist; set the option `path`"):
        _bench(tmp_path / "missing.json")
    (tmp_path / "obj.json").write_text(json.dumps({"question_id": "x"}))
    with pytest.raises(DatasetError, match="not a LongMemEval file"):
        _bench(tmp_path / "obj.json")
    (tmp_path / "empty.json").write_text(json.dumps([{"question_id": "x", "question": "?"}]))
    with pytest.raises(DatasetError, match="no usable question"):
        _bench(tmp_path / "empty.json")


# Cited ids per question, and the project's figures they give, worked out by hand (LongMemEval's
# official figures: tests/test_longmemeval_official.py).
RANKINGS = {
    "q-ssu": ["sharegpt_fill_1:1", "answer_ssu_1:2", "answer_ssu_1:1"],
    "q-ssa": [],
    "q-ssp": ["answer_ssp_1:1"],
    "q-ms": ["answer_ms_1:1", "sharegpt_fill_1:1", "sharegpt_fill_1:2", "ultrachat_fill_2:1", "sharegpt_fill_3:1",
             "answer_ms_2:1"],
    "q-ku": ["answer_ku_1:2", "sharegpt_fill_1:1", "ultrachat_fill_2:1", "sharegpt_fill_3:1", "sharegpt_fill_1:2",
             "ultrachat_fill_2:2", "answer_ku_2:1"],
    "q-tr": ["@q-ssu/answer_ssu_1:1", "answer_tr_1:2"],  # another question's turn counts for nothing
}
L2 = math.log2
EXPECTED = {
    # recall@10, ndcg@10 over the turns marked has_answer (the clues)
    "q-ssu": dict(recall=1.0, ndcg=(1 / L2(4)) / 1),
    "q-ssa": dict(recall=0.0, ndcg=0.0),
    "q-ssp": dict(recall=1.0, ndcg=1.0),
    "q-ms": dict(recall=1.0, ndcg=(1 + 1 / L2(7)) / (1 + 1 / L2(3))),
    # ku_1 via its unmarked assistant turn: not a clue; ku_1:1 never cited
    "q-ku": dict(recall=0.5, ndcg=(1 / L2(8)) / (1 + 1 / L2(3))),
    "q-tr": dict(recall=0.0, ndcg=0.0),
}


def _payload(scope: str, ranked: list[str]) -> MemoryPayload:
    refs = [r[1:] if r.startswith("@") else f"{scope}/{r}" for r in ranked]
    return MemoryPayload(metadata={"evidence": refs})


def test_project_metrics_agree_with_hand_computed_values_per_type(release):
    bench = _bench(release)
    tasks = {t.task_id.split("/")[0]: t for split in ("train", "test") for t in bench.split(split).retrieve}
    for scope, want in EXPECTED.items():
        score = bench.score(tasks[scope], None, _payload(scope, RANKINGS[scope]))
        m = score.metrics
        assert dict(recall=m["recall@10"], ndcg=m["ndcg@10"]) == pytest.approx(want), scope
        assert score.counted and score.value == m["recall@10"]
        assert not any(k.startswith("locomo_") for k in m)
        # The official figures, for every question with a user turn marked has_answer: all but
        # q-ssa, whose evidence the assistant said.
        assert set(OFFICIAL_NAMES) <= set(m) if scope != "q-ssa" else not set(OFFICIAL_NAMES) & set(m), scope
    abstention = bench.score(tasks["q-ssu_abs"], None, _payload("q-ssu_abs", ["answer_ssu_abs_1:1"]))
    assert not abstention.counted and abstention.metrics == {}  # left out, as the official evaluation does


PROBE = '''
import json
from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.updates = []

    def update(self, episode):
        self.updates.append(json.dumps(episode.to_dict(), default=str))

    def retrieve(self, task):
        return MemoryPayload(metadata={"task": json.dumps(task.to_dict(), default=str),
                                       "updates": self.updates, "evidence": []})
'''


def test_no_label_reaches_retrieve_or_update(release, tmp_path):
    bench = _bench(release)
    evaluator = Evaluator(bench, get_sandbox("unsafe"), EpisodeStore(tmp_path / "s"), config=EvaluationConfig(quiet=True))
    items = {q["question_id"]: q for q in longmemeval_items()}
    try:
        for split in ("train", "test"):
            result = evaluator.evaluate(PROBE, split=split)
            for t in result.tasks:
                seen = json.loads(t.payload.metadata["task"])
                q = items[t.task_id.split("/")[0]]
                assert set(seen["metadata"]) == {"user", "time", "budget"}
                assert seen["metadata"]["user"] == q["question_id"]
                assert seen["metadata"]["time"].startswith(q["question_date"][:10].replace("/", "-"))
                text = json.dumps(seen)
                assert q["answer"] not in text and q["question_type"] not in text
                assert "has_answer" not in text and "answer_session" not in text
                updates = "".join(t.payload.metadata["updates"])
                assert updates and "has_answer" not in updates and "answer_session_ids" not in updates
    finally:
        evaluator.close()


def test_a_questions_memory_holds_its_own_haystack_only(tmp_path):
    """bm25_rag over every question's sessions at once: what it cites for a question lies in that
    question's haystack. q-x asks about the half marathon, which only q-tr's haystack mentions:
    q-x cites none of it (the filler texts it shares with every haystack are its own copies)."""
    from longmemeval_data import question

    items = longmemeval_items() + [question(
        "q-x", "temporal-reasoning", "When did I finish my first half marathon?", "never said",
        "2023/11/11 (Sat) 12:00", {"answer_x_1": ("2023/10/01 (Sun) 08:00", [
            {"role": "user", "content": "I bought new running shoes.", "has_answer": True}])})]
    bench = _bench(write_longmemeval(tmp_path / "s.json", items=items))
    evaluator = Evaluator(bench, get_sandbox("unsafe"), EpisodeStore(tmp_path / "s"), config=EvaluationConfig(quiet=True))
    haystacks = {q["question_id"]: set(q["haystack_session_ids"]) for q in items}
    cited: dict[str, list[str]] = {}
    try:
        for split in ("train", "test"):
            result = evaluator.evaluate((SEEDS_DIR / "bm25_rag.py").read_text(), split=split)
            cited.update({t.task_id.split("/")[0]: t.payload.metadata.get("evidence", []) for t in result.tasks})
    finally:
        evaluator.close()
    assert set(cited) == set(haystacks)
    for scope, refs in cited.items():
        for ref in refs:
            owner, local = ref.split("/", 1)
            assert owner == scope and local.rsplit(":", 1)[0] in haystacks[scope], (scope, ref)
    assert "q-tr/answer_tr_1:1" in cited["q-tr"]  # the words are in memory, under q-tr only
    assert not any("answer_tr" in ref for ref in cited["q-x"])


def test_a_sample_of_questions_updates_only_their_haystacks(release, tmp_path):
    """A search's sample of questions builds only the sampled questions' memories: the program is
    fed exactly the sampled question's sessions, in the order a full evaluation feeds them, and a
    full evaluation feeds every haystack of the split."""
    bench = _bench(release)
    evaluator = Evaluator(bench, get_sandbox("unsafe"), EpisodeStore(tmp_path / "s"), config=EvaluationConfig(quiet=True))
    split = max(("train", "test"), key=lambda s: len(bench.split(s).retrieve))
    tasks = bench.split(split).retrieve
    try:
        sampled = evaluator.evaluate(PROBE, split=split, questions=[tasks[0].task_id])
        full = evaluator.evaluate(PROBE, split=split)
    finally:
        evaluator.close()
    scope = bench.memory_scope(tasks[0])

    def fed(result):
        return [json.loads(u) for u in result.tasks[0].payload.metadata["updates"]]

    assert len(tasks) > 1 and full.info["n_update"] == len(bench.split(split).update)
    assert {u["metadata"]["user"] for u in fed(full)} == {bench.memory_scope(t) for t in tasks}
    own = [u["task_id"] for u in fed(full) if u["metadata"]["user"] == scope]
    assert [u["task_id"] for u in fed(sampled)] == own and sampled.info["n_update"] == len(own) > 0
    assert sampled.info["n_update"] < full.info["n_update"]


def test_questions_are_asked_in_sessions_of_a_few_memories_each(release, tmp_path):
    """`memories_per_session` = 2: each session of the probe holds the haystacks of at most two
    questions, the questions' own among them, and bm25_rag scores every question as it does
    with every memory in one session (it keeps each question's memory to itself)."""
    bench = _bench(release)
    store = EpisodeStore(tmp_path / "s")
    split = max(("train", "test"), key=lambda s: len(bench.split(s).retrieve))
    n = len(bench.split(split).retrieve)
    grouped = Evaluator(bench, get_sandbox("unsafe"), store, config=EvaluationConfig(quiet=True, memories_per_session=2))
    whole = Evaluator(bench, get_sandbox("unsafe"), store, config=EvaluationConfig(quiet=True, memories_per_session=n))
    bm25 = (SEEDS_DIR / "bm25_rag.py").read_text()
    try:
        probed = grouped.evaluate(PROBE, split=split)
        apart, together = grouped.evaluate(bm25, split=split), whole.evaluate(bm25, split=split)
    finally:
        grouped.close()
        whole.close()
    assert n > 2 and probed.info["sessions"] == -(-n // 2) and together.info["sessions"] == 1
    for task in probed.tasks:
        held = {json.loads(u)["metadata"]["user"] for u in task.payload.metadata["updates"]}
        assert bench.memory_scope(next(t for t in bench.split(split).retrieve if t.task_id == task.task_id)) in held
        assert len(held) <= 2
    assert probed.info["n_update"] == apart.info["n_update_applied"] == len(bench.split(split).update)
    assert [(t.task_id, t.score, t.payload.metadata.get("evidence")) for t in apart.tasks] == \
        [(t.task_id, t.score, t.payload.metadata.get("evidence")) for t in together.tasks]


def test_a_session_shared_by_many_haystacks_is_embedded_once(release, tmp_path, torch_cpu_shim, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from automemo.assembly import services_factory
    from automemo.toolkit.embedding import default_encoders

    encoders = default_encoders()
    model, embedded = encoders.text.encoder, []

    class Counting:  # the real MiniLM, with a tally of every text it is asked to encode
        name, dim = model.name, model.dim

        def encode(self, texts, **kw):
            embedded.extend(texts)
            return model.encode(texts, **kw)

    encoders.text.encoder = Counting()
    bench = _bench(release)
    store = EpisodeStore(tmp_path / "s")
    evaluator = Evaluator(bench, get_sandbox("unsafe"), store, config=EvaluationConfig(quiet=True),
                          services_factory=services_factory(encoders, store.root, None))
    try:
        for split in ("train", "test"):
            result = evaluator.evaluate((SEEDS_DIR / "hybrid_rag.py").read_text(), split=split)
            assert not result.errors
    finally:
        evaluator.close()
    filler = f"user: {FILLERS['sharegpt_fill_1'][0]['content']}"
    assert sum(1 for s in bench.data.sessions for t in s.turns if t.text == filler) == len(longmemeval_items())
    assert embedded.count(filler) == 1
    assert len(embedded) == len(set(embedded))  # nothing twice, across questions and splits


def test_qa_judge_gets_each_types_instructions(release, tmp_path, fake_llm, monkeypatch):
    from automemo.agents.visual import AgentAnswer
    from automemo.llm import LLMClient, LLMConfig, RoleConfig

    fake_llm.set_handler(lambda body: "Verdict: SUCCESS")
    monkeypatch.setenv("AUTOMEMO_TEST_KEY", "x")
    llm = LLMClient(LLMConfig(judge=RoleConfig(model="fake-judge", base_url=fake_llm.base_url,
                                               api_key_env="AUTOMEMO_TEST_KEY")))
    bench = load("longmemeval", {"path": str(release), "mode": "qa", "judge": "llm"}, llm=llm)

    class Agent:
        def answer(self, partial, payload, store):
            return AgentAnswer("I am not sure.")

    store = EpisodeStore(tmp_path / "s")
    tasks = {t.task_id.split("/")[0]: t for split in ("train", "test") for t in bench.split(split).retrieve}
    for scope in ("q-tr", "q-ku", "q-ssp", "q-ssu_abs", "q-ms"):
        assert bench.run_episode(tasks[scope], Agent(), None, store).reward == 1.0
    prompts = [json.dumps(r["messages"]) for r in fake_llm.requests if "messages" in r]
    tr, ku, ssp, abstention, ms = prompts
    assert "off-by-one" in tr and "off-by-one" not in ms
    assert "updated value" in ku and "rubric" in ssp.lower() and "Rubric:" in ssp
    assert "cannot be answered" in abstention and "You mentioned a dog" in abstention


def test_image_dir_is_no_option_of_the_text_only_release(release):
    """LongMemEval has no images: `image_dir`, an option of Mem-Gallery and LoCoMo, is refused
    rather than accepted and ignored."""
    from automemo.configtools import ConfigError

    assert not hasattr(_bench(release).options, "image_dir")
    with pytest.raises(ConfigError, match="unknown config key.*image_dir"):
        _bench(release, image_dir="/tmp")


def test_the_loader_reads_the_file_one_question_at_a_time(release, monkeypatch):
    """The file is never parsed whole (the M file is ~2.7 GB): `json.loads` is not called."""
    import automemo.benchmarks.conversation.files as files

    def whole(*args, **kwargs):
        raise AssertionError("the whole file was parsed at once")

    monkeypatch.setattr(files.json, "loads", whole)
    assert len(_bench(release).data.questions) == len(longmemeval_items())


def test_the_stream_keeps_every_usable_question_json_load_sees_and_names_each_it_drops(tmp_path):
    """Read one question at a time, the dirty file gives the questions `json.load` of the whole
    file holds, in its order, less the unusable ones, each of which is named with why."""
    path = write_longmemeval(tmp_path / "dirty.json", dirty=True)
    whole = json.loads(path.read_text())
    bench = _bench(path)
    left_out: dict[int, list[str]] = {}  # question index -> why the question itself was left out
    for d in bench.data.dropped:
        index = int(d.where.split("question[", 1)[1].split("]", 1)[0])
        kept_anyway = "typed as 'unknown'" in d.what or "asked without a time" in d.what
        if ": session" not in d.where and not kept_anyway:
            left_out.setdefault(index, []).append(d.what)
    assert left_out and all(reasons for reasons in left_out.values())
    assert [q.scope for q in bench.data.questions] == [
        item["question_id"] for i, item in enumerate(whole) if i not in left_out]
