"""Rendering the meta agent's prompts (prompts/meta_*.j2) with the variables every one of them
shares: the contract fragment's interface version, budget, limits, the toolkit's interface,
memolib's API, the scoring rule and excerpts of real data.

The toolkit section quotes `automemo/toolkit/api.py` itself rather than a paraphrase, and the
memolib listing is read from the imported module's public names and docstrings, so neither can
drift from what the guest actually offers.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import inspect
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from automemo.contract import INTERFACE_VERSION, Budget
from automemo.meta.source import syntax
from automemo.meta.config import MetaConfig
from automemo.evaluation.cost import cost_line
from automemo.meta.context import (ChildAttempt, GenerationContext, Improvement, ParsedSource, ScoredProgram,
                                   weak_types)
from automemo.prompting import render
from automemo.sandbox.base import Limits
from automemo.toolkit.encode_cost import DEFAULT_RATES

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


def imported_helper_modules(program: ParsedSource) -> list[str]:
    """The `automemo.toolkit.*` modules `program` imports (beyond the toolkit API the prompt
    quotes anyway), in first-import order; [] when it does not parse."""
    tree = program.tree
    if tree is None:
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


def helpers_context(program: ParsedSource) -> str:
    """What the prompts show of the helper modules `program` imports ("" when it imports none);
    memolib is left out when the contract lists its whole API anyway."""
    listed = {MEMOLIB} if memolib_api() else set()
    return "\n\n".join(filter(None, (helper_module_api(m) for m in imported_helper_modules(program)
                                       if m not in listed and not m.startswith(MEMOLIB + "."))))


MEMOLIB = "automemo.toolkit.memolib"


@functools.lru_cache(maxsize=4)
def memolib_api(module: str = MEMOLIB, *, described: bool = True) -> str:
    """memolib's public API as the model needs it: each public function's and class's signature
    with its docstring's first sentence (`described=False`: the signatures alone, for a small
    context), public constants with their values. Read by importing the module, so it lists
    whatever the library holds today ("" when there is none)."""
    try:
        lib = importlib.import_module(module)
    except ImportError:
        return ""
    names = getattr(lib, "__all__", None) or [n for n in vars(lib) if not n.startswith("_")]
    lines = [f"from automemo.toolkit import memolib   # {_first_paragraph(lib.__doc__)}"]
    for name in names:
        obj = getattr(lib, name, None)
        home = getattr(obj, "__module__", "") or ""
        if inspect.isfunction(obj) or inspect.isclass(obj):
            if not home.startswith(module):
                continue  # imported from elsewhere (typing, the contract): not memolib's own
            lines.extend(_described(name, obj, described))
        elif name.isupper() and isinstance(obj, (int, float, str, bool, tuple, frozenset)):
            lines.append(f"memolib.{name} = {obj!r}"[:160])
    return "\n".join(lines)


def _first_paragraph(doc: str | None) -> str:
    text = inspect.cleandoc(doc or "").split("\n\n")[0]
    return " ".join(text.split())[:300]


_ADDRESS = re.compile(r"<function (\S+) at 0x[0-9a-f]+>")
_QUOTED_ANNOTATION = re.compile(r"(: |-> )'([^']*)'")


def _runtime_signature(obj: Any) -> str:
    """A signature as source would spell it: annotations unquoted, no memory addresses (the
    listing must be the same text every run, or a server's prompt cache misses)."""
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"
    return _QUOTED_ANNOTATION.sub(r"\1\2", _ADDRESS.sub(r"\1", text))


def _first_sentence(doc: str | None, limit: int = 140) -> str:
    """What a name is for, in one sentence: the listing of a whole library must still leave room
    in an 8k-token context for the parent, its evidence and the answer."""
    text = _first_paragraph(doc)
    end = text.find(". ")
    return (text if end < 0 else text[:end + 1])[:limit]


def _described(name: str, obj: Any, described: bool = True) -> list[str]:
    signature = _runtime_signature(obj)
    doc = _first_sentence(obj.__doc__) if described else ""
    kind = "class" if inspect.isclass(obj) else "def"
    out = [f"{kind} memolib.{name}{signature}" + (f"  # {doc}" if doc else "")]
    if inspect.isclass(obj):
        for member, value in vars(obj).items():
            if member.startswith("_") or not callable(value):
                continue
            sig = _runtime_signature(value)
            note = _first_sentence(getattr(value, "__doc__", ""), limit=80) if described else ""
            out.append(f"    def {member}{sig}" + (f"  # {note}" if note else ""))
    return out


def scoring_rule(description: Mapping[str, Any] | None) -> str:
    """How a program's score comes about, from the benchmark's own description (its metrics)."""
    metrics = (description or {}).get("metrics")
    rule = ("A program's score is the mean, over the retrieve tasks of an evaluation, of each task's "
            "score in [0, 1]; the search keeps the program with the best score it can trust.")
    if metrics:
        rule += (f" Here each task is scored by {metrics}: the metric marked (value) is the task's "
                 "score, the others are reported alongside.")
    return rule


def contract_context(budget: Budget = Budget(), limits: Limits = Limits(), *,
                     benchmark: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {
        "interface_version": INTERFACE_VERSION,
        "budget": budget,
        "limits": limits,
        "toolkit_api": toolkit_api_source(),
        "memolib_api": memolib_api(),
        "scoring_rule": scoring_rule(benchmark),
        "samples": {"update_episode": "", "retrieve_task": ""},  # set per prompt from the run's data
        "helpers": "",  # helper modules the program at hand imports (set per prompt)
    }


def inspirations_context(programs: Sequence[ScoredProgram], parent_id: int,
                         parent_categories: Mapping[str, float], config: MetaConfig,
                         seeds: Sequence[tuple[str, str]] = ()) -> list[dict[str, Any]]:
    """Up to `config.llm.inspirations` programs other than the parent: the one that leads the parent
    most on the parent's weakest question types, then the tree's best by mean; seed programs
    (name, source) fill in while the tree has too few. Each source cut to `inspiration_chars`."""
    others = [p for p in programs if p.node_id != parent_id]
    chosen: list[dict[str, Any]] = []
    weak = weak_types(parent_categories, limit=2)

    def lead(p: ScoredProgram) -> float:
        return sum(p.per_category.get(c, 0.0) - parent_categories[c] for c in weak)

    if weak:
        leaders = sorted((p for p in others if lead(p) > 0), key=lambda p: (-lead(p), p.node_id))
        if leaders:
            p = leaders[0]
            chosen.append(_inspiration(f"node {p.node_id}", p, config,
                                       why="strongest where the parent is weak (" + ", ".join(
                                           f"{c}: {p.per_category.get(c, 0.0):.3f} vs {parent_categories[c]:.3f}"
                                           for c in weak) + ")"))
    for p in sorted(others, key=lambda p: (-p.mean, p.node_id)):
        if len(chosen) >= config.llm.inspirations:
            break
        if all(c["name"] != f"node {p.node_id}" for c in chosen):
            chosen.append(_inspiration(f"node {p.node_id}", p, config, why="among the best of the tree"))
    for name, source in seeds:
        if len(chosen) >= config.llm.inspirations:
            break
        chosen.append({"name": f"seed {name}", "why": "a known design, not yet evaluated in this search",
                       "score": None, "source": _cut(source, config.llm.inspiration_chars)})
    return chosen[: config.llm.inspirations]


def _inspiration(name: str, p: ScoredProgram, config: MetaConfig, *, why: str) -> dict[str, Any]:
    return {"name": name, "why": why, "score": p.mean, "source": _cut(p.source, config.llm.inspiration_chars)}


def _cut(source: str, limit: int) -> str:
    return source if len(source) <= limit else source[:limit] + "\n# ... [cut]"


def siblings_context(children: Sequence[ChildAttempt], config: MetaConfig) -> list[dict[str, Any]]:
    """The parent's latest children, each with what was tried and what came of it."""
    return [{"node_id": c.node_id, "summary": c.summary, "score": c.score, "failure": c.failure[:200]}
            for c in list(children)[-config.llm.max_siblings:]] if config.llm.max_siblings else []


def improvements_context(improvements: Sequence[Improvement], config: MetaConfig) -> list[dict]:
    """The largest earlier gains, each diff cut to its cap (the prompt would otherwise grow
    with the tree)."""
    best = sorted(improvements, key=lambda i: (-(i.child_score - i.parent_score), i.child_id))
    out = []
    for imp in best[: config.llm.max_improvements]:
        diff = imp.diff
        if len(diff) > config.llm.improvement_diff_chars:
            diff = diff[: config.llm.improvement_diff_chars] + "\n... [diff truncated]"
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


def cost_context(context: GenerationContext) -> dict[str, Any]:
    """What the generate prompt says of cost (prompts/_cost.j2): the search's cost bounds, the
    parent's figures and whether it is over; {} without bounds."""
    if not context.bounds.active:
        return {}
    rate = next((r for r in DEFAULT_RATES.measured() if r.unit == "word piece"), None)
    return {"bounds": context.bounds.describe(), "over": context.over_bounds,
            "line": cost_line(context.parent_cost) if context.parent_cost else "not measured",
            "ms_per_piece": f"{rate.ms_per_unit:.2f}" if rate is not None else "0.5"}


def render_meta(name: str, context: Mapping[str, Any], **variables: Any) -> str:
    return render(name, **{**context, **variables})
