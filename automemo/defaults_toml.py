"""`presets/default.toml`, generated from the configuration dataclasses: their defaults and the
comments next to their fields are the one source; the file is what a user reads and copies.

    default_toml()        # the file's text, from RunConfig() and the dataclasses' source
    automemo config defaults [--write]   # print it, or rewrite presets/default.toml

A field's comment is the comment block right above it plus its trailing comment; a nested config
dataclass becomes a `[section]`, its field's comment above the header. A field whose default is
unset (None) is listed commented out, with the value its `metadata["example"]` gives. Keys a
benchmark sets for itself carry a "# benchmark default: VALUE on NAMES" line.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import io
import re
import tokenize
from typing import Any, Iterator

from automemo.config import DERIVED_KEYS, PRESETS_DIR, RunConfig
from automemo.resolution import benchmark_overrides, toml_value

DEFAULT_TOML = PRESETS_DIR / "default.toml"

HEADER = """\
# Every setting of an `automemo search` run, with its default and why.
#
# Generated from the configuration dataclasses (their defaults and comments are the source):
# `automemo config defaults --write` rewrites it, and the tests check that it is current.
# A benchmark may declare its own value for a key (Benchmark.search_defaults: retrieval mode, for
# one, scores every question and sweeps the seeds); such a key carries a line
# "# benchmark default: VALUE on NAMES" (each benchmark with its default options). Key by key,
# the highest of these wins:
#
#     flag  >  --config FILE  >  --preset NAME  >  benchmark  >  this file
#
# `automemo config show [--benchmark X] [--preset P] [--config F] [flags]` prints every resolved
# value and where it came from. `--preset default` is this file: the same as no preset.
# Copy it, delete what you do not change, and pass it with `automemo search --config FILE`;
# presets (minigallery.toml, miniwob.toml) are small files of the same shape.
# Unknown keys are errors that name the key path, so a typo never silently does nothing.
#
# API keys never appear here: each LLM role names the environment variable that holds its key.
"""


def default_toml(config: RunConfig | None = None) -> str:
    """The text of presets/default.toml: the values of `config` (the defaults, `RunConfig()`),
    commented from the dataclasses' source."""
    notes = benchmark_overrides()
    lines = [HEADER.rstrip("\n")]
    config = config or RunConfig()
    for f in dataclasses.fields(config):
        lines.append("")
        lines += _section(f.name, getattr(config, f.name), field_comment(type(config), f.name), notes)
    return "\n".join(lines) + "\n"


def _section(path: str, obj: Any, comment: list[str], notes: dict[str, dict[str, list[str]]]) -> list[str]:
    lines = [*comment, f"[{path}]"]
    cls = type(obj)
    fields = [f for f in dataclasses.fields(obj) if f"{path}.{f.name}" not in DERIVED_KEYS]
    tables = [f for f in fields if dataclasses.is_dataclass(getattr(obj, f.name))]
    for f in fields:
        if f in tables:
            continue
        key = f"{path}.{f.name}"
        lines += field_comment(cls, f.name)
        lines += [f"# benchmark default: {value} on {', '.join(names)}"
                  for value, names in notes.get(key, {}).items()]
        value = getattr(obj, f.name)
        if value is None:
            if "example" not in f.metadata:
                raise ValueError(f"{key} defaults to None: give its field metadata an 'example' value "
                                 "for default.toml to show")
            lines.append(f"# {f.name} = {toml_value(f.metadata['example'])}")
        else:
            lines.append(f"{f.name} = {toml_value(value)}")
    for f in tables:
        lines.append("")
        lines += _section(f"{path}.{f.name}", getattr(obj, f.name), field_comment(cls, f.name), notes)
    return lines


def field_comment(cls: type, name: str) -> list[str]:
    """The comment lines of field `name` of dataclass `cls` (or of the nearest base class that
    defines it): the block right above its line, then its trailing comment."""
    for klass in cls.__mro__:
        comments = _class_comments(klass)
        if name in comments:
            return comments[name]
    return []


@functools.lru_cache(maxsize=None)
def _class_comments(cls: type) -> dict[str, list[str]]:
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return {}
    lines = source.splitlines()
    trailing = dict(_trailing_comments(source))
    names = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    out: dict[str, list[str]] = {}
    for number, line in enumerate(lines):
        match = re.match(r"^\s+(\w+)\s*:", line)
        if not match or match.group(1) not in names or match.group(1) in out:
            continue
        above: list[str] = []
        for prev in reversed(lines[:number]):
            if not prev.strip().startswith("#"):
                break
            above.insert(0, prev.strip())
        after = trailing.get(number + 1)
        out[match.group(1)] = [_tidy(c) for c in above] + ([_tidy(after)] if after else [])
    return out


def _trailing_comments(source: str) -> Iterator[tuple[int, str]]:
    """(line number, comment) of every comment that follows code on its line."""
    code_lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            if token.start[0] in code_lines:
                yield token.start[0], token.string
        elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            code_lines.add(token.start[0])


def _tidy(comment: str) -> str:
    text = comment.lstrip("#").strip()
    return f"# {text}" if text else "#"


def write_default_toml() -> bool:
    """Rewrite presets/default.toml; True when it changed."""
    text = default_toml()
    if DEFAULT_TOML.exists() and DEFAULT_TOML.read_text() == text:
        return False
    DEFAULT_TOML.write_text(text)
    return True
