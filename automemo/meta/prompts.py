"""Rendering the meta agent's prompts (prompts/meta_*.j2) with the variables every one of them
shares: the contract fragment's interface version, budget, limits and the toolkit's interface.

The toolkit section quotes `automemo/toolkit/api.py` itself rather than a paraphrase, so the
prompt cannot drift from what the guest actually offers.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Mapping, Sequence

from automemo.contract import INTERFACE_VERSION, Budget
from automemo.meta.base import Improvement
from automemo.meta.config import MetaConfig
from automemo.prompting import render
from automemo.sandbox.base import Limits

TEMPLATES = ("meta_analysis", "meta_generate", "meta_initialize", "meta_repair")


@functools.lru_cache(maxsize=1)
def toolkit_api_source() -> str:
    import automemo.toolkit.api as api

    text = Path(api.__file__).read_text()
    # The module docstring and imports say nothing a program needs; start at the first class.
    start = text.find("class ToolkitAPI")
    return text[start:] if start >= 0 else text


def contract_context(budget: Budget = Budget(), limits: Limits = Limits()) -> dict[str, Any]:
    return {
        "interface_version": INTERFACE_VERSION,
        "budget": budget,
        "limits": limits,
        "toolkit_api": toolkit_api_source(),
    }


def improvements_context(improvements: Sequence[Improvement], config: MetaConfig) -> list[dict]:
    """The largest earlier gains, each diff cut to its cap (the prompt would otherwise grow
    with the tree)."""
    best = sorted(improvements, key=lambda i: (-(i.child_score - i.parent_score), i.child_id))
    out = []
    for imp in best[: config.max_improvements]:
        diff = imp.diff
        if len(diff) > config.improvement_diff_chars:
            diff = diff[: config.improvement_diff_chars] + "\n... [diff truncated]"
        out.append(
            {
                "parent_id": imp.parent_id,
                "child_id": imp.child_id,
                "parent_score": imp.parent_score,
                "child_score": imp.child_score,
                "summary": imp.summary,
                "diff": diff,
            }
        )
    return out


def render_meta(name: str, context: Mapping[str, Any], **variables: Any) -> str:
    return render(name, **context, **variables)
