"""Where every setting of a run comes from: the one resolution that `automemo search`, `eval`,
`exam` and `config show` all call, so that one precedence holds everywhere.

Layers, lowest first: the config dataclasses' defaults (listed in presets/default.toml), the
benchmark's own defaults (`Benchmark.search_defaults`), then the layers a command passes, in
order: settings it reads from a run or an export, a preset, a TOML file, command-line flags.
Tables merge key by key; the highest layer that sets a key wins, and that layer is the key's
source:

    flag > file > preset > (a run's or an export's settings) > label-free > benchmark > default

(the label-free layer roots a search without labels at the discovered default, held to it).

    resolution = resolve([preset_layer("quickstart"), file_layer(path), flags])
    resolution.config                      # the RunConfig
    resolution.source("search.kappa")      # "benchmark minigallery"
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from automemo import configtools
from automemo.config import (
    DERIVED_KEYS, BenchmarkSection, RunConfig, build_run_config, moved_keys, preset_path, read_toml,
)
from automemo.configtools import ConfigError

DEFAULT = "default"
# The preset that lists the defaults: asked for by name, it is the default layer itself, so that
# `--preset default` resolves exactly as no preset (a benchmark's defaults still apply).
DEFAULT_PRESET = "default"
# The judge answers on the agent's endpoint, with its key, and with its model unless given its
# own: one key and one server are enough to evaluate a judged benchmark.
JUDGE_FOLLOWS_AGENT = ("model", "base_url", "api_key_env")


@dataclass(frozen=True)
class Layer:
    """One source of settings: a nested mapping shaped like presets/default.toml."""

    source: str  # what a key set here is attributed to: "preset quickstart", "file my.toml"
    data: Mapping[str, Any] = field(default_factory=dict)
    # Key path -> its own source where the layer's is not precise enough ("flag --steps").
    sources: Mapping[str, str] = field(default_factory=dict)

    def sets(self, key: str) -> bool:
        node: Any = self.data
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return False
            node = node[part]
        return True

    def source_of(self, key: str) -> str:
        return next((source for k, source in self.sources.items() if key == k or key.startswith(k + ".")),
                    self.source)


@dataclass(frozen=True)
class Setting:
    key: str     # dotted path, e.g. "search.kappa"
    value: Any
    source: str  # "default", "benchmark minigallery", "preset P", "file F", "flag --x", ...


@dataclass(frozen=True)
class Resolution:
    config: RunConfig
    settings: tuple[Setting, ...]

    def source(self, key: str) -> str:
        for setting in self.settings:
            if setting.key == key:
                return setting.source
        raise KeyError(key)

    def value(self, key: str) -> Any:
        for setting in self.settings:
            if setting.key == key:
                return setting.value
        raise KeyError(key)


# --- layers -------------------------------------------------------------------------------------


def preset_layer(name: str | None) -> Layer | None:
    if not name or name == DEFAULT_PRESET:
        return None
    return Layer(f"preset {name}", read_toml(preset_path(name)))


def file_layer(path: str | Path | None) -> Layer | None:
    if not path:
        return None
    return Layer(f"file {path}", read_toml(path))


def data_layer(source: str, data: Mapping[str, Any] | None) -> Layer | None:
    return Layer(source, dict(data)) if data else None


def benchmark_layer(data: Mapping[str, Any]) -> Layer:
    """The search defaults the benchmark that `data` (the other layers, merged) names declares
    for its options. A class method answers them: nothing of the benchmark's data is read."""
    from automemo import benchmarks

    section = data.get("benchmark") or {}
    name = section.get("name") or BenchmarkSection.name
    try:
        cls, options = benchmarks.checked_options(name, section.get("options") or {})
    except ValueError as exc:  # an unknown benchmark or option: said once, as a config error
        raise ConfigError(str(exc)) from None
    declared = getattr(cls, "search_defaults", None)
    return Layer(f"benchmark {name}", dict(declared(options)) if declared is not None else {})


def label_free_layer(data: Mapping[str, Any]) -> Layer | None:
    """A label-free search (`benchmark.questions` "self" or "llm") starts from what is found and
    never falls below it: rooted at the discovered default and held to its root (docs/label-free.md, "The root and the bar"),
    unless a layer above names another root or bar."""
    questions = (data.get("benchmark") or {}).get("questions") or BenchmarkSection.questions
    if questions == "benchmark":
        return None
    from automemo.programs import DISCOVERED

    # "feedback" too: a served memory's agents' questions, and what it serves is the root.
    what = "label-free questions" if questions in ("self", "llm") else "questions from feedback"
    return Layer(f"{what} ({questions})", {"search": {"root": DISCOVERED, "held_to": "root"}})


# --- resolution ---------------------------------------------------------------------------------


def resolve(layers: Sequence[Layer | None], *, benchmark_defaults: bool = True) -> Resolution:
    """The run config of `layers` (lowest first; None entries are skipped) over the benchmark's
    defaults and the dataclasses' defaults, with each key's source. `benchmark_defaults=False`
    leaves the benchmark layer out (a harness that sets every key it means)."""
    given = [Layer(layer.source, moved_keys(layer.data), layer.sources) for layer in layers if layer is not None]
    upper: dict[str, Any] = {}
    for layer in given:
        upper = configtools.merge(upper, layer.data)
    below = [benchmark_layer(upper), label_free_layer(upper)] if benchmark_defaults else []
    stack = [layer for layer in below if layer is not None] + given
    follow = _judge_following_agent(stack)
    if follow is not None:
        stack.append(follow)
    merged: dict[str, Any] = {}
    for layer in stack:
        merged = configtools.merge(merged, layer.data)
    config = build_run_config(merged)
    options = _benchmark_option_defaults(config)
    settings = tuple(Setting(key, value, _source(key, stack)) for key, value in _leaves(config)
                     if not (options and key == "benchmark.options"))  # listed one by one instead
    at = max((i for i, s in enumerate(settings) if s.key.startswith("benchmark.")), default=-1) + 1
    return Resolution(config, settings[:at] + options + settings[at:])


def _source(key: str, stack: Sequence[Layer]) -> str:
    for derived, target in DERIVED_KEYS.items():
        if key == derived or key.startswith(derived + "."):
            # set once, elsewhere: the source of the key that sets it
            target += key[len(derived):]
            source = _source(target, stack)
            return source if source == DEFAULT else f"{source} (as {target})"
    for layer in reversed(stack):
        if layer.sets(key):
            return layer.source_of(key)
    return DEFAULT


def _judge_following_agent(stack: Sequence[Layer]) -> Layer | None:
    data: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key in JUDGE_FOLLOWS_AGENT:
        agent = next((layer for layer in reversed(stack) if layer.sets(f"llm.agent.{key}")), None)
        # A judge's empty value (a run's or an export's resolved config lists every key) is unset.
        if agent is None or any(layer.sets(f"llm.judge.{key}") and _get(layer.data, f"llm.judge.{key}")
                                for layer in stack):
            continue
        value = _get(agent.data, f"llm.agent.{key}")
        if value:
            data[key] = value
            sources[f"llm.judge.{key}"] = f"{agent.source_of(f'llm.agent.{key}')} (the judge follows the agent)"
    if not data:
        return None
    return Layer("the agent's", {"llm": {"judge": data}}, sources)


def _get(data: Mapping[str, Any], key: str) -> Any:
    node: Any = data
    for part in key.split("."):
        node = node[part]
    return node


def _leaves(obj: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every setting of a config dataclass as (dotted key, value), recursing into any field that
    is itself a config dataclass; a table-valued setting lists its entries, or itself if empty."""
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        key = f"{prefix}{f.name}"
        if dataclasses.is_dataclass(value):
            yield from _leaves(value, key + ".")
        elif isinstance(value, Mapping) and value:
            for k, v in value.items():
                yield f"{key}.{k}", v
        else:
            yield key, value


def _benchmark_option_defaults(config: RunConfig) -> tuple[Setting, ...]:
    """The benchmark's own options that no layer set, at their defaults: what the benchmark
    will run with is shown whole."""
    from automemo import benchmarks

    try:
        _, options = benchmarks.checked_options(config.benchmark.name, config.benchmark.options)
    except ValueError:
        return ()
    if not dataclasses.is_dataclass(options):
        return ()
    given = config.benchmark.options
    return tuple(Setting(f"benchmark.options.{f.name}", getattr(options, f.name), DEFAULT)
                 for f in dataclasses.fields(options) if f.name not in given)


# --- what default.toml says about benchmarks ------------------------------------------------------


def benchmark_overrides() -> dict[str, dict[str, list[str]]]:
    """Key -> {value as TOML: [built-in benchmarks whose defaults set it so]}, each benchmark
    with its default options: what presets/default.toml's "benchmark default" notes say."""
    from automemo import benchmarks

    out: dict[str, dict[str, list[str]]] = {}
    for name in sorted(benchmarks.REGISTRY):
        layer = benchmark_layer({"benchmark": {"name": name}})
        for key, value in _flat(layer.data):
            out.setdefault(key, {}).setdefault(toml_value(value), []).append(name)
    return out


def _flat(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for k, v in data.items():
        if isinstance(v, Mapping):
            yield from _flat(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


def toml_value(value: Any) -> str:
    """A value as default.toml writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        inner = ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items())
        return f"{{ {inner} }}" if inner else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return repr(value)


def load_run_config(
    preset: str | None = None,
    config_file: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    benchmark_defaults: bool = True,
) -> RunConfig:
    """The run config of a preset, a TOML file and overrides (a nested mapping, as flags give)
    over the benchmark's defaults: `resolve` without the sources."""
    layers = [preset_layer(preset), file_layer(config_file), data_layer("overrides", overrides)]
    return resolve(layers, benchmark_defaults=benchmark_defaults).config
