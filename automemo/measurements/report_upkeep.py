"""The live report's share of a search step (part of `automemo bench report`): the quickstart
search (`automemo search --preset minigallery`, a few steps) runs with its report kept current
after every step; its mean step time is set against the time one report refresh takes, on that
run and on the synthetic 20-node run. Target: a refresh <= 10% of the mean step."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from automemo.cli import UserError

SHARE_TARGET = 0.10


def measure(root: Path, steps: int, refresh_20_nodes_s: float) -> bool:
    """Run the quickstart search under `root`; print the figures; True when the target is met."""
    from automemo.report.build import build_report
    from automemo.runs import RunDir

    print(f"quickstart search, {steps} steps, report kept current after every step ...", flush=True)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "automemo", "search", "--preset", "minigallery", "--steps", str(steps),
         "--runs-dir", str(root / "runs"), "--run-id", "quickstart", "--quiet"],
        capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise UserError(f"the quickstart search failed: {done.stderr.strip()[-1500:]}")
    run = RunDir.open(root / "runs" / "quickstart")
    walls = [a["wall_s"] for a in run.actions() if a["step"] > 0 and a.get("wall_s")]
    mean_step = statistics.fmean(walls)
    refreshes = []
    for _ in range(3):
        t0 = time.perf_counter()
        build_report(run, quiet=True, live=True)
        refreshes.append(time.perf_counter() - t0)
    refresh = statistics.median(refreshes)
    print(f"search took {time.perf_counter() - started:.0f} s; mean step {mean_step:.1f} s over {len(walls)} steps")
    ok = True
    for label, seconds in ((f"this run ({len(run.nodes())} nodes)", refresh),
                           ("the synthetic 20-node run", refresh_20_nodes_s)):
        share = seconds / mean_step
        ok &= share <= SHARE_TARGET
        print(f"report refresh of {label}: {seconds:.2f} s = {share:.1%} of a mean step "
              f"(target <= {SHARE_TARGET:.0%}) {'OK' if share <= SHARE_TARGET else 'OVER'}")
    return ok
