"""Mem-Gallery and LoCoMo read from small releases in their published formats: refs, images
(real JPGs, git-LFS pointers, missing files), splits by conversation, clear errors on bad input,
and `automemo eval` end to end — a seed prints the per-type table, no_memory scores 0, and a
program that knows only `Step.ref` scores above 0 on Mini-Gallery, Mem-Gallery and LoCoMo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from automemo.benchmarks import load
from automemo.benchmarks.conversation.benchmark import is_refusal
from automemo.benchmarks.conversation.model import DatasetError
from automemo.cli import main
from automemo.contract import MemoryPayload
from automemo.episode_store import EpisodeStore
from conversation_data import LFS_POINTER, write_locomo, write_memgallery

REF_CITER = Path(__file__).resolve().parent / "programs" / "ref_citer.py"


@pytest.fixture(scope="module")
def releases(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("releases")
    return {"memgallery": write_memgallery(root / "mem-gallery"), "locomo": write_locomo(root / "locomo10.json")}


def test_memgallery_sessions_are_episodes_of_rounds_with_refs_and_real_jpgs(releases, tmp_path, capsys):
    bench = load("memgallery", {"path": str(releases["memgallery"])})
    # The missing images are reported once, when the release is read.
    assert capsys.readouterr().err.count("4 of 8 images are missing or git-LFS pointer files") == 1
    assert bench.describe()["images"] == {"total": 8, "missing": 4}
    store = EpisodeStore(tmp_path / "store")
    train, test = bench.split("train"), bench.split("test")
    scopes = {t.task_id.split("/")[0] for t in train.update}, {t.task_id.split("/")[0] for t in test.update}
    assert len(scopes[0]) == len(scopes[1]) == 1 and scopes[0] != scopes[1]  # split by scenario
    assert {t.task_id.split("/")[0] for t in test.retrieve} == scopes[1]
    scope = next(iter(scopes[1]))
    d1, d2 = (bench.run_episode(t, None, None, store) for t in test.update[:2])
    assert [s.ref for s in d1.steps] == [f"{scope}/D1:1", f"{scope}/D1:2", f"{scope}/D1:3"]
    photo = d1.steps[1].screenshot
    assert photo.path.endswith(".jpg") and store.image_bytes(photo)[:3] == b"\xff\xd8\xff"
    assert photo.caption and d1.steps[1].metadata["image_ids"] == [f"{scope}/D1:IMG_001"]
    # The LFS pointer keeps its caption only, in the text the memory reads.
    assert d2.steps[1].screenshot is None and "a red racing bike" in d2.steps[1].observation
    question = next(t for t in test.retrieve if t.category == "VR")
    assert len(bench.partial(question, store).task_images) == 1  # the question's own picture


def test_memgallery_retrieval_scores_clues_and_leaves_refusals_out(releases):
    bench = load("memgallery", {"path": str(releases["memgallery"])})
    tasks = {t.category: t for t in bench.split("test").retrieve}
    kr = tasks["KR"]
    half = bench.score(kr, None, MemoryPayload(metadata={"evidence": [kr.data["clues"][1], "x/D9:9"]}))
    assert half.counted and half.value == 0.5 and half.metrics["hit@10"] == 1.0
    # A cited image id stands for the round it was shown in.
    vs = tasks["VS"]
    image_id = vs.data["clues"][0].replace(":2", ":IMG_001")
    assert bench.score(vs, None, MemoryPayload(metadata={"evidence": [image_id]})).value == 1.0
    assert not bench.score(tasks["AR"], None, MemoryPayload()).counted


def test_locomo_turns_captions_categories_and_adversarial_questions(releases, tmp_path):
    bench = load("locomo", {"path": str(releases["locomo"])})
    split = bench.split("test")
    episode = bench.run_episode(split.update[0], None, None, EpisodeStore(tmp_path / "s"))
    scope = split.update[0].task_id.split("/")[0]
    assert episode.steps[0].ref == f"{scope}/D1:1" and "pottery" in episode.steps[0].observation or "dance" in episode.steps[0].observation
    assert "a photo of a clay pot" in episode.steps[2].observation  # blip_caption stands in for img_url
    by_cat = {t.category: t for t in split.retrieve}
    assert set(by_cat) == {"cat1", "cat2", "cat3", "cat4", "cat5"}
    assert by_cat["cat2"].data["clues"] == [f"{scope}/D2:1", f"{scope}/D2:3"]  # "D2:1; D2:3" split
    adversarial = by_cat["cat5"]
    assert adversarial.data["refusal"] and adversarial.data["answer"] == "Not mentioned."
    assert not bench.score(adversarial, None, MemoryPayload()).counted
    assert is_refusal("That was never mentioned.") and not is_refusal("Paris")


def test_bad_input_names_the_file_and_the_item(releases, tmp_path):
    with pytest.raises(DatasetError, match="does not exist; set the option `path`"):
        load("memgallery", {"path": str(tmp_path / "nowhere")})
    with pytest.raises(DatasetError, match=r"locomo10\.json: not a Mem-Gallery scenario file"):
        load("memgallery", {"path": str(releases["locomo"])})
    scenario = next((releases["memgallery"] / "dialog").glob("*.json"))
    with pytest.raises(DatasetError, match="not the LoCoMo release"):
        load("locomo", {"path": str(scenario)})
    data = json.loads(scenario.read_text())
    data["human-annotated QAs"][0]["clue"] = ["D7:1"]
    broken = tmp_path / "broken" / scenario.name
    broken.parent.mkdir()
    broken.write_text(json.dumps(data))
    with pytest.raises(DatasetError, match=r"broken/\w+\.json: human-annotated QAs\[0\]: clue 'D7:1' names no round"):
        load("memgallery", {"path": str(broken), "unknown_clues": "error"})
    dropped = load("memgallery", {"path": str(broken)})
    assert [d.clue for d in dropped.data.dropped_clues] == ["D7:1"]
    assert dropped.describe()["dropped_clues"]["count"] == 1
    first = next(q for q in dropped.split("train").retrieve + dropped.split("test").retrieve
                 if q.task_id.endswith("Q001") and q.task_id.startswith(broken.stem))
    assert first.data["clues"] == []  # its only clue was dropped: not counted in retrieval mode
    locomo = json.loads(releases["locomo"].read_text())
    locomo[1]["qa"][0]["evidence"] = ["D3:4"]
    (tmp_path / "l.json").write_text(json.dumps(locomo))
    with pytest.raises(DatasetError, match=r"l\.json: sample 1 \(conv-2\): qa\[0\]: clue 'D3:4' names no turn"):
        load("locomo", {"path": str(tmp_path / "l.json"), "unknown_clues": "error"})
    (tmp_path / "pointer.json").write_text(LFS_POINTER)
    with pytest.raises(DatasetError, match=r"pointer\.json: not valid JSON"):
        load("locomo", {"path": str(tmp_path / "pointer.json")})


def test_the_published_locomo_file_with_a_clue_naming_no_turn_loads_and_says_so_once(tmp_path, capsys):
    path = write_locomo(tmp_path / "locomo10.json", unknown_clue=True)
    bench = load("locomo", {"path": str(path)})
    err = capsys.readouterr().err
    assert err.count("dropped 1 gold clue") == 1
    assert "locomo10.json: sample 1 (conv-2): qa[1]: 'D10:19'" in err
    question = next(q for q in bench.split("train").retrieve + bench.split("test").retrieve
                    if q.task_id == "conv-2/Q002")
    assert question.data["clues"] == ["conv-2/D2:1"]  # the known clue stays
    described = bench.describe()["dropped_clues"]
    assert described["count"] == 1 and described["source"] == str(path)
    assert described["items"] == [f"{path}: sample 1 (conv-2): qa[1]: D10:19"]
    with pytest.raises(DatasetError, match=r"qa\[1\]: clue 'D10:19' names no turn of conv-2"):
        load("locomo", {"path": str(path), "unknown_clues": "error"})


def test_locomo_clues_joined_by_spaces_or_misspelt_load_as_the_turns_they_name(tmp_path, capsys):
    path = write_locomo(tmp_path / "locomo10.json", dirty_clues=True)
    bench = load("locomo", {"path": str(path)})
    clues = {t.task_id: t.data["clues"] for t in bench.split("train").retrieve + bench.split("test").retrieve}
    assert clues["conv-1/Q001"] == ["conv-1/D2:1", "conv-1/D1:1", "conv-1/D1:3"]  # "D2:1 D1:1 D1:3": three refs
    assert clues["conv-1/Q002"] == ["conv-1/D2:1"]  # "D:2:1"
    assert clues["conv-1/Q003"] == ["conv-1/D2:3"]  # "D2:03"
    assert clues["conv-1/Q004"] == ["conv-1/D1:3"]  # "D1:3; D7:7": the known part stays
    err = capsys.readouterr().err
    assert "read 5 joined or misspelled gold clue(s)" in err  # and conv-2's "D2:1; D2:3" and "'D2:1 D1:1 D1:3' as D2:1, D1:1, D1:3" in err
    assert "dropped 1 gold clue" in err and "qa[3]: 'D7:7'" in err
    described = bench.describe()
    assert described["repaired_clues"]["count"] == 5 and described["dropped_clues"]["count"] == 1
    with pytest.raises(DatasetError, match=r"qa\[3\]: 'D7:7' of clue 'D1:3; D7:7' names no turn of conv-1"):
        load("locomo", {"path": str(path), "unknown_clues": "error"})


@pytest.mark.parametrize("dataset", ["memgallery", "locomo"])
def test_a_release_whose_question_lists_are_empty_or_absent_loads_its_sessions(dataset, tmp_path):
    """A conversation without questions is still memory (a search can generate questions from
    its sessions): `"human-annotated QAs": []` or no such key, LoCoMo's `qa: []` or none."""
    path = (write_memgallery(tmp_path / "mem-gallery", questions=False) if dataset == "memgallery"
            else write_locomo(tmp_path / "locomo10.json", questions=False))
    bench = load(dataset, {"path": str(path)})
    assert len(bench.data.scopes) == 2 and bench.data.questions == ()
    assert len(bench.data.sessions) == (6 if dataset == "memgallery" else 4)
    for split in ("train", "test"):
        assert bench.split(split).update and bench.split(split).retrieve == ()


def test_a_search_on_data_without_questions_is_pointed_to_the_label_free_search(releases, tmp_path):
    from types import SimpleNamespace

    from automemo.assembly import AssemblyError, require_questions

    def setup(bench, options):
        return SimpleNamespace(evaluator=bench, benchmark=bench,
                               config=SimpleNamespace(benchmark=SimpleNamespace(options=options)))

    options = {"path": str(write_memgallery(tmp_path / "mem-gallery", questions=False))}
    with pytest.raises(AssemblyError, match=r"holds no question at all .*--questions self"):
        require_questions(setup(load("memgallery", options), options), "train")
    # Questions in the data, none in the split asked for: the existing advice, about the split.
    one = tmp_path / "one-sample.json"  # one conversation: it goes to test, train holds none
    one.write_text(json.dumps(json.loads(releases["locomo"].read_text())[:1]))
    options = {"path": str(one)}
    with pytest.raises(AssemblyError, match=r"the train split holds no question") as refused:
        require_questions(setup(load("locomo", options), options), "train")
    assert "--questions self" not in str(refused.value)


def test_adversarial_questions_keep_their_evidence_but_stay_out_of_the_score(releases):
    bench = load("locomo", {"path": str(releases["locomo"])})
    adversarial = next(t for t in bench.split("test").retrieve if t.category == "cat5")
    scope = adversarial.task_id.split("/")[0]
    assert adversarial.data["clues"] == [f"{scope}/D2:3"]
    assert not bench.score(adversarial, None, MemoryPayload(metadata={"evidence": [f"{scope}/D2:3"]})).counted


# --- automemo eval end to end --------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("store")


@pytest.fixture
def run_eval(shared_store, torch_cpu_shim, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def run(tmp_path: Path, program: str, dataset: str, *options: str) -> dict:
        out = tmp_path / f"{Path(program).stem}-{dataset}.json"
        code = main(["eval", program, "--benchmark", dataset, *options, "--split", "test", "--repeats", "1",
                     "--sandbox", "unsafe", "--quiet", "--out", str(out), "--workdir", str(tmp_path / "w"),
                     "--store", str(shared_store)])
        assert code == 0
        return json.loads(out.read_text())["table"]

    return run


@pytest.mark.parametrize("dataset", ["memgallery", "locomo"])
def test_eval_prints_the_per_type_table_and_no_memory_scores_zero(dataset, releases, run_eval, tmp_path, capsys):
    path = ["--option", f"path={releases[dataset]}"]
    table = run_eval(tmp_path, "murag", dataset, *path)
    printed = capsys.readouterr().out
    types = ("FR", "TR", "VS", "KR", "CD", "VR") if dataset == "memgallery" else ("cat1", "cat2", "cat3", "cat4")
    assert f"murag on {dataset} (test split" in printed
    assert all(f"category {t}" in printed for t in types)
    assert set(table["per_category"]) == set(types)  # refusal questions are not counted
    assert table["score"]["mean"] > 0.5
    assert set(table["metrics"]) == {"recall@10", "ndcg@10", "hit@10", "session_hit@10", "locomo_recall@10"}
    adversarial = "AR" if dataset == "memgallery" else "cat5"
    # The breakdown: every category (the adversarial one too), all questions, all but adversarial.
    assert set(table["breakdown"]) == {*types, adversarial, "all questions", "all but adversarial"}
    assert "locomo_recall@10" in table["breakdown"][adversarial]
    assert "all questions" in printed and "adversarial" in printed  # the breakdown is printed too
    assert run_eval(tmp_path, "no_memory", dataset, *path)["score"]["mean"] == 0.0


@pytest.mark.parametrize("dataset", ["minigallery", "memgallery", "locomo"])
def test_a_program_that_reads_only_step_refs_scores(dataset, releases, run_eval, tmp_path):
    options = (["--option", f"path={releases[dataset]}"] if dataset in releases else
               ["--option", "users_per_split=1", "--option", "sessions_per_user=3"])
    assert run_eval(tmp_path, str(REF_CITER), dataset, *options)["score"]["mean"] > 0


@pytest.mark.docker
def test_refs_reach_a_program_in_the_docker_sandbox(releases, shared_store, tmp_path, torch_cpu_shim, monkeypatch):
    """Steps cross the sandbox with their refs: the guest parses interface version 2 (the
    package is bind-mounted, no image rebuild), and a program citing them scores there too."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "docker.json"
    code = main(["eval", str(REF_CITER), "--benchmark", "memgallery", "--option", f"path={releases['memgallery']}",
                 "--repeats", "1", "--sandbox", "docker", "--quiet", "--out", str(out),
                 "--workdir", str(tmp_path / "w"), "--store", str(shared_store)])
    assert code == 0
    doc = json.loads(out.read_text())
    assert doc["sandbox"] == "docker" and doc["table"]["score"]["mean"] > 0 and doc["table"]["errors"] == {}


def test_qa_mode_scores_the_agents_answer_by_token_f1(releases, run_eval, tmp_path, fake_llm):
    fake_llm.set_handler(lambda body: "It was said in the first session.\nAnswer: a carpenter")
    table = run_eval(tmp_path, "murag", "memgallery", "--option", f"path={releases['memgallery']}",
                     "--option", "mode=qa", "--agent-model", "fake-agent", "--agent-base-url", fake_llm.base_url,
                     "--agent-api-key-env", "AUTOMEMO_TEST_NO_KEY")
    assert set(table["metrics"]) == {"f1", "em"}
    assert table["per_category"]["FR"]["mean"] == 1.0 and table["per_category"]["AR"]["mean"] == 0.0
    assert any("Memory from earlier tasks" in json.dumps(r["messages"]) for r in fake_llm.requests if "messages" in r)


def test_the_llm_judge_is_told_the_answer_convention_of_each_question_type(releases, tmp_path, fake_llm, monkeypatch):
    from automemo.agents.visual import AgentAnswer
    from automemo.llm import LLMClient, LLMConfig, RoleConfig

    def reply(body):
        text = json.dumps(body["messages"])
        return "Declines, as it should.\nVerdict: SUCCESS" if "question type is AR" in text else "Verdict: FAILURE"

    fake_llm.set_handler(reply)
    monkeypatch.setenv("AUTOMEMO_TEST_KEY", "x")
    llm = LLMClient(LLMConfig(judge=RoleConfig(model="fake-judge", base_url=fake_llm.base_url,
                                               api_key_env="AUTOMEMO_TEST_KEY")))
    bench = load("memgallery", {"path": str(releases["memgallery"]), "mode": "qa", "judge": "llm"}, llm=llm)

    class Agent:
        def answer(self, partial, payload, store):
            return AgentAnswer("I don't know, you never told me.")

    store = EpisodeStore(tmp_path / "s")
    tasks = {t.category: t for t in bench.split("test").retrieve}
    rewards = {c: bench.run_episode(tasks[c], Agent(), None, store).reward for c in ("AR", "VS")}
    assert rewards == {"AR": 1.0, "VS": 0.0}
    prompts = [json.dumps(r["messages"]) for r in fake_llm.requests if "messages" in r]
    assert len(prompts) == 2 and all("Visual search (VS): the reference lists image ids" in p for p in prompts)


def test_eval_with_a_wrong_path_fails_cleanly_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["eval", "murag", "--benchmark", "locomo", "--option", "path=missing/locomo10.json",
                 "--sandbox", "unsafe", "--store", str(tmp_path / "store")])
    assert code == 2 and "missing/locomo10.json does not exist" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_question_picture_without_pixels_keeps_its_caption_for_retrieve(releases, tmp_path):
    """Where the question's picture has pixels, retrieve gets it with its caption on the
    ImageRef; where it is a git-LFS pointer, the caption alone reaches retrieve, in the question's
    text, as a turn's lost picture does (not dropped with the pixels)."""
    import shutil

    from automemo.toolkit.memolib import query_text

    release = shutil.copytree(releases["memgallery"], tmp_path / "mem-gallery")
    bench = load("memgallery", {"path": str(release)})
    store = EpisodeStore(tmp_path / "store")
    vr = next(t for t in bench.split("test").retrieve if t.category == "VR")
    with_pixels = bench.partial(vr, store)
    assert with_pixels.instruction == vr.instruction  # the caption travels on the ImageRef
    assert "a red racing bike" in query_text(with_pixels)
    for picture in release.glob("image/*/Q_IMG_001.jpg"):
        picture.write_text(LFS_POINTER)
    bench = load("memgallery", {"path": str(release)})
    task = next(t for t in bench.split("test").retrieve if t.category == "VR")
    without = bench.partial(task, store)
    # What a router is fitted on (the task's text) is what retrieve reads: the same key.
    assert task.instruction == without.instruction
    assert without.task_images == ()
    assert without.instruction.startswith(vr.instruction) and "a red racing bike" in without.instruction
    assert "a red racing bike" in query_text(without)
