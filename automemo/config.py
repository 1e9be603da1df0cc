"""The run's whole configuration (`RunConfig`): what `automemo search` resolves from a preset, a
TOML file and command-line flags, and writes to `runs/<id>/config.json`.

Each section is the owning module's own config dataclass, defaults commented there; this file
only composes them. `build_run_config` fails fast, naming the key path, on anything unknown;
where each value comes from (default, benchmark, preset, file, flag) is `automemo.resolution`'s.
`automemo/presets/default.toml` lists every key with its default.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping

from automemo import configtools
from automemo.benchmarks.pseudo.config import PseudoQuestionConfig, QuestionSource
from automemo.configtools import ConfigError
from automemo.contract import Budget
from automemo.evaluation.config import EvaluationConfig
from automemo.llm.config import LLMConfig
from automemo.meta.config import LLMMetaConfig, MetaConfig, OfflineMetaConfig
from automemo.sandbox.base import Limits
from automemo.search.config import SearchConfig
from automemo.toolkit.embedding import EmbeddingConfig

PRESETS_DIR = Path(__file__).resolve().parent / "presets"
# Settings of the evaluation section that are set once elsewhere, the key that sets them.
DERIVED_KEYS = {"evaluation.budget": "budget", "evaluation.limits": "sandbox.limits",
                "evaluation.exam_tasks": "search.exam_tasks"}


@dataclass(frozen=True)
class BenchmarkSection:
    # Which benchmark (`automemo.benchmarks.REGISTRY`): minigallery, miniwob and mind2web_offline run
    # offline; memgallery, locomo and longmemeval read a downloaded release (options = { path =
    # "..." }); conversations reads your own conversation logs (options = { path =
    # "sessions.jsonl" }); webvoyager and mind2web drive chromium on the live web; agentvista and
    # mmsearch_plus use web tools when options.tools names a search provider (docs/benchmarks.md).
    # A benchmark of your own is "path/to/file.py:ClassName" or "package.module:ClassName"
    # (docs/custom-benchmark.md).
    name: str = "minigallery"
    # The benchmark's own options, checked against its Options dataclass when it is loaded,
    # e.g. options = { mode = "retrieval", users_per_split = 4 } for minigallery.
    options: dict[str, Any] = field(default_factory=dict)
    # What the search is scored on. "benchmark": the benchmark's own labelled questions.
    # "self": pseudo-questions written offline from the train conversations' sessions, each with
    # the turns that answer it; no labelled question is read ("llm": written by the LLM role of
    # [benchmark.pseudo]). Conversation benchmarks in retrieval mode (docs/label-free.md).
    # "feedback": the questions file holds questions from an agent's feedback on recalls (each
    # with the turns shown and the ones used): the older half fits, the newer half is the test
    # split, both over every session (benchmarks/conversation/feedback.py; docs/serve.md).
    questions: QuestionSource = "benchmark"
    # How many pseudo-questions, of which kinds (questions = "self" / "llm").
    pseudo: PseudoQuestionConfig = field(default_factory=PseudoQuestionConfig)


@dataclass(frozen=True)
class SandboxSection:
    # docker | bwrap | auto (docker if an engine answers and the image exists, else bwrap).
    # "unsafe" runs programs without isolation and needs `--sandbox unsafe` on the command line.
    backend: Literal["docker", "bwrap", "unsafe", "auto"] = "auto"
    # Resource limits of every memo-program session (quick exam and evaluation alike).
    limits: Limits = field(default_factory=Limits)


@dataclass(frozen=True)
class RunConfig:
    benchmark: BenchmarkSection = field(default_factory=BenchmarkSection)
    # Roles meta / agent / judge / memo and the run's token and USD caps.
    llm: LLMConfig = field(default_factory=LLMConfig)
    sandbox: SandboxSection = field(default_factory=SandboxSection)
    # The retrieval budget, the same for every candidate (quick exam and evaluation).
    budget: Budget = field(default_factory=Budget)
    # How candidates are scored. The evaluation's budget, sandbox limits (time limits of update
    # and retrieve included) and exam size are not set here: they come from [budget],
    # [sandbox.limits] and search.exam_tasks, so that each is set in one place.
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    # The search policy, its budget of steps and the final selection.
    search: SearchConfig = field(default_factory=SearchConfig)
    # What both meta agents read; [meta.llm] and [meta.offline] below are each agent's own.
    meta: MetaConfig = field(default_factory=MetaConfig)
    # The encoders behind toolkit.embed_text / embed_image.
    embeddings: EmbeddingConfig = field(default_factory=EmbeddingConfig)

    def __post_init__(self) -> None:
        # One budget, one set of limits and one exam size per run: `[budget]`, `[sandbox.limits]`
        # and `search.exam_tasks` are the authority; the evaluation section carries the same
        # values (the resolved config shows them in both places, as a reader expects).
        ev, default = self.evaluation, EvaluationConfig()
        authority = {}
        for derived, source in DERIVED_KEYS.items():
            value: Any = self
            for part in source.split("."):
                value = getattr(value, part)
            where = f"[{source}]" if dataclasses.is_dataclass(value) else source
            authority[derived.split(".", 1)[1]] = (value, where)
        for key, (value, where) in authority.items():
            mine = getattr(ev, key)
            if mine != value and mine != getattr(default, key):
                raise ConfigError(f"evaluation.{key} differs from {where}; set it once, in {where}")
        resolved = dataclasses.replace(ev, **{k: v for k, (v, _) in authority.items()})
        object.__setattr__(self, "evaluation", resolved)


def preset_path(name: str) -> Path:
    path = PRESETS_DIR / f"{name}.toml"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in PRESETS_DIR.glob("*.toml")))
        raise ConfigError(f"no preset named {name!r}; presets: {known}")
    return path


def read_toml(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"config file {path} does not exist")
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None


# Keys that moved: a run directory's config.json from before the move still resumes.
_MOVED = {("evaluation", "update_timeout_s"): ("sandbox", "limits", "update_timeout_s"),
          ("evaluation", "retrieve_timeout_s"): ("sandbox", "limits", "retrieve_timeout_s"),
          # [meta] split into what both agents read, [meta.llm] and [meta.offline]
          **{("meta", f.name): ("meta", "llm", f.name) for f in dataclasses.fields(LLMMetaConfig)},
          **{("meta", f.name): ("meta", "offline", f.name) for f in dataclasses.fields(OfflineMetaConfig)}}
# Keys renamed in their section: an old config.json still resumes.
_RENAMED = {("evaluation", "exam_sample_size"): "exam_tasks"}  # one name with search.exam_tasks
# Keys that are gone: an old config.json holding one still resumes without it.
_DROPPED = {("meta", "structure_rate")}  # the offline agent's operator table replaced it


def moved_keys(data: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(data)
    for (section, key), new in _RENAMED.items():
        old = out.get(section) or {}
        if key in old:
            out[section] = {(new if k == key else k): v for k, v in old.items()}
    for section, key in _DROPPED:
        if key in (out.get(section) or {}):
            out[section] = {k: v for k, v in out[section].items() if k != key}
    for (section, key), target in _MOVED.items():
        old = dict(out.get(section) or {})
        if key not in old:
            continue
        value = old.pop(key)
        out[section] = old
        out = configtools.merge(out, {target[0]: {target[1]: {target[2]: value}}})
    return out


def build_run_config(data: Mapping[str, Any]) -> RunConfig:
    data = moved_keys(data)
    try:
        return configtools.build(RunConfig, data)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(str(exc)) from None


def run_config_to_dict(config: RunConfig) -> dict[str, Any]:
    """Plain data for config.json. Tuples (prices) become lists; no secret is in a RunConfig:
    API keys are referenced by the NAME of their environment variable."""
    return _plain(configtools.to_dict(config))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
