"""A user's own benchmark: `path/to/file.py:ClassName` or `package.module:ClassName`.

The class is checked like a built-in one before anything runs: a `Benchmark` subclass with a
`name` and an `Options` dataclass (whose fields are the options users may pass). It may declare
the execution agent it needs with `agent_kind()` ("visual", "web" or None for no agent).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path

from automemo.benchmarks.base import Benchmark

SPEC_HELP = "a built-in benchmark name, path/to/file.py:ClassName, or package.module:ClassName"


def is_plugin_spec(name: str) -> bool:
    return ":" in name


def absolute_spec(spec: str) -> str:
    """`spec` with a relative `file.py` made absolute (from the current directory), so that a run
    stored with it resumes from anywhere; other names are returned unchanged."""
    target, _, class_name = spec.rpartition(":")
    if not is_plugin_spec(spec) or not target.endswith(".py"):
        return spec
    return f"{Path(target).expanduser().resolve()}:{class_name}"


def load_plugin_class(spec: str) -> type[Benchmark]:
    target, _, class_name = spec.rpartition(":")
    if not target or not class_name.isidentifier():
        raise ValueError(f"benchmark {spec!r}: expected {SPEC_HELP}")
    module = _import_file(spec, Path(target)) if target.endswith(".py") else _import_module(spec, target)
    cls = getattr(module, class_name, None)
    if cls is None:
        raise ValueError(f"benchmark {spec!r}: {target} defines no {class_name}")
    check_benchmark_class(cls, spec)
    return cls


def check_benchmark_class(cls: object, spec: str) -> None:
    if not (isinstance(cls, type) and issubclass(cls, Benchmark)):
        raise ValueError(
            f"benchmark {spec!r}: {getattr(cls, '__name__', cls)!r} is not a subclass of "
            f"automemo.benchmarks.Benchmark"
        )
    abstract = sorted(getattr(cls, "__abstractmethods__", ()))
    if abstract:
        raise ValueError(f"benchmark {spec!r}: {cls.__name__} does not implement {', '.join(abstract)}")
    options = getattr(cls, "Options", None)
    if not (isinstance(options, type) and dataclasses.is_dataclass(options)):
        raise ValueError(
            f"benchmark {spec!r}: {cls.__name__} needs an `Options` dataclass (its options, each with "
            f"a default), e.g. `Options = MyOptions`"
        )
    if not isinstance(getattr(cls, "name", None), str) or cls.name in ("", "abstract"):
        raise ValueError(f'benchmark {spec!r}: {cls.__name__} needs a class attribute `name = "..."`')


def _import_file(spec: str, path: Path):
    path = path.expanduser().resolve()
    if not path.is_file():
        raise ValueError(f"benchmark {spec!r}: {path} does not exist")
    # One module per file (keyed by its path), so two plug-ins named alike do not collide and
    # loading the same file twice gives the same classes.
    name = "automemo_plugin_" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ValueError(f"benchmark {spec!r}: importing {path} failed: {type(exc).__name__}: {exc}") from None
    return module


def _import_module(spec: str, target: str):
    try:
        return importlib.import_module(target)
    except Exception as exc:
        raise ValueError(f"benchmark {spec!r}: cannot import {target}: {type(exc).__name__}: {exc}") from None
