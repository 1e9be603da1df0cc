"""Settings of an update-then-retrieve evaluation, every default commented here.

Build from a mapping (a TOML table, CLI flags) with
`automemo.configtools.build(EvaluationConfig, data)`, which fails fast on unknown keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from automemo.contract import Budget
from automemo.sandbox.base import Limits


@dataclass(frozen=True)
class RayConfig:
    # Address of an existing Ray cluster ("ray://head:10001", or "auto" on a cluster node);
    # empty: a local cluster is started in this process and shut down with it.
    address: str = ""
    # Logical CPUs of that local cluster (0: as many as there are workers, at least the
    # machine's cores). Episodes wait on LLMs and browsers, so more workers than cores pay off.
    local_cpus: int = 0
    # Logical CPUs a worker reserves on the cluster; below 1 packs more workers per node.
    cpus_per_worker: float = 1.0

    def __post_init__(self) -> None:
        if self.local_cpus < 0 or self.cpus_per_worker < 0:
            raise ValueError("ray.local_cpus and ray.cpus_per_worker must be >= 0")


@dataclass(frozen=True)
class EvaluationConfig:
    # Retrieve tasks in flight at once. The paper's search uses 8 (16 for final evaluation);
    # the memo session serialises its own calls, so this parallelises the agent and browser.
    concurrency: int = 8
    # Where the episodes run: "threads" (this process) or "ray" (`concurrency` Ray workers,
    # each with its own agent, browser pool and LLM clients; the memo session stays here).
    executor: Literal["threads", "ray"] = "threads"
    # The Ray cluster used when executor = "ray".
    ray: RayConfig = field(default_factory=RayConfig)
    # Extra attempts of an episode that raised InfrastructureError (browser crash, API error)
    # before the task is excluded from the score and reported, as in the paper's protocol.
    infra_retries: int = 2
    # Largest share of an evaluation's tasks that may be excluded (infrastructure or scorer
    # failures) before the evaluation fails loudly instead of reporting a mean over the rest.
    max_excluded_share: float = 0.2
    # How often a session may die and be rebuilt within one evaluation before the remaining
    # tasks are charged to the program: each rebuild replays every update, so a program that
    # dies on most tasks would otherwise cost hours.
    max_session_restarts: int = 5
    # Where each retrieve task has a memory of its own (LongMemEval: a question and its
    # haystack), one sandbox session holds the memories of at most this many tasks, and the
    # next tasks get a fresh session: a guest then holds 50 haystacks, not a split's 250 (a
    # recipe indexing each turn twice ran out of 2 GB on an S-sized test split). Results are
    # those of one session for any program that keeps each task's memory to itself.
    memories_per_session: int = 50
    # ... and of at most this many update steps (turns) in all, so a guest holds about as much
    # at any haystack size: 50 S haystacks are ~25,000 turns; 50 M haystacks would be ~240,000,
    # past a 2 GB guest for hybrid_rag, so an M split gets ~5 haystacks a session. A task whose
    # own memory is larger still gets a session of its own. 0: no bound but the count above.
    update_steps_per_session: int = 25_000
    # The retrieval budget, the same for every candidate of a run (50,000 chars, 2 images).
    budget: Budget = field(default_factory=Budget)
    # Sandbox resource limits of the memo session (memory, cpus, pids, and the time limit of
    # each call kind: an update past `limits.update_timeout_s` is skipped and the session
    # reopened; a retrieve past `limits.retrieve_timeout_s` scores 0).
    limits: Limits = field(default_factory=Limits)
    # Fraction of the split's retrieve tasks that one full evaluation scores, sampled per
    # category with the evaluation's own seed (1.0: every task, the paper's protocol). Below 1,
    # an evaluation is cheaper and noisier, and repeated evaluations of a node average different
    # samples: that is what re-evaluation is for when the scorer itself is deterministic
    # (Mini-Gallery retrieval mode), where a second full evaluation would only repeat the first.
    retrieve_fraction: float = 1.0
    # Tasks sampled for the quick examination of a new candidate (a run sets it from
    # search.exam_tasks, the same name).
    exam_tasks: int = 5
    # Hide the progress bars (the search loop draws its own display).
    quiet: bool = False

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.executor not in ("threads", "ray"):
            raise ValueError(f"executor must be 'threads' or 'ray', got {self.executor!r}")
        if self.infra_retries < 0:
            raise ValueError(f"infra_retries must be >= 0, got {self.infra_retries}")
        if not 0.0 <= self.max_excluded_share <= 1.0:
            raise ValueError(f"max_excluded_share must be in [0, 1], got {self.max_excluded_share}")
        if self.max_session_restarts < 0:
            raise ValueError(f"max_session_restarts must be >= 0, got {self.max_session_restarts}")
        if self.memories_per_session < 1:
            raise ValueError(f"memories_per_session must be at least 1, got {self.memories_per_session}")
        if self.update_steps_per_session < 0:
            raise ValueError(f"update_steps_per_session must be >= 0, got {self.update_steps_per_session}")
        if not 0.0 < self.retrieve_fraction <= 1.0:
            raise ValueError(f"retrieve_fraction must be in (0, 1], got {self.retrieve_fraction}")
        if self.exam_tasks < 1:
            raise ValueError(f"exam_tasks must be at least 1, got {self.exam_tasks}")
