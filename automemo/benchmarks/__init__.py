"""Benchmarks: `load(name, options, llm=...)` builds one by name.

Each benchmark class declares its options as a frozen dataclass (`Options`, every default
commented there); `load` validates the user's options against it, so a misspelt option fails
before anything runs. Modules are imported on demand: MiniWoB++ pulls selenium, Mini-Gallery only
Pillow.
"""

from __future__ import annotations

import importlib
from typing import Any, Mapping

from automemo.benchmarks.base import Benchmark, InfrastructureError, Split, Task, TaskScore, check_metric
from automemo.benchmarks.plugins import is_plugin_spec, load_plugin_class
from automemo.configtools import ConfigError, build

# name -> ("module:Class", one-line description)
REGISTRY: dict[str, tuple[str, str]] = {
    "minigallery": (
        "automemo.benchmarks.minigallery.benchmark:MiniGallery",
        "seeded Mem-Gallery-style multimodal conversations; retrieval or QA scoring (offline)",
    ),
    "memgallery": (
        "automemo.benchmarks.conversation.memgallery:MemGallery",
        "the Mem-Gallery release from a local folder (--option path=DIR); retrieval or QA scoring",
    ),
    "locomo": (
        "automemo.benchmarks.conversation.locomo:LoCoMo",
        "the LoCoMo release from a local locomo10.json (--option path=FILE); retrieval or QA scoring",
    ),
    "longmemeval": (
        "automemo.benchmarks.conversation.longmemeval:LongMemEval",
        "LongMemEval from a local longmemeval_s/_m/_oracle JSON (--option path=FILE); each question its own "
        "memory; retrieval (official session/turn recall) or QA scoring",
    ),
    "conversations": (
        "automemo.benchmarks.conversation.user_logs:UserConversations",
        "your own conversation logs: a JSON-lines sessions file (--option path=FILE), questions optional "
        "(--option questions=FILE); retrieval or QA scoring",
    ),
    "miniwob": (
        "automemo.benchmarks.miniwob:MiniWoB",
        "MiniWoB++ web tasks in headless Debian chromium; environment reward (offline)",
    ),
    "webvoyager": (
        "automemo.benchmarks.liveweb:WebVoyagerTasks",
        "WebVoyager tasks from a local JSONL file, run on the live web in headless chromium; LLM judge",
    ),
    "mind2web": (
        "automemo.benchmarks.liveweb:Mind2WebTasks",
        "Online-Mind2Web tasks from a local JSON file, run on the live web in headless chromium; LLM judge",
    ),
    "mind2web_offline": (
        "automemo.benchmarks.mind2web_offline:Mind2WebOffline",
        "Multimodal-Mind2Web recorded tasks scored step-wise: element accuracy, operation F1, step and task success (offline)",
    ),
    "agentvista": (
        "automemo.benchmarks.visual_tasks:AgentVistaTasks",
        "AgentVista visual-reasoning tasks from a local JSON/JSONL file with their images; web tools when configured",
    ),
    "mmsearch_plus": (
        "automemo.benchmarks.visual_tasks:MMSearchPlusTasks",
        "MMSearch-Plus questions from a local JSON/JSONL file with their images; web tools when configured",
    ),
}


def benchmark_class(name: str) -> type[Benchmark]:
    """A built-in benchmark by name, or a user's own as `file.py:Class` / `module:Class`."""
    if is_plugin_spec(name):
        return load_plugin_class(name)
    if name not in REGISTRY:
        raise ValueError(
            f"unknown benchmark {name!r}; known benchmarks: {', '.join(sorted(REGISTRY))} "
            f"(or your own as path/to/file.py:ClassName or package.module:ClassName)"
        )
    module, cls = REGISTRY[name][0].split(":")
    return getattr(importlib.import_module(module), cls)


def question_time_keys(name: str, *, load_plugins: bool = True) -> frozenset[str]:
    """The metadata keys benchmark `name` declares known at question time
    (`Benchmark.question_time_keys`), which a retrieve task may carry beside the contract's own.
    None for an unknown name or a plug-in that no longer loads; with `load_plugins=False`, none for
    any plug-in either (a server does not import a user's benchmark file a manifest names)."""
    if is_plugin_spec(name) and not load_plugins:
        return frozenset()
    try:
        return frozenset(benchmark_class(name).question_time_keys)
    except (ValueError, ImportError, OSError):
        return frozenset()


def checked_options(name: str, options: Mapping[str, Any] | None = None) -> tuple[type[Benchmark], Any]:
    """Benchmark `name`'s class and its typed `options` (a plain mapping, e.g. a TOML table),
    without building the benchmark. Unknown names and unknown or mistyped options raise
    ValueError / ConfigError naming them."""
    cls = benchmark_class(name)
    try:
        built = build(cls.Options, options or {}, path=f"benchmark.{name}")
    except ConfigError as exc:
        raise ConfigError(f"benchmark {name!r}: {exc}") from None
    try:
        check_metric(name, cls, built)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return cls, built


def ranking_metric(name: str, options: Mapping[str, Any] | None = None) -> str:
    """The metric a search on benchmark `name` with `options` ranks programs by, by name."""
    cls, opts = checked_options(name, options)
    return cls.ranking_metric(opts)


def load(name: str, options: Mapping[str, Any] | None = None, *, llm: Any = None) -> Benchmark:
    """Build benchmark `name` with `options`, checked as `checked_options` does."""
    cls, opts = checked_options(name, options)
    return cls(opts, llm=llm)


__all__ = ["Benchmark", "InfrastructureError", "Split", "Task", "TaskScore", "REGISTRY", "load", "checked_options", "benchmark_class",
           "ranking_metric"]
