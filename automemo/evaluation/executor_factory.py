"""The executor an evaluation configuration names (`evaluation.executor`): the one place that
knows every implementation of the `Executor` seam."""

from __future__ import annotations

from automemo.evaluation.config import EvaluationConfig
from automemo.evaluation.executor import Executor, ThreadExecutor
from automemo.evaluation.ray_executor import RayExecutor


def make_executor(config: EvaluationConfig) -> Executor:
    """The executor `evaluation.executor` names, `concurrency` workers wide. Ray itself is
    imported only when a Ray executor first maps something."""
    if config.executor == "ray":
        return RayExecutor(config.concurrency, config.ray, retries=config.infra_retries)
    return ThreadExecutor(config.concurrency)
