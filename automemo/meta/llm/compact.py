"""The compact prompt profile: one short generate call for small models and small contexts.

A 0.5B model on two CPU cores reads about 30 prompt tokens a second and cannot copy 50 lines
exactly: the full profile's analysis and generate prompts (18,000-26,000 tokens a step) took it
minutes per call and its long answers did not apply. The compact profile asks once, in about
2,000 tokens, for ONE small SEARCH/REPLACE edit: a short contract, the parent program without
its docstrings (cut past `source_chars`), its tunable constants, the weakest question types with
one or two failing questions each, one line per earlier child, and a worked example that changes
one of the parent's own constants (small models copy examples, so the example is a real edit).
The diagnosis is the rule-based one: a small model's analysis JSON is seldom usable.
"""

from __future__ import annotations

import ast
import random
from dataclasses import dataclass
from typing import Any

from automemo.evaluation.evidence import read_evidence
from automemo.meta.context import ParentView, ParsedSource, weak_types
from automemo.meta.source.tunables import apply, can_move, perturb_value

# Context sizes (tokens) below which the "auto" profile is compact: the full profile's prompts
# do not fit with room for an answer.
COMPACT_BELOW_TOKENS = 16_384
# What the compact prompt shows: question types, failing questions per type, characters each.
WEAK_TYPES = 3
QUESTIONS_PER_TYPE = 2
LINE_CHARS = 160


@dataclass(frozen=True)
class ExampleEdit:
    """A SEARCH/REPLACE edit of the parent that changes one constant."""

    search: str
    replace: str
    says: str          # what it does, for the example's SUMMARY line


def profile_for(configured: str, context_tokens: int) -> str:
    """The profile a run uses: `configured` unless "auto", which is compact for a declared
    context below COMPACT_BELOW_TOKENS and full otherwise (an unknown context is full)."""
    if configured != "auto":
        return configured
    return "compact" if 0 < context_tokens < COMPACT_BELOW_TOKENS else "full"


def shown_source(program: ParsedSource, limit: int) -> str:
    """The program as the compact prompt shows it: docstrings left out (every line shown is a
    line of the program, so a SEARCH copied from it matches), then cut to `limit` characters at
    a line boundary with a marker saying how many lines are not shown."""
    source, tree = program.source, program.tree
    lines = source.splitlines(keepends=True)
    dropped: set[int] = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str) and len(body) > 1):
                dropped.update(range(body[0].lineno - 1, body[0].end_lineno))
    kept = [line for i, line in enumerate(lines) if i not in dropped]
    while kept and not kept[0].strip():
        kept.pop(0)
    out, size = [], 0
    for n, line in enumerate(kept):
        if size + len(line) > limit:
            out.append(f"# ... [{len(kept) - n} more lines not shown]\n")
            break
        out.append(line)
        size += len(line)
    return "".join(out)


def weak_spots(parent: ParentView) -> list[dict[str, Any]]:
    """The parent's weakest question types, each with its score and up to QUESTIONS_PER_TYPE of
    its lowest-scored questions (what was asked, what it scored, the head of what was returned)."""
    evaluation = parent.evaluation
    if evaluation is None or not evaluation.per_category:
        return []
    weakest = [(c, evaluation.per_category[c]) for c in weak_types(evaluation.per_category, limit=WEAK_TYPES)]
    questions: dict[str, str] = {}
    if parent.evidence_dir:
        try:
            for t in read_evidence(parent.evidence_dir).tasks:
                if t.episode is not None:
                    questions[t.result.task_id] = t.episode.instruction
        except (FileNotFoundError, ValueError, KeyError):
            questions = {}
    out = []
    for category, score in weakest:
        tasks = sorted((t for t in evaluation.tasks if t.category == category and t.counted and not t.excluded),
                       key=lambda t: (t.score, t.task_id))[:QUESTIONS_PER_TYPE]
        lines = []
        for t in tasks:
            asked = " ".join(questions.get(t.task_id, t.task_id).split())[:LINE_CHARS]
            returned = " ".join((t.payload.text if t.payload is not None else "").split())[:LINE_CHARS // 2]
            lines.append(f"{asked!r} scored {t.score:.2f}" + (f"; memory returned {returned!r}" if returned else
                                                                  "; memory returned nothing"))
        out.append({"category": category, "score": score, "questions": lines})
    return out


def example_edit(program: ParsedSource, seed: int, step_fraction: float = 0.25) -> ExampleEdit | None:
    """One of the parent's declared tunables moved to a new value inside its range, as an edit of
    its line (drawn from `seed`, so children of one parent see different ones); else a module
    constant's number changed; None when the program has neither."""
    rng = random.Random(seed)
    source, tree = program.source, program.tree
    lines = source.splitlines()
    movable = [t for t in program.tunables if can_move(t)]
    if movable:
        tunable = rng.choice(movable)
        line = lines[tunable.line - 1]
        value = perturb_value(tunable, rng, step_fraction)
        new = apply(source, {tunable.name: value}, tunables=program.tunables,
                    tree=tree).splitlines()[tunable.line - 1]
        if new != line:
            return ExampleEdit(line, new, f"{tunable.name} {tunable.value!r} -> {value!r}")
    if tree is None:
        return None
    constants = [n for n in tree.body if isinstance(n, ast.Assign) and len(n.targets) == 1
                 and isinstance(n.targets[0], ast.Name) and n.targets[0].id.isupper()
                 and isinstance(n.value, ast.Constant) and type(n.value.value) in (int, float)
                 and n.lineno == n.end_lineno]
    if not constants:
        return None
    node = rng.choice(constants)
    old = node.value.value
    value = old * 2 if old else 1
    line = lines[node.lineno - 1]
    new = line[:node.value.col_offset] + repr(value) + line[node.value.end_col_offset:]
    return ExampleEdit(line, new, f"{node.targets[0].id} {old!r} -> {value!r}")


def tunable_lines(program: ParsedSource) -> list[str]:
    """The parent's declared tunables, one line each (name = value (range))."""
    return [t.describe() for t in program.tunables]
