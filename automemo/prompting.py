"""Rendering the jinja2 prompt templates in `prompts/`.

Undefined variables are errors (StrictUndefined): a template that silently renders an empty
evidence section would send the meta agent a prompt that looks fine and says nothing.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jinja2

from automemo.paths import PROMPTS_DIR


@functools.lru_cache(maxsize=4)
def environment(root: str = str(PROMPTS_DIR)) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(root),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=2, ensure_ascii=False, sort_keys=True)
    env.filters["clip"] = lambda s, n: s if len(s) <= n else s[: max(0, n - 20)] + "\n…[truncated]"
    return env


def render(name: str, root: Path | None = None, **variables: Any) -> str:
    """Render `prompts/<name>.j2` (or `<name>` if it already ends in .j2)."""
    template = name if name.endswith(".j2") else f"{name}.j2"
    return environment(str(root or PROMPTS_DIR)).get_template(template).render(**variables)
