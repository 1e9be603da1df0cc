"""Functions of program texts are computed once per text (automemo.content_memo): a search reads
every program of its tree again at every step, and a ranked program is 480 000 characters."""

from automemo import content_memo
from automemo.content_memo import by_content
from automemo.meta.source import syntax
from automemo.report import highlight


def test_a_memoised_function_runs_once_per_text_and_answers_per_text():
    calls = []

    @by_content
    def size(text, *, scale=1):
        calls.append(text)
        return len(text) * scale

    assert size("abc") == 3 and size("abc") == 3 and size("abcd") == 4
    assert calls == ["abc", "abcd"]
    assert size("abc", scale=2) == 6  # a keyword is part of the key
    assert calls == ["abc", "abcd", "abc"]


def test_ignored_keywords_are_passed_on_but_not_part_of_the_key():
    seen = []

    @by_content(ignore=("tree",))
    def read(text, *, tree=None):
        seen.append(tree)
        return text.upper()

    assert read("x", tree=object()) == "X"
    assert read("x", tree=object()) == "X"
    assert len(seen) == 1


def test_the_least_recently_used_result_goes_first(monkeypatch):
    monkeypatch.setattr(content_memo, "ENTRIES", 2)
    calls = []

    @by_content
    def echo(text):
        calls.append(text)
        return text

    echo("a"), echo("b"), echo("a"), echo("c")   # "b" is the least recently used
    echo("a")
    assert calls == ["a", "b", "c"]
    echo("b")
    assert calls == ["a", "b", "c", "b"]


def test_the_report_highlights_a_program_once(monkeypatch):
    runs = []
    real = highlight.highlight
    monkeypatch.setattr(highlight, "highlight", lambda *a: runs.append(1) or real(*a))
    source = "X = 1  # a program only this test writes\n"
    first, second = highlight.highlight_python(source), highlight.highlight_python(source)
    assert first == second and "L-1" in first
    assert len(runs) == 1


def test_a_program_identity_is_unchanged_by_comments_and_changed_by_code():
    base = 'def f():\n    """doc"""\n    return 1\n'
    assert syntax.normalised(base) == syntax.normalised("# c\n" + base.replace('"""doc"""', '"""other"""'))
    assert syntax.normalised(base) != syntax.normalised(base.replace("1", "2"))
    assert syntax.normalised("def (") != syntax.normalised("def ((")   # unparsable: by its text
