"""A search that was killed or interrupted: its report says it stopped (not "in progress") and how
to continue it, and Ctrl-C prints the `--resume` command."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

from searchtools import committed_root_run

from automemo.cli import main, search_cmd
from automemo.report.build import build_report


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_report_of_a_killed_run_says_it_stopped_and_how_to_resume(tmp_path):
    run = committed_root_run(tmp_path, steps=5)
    run.mark_running()  # this process is alive: the search is running
    html = build_report(run, quiet=True).read_text()
    assert "in progress" in html and "--resume" not in html

    # kill -9 leaves the marker behind with a pid that no longer exists
    (run.path / "running.json").write_text(f'{{"pid": {_dead_pid()}, "host": "{__import__("socket").gethostname()}"}}')
    html = build_report(run, quiet=True).read_text()
    assert "in progress" not in html
    assert "stopped at step 0 of 5" in html and f"automemo search --resume {run.path}" in html

    run.clear_running()  # Ctrl-C: the search removed its marker on the way out
    assert "stopped at step 0 of 5" in build_report(run, quiet=True).read_text()


def test_ctrl_c_prints_the_resume_command(tmp_path, capsys, monkeypatch):
    def interrupted():
        raise KeyboardInterrupt

    search = SimpleNamespace(loop=SimpleNamespace(run_search=interrupted, parts=SimpleNamespace(),
                                                  plan_questions=lambda: None),
                             close=lambda: None)
    monkeypatch.setattr(search_cmd, "_build", lambda *a: search)
    code = main(["search", "--preset", "minigallery", "--sandbox", "unsafe", "--runs-dir", str(tmp_path),
                 "--run-id", "r", "--quiet"])
    assert code == 130
    err = capsys.readouterr().err
    assert "everything committed so far is kept" in err
    assert f"Continue with: automemo search --resume {tmp_path / 'r'}" in err


def test_tree_of_a_stopped_run_says_how_to_continue_it(tmp_path, capsys):
    run = committed_root_run(tmp_path, steps=5)
    assert main(["tree", str(run.path)]) == 0
    assert f"search stopped before finishing; continue with: automemo search --resume {run.path}" in capsys.readouterr().out
    run.mark_running()
    assert main(["tree", str(run.path)]) == 0
    assert "search in progress" in capsys.readouterr().out
