"""The report follows a running search: a real `automemo search` (a small Mini-Gallery, offline
mutator, real sandbox and encoder) keeps runs/<id>/report/ current; opened in Debian's headless chromium
while the search runs, the page says so, shows the step in flight and reloads itself; after the
run it shows the finished state and no longer reloads. Screenshots land in artifacts/."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from automemo.cli import main
from automemo.report.live import LiveStatus, duration_text
from searchtools import search_command, search_env, write_config

pytestmark = [pytest.mark.browser]

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
IN_FLIGHT = re.compile(r"step 1(: (generate from|re-evaluate) #0)? in flight")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.mark.slow
def test_the_report_follows_a_running_search_in_chromium(tmp_path):
    from playwright.sync_api import sync_playwright

    index = tmp_path / "r" / "report" / "index.html"
    config = write_config(tmp_path / "search.toml", steps=1, backend="bwrap")
    search = subprocess.Popen(
        search_command("--config", str(config), "--runs-dir", str(tmp_path), "--run-id", "r"),
        env=search_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            problems: list[str] = []
            page.on("pageerror", lambda e: problems.append(str(e)))
            deadline = time.time() + 300
            while not (index.is_file() and IN_FLIGHT.search(index.read_text())) and time.time() < deadline:
                assert search.poll() is None, search.stderr.read()[-3000:]
                time.sleep(0.2)
            page.goto(index.as_uri())
            live = page.locator("#live")
            assert search.poll() is None, "the search ended before its live page could be looked at"
            banner = live.inner_text()
            assert "Search running" in banner and IN_FLIGHT.search(banner), banner
            assert "0 of 1 steps committed" in banner and "best μ so far 0.000 (step 0)" in banner
            assert "in progress" in page.locator("header").inner_text()
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "report-live-running.png"), full_page=True)
            with page.expect_event("load", timeout=15_000):  # it reloads itself
                pass

            assert search.wait(timeout=600) == 0, search.stderr.read()[-3000:]
            page.goto(index.as_uri())
            assert page.locator("#live").count() == 0
            assert "finished" in page.locator("header").inner_text()
            assert not page.evaluate("[...document.scripts].some(s => s.text.includes('location.reload'))")
            page.screenshot(path=str(ARTIFACTS / "report-live-finished.png"), full_page=True)
            assert problems == []
            browser.close()
    finally:
        if search.poll() is None:
            search.kill()
            search.wait()


def test_the_live_page_is_there_before_the_roots_evaluation_commits(tmp_path):
    """The search builds its page at once (the root's evaluation can take minutes); a tree with no
    node yet is a page that says so, not a failure."""
    from automemo.report.build import build_report
    from automemo.runs import RunDir

    run = RunDir.create(tmp_path, {"search": {"steps": 3}}, "r")
    text = build_report(run, quiet=True, live=True).read_text()
    assert "step 0: evaluating the root in flight" in text and "0 of 3 steps committed" in text
    assert "No node committed yet" in text


def test_no_report_leaves_the_report_to_automemo_report(tmp_path, capsys):
    code = main(["search", "--preset", "minigallery", "--steps", "0", "--runs-dir", str(tmp_path),
                 "--run-id", "q", "--sandbox", "bwrap", "--quiet", "--no-report"])
    assert code == 0 and not (tmp_path / "q" / "report").exists()


def test_time_left_reads_as_a_person_would_say_it():
    status = LiveStatus(in_flight=("step 3",), steps_done=2, planned_steps=10, mean_step_s=95.0,
                        eta_s=760.0, best_step=2, best_mean=0.5)
    assert status.eta_text == "12 min 40 s" and status.mean_step_text == "1 min 35 s"
    assert duration_text(7300) == "2 h 01 min" and status.stale_after_s == 300


def test_time_left_comes_from_the_committed_steps_and_the_parallel_width(tmp_path):
    from types import SimpleNamespace

    from automemo.report.charts import ScorePoint
    from automemo.report.live import live_status
    from automemo.runs.journal import record_inflight
    from automemo.search.pending import PendingAction
    from searchtools import committed_root_run

    run = committed_root_run(tmp_path / "runs", steps=10)
    actions = [SimpleNamespace(step=s, wall_s=w) for s, w in ((0, 99.0), (1, 10.0), (2, 20.0))]
    view = SimpleNamespace(run=run, actions=actions, last_step=2, search=SimpleNamespace(steps=10, parallel=2))
    points = (ScorePoint(step=0, node_id=0, k=0, score=0.2), ScorePoint(step=2, node_id=1, k=0, score=0.6))
    status = live_status(view, points)
    assert status.mean_step_s == 15.0 and status.eta_s == 15.0 * 8 / 2  # the root's evaluation is not a step
    assert (status.best_step, status.best_mean) == (2, 0.6) and status.in_flight == ("step 3",)
    for step, kind, node in ((3, "generate", 1), (4, "evaluate", 0)):  # as a parallel search records them
        pending = PendingAction(step=step, kind=kind, node_id=node, score=0.5)
        record_inflight(run, step, {"step": step, "action": pending.to_dict(), "candidates": []})
    assert live_status(view, points).in_flight == ("step 3: generate from #1", "step 4: re-evaluate #0")
