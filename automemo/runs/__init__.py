"""Run directories: layout, read API, step commits and resume (docs/run-directory.md)."""

from automemo.runs.rundir import DamagedRun, RunDir, RunDirError

__all__ = ["DamagedRun", "RunDir", "RunDirError"]
