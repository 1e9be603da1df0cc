"""How an evaluation and a search are put together from a `RunConfig`: the one place that
turns configuration into live parts. `automemo search`, `eval`, `exam`, `deploy.load_memory` and
the `bench` commands all build through here, so they cannot drift apart on which agent a
benchmark gets, whether the memo LLM role reaches a program, where embeddings are cached, or
when running without a sandbox is allowed.

    setup = build_evaluation(config, store_root=..., unsafe_confirmed=unsafe_confirmed(args))
    with setup:
        result = setup.evaluator.evaluate(source, split="test")

Errors a user can fix (an agent the benchmark needs but nobody configured, an unusable sandbox,
bad benchmark options) are `AssemblyError`s whose message says what to do.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from automemo import configtools
from automemo.config import RunConfig
from automemo.configtools import ConfigError
from automemo.contract import Budget
from automemo.episode_store import EpisodeStore
from automemo.errors import DataError, UsageError
from automemo.llm import Ledger, LLMClient, LLMError
from automemo.paths import SEEDS_DIR
from automemo.sandbox.base import Limits, Sandbox
from automemo.toolkit.embedding import (
    EmbeddingConfig, Encoders, default_encoders, image_encoder_kind, image_encoder_label,
)
from automemo.toolkit.encode_cost import DEFAULT_RATES, ColdEncodeMeter
from automemo.toolkit.services import MemoServices

EMBEDDING_CACHE = "embeddings.sqlite"
"""The embedding cache's file name inside an episode store: one cache per store, so that every
evaluation over the same episodes (repeats, candidates, later `eval`s) embeds each of them once."""
ENCODE_RATES = "encode_rates.json"  # a run's cold encoding rates (toolkit/encode_cost.py), kept for a resume

AGENT_HELP = (
    "pass --agent-model MODEL (plus --agent-base-url URL for a server other than OpenAI's), or "
    "set llm.agent.model (and base_url) in a config file; the API key is read from "
    "$OPENAI_API_KEY, or from the variable named by --agent-api-key-env / llm.agent.api_key_env"
)


class AssemblyError(UsageError, RuntimeError):
    """The configuration cannot be turned into a working evaluation; the message says why and
    what to change."""


class BenchmarkDataError(DataError, AssemblyError):
    """The benchmark's data cannot be read (a missing or malformed release): a data error, not
    a configuration one, though it stops the assembly the same way."""


# --- the parts ----------------------------------------------------------------------------------


def check_isolation(backend: str, *, unsafe_confirmed: bool) -> None:
    """Running programs without isolation needs an explicit confirmation: LLM-written code is
    untrusted. Commands call this before they create anything; `open_sandbox` calls it again."""
    if backend == "unsafe" and not unsafe_confirmed:
        raise AssemblyError(
            "this configuration runs memo programs without a sandbox; confirm it explicitly "
            "(--sandbox unsafe on the command line, unsafe=True in load_memory) — only for "
            "programs you trust — or use the auto, docker or bwrap backend"
        )


def open_sandbox(backend: str, *, unsafe_confirmed: bool = False) -> Sandbox:
    """The sandbox backend `backend` ("auto", "docker", "bwrap", "unsafe")."""
    from automemo.sandbox import SandboxError, get_sandbox

    check_isolation(backend, unsafe_confirmed=unsafe_confirmed)
    try:
        return get_sandbox(backend)
    except SandboxError as exc:
        raise AssemblyError(
            f"sandbox {backend!r} is not usable: {exc}. Build the image with `automemo sandbox "
            f"build`, choose another backend (--sandbox), or (trusted programs only) "
            f"--sandbox unsafe"
        ) from None


def encoders_for(config: EmbeddingConfig, store_root: Path, llm: LLMClient | None = None, *,
                 persistent: bool = True) -> Encoders:
    """The embedding encoders of a run, cached in the store's one embedding cache unless the
    config names another file. `persistent=False` keeps the cache in memory (a store that is
    only read, such as the episodes a quick exam is given, gets no file written into it)."""
    if not config.cache_path and persistent:
        config = dataclasses.replace(config, cache_path=str(Path(store_root) / EMBEDDING_CACHE))
    try:
        return default_encoders(config, llm=llm)
    except ConfigError as exc:
        raise AssemblyError(f"embeddings: {exc}") from None


def services_factory(encoders: Encoders, store_root: Path, llm: LLMClient | None, *, metered: bool = False):
    """`node -> MemoServices`: the host side of `toolkit.embed_*` and `toolkit.llm`. The memo
    LLM role reaches programs only when it is configured; otherwise they take their
    deterministic paths. `metered`: each services object (an evaluation's) charges its
    program's encoding as if nothing were cached, for the evaluation's cost figures
    (automemo.evaluation.cost); a served memory, an exam or a fit is not charged."""
    memo_llm = llm if llm is not None and llm.configured("memo") else None
    return lambda node=None: MemoServices(encoders, memo_llm, Path(store_root), node=node,
                                          meter=ColdEncodeMeter(encoders) if metered else None)


def embedding_config(section: EmbeddingConfig | Mapping[str, Any] | None) -> EmbeddingConfig:
    """The one resolution of embedding settings, for every command: a run's `RunConfig`
    section as it is, or the `embeddings` table of a run's config.json or an export's
    manifest (a foreign cache file is never reused: the store's own cache serves)."""
    if isinstance(section, EmbeddingConfig):
        return section
    data = {k: v for k, v in dict(section or {}).items() if k != "cache_path"}
    try:
        return configtools.build(EmbeddingConfig, data)
    except ConfigError as exc:
        raise AssemblyError(f"embeddings: {exc}") from None


def memo_services(embeddings: EmbeddingConfig | Mapping[str, Any] | None, store_root: Path,
                  llm: LLMClient | None = None, *, persistent: bool = True, node: Any = None) -> MemoServices:
    """One session's host services from embedding settings (resolved by `embedding_config`)
    and an optional LLM client whose memo role programs may call."""
    encoders = encoders_for(embedding_config(embeddings), store_root, llm, persistent=persistent)
    return services_factory(encoders, store_root, llm)(node)


def llm_client(config: RunConfig, ledger: Ledger | None = None) -> LLMClient:
    try:
        return LLMClient(config.llm, ledger)
    except LLMError as exc:
        raise AssemblyError(str(exc)) from None


PSEUDO_QUESTIONS = "pseudo-questions.json"
"""The LLM-written pseudo-questions' file inside an episode store (`questions = "llm"`): written
after every call, so a run or command started again pays for no question twice."""


def load_benchmark(config: RunConfig, llm: LLMClient, store_root: Path | None = None):
    """Benchmark `config.benchmark`, its questions replaced by pseudo-questions when
    `benchmark.questions` is "self" or "llm" (`benchmarks.pseudo.label_free`)."""
    from automemo import benchmarks

    name = config.benchmark.name
    try:
        benchmark = benchmarks.load(name, config.benchmark.options, llm=llm)
    except DataError as exc:
        raise BenchmarkDataError(f"cannot load benchmark {name!r}: {exc}") from None
    except (ConfigError, ValueError) as exc:
        raise AssemblyError(f"cannot load benchmark {name!r}: {exc}") from None
    source = config.benchmark.questions
    if source == "benchmark":
        return benchmark
    if source == "feedback":
        from automemo.benchmarks.conversation.feedback import FeedbackError, use_feedback_split

        try:
            use_feedback_split(benchmark)
        except FeedbackError as exc:
            benchmark.close()
            raise AssemblyError(str(exc)) from None
        return benchmark
    from automemo.benchmarks.pseudo.label_free import LabelFreeError, make_label_free

    role = config.benchmark.pseudo.llm_role
    try:
        if source == "llm" and not llm.configured(role):
            raise LabelFreeError(
                f'questions = "llm" asks the {role} LLM role to write them, and it is not configured: '
                f"set llm.{role}.model (and base_url), or benchmark.pseudo.llm_role, or use questions = \"self\" "
                f"(written offline)")
        make_label_free(benchmark, source, config.benchmark.pseudo, llm=llm,
                        cache=Path(store_root) / PSEUDO_QUESTIONS if store_root is not None else None)
    except LabelFreeError as exc:
        benchmark.close()
        raise AssemblyError(str(exc)) from None
    except BaseException:
        benchmark.close()
        raise
    return benchmark


def build_agent(benchmark: Any, llm: LLMClient):
    """The benchmark's fixed execution agent, or None where it scores without one."""
    from automemo.agents import build_agent as build

    kind = benchmark.agent_kind()
    if kind is None:
        return None
    if not llm.configured("agent"):
        raise AssemblyError(f"{benchmark.name} (as configured) needs an LLM {kind} agent, and "
                            f"none is configured: {AGENT_HELP}")
    try:
        return build(benchmark, llm)
    except ValueError as exc:
        raise AssemblyError(f"no execution agent for {benchmark.name}: {exc}") from None


# --- an evaluation ------------------------------------------------------------------------------


@dataclass
class EvaluationSetup:
    """Everything one evaluation needs, live. Close it (or use it as a context manager) to
    release the benchmark's browsers and the ledger."""

    config: RunConfig
    llm: LLMClient
    benchmark: Any
    agent: Any
    sandbox: Sandbox
    store: EpisodeStore
    encoders: Encoders
    evaluator: Any

    @property
    def budget(self) -> Budget:
        return self.config.budget

    @property
    def limits(self) -> Limits:
        return self.config.sandbox.limits

    def services(self, node: Any = None) -> MemoServices:
        return services_factory(self.encoders, self.store.root, self.llm)(node)

    def close(self) -> None:
        self.evaluator.close()  # a Ray executor's workers, and its local cluster
        self.benchmark.close()
        self.llm.ledger.close()

    def __enter__(self) -> EvaluationSetup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def build_evaluation(
    config: RunConfig,
    *,
    store_root: str | Path,
    ledger: Ledger | None = None,
    sandbox: Sandbox | None = None,
    unsafe_confirmed: bool = False,
    quiet: bool = False,
) -> EvaluationSetup:
    """An evaluator for `config`'s benchmark, agent, sandbox, budget, limits and executor, over
    the episode store at `store_root` (update episodes are collected there once and reused).
    `sandbox` overrides `config.sandbox.backend` (tests pass one they already built); `ledger`
    records the LLM calls (a run's tree.db; by default an in-memory one)."""
    from automemo.evaluation import Evaluator

    llm = llm_client(config, ledger)
    benchmark = load_benchmark(config, llm, Path(store_root))
    try:
        agent = build_agent(benchmark, llm)
        sandbox = sandbox or open_sandbox(config.sandbox.backend, unsafe_confirmed=unsafe_confirmed)
        store = EpisodeStore(Path(store_root))
        encoders = encoders_for(config.embeddings, store.root, llm)
        if not quiet:  # said once per command: whether images are compared by CLIP or the fallback
            print(f"image embeddings: {image_encoder_label(config.embeddings)}", file=sys.stderr)
        evaluation = dataclasses.replace(config.evaluation, quiet=config.evaluation.quiet or quiet)
        evaluator = Evaluator(benchmark, sandbox, store, agent=agent,
                              services_factory=services_factory(encoders, store.root, llm, metered=True),
                              config=evaluation)
    except BaseException:
        benchmark.close()
        raise
    return EvaluationSetup(config, llm, benchmark, agent, sandbox, store, encoders, evaluator)


# --- a search -----------------------------------------------------------------------------------


@dataclass
class AssembledSearch:
    loop: Any
    setup: EvaluationSetup

    def close(self) -> None:
        self.setup.close()


def build_search(run: Any, config: RunConfig, *, quiet: bool = False, sandbox: Sandbox | None = None,
                 unsafe_confirmed: bool = False, preflight: bool = True) -> AssembledSearch:
    """A search over run directory `run` (`automemo.runs.RunDir`): the evaluation above with the
    run's ledger and episode store, the meta agent, and the loop. With `preflight` the loop
    first checks that every LLM endpoint the run uses answers (`preflight_roles`)."""
    from automemo.host_fitting import ranker_fit, train_questions
    from automemo.meta import build_meta_agent
    from automemo.runs.journal import recover
    from automemo.search.loop import Collaborators, SearchLoop

    # Recover first: the LLM client counts what the run has spent from the ledger when it is
    # built, and recovery settles an interrupted step's rows (kept, marked, counted) before that.
    recover(run)
    record_image_encoder(run, config.embeddings)
    # Every node of the run, a resumed one's too, is charged at the cold rates first measured for it.
    DEFAULT_RATES.keep_in(run.path / ENCODE_RATES)
    setup = build_evaluation(config, store_root=run.store_root, ledger=Ledger(run.db_path),
                             sandbox=sandbox, unsafe_confirmed=unsafe_confirmed, quiet=quiet)
    try:
        require_questions(setup, "train")
        seeds = snapshot_seeds(run)
        meta = build_meta_agent(
            setup.llm, config.meta, seeds_dir=seeds,
            task_description=task_description(setup.benchmark, config.embeddings),
            budget=config.budget, limits=config.sandbox.limits, image_roots=[setup.store.root],
            root_seed=config.search.root, train_questions=train_questions(setup.evaluator),
            benchmark=setup.benchmark.describe(),
            question_time_keys=setup.benchmark.question_time_keys,
            fit_ranker=ranker_fit(setup, run.path / "ranking",
                                  services_factory(setup.encoders, setup.store.root, None),
                                  model=config.meta.offline.ranker_model),
        )
    except BaseException:
        setup.close()
        raise
    parts = Collaborators(
        evaluator=setup.evaluator, meta=meta, sandbox=setup.sandbox, llm=setup.llm,
        services_factory=services_factory(setup.encoders, setup.store.root, setup.llm),
        budget=config.budget, limits=config.sandbox.limits, seeds_dir=seeds,
    )
    roles = preflight_roles(setup) if preflight else ()
    return AssembledSearch(SearchLoop(run, config.search, parts, quiet=quiet, preflight_roles=roles), setup)


def preflight_roles(setup: EvaluationSetup) -> tuple[str, ...]:
    """The LLM roles a search over `setup` calls: the meta agent's when configured (the LLM
    agent then writes the children), the execution agent's when the benchmark has one, the
    judge's and the memo programs' when configured (a benchmark that scores with a judge, and
    `toolkit.llm`, read them only then)."""
    used = {"meta": setup.llm.configured("meta"), "agent": setup.agent is not None,
            "judge": setup.llm.configured("judge"), "memo": setup.llm.configured("memo")}
    return tuple(role for role, yes in used.items() if yes)


def require_questions(setup: EvaluationSetup, split: str) -> None:
    """A split without retrieve tasks would score every program 0 and select nothing real:
    refuse it before any step, saying what to change. Data with no question in any split (a
    user's own conversation log) is told of the label-free search instead of a different split."""
    try:
        tasks = setup.evaluator.split(split).retrieve
        unlabelled = not tasks and not any(setup.evaluator.split(s).retrieve for s in ("train", "test"))
    except ValueError as exc:
        raise AssemblyError(f"{setup.benchmark.name}: {exc}") from None
    if unlabelled:
        raise AssemblyError(
            f"{setup.benchmark.name}: the data holds no question at all "
            f"({json.dumps(setup.config.benchmark.options, default=str)}), so no split has one to score "
            f"programs on; give data with questions, or search without labels: --questions self "
            f"(pseudo-questions built from the sessions)"
        )
    if not tasks:
        raise AssemblyError(
            f"{setup.benchmark.name}: the {split} split holds no question to score programs on "
            f"({json.dumps(setup.config.benchmark.options, default=str)}); give data with more "
            f"conversations or scenarios (a release folder rather than one file), or change the "
            f"benchmark's split options (e.g. train_fraction)"
        )


def snapshot_seeds(run: Any) -> Path:
    """The run's own copy of the seed programs, made once: the root and the mutator's
    transplants come from it, so a run resumed after the package's seeds changed still repeats
    exactly, and the run records what it started from."""
    target = run.path / "seeds"
    if not target.exists():
        scratch = run.path / ".seeds.tmp"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir()
        for seed in sorted(SEEDS_DIR.glob("*.py")):
            shutil.copy2(seed, scratch / seed.name)
        scratch.rename(target)
    return target


def record_image_encoder(run: Any, embeddings: EmbeddingConfig) -> None:
    """Write the active image encoder into the run's config.json (`embeddings.image` resolved
    from "auto" to "open_clip" or "perceptual"): what the run compared images with is then on
    record, in its export too, and a resumed run keeps it."""
    stored = run.config()
    section = dict(stored.get("embeddings") or {})
    kind = image_encoder_kind(embeddings)
    if section.get("image") != kind:
        run.write_config({**stored, "embeddings": {**section, "image": kind}})


def task_description(benchmark: Any, embeddings: EmbeddingConfig | None = None) -> str:
    facts = json.dumps(benchmark.describe(), sort_keys=True, default=str)
    text = f"Benchmark {benchmark.name} ({benchmark.family}). {facts}"
    if embeddings is not None:  # the meta agent writes image retrieval for the encoder it gets
        text += f" toolkit.embed_image uses {image_encoder_label(embeddings)}."
    return text
