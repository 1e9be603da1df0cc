"""Tunable constants: parsing the marker format, AST checks with clear errors, byte-exact apply."""

from __future__ import annotations

import pytest

from automemo.meta.source.tunables import TunableError, apply, parse_tunables, skeleton

PROGRAM = '''"""A seed."""
from automemo.contract import MemoProgram

TOP_K = 10  # tunable: int 1..30
THRESHOLD = 0.35  # tunable: float 0.0..0.9
MODE = "dense"  # tunable: choice dense|hybrid|graph
USE_IMAGES: bool = True  # tunable: bool
OFFSET = -2  # tunable: int -5..5
NOTE = "# tunable: int 1..3"  # a marker inside a string is not a declaration
PLAIN = 7


class Memo(MemoProgram):
    LIMIT = 3  # the class body is not module level, and carries no marker
'''


def test_parse_reads_every_declaration_in_order():
    found = parse_tunables(PROGRAM)
    assert [(t.name, t.kind, t.value, t.line) for t in found] == [
        ("TOP_K", "int", 10, 4),
        ("THRESHOLD", "float", 0.35, 5),
        ("MODE", "choice", "dense", 6),
        ("USE_IMAGES", "bool", True, 7),
        ("OFFSET", "int", -2, 8),
    ]
    top_k, threshold, mode = found[:3]
    assert (top_k.low, top_k.high) == (1, 30)
    assert (threshold.low, threshold.high) == (0.0, 0.9)
    assert mode.choices == ("dense", "hybrid", "graph")


def test_apply_changes_only_the_literals():
    child = apply(PROGRAM, {"TOP_K": 12, "THRESHOLD": 0.5, "MODE": "graph", "USE_IMAGES": False, "OFFSET": -5})
    changed = [(a, b) for a, b in zip(PROGRAM.splitlines(), child.splitlines()) if a != b]
    assert changed == [
        ("TOP_K = 10  # tunable: int 1..30", "TOP_K = 12  # tunable: int 1..30"),
        ("THRESHOLD = 0.35  # tunable: float 0.0..0.9", "THRESHOLD = 0.5  # tunable: float 0.0..0.9"),
        ('MODE = "dense"  # tunable: choice dense|hybrid|graph', 'MODE = "graph"  # tunable: choice dense|hybrid|graph'),
        ("USE_IMAGES: bool = True  # tunable: bool", "USE_IMAGES: bool = False  # tunable: bool"),
        ("OFFSET = -2  # tunable: int -5..5", "OFFSET = -5  # tunable: int -5..5"),
    ]
    assert {t.name: t.value for t in parse_tunables(child)}["THRESHOLD"] == 0.5


def test_apply_handles_non_ascii_text_before_the_literal():
    source = 'É_NAME = "é"  # unrelated\nK = 3  # tunable: int 1..9\nL = "ä"; M = 4  # tunable: int 1..9\n'
    with pytest.raises(TunableError, match="line 3"):
        parse_tunables(source)  # two statements on the marker line: which one is the tunable?
    ok = 'X = "ä"  # tunable: choice ä|ö\n'
    assert apply(ok, {"X": "ö"}) == 'X = "ö"  # tunable: choice ä|ö\n'


@pytest.mark.parametrize(
    "values, message",
    [
        ({"TOP_K": 31}, r"TOP_K \(line 4\): 31 is outside its declared range 1..30"),
        ({"TOP_K": 2.5}, r"TOP_K \(line 4\): expected int"),
        ({"THRESHOLD": 1.2}, r"THRESHOLD \(line 5\).*outside"),
        ({"MODE": "sparse"}, r"MODE \(line 6\): expected one of dense\|hybrid\|graph"),
        ({"USE_IMAGES": 1}, r"USE_IMAGES \(line 7\): expected True or False"),
        ({"PLAIN": 3}, r"unknown tunable\(s\) PLAIN"),
    ],
)
def test_apply_rejects_values_outside_the_declaration(values, message):
    with pytest.raises(TunableError, match=message):
        apply(PROGRAM, values)


@pytest.mark.parametrize(
    "source, message",
    [
        ("TOP_K = 40  # tunable: int 1..30\n", r"TOP_K \(line 1\): 40 is outside"),
        ("TOP_K = 0.5  # tunable: int 0..3\n", r"line 1\).*expected int"),
        ("MODE = 'x'  # tunable: choice a|b\n", r"expected one of a\|b"),
        ("K = len('ab')  # tunable: int 1..3\n", r"line 1: tunable K must be assigned a literal"),
        ("A = B = 3  # tunable: int 1..3\n", r"line 1: a tunable assigns exactly one plain name"),
        ("def f():\n    K = 3  # tunable: int 1..5\n", r"line 2: .*module-level assignment"),
        ("K = 3  # tunable: integer 1..5\n", r"line 1: cannot read the tunable spec"),
        ("K = 3  # tunable: int 5..1\n", r"line 1: tunable K has an empty range"),
        ("M = 'a'  # tunable: choice a\n", r"needs at least two options"),
        ("K = 3  # tunable: int 1..5\nK = 4  # tunable: int 1..5\n", r"line 2: tunable K is already declared on line 1"),
        ("K = (1,\n 2)  # tunable: int 1..5\n", r"line 2: .*module-level assignment"),
    ],
)
def test_bad_declarations_name_their_line(source, message):
    with pytest.raises(TunableError, match=message):
        parse_tunables(source)


def test_program_without_markers_has_no_tunables():
    assert parse_tunables("X = 3\nclass Memo: pass\n") == []
    assert apply("X = 3\n", {}) == "X = 3\n"


def test_variants_share_a_skeleton():
    child = apply(PROGRAM, {"TOP_K": 20, "MODE": "hybrid"})
    assert skeleton(child) == skeleton(PROGRAM)
    assert skeleton(PROGRAM) != skeleton(PROGRAM.replace("PLAIN = 7", "PLAIN = 8"))
    assert "TOP_K = ...  # tunable: int 1..30" in skeleton(PROGRAM)
