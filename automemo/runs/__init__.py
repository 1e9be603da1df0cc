"""Run directories: layout, read API, step commits and resume (docs/run-directory.md)."""

from automemo.runs.rundir import RunDir, RunDirError

__all__ = ["RunDir", "RunDirError"]
