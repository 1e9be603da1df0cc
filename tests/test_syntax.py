"""The meta layer's one parse: ast.parse, serialised across the threads of a parallel search."""

import ast
import concurrent.futures

import pytest

from automemo.meta.source import syntax
from automemo.paths import SEEDS_DIR


def test_parses_like_ast_from_many_threads_at_once():
    sources = [p.read_text() for p in sorted(SEEDS_DIR.glob("*.py"))] * 4
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        trees = list(pool.map(syntax.parse, sources))
    assert [ast.dump(t) for t in trees] == [ast.dump(ast.parse(s)) for s in sources]


def test_a_syntax_error_is_raised_as_ast_raises_it():
    with pytest.raises(SyntaxError) as caught:
        syntax.parse("def broken(:\n    pass\n", "child.py")
    assert caught.value.filename == "child.py" and caught.value.lineno == 1
