"""Update-then-retrieve evaluation: `Evaluator(benchmark, sandbox, store, ...)`
scores a memo program's source; results, evidence and the results table live next to it."""

from automemo.evaluation.config import EvaluationConfig
from automemo.evaluation.evidence import Evidence, TaskEvidence, pick_examples, read_evidence
from automemo.evaluation.executor import Executor, ThreadExecutor
from automemo.evaluation.harness import Evaluator
from automemo.evaluation.result import EvaluationResult, TaskResult
from automemo.evaluation.table import ResultsTable, Stat, build_table

__all__ = [
    "EvaluationConfig",
    "EvaluationResult",
    "Evaluator",
    "Evidence",
    "Executor",
    "ResultsTable",
    "Stat",
    "TaskEvidence",
    "TaskResult",
    "ThreadExecutor",
    "build_table",
    "pick_examples",
    "read_evidence",
]
