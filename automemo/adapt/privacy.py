"""What a pooled candidate may be: a shape that carries numbers and the package's own names, so
that nothing of one user's memory (a word, a name, an age, an initial) can reach another user's
program, whatever the users wrote.

An earlier check looked for the users' words in a candidate's string constants. A user's words
can hide anywhere else (a comment, a `bytes` constant, an identifier, an int or two-letter dict
key, a word the package itself happens to use such as "diagnosis" or "sister"), so the check now
allows shapes rather than hunting for words. A pooled candidate is allowed only as one of:

1. **a recipe**: its source is exactly the template's rendering of its constants
   (`meta.source.recipe.parse_recipe` reads it back and renders the same characters), every
   constant a number, a bool or one of its stage's fixed choices, with no question router and
   no fitted ranker (both are fitted on the users' questions, and a router's features are
   words) and no per-type routes;
2. **a shipped design, retuned**: a seed program, the discovered default (its router and ranker
   were fitted on the package's public sample, no user's), or the live program, with only
   numeric and bool constants changed (the same syntax tree otherwise: no new name, string,
   comment, key or table);
3. **a crossover** of two parents of these shapes: exactly the template's rendering of its
   weight and fusion constant, without routes or a router, its parents named by node number.

A node the LLM meta agent wrote is none of these (a pooled round runs the offline agent only:
`search_race.round_config`), and neither is a word-keyed table of any kind."""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

from automemo.paths import SEEDS_DIR
from automemo.programs import discovered_path

CROSSOVER_NAME = re.compile(r'"""Crossover of (node \d+) and (node \d+) \(written by the offline mutator\)\.')


def refusal(candidate: str, live: str) -> str | None:
    """Why `candidate` may not be pooled (a sentence), or None when its shape is allowed."""
    if _recipe_allowed(candidate) or _retuned(candidate, live) or _crossover_allowed(candidate, live):
        return None
    return ("it is not a shape a pooled round may install (a recipe's exact rendering without a router, a ranker "
            "or routes; a seed, the discovered default or the live program with only numbers changed; or a crossover "
            "of those): any other code could carry a user's words into another user's program")


def _recipe_allowed(source: str) -> bool:
    from automemo.meta.source.recipe import parse_recipe

    recipe = parse_recipe(source)
    # the rendering fixes every string to a stage's declared choices (`Knob.allows`); what is
    # fitted on questions is left out whole
    return recipe is not None and recipe.router is None and recipe.ranker is None and not recipe.routes


def _retuned(source: str, live: str) -> bool:
    shape = _numbers_out(source)
    return shape is not None and shape in {_numbers_out(live), *_seed_shapes()}


def _crossover_allowed(source: str, live: str) -> bool:
    from automemo.meta.offline.crossover import crossover_source

    named = CROSSOVER_NAME.match(source)
    if named is None:
        return False
    constants = _constants(source)
    parents = constants.get("PARENT_A"), constants.get("PARENT_B")
    if not all(isinstance(p, str) for p in parents) or not all(_parent_allowed(p, live) for p in parents):
        return False
    try:
        rendered = crossover_source(parents[0], parents[1], name_a=named.group(1), name_b=named.group(2),
                                    weight_a=constants.get("WEIGHT_A"), rrf_k=constants.get("RRF_K"))
    except (TypeError, ValueError):
        return False
    return rendered == source


def _parent_allowed(source: str, live: str) -> bool:
    return _recipe_allowed(source) or _retuned(source, live) or _crossover_allowed(source, live)


def _numbers_out(source: str) -> str | None:
    """The program with every number and bool value blanked (None when it does not parse): two
    programs of the same shape differ in those values only. Both its syntax tree (strings,
    names, dict keys: a key is never blanked, as an int key can be an age) and its text
    (comments are not in a tree) must match."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    keys = {id(k) for node in ast.walk(tree) if isinstance(node, ast.Dict) for k in node.keys if k is not None}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex)) and id(node) not in keys:
            node.value = 0
    return ast.dump(tree) + "\x00" + _text_but_numbers(source)


_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|True|False)(?![\w.])")


def _text_but_numbers(source: str) -> str:
    """The source with its number and bool literals blanked: equal for two programs only when
    every comment and every other character is the same."""
    return _NUMBER.sub("0", source)


@lru_cache(maxsize=1)
def _seed_shapes() -> frozenset[str]:
    from automemo.meta.source.fitted import deployable_source

    shapes = set()
    for path in [*sorted(Path(SEEDS_DIR).glob("*.py")), *([discovered_path()] if discovered_path().is_file() else [])]:
        text = path.read_text()
        for source in (text, deployable_source(text)):
            shape = _numbers_out(source)
            if shape is not None:
                shapes.add(shape)
    return frozenset(shapes)


def _constants(source: str) -> dict[str, object]:
    from automemo.meta.source.syntax import literal_constants

    try:
        return literal_constants(ast.parse(source))
    except (SyntaxError, ValueError):
        return {}
