"""`automemo bench report`: the HTML report of a synthetic 20-node run: its size (target < 5 MB),
the time to build it (first build and refresh) and its render time in headless chromium
(target < 2 s for the overview and for the heaviest node page), and the live report's refresh as
a share of the quickstart search's mean step (target <= 10%, `measurements.report_upkeep`)."""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from automemo.cli import UserError

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
SIZE_TARGET_MB = 5.0
RENDER_TARGET_S = 2.0


def add_arguments(parser) -> None:
    parser.add_argument("--nodes", type=int, default=20, help="nodes of the synthetic run (default 20)")
    parser.add_argument("--tasks", type=int, default=8, help="retrieve tasks per evaluation (default 8)")
    parser.add_argument("--repeats", type=int, default=5, help="page loads to take the median of (default 5)")
    parser.add_argument("--upkeep-steps", type=int, default=3, metavar="N",
                        help="steps of the quickstart search whose mean step time the live report's refresh "
                             "is compared with (default 3; 0 skips it)")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="write the run and its report here and keep them")


def run(args) -> int:
    from automemo.measurements.stand_ins.synthetic_run import write_synthetic_run
    from automemo.report.build import build_report, report_size

    if not Path(CHROMIUM).exists():
        raise UserError(f"{CHROMIUM} not found; install Debian's chromium package (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="automemo-bench-report-") as tmp:
        root = args.keep or Path(tmp)
        started = time.perf_counter()
        run_dir = write_synthetic_run(root, nodes=args.nodes, tasks_per_eval=args.tasks)
        print(f"synthetic run: {args.nodes} nodes, {len(run_dir.evaluations())} evaluations, "
              f"written in {time.perf_counter() - started:.1f} s")

        started = time.perf_counter()
        index = build_report(run_dir, quiet=True)
        first = time.perf_counter() - started
        started = time.perf_counter()
        build_report(run_dir, quiet=True)
        refresh = time.perf_counter() - started
        size_mb = report_size(index.parent) / 1e6
        print(f"build: {first:.2f} s first, {refresh:.2f} s refresh")
        print(f"size: {size_mb:.2f} MB (target < {SIZE_TARGET_MB:.0f} MB) "
              f"{'OK' if size_mb < SIZE_TARGET_MB else 'OVER'}")

        heaviest = max((index.parent / "nodes").glob("*.html"), key=lambda p: p.stat().st_size)
        for label, page_path in (("overview", index), (f"node page {heaviest.name}", heaviest)):
            median = _render_seconds(page_path, args.repeats)
            print(f"render {label}: {median:.3f} s median of {args.repeats} "
                  f"(target < {RENDER_TARGET_S:.0f} s) {'OK' if median < RENDER_TARGET_S else 'OVER'}")
        upkeep_ok = True
        if args.upkeep_steps > 0:
            from automemo.measurements.report_upkeep import measure

            upkeep_ok = measure(root, args.upkeep_steps, refresh)
        if args.keep:
            print(f"kept: {index}")
    return 0 if upkeep_ok else 1


def _render_seconds(page_path: Path, repeats: int) -> float:
    """Wall time from navigation to the load event (images included), in a warm browser."""
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(page_path.as_uri(), wait_until="load")  # warm-up: process and font caches
            for _ in range(repeats):
                page.goto("about:blank")
                started = time.perf_counter()
                page.goto(page_path.as_uri(), wait_until="load")
                times.append(time.perf_counter() - started)
        finally:
            browser.close()
    return statistics.median(times)
