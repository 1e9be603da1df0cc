"""The streaming JSON list reader LongMemEval's loader uses (its M file is ~2.7 GB): the same
items as `json.loads`, whatever the chunk boundaries cut (whitespace, commas, strings holding
brackets and escapes, numbers), and clear errors for a file that is not a list, is not JSON or
ends early."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from automemo.benchmarks.conversation.files import iter_json_list
from automemo.benchmarks.conversation.model import DatasetError

ITEMS = [
    {"question_id": "q1", "question": "what is in [brackets] and {braces}?", "n": 1},
    {"s": "a \"quoted\" ], { and \\ backslash", "unicode": "caf\u00e9 \u2013 \U0001f600", "list": [1, [2, [3]]]},
    [],
    {},
    12345678901234567890,
    -1.5e-3,
    "a plain string with , and ] inside",
    True,
    None,
    {"nested": {"deep": [{"x": "]"}, {"y": ","}]}, "empty": ""},
]


def _write(tmp_path: Path, text: str, name: str = "f.json") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("layout", ["compact", "spaced", "indented"])
@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1 << 20])
def test_it_yields_what_json_loads_gives_at_every_chunk_size(tmp_path, layout, chunk):
    text = {"compact": json.dumps(ITEMS, separators=(",", ":")),
            "spaced": " \n [ " + " ,\n\t ".join(json.dumps(i) for i in ITEMS) + " \r\n ] \n",
            "indented": json.dumps(ITEMS, indent=2, ensure_ascii=False)}[layout]
    path = _write(tmp_path, text)
    assert list(iter_json_list(path, "a list", chunk=chunk)) == json.loads(text)


def test_an_empty_list_and_a_list_of_one(tmp_path):
    assert list(iter_json_list(_write(tmp_path, " [ ] "), "a list", chunk=1)) == []
    assert list(iter_json_list(_write(tmp_path, '[{"a": 1}]'), "a list", chunk=2)) == [{"a": 1}]


def test_items_come_one_at_a_time(tmp_path):
    """The first item is handed over before the rest of the file is read: a generator over a
    file whose tail is broken yields the good items first."""
    path = _write(tmp_path, '[{"a": 1}, {"b": 2}, {"c": ')
    got = iter_json_list(path, "a list", chunk=4)
    assert next(got) == {"a": 1}
    assert next(got) == {"b": 2}
    with pytest.raises(DatasetError):
        next(got)


@pytest.mark.parametrize("cut", [1, 10, 25, 40, -2, -1])
def test_a_truncated_file_says_so_and_what_to_do(tmp_path, cut):
    text = json.dumps(ITEMS)
    path = _write(tmp_path, text[:cut] if cut > 0 else text[:len(text) + cut])
    with pytest.raises(DatasetError, match=r"before its list closes \(a truncated or partial download\?\); "
                                           r"download the file again"):
        list(iter_json_list(path, "a list", chunk=8))


def test_a_file_that_is_not_a_json_list_is_named(tmp_path):
    with pytest.raises(DatasetError, match=r"obj.json: not a LongMemEval file$"):
        list(iter_json_list(_write(tmp_path, '{"question_id": "x"}', "obj.json"), "a LongMemEval file"))
    with pytest.raises(DatasetError, match=r"not a LongMemEval file \(the file is empty\)"):
        list(iter_json_list(_write(tmp_path, "  \n", "empty.json"), "a LongMemEval file"))


@pytest.mark.parametrize("text, where", [
    ('[{"a": 1} {"b": 2}]', "expected ',' or ']' after item 1"),
    ('[{"a": 1}, ]', "in item 2"),
    ('[{"a": nope}]', "in item 1"),
    ('[{"a": 1}] trailing', "text after the list closes"),
])
def test_invalid_json_names_the_place(tmp_path, text, where):
    with pytest.raises(DatasetError, match=r"not valid JSON at character \d+ .*" + where.replace("(", r"\(")):
        list(iter_json_list(_write(tmp_path, text), "a list", chunk=3))


def test_a_file_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "bin.json"
    path.write_bytes(b'[{"a": "\xff\xfe"}]')
    with pytest.raises(DatasetError, match="not a text file"):
        list(iter_json_list(path, "a list"))
