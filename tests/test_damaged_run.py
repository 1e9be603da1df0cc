"""A run whose tree.db is empty or truncated (a partial copy): every command that reads the run
says so in one message naming the file and what to do, exits 2, and writes nothing."""

from __future__ import annotations

import json
import shutil

import pytest

from automemo.cli import main
from automemo.runs import DamagedRun, RunDir
from searchtools import committed_root_run


def _run_with_root(tmp_path):
    run = committed_root_run(tmp_path / "runs", events=40)
    run.write_final({"node_id": 0, "stop_reason": "steps"})
    return run


def _damage(run, how: str) -> None:
    data = run.db_path.read_bytes()
    for extra in ("-wal", "-shm"):
        run.db_path.with_name(run.db_path.name + extra).unlink(missing_ok=True)
    run.db_path.write_bytes(b"" if how == "empty" else data[: len(data) // 2])


@pytest.mark.parametrize("how", ["empty", "truncated"])
def test_every_command_refuses_a_damaged_run_in_one_message(tmp_path, capsys, how):
    run = _run_with_root(tmp_path)
    _damage(run, how)
    with pytest.raises(DamagedRun):
        RunDir.open(run.path)
    commands = [
        ["tree", str(run.path)],
        ["show", str(run.path), "0"],
        ["report", str(run.path)],
        ["export", str(run.path), "--out", str(tmp_path / "export")],
        ["search", "--resume", str(run.path), "--quiet"],
    ]
    for argv in commands:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "Traceback" not in err
        assert f"{run.db_path} is damaged" in err, (argv, err)
        assert "Restore tree.db from a copy" in err
        assert "program.py" in err and "final.json" in err
    # Nothing half-written: no report folder, no export folder.
    assert not (run.path / "report").exists()
    assert not (tmp_path / "export").exists()


def test_a_healthy_run_still_opens(tmp_path):
    run = _run_with_root(tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(run.path, copy)
    assert RunDir.open(copy).nodes()[0]["summary"] == "no memory"
