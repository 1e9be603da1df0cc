"""The search's observer that keeps `runs/<id>/report/` current: a rebuild after every committed
step while the search runs (pages that follow the run and reload), and a final one when it ends."""

from __future__ import annotations

import sys
import time

from automemo.report.build import build_report
from automemo.runs import RunDir


class ReportUpkeep:
    """Rebuilds the run's report after each committed step (`refresh`), as a live page while the
    search runs and once more, final, when it ends (`finish`). A report that fails to build never
    stops the search: the first failure is reported on stderr and the next step tries again."""

    def __init__(self, run: RunDir) -> None:
        self.run = run
        self.build_seconds: list[float] = []
        self._warned = False

    def refresh(self, committed: object = None) -> None:
        """`committed`: what the scheduler tells about the step (the report reads the run itself)."""
        self._build(live=True)

    def finish(self) -> None:
        self._build(live=False)

    def _build(self, *, live: bool) -> None:
        started = time.perf_counter()
        try:
            build_report(self.run, quiet=True, live=live)
        except Exception as exc:  # the search matters more than its report
            if not self._warned:
                print(f"automemo: warning: the live report could not be refreshed ({exc}); "
                      f"the search goes on, `automemo report {self.run.path}` rebuilds it", file=sys.stderr)
                self._warned = True
            return
        self.build_seconds.append(time.perf_counter() - started)
