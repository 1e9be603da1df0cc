"""Quick examination in the real Docker and bubblewrap sandboxes: the no-memory seed passes, and
each check, when it fails, is named together with the input that failed and the traceback tail."""

from __future__ import annotations

import json
import shutil
import textwrap

import pytest

from automemo.cli import main
from automemo.cli.exam_cmd import load_inputs
from automemo.paths import EXAMPLE_EPISODES_DIR
from automemo.contract import Budget
from automemo.exam import CHECKS, ExamReport, quick_exam
from automemo.llm import BudgetExceeded, LLMClient, LLMConfig, RoleConfig, user_message
from automemo.paths import SEEDS_DIR
from automemo.sandbox import Limits
from automemo.toolkit.embedding import EmbeddingConfig, default_encoders
from automemo.toolkit.services import MemoServices
from sandboxtools import ISOLATING, sandbox

STORE = EXAMPLE_EPISODES_DIR
EPISODES, PARTIALS = load_inputs(STORE, "update", "retrieve", 5)
HEADER = "from automemo.contract import MemoProgram, MemoryPayload, ImageRef\n"


def program(body: str) -> str:
    return HEADER + textwrap.dedent(body)


def exam(backend: str, source: str, **kw) -> ExamReport:
    return quick_exam(source, sandbox(backend), EPISODES, PARTIALS, store_root=STORE, **kw)


def test_fixture_store_covers_web_and_conversation_inputs():
    assert len(EPISODES) == 5 and len(PARTIALS) == 5
    assert {e.metadata["family"] for e in EPISODES} == {"web", "conversation"}
    assert {p.task_id.split("-")[0] for p in PARTIALS} == {"conv", "web"}


def test_a_folders_retrieve_tasks_carry_only_what_the_contract_allows(capsys):
    """The example store's retrieve files say which family they come from: not something an
    application has at question time, so the exam drops it (as an evaluation does) and says so."""
    _, partials = load_inputs(STORE, "update", "retrieve", 5)
    assert all(set(p.metadata) <= {"user", "time"} for p in partials), [p.metadata for p in partials]
    assert "family" in capsys.readouterr().err
    _, declared = load_inputs(STORE, "update", "retrieve", 5, frozenset({"family"}))
    assert {p.metadata["family"] for p in declared} == {"web", "conversation"}
    assert any(e.steps and e.steps[0].screenshot for e in EPISODES)
    for ref in [r for e in EPISODES for r in e.images()]:
        assert (STORE / ref.path).is_file()


@pytest.mark.parametrize("backend", ISOLATING)
def test_no_memory_seed_passes_every_check(backend):
    report = exam(backend, (SEEDS_DIR / "no_memory.py").read_text())
    assert report.passed, report.for_prompt()
    assert report.passed_checks == tuple(CHECKS) and report.failed_check is None
    assert set(report.timings) == set(CHECKS)
    assert "PASSED" in report.for_prompt()
    json.dumps(report.to_dict())


FAILING = {
    "imports": (program("import no_such_module_xyz\n"), "no_such_module_xyz", None),
    "syntax": (program("class Memo(MemoProgram:\n    pass\n"), "SyntaxError", None),
    "defines_memo": (program("class Memory(MemoProgram):\n    pass\n"), "no class named Memo", None),
    "update": (program("""
        class Memo(MemoProgram):
            def update(self, episode):
                if episode.task_id == "web-001":
                    raise ValueError("cannot index " + episode.task_id)
            def retrieve(self, task):
                return MemoryPayload()
        """), "cannot index web-001", ("update", "episode", "web-001")),
    "retrieve": (program("""
        class Memo(MemoProgram):
            def update(self, episode):
                pass
            def retrieve(self, task):
                return MemoryPayload(text={"a": 1}[task.task_id[:1]])
        """), "KeyError", ("retrieve", "task", "conv-q1")),
    "payload_schema": (program("""
        class Memo(MemoProgram):
            def update(self, episode):
                pass
            def retrieve(self, task):
                return {"text": 42}
        """), "text", ("retrieve", "task", "conv-q1")),
    "payload_budget": (program("""
        class Memo(MemoProgram):
            def update(self, episode):
                pass
            def retrieve(self, task):
                return MemoryPayload(text="remember", metadata={"evidence": ["x" * 60000]})
        """), "metadata alone exceeds the budget", ("retrieve", "task", "conv-q1")),
}


@pytest.mark.parametrize("backend", ISOLATING)
@pytest.mark.parametrize("case", list(FAILING))
def test_each_failing_check_is_named_with_its_input_and_traceback(backend, case):
    source, error_fragment, failing = FAILING[case]
    report = exam(backend, source)
    expected_check = "imports" if case == "syntax" else case
    assert not report.passed and report.failed_check == expected_check
    assert error_fragment in report.error + report.traceback_tail
    assert report.passed_checks == tuple(CHECKS)[: list(CHECKS).index(expected_check)]
    if failing is None:
        assert report.failing_input is None
    else:
        method, key, task_id = failing
        assert report.failing_input["method"] == method
        assert report.failing_input[key]["task_id"] == task_id
    if case in ("imports", "update", "retrieve"):  # a program exception: its own frames are shown
        assert "memo_program.py" in report.traceback_tail
    text = report.for_prompt()
    assert f"`{expected_check}`" in text and error_fragment in text
    if failing is not None:
        assert task_id in text


@pytest.mark.bwrap
def test_payload_images_must_exist_in_the_store():
    report = exam("bwrap", program("""
        class Memo(MemoProgram):
            def update(self, episode):
                pass
            def retrieve(self, task):
                return MemoryPayload(images=[ImageRef(path="images/00/missing.png", sha256="0")])
        """))
    assert report.failed_check == "payload_schema" and "not an image of the episode store" in report.error


@pytest.mark.bwrap
def test_text_and_images_over_the_budget_are_cut_as_in_the_evaluation():
    """The exam and the harness agree: an over-budget payload is truncated, not failed (the
    contract prompt says so); only metadata that the cut would drop whole fails."""
    report = exam("bwrap", program("""
        class Memo(MemoProgram):
            def update(self, episode):
                self.refs = list(episode.images()) + getattr(self, "refs", [])
            def retrieve(self, task):
                return MemoryPayload(text="x" * 101, images=self.refs[:3])
        """), budget=Budget(max_chars=100, max_images=2))
    assert report.passed, report.for_prompt()


@pytest.mark.docker
def test_a_hanging_update_is_killed_and_reported():
    report = exam("docker", program("""
        import time
        class Memo(MemoProgram):
            def update(self, episode):
                time.sleep(60)
            def retrieve(self, task):
                return MemoryPayload()
        """), limits=Limits(update_timeout_s=1.5))
    assert report.failed_check == "update" and report.error.startswith("timeout")
    assert report.failing_input["index"] == 0 and report.timings["update"] < 20


@pytest.mark.bwrap
def test_host_services_reach_the_program_in_the_sandbox(fake_llm):
    client = LLMClient(LLMConfig(memo=RoleConfig(model="gpt-4o-mini", base_url=fake_llm.base_url)))
    services = MemoServices(default_encoders(EmbeddingConfig()), client, STORE, node=4)
    report = exam("bwrap", program("""
        class Memo(MemoProgram):
            def update(self, episode):
                if episode.images():
                    vectors = self.toolkit.embed_image(episode.images()[:1])
                    assert len(vectors[0]) == self.toolkit.embedding_dims()["image"]
            def retrieve(self, task):
                answer = self.toolkit.llm("note for " + task.task_id, purpose="note")
                return MemoryPayload(text=answer)
        """), services=services)
    assert report.passed, report.for_prompt()
    assert [r["node"] for r in client.ledger.rows()] == ["4"] * len(PARTIALS)
    assert services.usage()["embed_items"] == sum(1 for e in EPISODES if e.images())


@pytest.mark.bwrap
def test_a_spent_run_budget_stops_the_exam_instead_of_blaming_the_program(fake_llm):
    client = LLMClient(LLMConfig(memo=RoleConfig(model="m", base_url=fake_llm.base_url), max_total_tokens=5))
    client.chat("memo", [user_message("spend the whole budget at once")])
    services = MemoServices(default_encoders(EmbeddingConfig()), client, STORE)
    with pytest.raises(BudgetExceeded, match="token cap"):
        exam("bwrap", program("""
            class Memo(MemoProgram):
                def update(self, episode):
                    self.toolkit.llm("summarise " + episode.task_id)
                def retrieve(self, task):
                    return MemoryPayload()
            """), services=services)


@pytest.mark.bwrap
def test_cli_exit_codes_and_json(tmp_path, capsys):
    seed = str(SEEDS_DIR / "no_memory.py")
    assert main(["exam", seed, "--episodes", str(STORE), "--sandbox", "bwrap", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["passed"] and printed["sandbox"] == "bwrap" and printed["n_episodes"] == 5

    broken = tmp_path / "broken.py"
    broken.write_text(FAILING["update"][0])
    assert main(["exam", str(broken), "--episodes", str(STORE), "--sandbox", "bwrap"]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "cannot index web-001" in out

    assert main(["exam", str(tmp_path / "missing.py"), "--episodes", str(STORE)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["exam", seed, "--episodes", str(tmp_path)]) == 2
    assert "has no episode groups" in capsys.readouterr().err
    (tmp_path / "episodes" / "update").mkdir(parents=True)
    (tmp_path / "episodes" / "update" / "bad.json").write_text('{"task_id": 3}')
    assert main(["exam", seed, "--episodes", str(tmp_path)]) == 2
    assert "bad.json" in capsys.readouterr().err


def test_exam_takes_a_run_directory_and_seed_names_and_lists_groups(tmp_path, capsys):
    """A search run's store names its update group update-<split>-<hash>: exam finds it from the
    run folder or its episodes/ folder, takes a seed name like eval, and lists the groups when
    the choice is not clear."""
    from searchtools import committed_root_run

    run = committed_root_run(tmp_path)
    shutil.copytree(STORE / "episodes" / "update", run.store_root / "episodes" / "update-train-1a2b")
    shutil.copytree(STORE / "images", run.store_root / "images")
    for folder in (run.path, run.store_root):
        assert main(["exam", "no_memory", "--episodes", str(folder), "--sandbox", "unsafe", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["passed"]
    (run.store_root / "episodes" / "update-test-3c4d").mkdir()
    assert main(["exam", "no_memory", "--episodes", str(run.path), "--sandbox", "unsafe"]) == 2
    err = capsys.readouterr().err
    assert "its groups are: update-test-3c4d, update-train-1a2b" in err and "--update-group NAME" in err
    assert main(["exam", "no_memory", "--episodes", str(run.path), "--update-group", "nope", "--sandbox", "unsafe"]) == 2
    assert "--update-group nope" in capsys.readouterr().err
    assert main(["exam", "no_memory", "--episodes", str(run.path), "--update-group", "update-train-1a2b",
                 "--sandbox", "unsafe"]) == 0


def test_exam_hands_retrieve_what_an_evaluation_does_the_runs_benchmark_keys_and_budget(tmp_path):
    """The exam of a run's episodes reads the keys the run's own benchmark declares known at
    question time (not the default benchmark's), and its retrieve tasks carry the budget, as the
    harness's do (`contract.question_time_task`)."""
    from automemo.cli.exam_cmd import run_settings
    from automemo.config import Budget
    from automemo.contract import BUDGET_KEY
    from searchtools import committed_root_run

    run = committed_root_run(tmp_path)
    config = json.loads((run.path / "config.json").read_text())
    (run.path / "config.json").write_text(json.dumps({**config, "benchmark": {**config.get("benchmark", {}),
                                                                              "name": "miniwob"}}))
    assert run_settings(run.path)["benchmark"] == {"name": "miniwob"}
    budget = Budget(max_chars=1234).to_dict()
    _, partials = load_inputs(STORE, "update", "retrieve", 5, frozenset({"family"}), budget)
    assert all(p.metadata[BUDGET_KEY] == budget and "family" in p.metadata for p in partials)
