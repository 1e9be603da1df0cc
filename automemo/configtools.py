"""Typed configuration from plain mappings (TOML, CLI flags) that fails fast on unknown keys.

Every config section is a frozen dataclass whose defaults live, commented, next to its fields.
`build(cls, data)` turns a nested mapping into that dataclass, recursing into fields whose type
is itself a config dataclass, and raises `ConfigError` naming the full key path of anything
unknown or mistyped, with the keys that would have been accepted.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Mapping, TypeVar

from automemo.errors import UsageError

T = TypeVar("T")


class ConfigError(UsageError, ValueError):
    """A configuration value is unknown or of the wrong type. The message names its key path."""


def build(cls: type[T], data: Mapping[str, Any] | None, path: str = "") -> T:
    data = dict(data or {})
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        where = f"[{path}]" if path else "the top level"
        raise ConfigError(
            f"unknown config key(s) {', '.join(_join(path, k) for k in unknown)} in {where}; "
            f"known keys: {', '.join(sorted(fields))}"
        )
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for name, value in data.items():
        kwargs[name] = _coerce(hints[name], value, _join(path, name))
    return cls(**kwargs)


def to_dict(obj: Any) -> dict[str, Any]:
    """A config dataclass as a plain nested dict (what `build` accepts back)."""
    return dataclasses.asdict(obj)


def merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge two plain config mappings; `override` wins key by key."""
    out = dict(base)
    for k, v in override.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = merge(out[k], v)
        else:
            out[k] = v
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _coerce(tp: Any, value: Any, path: str) -> Any:
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        if isinstance(value, tp):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"{path}: expected a table of settings, got {value!r}")
        return build(tp, value, path)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(arg, value, path)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if errors else f"{path}: unexpected value {value!r}")
    if origin is typing.Literal:
        allowed = typing.get_args(tp)
        if value not in allowed:
            raise ConfigError(f"{path}: expected one of {list(allowed)}, got {value!r}")
        return value
    if origin in (tuple, list):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{path}: expected a list, got {value!r}")
        (item,) = typing.get_args(tp)[:1] or (Any,)
        items = [_coerce(item, v, f"{path}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{path}: expected a table, got {value!r}")
        args = typing.get_args(tp)
        if len(args) == 2:
            return {str(k): _coerce(args[1], v, f"{path}.{k}") for k, v in value.items()}
        return dict(value)
    if tp is Any:
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{path}: expected true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{path}: expected an integer, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{path}: expected a number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{path}: expected a string, got {value!r}")
        return value
    return value
