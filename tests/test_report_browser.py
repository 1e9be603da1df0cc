"""`automemo report` end to end: reports of real runs, opened from file:// in Debian's headless
chromium through Playwright. Screenshots of the pages land in artifacts/ for people to look at.

Runs: one made by a short real `automemo search` (Mini-Gallery offline preset: real sandbox,
real encoder, offline mutator), and synthetic ones written through the run directory's write API
(a 20-node run with failed generations, an unfinished run, a root-only run).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from automemo.cli import main
from automemo.measurements.stand_ins.synthetic_run import write_synthetic_run
from automemo.report.build import build_report, report_size
from automemo.runs import RunDir

pytestmark = [pytest.mark.browser]

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield b
        b.close()


class Problems:
    """Everything a page should never do: console errors, uncaught exceptions, failed loads."""

    def __init__(self, page):
        self.items: list[str] = []
        page.on("console", lambda m: self.items.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.items.append(f"pageerror: {e}"))
        page.on("requestfailed", lambda r: self.items.append(f"failed load: {r.url}"))


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    pg.problems = Problems(pg)
    yield pg
    context.close()


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def _tree_ids(page) -> list[int]:
    return sorted(int(i) for i in page.locator("svg.tree g.node").evaluate_all(
        "els => els.map(e => e.dataset.nodeId)"))


def _images_loaded(page) -> bool:
    return page.evaluate("[...document.images].every(i => i.complete && i.naturalWidth > 0)")


@pytest.fixture(scope="module")
def real_run(tmp_path_factory) -> RunDir:
    runs = tmp_path_factory.mktemp("runs")
    # The root's first child must be a transplanted seed (the page checks below), not a recipe.
    config = runs / "no-recipes.toml"
    # The mutator's own transplant is what the node page checks below, not the seed sweep's.
    config.write_text("[meta.offline]\ncompose_rate = 0.0\n\n[search]\nseed_sweep = false\n")
    done = subprocess.run(
        [sys.executable, "-m", "automemo", "search", "--preset", "minigallery", "--config", str(config),
         "--steps", "2", "--runs-dir", str(runs), "--run-id", "real", "--quiet"],
        capture_output=True, text=True, timeout=540,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return RunDir.open(runs / "real")


@pytest.fixture(scope="module")
def run20(tmp_path_factory) -> RunDir:
    return write_synthetic_run(
        tmp_path_factory.mktemp("runs"), nodes=20, tasks_per_eval=4, screenshots_per_task=2,
        run_id="r20",
    )


@pytest.mark.slow
def test_report_of_a_real_search_run(real_run, page, capsys):
    assert main(["report", str(real_run.path)]) == 0
    index = real_run.path / "report" / "index.html"
    assert str(index) in capsys.readouterr().out

    page.goto(index.as_uri())
    assert _tree_ids(page) == [n["id"] for n in real_run.nodes()]
    selected = real_run.final()["node_id"]
    assert page.locator("svg.tree g.node.selected").get_attribute("data-node-id") == str(selected)
    assert page.locator("#spend tr").count() == 1 + 4  # header + the four roles
    _shot(page, "report-real-index.png")

    page.locator("svg.tree g.node.selected").click()
    page.wait_for_url(f"**/nodes/{selected}.html")
    assert page.locator("h1").inner_text() == f"Node #{selected}"
    assert page.locator("#program .hl").count() == 1
    assert page.locator("#diff").count() == 1  # a diff table, "identical", or "root: no parent"
    assert page.locator("#evaluations tr").count() == 1 + len(real_run.evaluations(selected))
    assert _images_loaded(page)
    _shot(page, "report-real-node.png")

    # The first child of the no-memory root is a transplanted seed (the root has no tunables), and
    # Mini-Gallery's AR questions are left out of retrieval metrics: each says so.
    first = next(n for n in real_run.nodes() if n["parent"] == 0)
    page.goto((index.parent / "nodes" / f"{first['id']}.html").as_uri())
    assert "Transplanted seed" in page.locator("#diff").inner_text()
    assert "declares no tunable constants" in page.locator("#diagnosis").inner_text()
    uncounted = page.locator("table.tasks tr", has=page.locator(".badge", has_text="not counted"))
    assert uncounted.count() >= 1
    assert all("no gold evidence" in t for t in uncounted.all_inner_texts())
    assert "gold evidence:" in page.locator("#samples").inner_text()
    _shot(page, "report-real-transplant.png")

    # every node page opens from the tree and renders cleanly
    for node in real_run.nodes():
        page.goto(index.as_uri())
        page.locator(f'svg.tree g.node[data-node-id="{node["id"]}"]').click()
        page.wait_for_url(f"**/nodes/{node['id']}.html")
        assert node["summary"] in page.locator("#summary").inner_text()
    assert page.problems.items == []


def test_selected_node_of_a_20_node_run_opens_with_its_diff(run20, page):
    index = build_report(run20, quiet=True)
    assert report_size(index.parent) < 5_000_000

    page.goto(index.as_uri())
    assert _tree_ids(page) == list(range(20))
    failed = {n["id"] for n in run20.nodes() if n["status"] == "failed"}
    assert failed, "the synthetic run should hold failed generations"
    shown_failed = page.locator("svg.tree g.node.failed").evaluate_all(
        "els => els.map(e => +e.dataset.nodeId)")
    assert set(shown_failed) == failed
    assert page.locator("svg.tree path.edge").count() == 19
    _shot(page, "report-20-index.png")

    final = run20.final()
    node = run20.node(final["node_id"])
    assert node["parent"] is not None  # the search moved past the root in this seeded run
    page.locator("svg.tree g.node.selected").click()
    page.wait_for_url(f"**/nodes/{final['node_id']}.html")
    diff = page.locator("table.diff#diff")
    assert diff.locator("tr.change").count() >= 1
    assert diff.locator("ins").count() >= 1 and diff.locator("del").count() >= 1
    assert f"#{node['parent']} (parent)" in diff.inner_text()
    crumbs = page.locator(".crumbs a").all_inner_texts()
    assert crumbs[0] == "run r20" and crumbs[-1] == f"#{node['parent']}"
    assert page.locator("#samples .sample").count() == 4
    assert page.locator("#samples img").count() > 0 and _images_loaded(page)
    assert page.locator("#exam .attempt").count() == 1 + node["repair_attempts"]
    # The diagnosis reads as findings and suggestions, not as a key/value dump.
    diagnosis = page.locator("#diagnosis")
    assert "perturb TOP_K 5→8" in diagnosis.locator(".move").inner_text()
    assert diagnosis.locator(".suggestions li").count() == 2 and diagnosis.locator(".findings li").count() == 2
    assert diagnosis.locator(".relevance .badge.rel-missing").count() == 1
    assert "2 meta LLM calls" in diagnosis.inner_text()
    # What the agent did, and how each sample was scored
    assert page.locator("#samples .sample ol.steps li").count() >= 1
    _shot(page, "report-20-node.png")
    assert page.problems.items == []


def test_single_node_run_renders(tmp_path, page):
    run = write_synthetic_run(tmp_path, nodes=1, tasks_per_eval=3, screenshots_per_task=1, run_id="one")
    index = build_report(run, quiet=True)
    page.goto(index.as_uri())
    assert _tree_ids(page) == [0]
    assert page.locator("svg.tree g.node.selected").count() == 1
    page.locator("svg.tree g.node").click()
    page.wait_for_url("**/nodes/0.html")
    assert "has no parent" in page.locator("#diff").inner_text()
    _shot(page, "report-single-node.png")
    assert page.problems.items == []


def test_the_held_out_verdict_is_on_the_page_in_a_browser(tmp_path, page):
    """search.heldout_test: the verdict, both test scores and the per-type table render and are
    visible above the tree, and their links open the programs' pages."""
    import json

    from test_heldout_report import _doc

    run = write_synthetic_run(tmp_path, nodes=6, tasks_per_eval=3, screenshots_per_task=0, run_id="held")
    final = json.loads((run.path / "final.json").read_text())
    run.write_final({**final, "heldout_test": _doc()})
    page.goto(build_report(run, quiet=True).as_uri())
    section = page.locator("#heldout")
    assert section.is_visible() and section.bounding_box()["y"] < page.locator("#tree").bounding_box()["y"]
    assert page.locator("#heldout .verdict").inner_text() == "The selected program beats the best hand design."
    assert "+0.500 ± 0.289" in page.locator("#heldout-difference").inner_text()
    assert page.locator("#heldout-types tr").count() == 1 + 2  # header, temporal, visual
    _shot(page, "report-heldout.png")
    page.locator("#heldout a", has_text="#5").click()
    page.wait_for_url("**/nodes/5.html")
    assert page.problems.items == []


def test_unfinished_run_renders_and_a_rerun_refreshes_it(tmp_path, page):
    run = write_synthetic_run(tmp_path, nodes=5, tasks_per_eval=3, screenshots_per_task=1,
                              finished=False, run_id="mid")
    run.mark_running()  # a search is working on it (this process stands in for it)
    index = build_report(run, quiet=True)
    stale = index.parent / "nodes" / "999.html"
    stale.write_text("left over from an earlier build of another run state")

    page.goto(index.as_uri())
    assert "in progress" in page.locator("header").inner_text()
    assert _tree_ids(page) == [n["id"] for n in run.nodes()]
    pending = page.locator("svg.tree g.node.pending")
    assert pending.count() == 1 and "NOT EVALUATED" in pending.text_content()
    assert page.locator("svg.chart rect.act-pending").count() >= 1  # planned steps still to run

    run.write_final({"node_id": 0, "mean": 0.0, "n": 1, "lcb": 0.0, "total_evaluations": 1,
                     "program_path": "nodes/0/program.py", "stop_reason": "budget",
                     "steps_done": 1, "candidates": []})
    build_report(run, quiet=True)
    page.reload()
    assert "finished · budget" in page.locator("header").inner_text()
    assert page.locator("svg.tree g.node.selected").get_attribute("data-node-id") == "0"
    assert not stale.exists() and _tree_ids(page) == [n["id"] for n in run.nodes()]
    assert page.problems.items == []


def test_report_command_rejects_a_folder_that_is_not_a_run(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "not a run directory" in err and "automemo search" in err
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_a_transplant_page_names_the_seed_and_uncounted_tasks_say_why(tmp_path, page):
    """A transplanted seed is shown as such (no line diff against an unrelated parent), the
    overview's selected card reads μ over n, tree boxes end summaries on a word, and a task left
    out of the mean says why."""
    import json

    from automemo.evaluation import evidence as evidence_io

    run = write_synthetic_run(tmp_path, nodes=6, tasks_per_eval=3, screenshots_per_task=1, run_id="t")
    child = next(n for n in run.nodes() if n["parent"] is not None and n["status"] != "failed")
    folder = run.node_dir(child["id"])
    diagnosis = json.loads((folder / "diagnosis.json").read_text())
    diagnosis["diagnosis"]["mutation"] = {
        "kind": "transplant", "seed": "murag", "summary": "transplant seed murag (not yet tried)",
        "why": "the parent has 3 tunable constant(s), but the exploration draw (transplant_rate 0.25) "
               "picked a seed not yet in the tree"}
    (folder / "diagnosis.json").write_text(json.dumps(diagnosis))
    # One task of its latest evaluation left out of the mean, as Mini-Gallery does with AR questions.
    ev = run.evaluations(child["id"])[-1]
    evidence_dir = run.path / ev["evidence_dir"]
    summary = json.loads((evidence_dir / "summary.json").read_text())
    summary["result"]["tasks"][0].update(
        counted=False, feedback="not counted: this question has no gold evidence to retrieve")
    (evidence_dir / "summary.json").write_text(json.dumps(summary))
    assert not evidence_io.read_evidence(evidence_dir).result.tasks[0].counted

    index = build_report(run, quiet=True)
    page.goto(index.as_uri())
    hero = page.locator(".card.hero").inner_text()
    assert "± n=" not in hero and "over n=" in hero
    for node in run.nodes():  # a cut summary ends at a word boundary
        text = page.locator(f'svg.tree g.node[data-node-id="{node["id"]}"] text.summary').text_content()
        if text.endswith("…"):
            kept = text[:-1].rstrip()
            assert node["summary"].startswith(kept) and node["summary"][len(kept)] in " ,;", (text, node["summary"])

    page.goto((index.parent / "nodes" / f"{child['id']}.html").as_uri())
    diff = page.locator("#diff")
    assert "Transplanted seed murag" in diff.inner_text() and "seeds/murag.py" in diff.inner_text()
    assert "exploration draw" in diff.inner_text() and page.locator("table.diff").count() == 0
    assert "lines against" not in page.locator("h2", has_text="Change against the parent").inner_text()
    page.locator("details:has(table.tasks)").last.evaluate("d => d.open = true")
    row = page.locator("table.tasks tr", has=page.locator(".badge", has_text="not counted"))
    assert row.count() == 1 and "no gold evidence to retrieve" in row.inner_text()
    _shot(page, "report-transplant-node.png")
    assert page.problems.items == []
