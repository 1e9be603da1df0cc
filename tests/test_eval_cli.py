"""`automemo eval` end to end: Mini-Gallery retrieval mode, a seed program, real embeddings, the
unsafe backend and a real sandbox; the JSON it writes; the errors a user can make."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from automemo.cli import main
from automemo.paths import seed_path

SMALL = ["--option", "users_per_split=1", "--option", "sessions_per_user=3", "--option", "rounds_per_session=16"]


@pytest.fixture(autouse=True)
def offline_models(torch_cpu_shim, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory) -> Path:
    """One episode store for the module, as a user's default store is shared between runs: the
    update episodes and embeddings computed by the first evaluation are reused by the others."""
    return tmp_path_factory.mktemp("store")


@pytest.fixture
def run_eval(shared_store):
    def run(tmp_path: Path, *extra: str) -> tuple[int, dict | None]:
        out = tmp_path / "results.json"
        code = main([
            "eval", *extra, "--benchmark", "minigallery", *SMALL, "--quiet",
            "--out", str(out), "--workdir", str(tmp_path / "work"), "--store", str(shared_store),
        ])
        return code, (json.loads(out.read_text()) if out.exists() else None)

    return run


def test_eval_writes_the_table_as_json(run_eval, tmp_path, capsys):
    code, doc = run_eval(tmp_path, "murag", "--sandbox", "unsafe", "--repeats", "2", "--split", "test")
    assert code == 0
    printed = capsys.readouterr().out
    assert "murag on minigallery (test split, 2 repeats)" in printed and "recall@10" in printed

    table = doc["table"]
    assert doc["sandbox"] == "unsafe" and doc["split"] == "test"
    assert doc["benchmark"]["name"] == "minigallery"
    assert table["repeats"] == 2 and table["program"] == "murag"
    assert table["score"]["n"] == 2 and 0.3 < table["score"]["mean"] <= 1.0
    # Retrieval mode is deterministic: repeats agree exactly.
    assert table["score"]["std"] == 0.0
    assert table["score"]["mean"] == pytest.approx(table["metrics"]["recall@10"]["mean"])
    assert set(table["metrics"]) == {"hit@10", "ndcg@10", "recall@10"}
    assert table["per_category"] and "AR" not in table["per_category"]
    assert table["errors"] == {}
    assert [set(e) >= {"mean", "n_scored", "per_category", "metrics", "evidence_dir"} for e in doc["evaluations"]] == [True, True]
    for evaluation in doc["evaluations"]:
        assert evaluation["mean"] == table["score"]["mean"]
        assert (Path(evaluation["evidence_dir"]) / "summary.json").exists()


@pytest.mark.docker
def test_eval_in_a_real_sandbox_matches_the_unsafe_backend(run_eval, tmp_path):
    """Same program, same data: the sandbox changes where the program runs, not its score."""
    code, docker = run_eval(tmp_path / "docker", "murag", "--sandbox", "docker", "--repeats", "1")
    assert code == 0 and docker["sandbox"] == "docker"
    code, unsafe = run_eval(tmp_path / "unsafe", "murag", "--sandbox", "unsafe", "--repeats", "1")
    assert code == 0
    assert docker["table"]["score"]["mean"] == pytest.approx(unsafe["table"]["score"]["mean"])


def test_program_from_a_file_and_an_exported_folder(run_eval, tmp_path):
    folder = tmp_path / "exported"
    folder.mkdir()
    (folder / "program.py").write_text(seed_path("murag").read_text())
    code, doc = run_eval(tmp_path / "a", str(folder), "--sandbox", "unsafe", "--repeats", "1")
    assert code == 0 and doc["table"]["program"] == "exported"
    code, same = run_eval(tmp_path / "b", str(seed_path("murag")), "--sandbox", "unsafe", "--repeats", "1")
    assert code == 0 and same["table"]["score"]["mean"] == doc["table"]["score"]["mean"]


def test_qa_mode_runs_the_configured_agent(run_eval, tmp_path, fake_llm):
    """--agent-* flags reach the execution agent: every retrieve task asks the server once,
    with the retrieved memory in the prompt, and the answers are scored by token F1."""
    fake_llm.set_handler(lambda body: "Answer: Not mentioned")
    code, doc = run_eval(
        tmp_path, "murag", "--sandbox", "unsafe", "--repeats", "1", "--option", "mode=qa",
        "--agent-model", "fake-agent", "--agent-base-url", fake_llm.base_url,
        "--agent-api-key-env", "AUTOMEMO_TEST_NO_KEY",
    )
    assert code == 0
    table = doc["table"]
    assert set(table["metrics"]) == {"em", "f1"}
    chats = [r for r in fake_llm.requests if "messages" in r]
    assert len(chats) == table["n_scored"]["mean"] > 0
    assert all(r["model"] == "fake-agent" for r in chats)
    assert any("Memory from earlier tasks" in json.dumps(r["messages"]) for r in chats)
    assert table["tokens"]["mean"] > 0 and table["steps"]["mean"] > 0


@pytest.mark.parametrize(
    "argv, message",
    [
        (["eval", "no/such/program.py", "--benchmark", "minigallery"], "no memo program at no/such/program.py"),
        (["eval", "no_such_seed", "--benchmark", "minigallery"], "no memo program named 'no_such_seed'"),
        (["eval", "murag", "--benchmark", "nosuchbench", "--sandbox", "unsafe"], "unknown benchmark 'nosuchbench'"),
        (["eval", "murag", "--benchmark", "miniwob", "--sandbox", "unsafe"], "--agent-model MODEL"),
        (
            ["eval", "murag", "--benchmark", "minigallery", "--option", "mode=qa", "--sandbox", "unsafe"],
            "needs an LLM visual agent",
        ),
        (["eval", "murag", "--benchmark", "minigallery", "--option", "seeds"], "expected KEY=VALUE"),
        (["eval", "murag", "--benchmark", "minigallery", "--option", "colour=red"], "colour"),
        (["eval", "murag", "--benchmark", "minigallery", "--repeats", "0"], "--repeats must be at least 1"),
        (
            ["eval", "murag", "--benchmark", "minigallery", "--sandbox", "docker", "--unsafe-no-sandbox"],
            "contradict",
        ),
    ],
)
def test_clear_errors(argv, message, capsys, tmp_path):
    assert main([*argv, "--store", str(tmp_path / "store"), "--workdir", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("automemo: error: ") and message in err


def test_miniwob_error_names_the_key_variable(capsys, tmp_path):
    main(["eval", "murag", "--benchmark", "miniwob", "--agent-api-key-env", "MY_KEY"])
    err = capsys.readouterr().err
    assert "--agent-model" in err and "OPENAI_API_KEY" in err and "--agent-api-key-env" in err


def test_out_and_workdir_that_are_files_are_refused_before_anything_runs(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for extra, message in (
        (["--out", str(tmp_path)], "is a folder; pass the results file"),
        (["--out", str(afile / "results.json")], "is a file, not a folder"),
        (["--workdir", str(afile)], "is a file, not a folder"),
    ):
        assert main(["eval", "murag", "--benchmark", "minigallery", "--sandbox", "unsafe", *extra]) == 2
        err = capsys.readouterr().err
        assert err.startswith("automemo: error: ") and message in err, err


def test_folder_without_program(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["eval", str(tmp_path / "empty"), "--benchmark", "minigallery"]) == 2
    assert "without program.py" in capsys.readouterr().err


def test_no_partial_state_is_left_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "nope.py", "--benchmark", "minigallery"]) == 2
    assert os.listdir(tmp_path) == []


BROKEN_PROGRAMS = {
    "syntax": ("class Memo(:\n", "never loaded", "SyntaxError"),
    "bad_result": (
        "from automemo.contract import MemoProgram\n\n"
        "class Memo(MemoProgram):\n"
        "    def update(self, episode):\n        return None\n\n"
        "    def retrieve(self, task):\n        return 42\n",
        "failed on all",
        "bad-result: retrieve() result",
    ),
}


@pytest.mark.parametrize("name", sorted(BROKEN_PROGRAMS))
def test_a_program_that_never_worked_exits_non_zero_with_the_reason(run_eval, tmp_path, capsys, name):
    source, reason, detail = BROKEN_PROGRAMS[name]
    program = tmp_path / f"{name}.py"
    program.write_text(source)
    code, doc = run_eval(tmp_path, str(program), "--sandbox", "unsafe")
    captured = capsys.readouterr()
    assert code == 1
    # The one line before the error names the image encoder (said once per command).
    info, error = captured.err.split("\n", 1)
    assert info.startswith("image embeddings: the perceptual fallback")
    assert error.startswith("automemo: error: ") and reason in error and detail in error
    assert doc["table"]["score"]["mean"] == 0.0  # the results are still written, for inspection


def test_deterministic_scoring_defaults_to_one_repeat_outside_runs(shared_store, tmp_path, monkeypatch, capsys):
    """Retrieval mode has no agent: repeats would agree exactly, so one is the default; the work
    folder goes under evals/, apart from search runs."""
    monkeypatch.chdir(tmp_path)
    code = main(["eval", "murag", "--benchmark", "minigallery", *SMALL, "--quiet", "--sandbox", "unsafe",
                 "--store", str(shared_store)])
    assert code == 0
    out = capsys.readouterr().out
    assert "(test split, 1 repeat)" in out
    assert not (tmp_path / "runs").exists()
    (workdir,) = (tmp_path / "evals").iterdir()
    assert workdir.name.endswith("-murag") and (workdir / "results.json").exists()
    assert [p.name for p in workdir.iterdir() if p.is_dir()] == ["repeat-1"]
