"""Rendering the meta agent's prompts (prompts/meta_*.j2) with the variables every one of them
shares: the contract fragment's interface version, budget, limits and the toolkit's interface.

The toolkit section quotes `automemo/toolkit/api.py` itself rather than a paraphrase, so the
prompt cannot drift from what the guest actually offers.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from pathlib import Path
from typing import Any, Mapping, Sequence

from automemo.contract import INTERFACE_VERSION, Budget
from automemo.meta import syntax
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


# The toolkit's interface is quoted whole in every prompt; helper modules are summarised only
# when the program at hand imports them.
_QUOTED_WHOLE = {"automemo.toolkit.api"}


def imported_helper_modules(source: str) -> list[str]:
    """The `automemo.toolkit.*` modules `source` imports (beyond the toolkit API the prompt
    quotes anyway), in first-import order; [] when it does not parse."""
    try:
        tree = syntax.parse(source)
    except SyntaxError:
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            if (name.startswith("automemo.toolkit.") and name not in _QUOTED_WHOLE
                    and name not in found and importlib.util.find_spec(name) is not None):
                found.append(name)
    return found


@functools.lru_cache(maxsize=16)
def helper_module_api(module: str) -> str:
    """The public surface of a helper module as the model needs it to edit around it: module
    constants, and each function's and class's signature with the first line of its docstring
    (a class's public methods too). Bodies are left out: they are the module's business."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return ""
    tree = syntax.parse(Path(spec.origin).read_text())
    lines = [f"# {module}"]
    first = ast.get_docstring(tree)
    if first:
        lines.append(f"# {first.strip().splitlines()[0]}")
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and target.id.isupper() and not target.id.startswith("_"):
                lines.append(f"{target.id} = {ast.unparse(node.value)[:80]}")
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            lines.extend(_signature(node, ""))
    return "\n".join(lines)


def _signature(node: ast.FunctionDef | ast.ClassDef, indent: str) -> list[str]:
    doc = ast.get_docstring(node)
    note = f"  # {doc.strip().splitlines()[0]}" if doc else ""
    if isinstance(node, ast.FunctionDef):
        returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
        return [f"{indent}def {node.name}({ast.unparse(node.args)}){returns}: ...{note}"]
    bases = ", ".join(ast.unparse(b) for b in node.bases)
    out = [f"{indent}class {node.name}{f'({bases})' if bases else ''}:{note}"]
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            default = f" = {ast.unparse(item.value)}" if item.value is not None else ""
            out.append(f"{indent}    {item.target.id}: {ast.unparse(item.annotation)}{default}")
        elif isinstance(item, ast.FunctionDef) and (not item.name.startswith("_") or item.name == "__init__"):
            out.extend(_signature(item, indent + "    "))
    return out


def helpers_context(source: str) -> str:
    """What the prompts show of the helper modules `source` imports ("" when it imports none)."""
    return "\n\n".join(filter(None, (helper_module_api(m) for m in imported_helper_modules(source))))


def contract_context(budget: Budget = Budget(), limits: Limits = Limits()) -> dict[str, Any]:
    return {
        "interface_version": INTERFACE_VERSION,
        "budget": budget,
        "limits": limits,
        "toolkit_api": toolkit_api_source(),
        "helpers": "",  # helper modules the program at hand imports (set per prompt)
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
    return render(name, **{**context, **variables})
