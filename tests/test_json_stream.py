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


class _Reads:
    """`Path.open` of the file under test, recording every read: how much, and how much in all
    before each item was handed over."""

    def __init__(self, monkeypatch, path: Path) -> None:
        self.sizes: list[int] = []
        real_open, reads = Path.open, self

        def recording_open(p, *args, **kwargs):
            fh = real_open(p, *args, **kwargs)
            if Path(p) != path:
                return fh

            class Handle:
                def __enter__(self):
                    return self

                def __exit__(self, *exc):
                    fh.close()

                def read(self, n=-1):
                    text = fh.read(n)
                    reads.sizes.append(len(text))
                    return text

            return Handle()

        monkeypatch.setattr(Path, "open", recording_open)


def test_a_file_far_larger_than_a_chunk_is_never_read_whole(tmp_path, monkeypatch):
    """Items smaller than a chunk are read a chunk at a time, and an item is handed over once the
    chunks holding it are read, not the file: what a 2.7 GB LongMemEval M file needs."""
    items = [{"question_id": f"q{i}", "text": "x" * 900} for i in range(200)]  # ~180 KB
    path = _write(tmp_path, json.dumps(items))
    chunk = 4096
    reads = _Reads(monkeypatch, path)
    got = iter_json_list(path, "a list", chunk=chunk)
    assert next(got) == items[0]
    assert sum(reads.sizes) <= chunk < path.stat().st_size / 40
    for i, item in enumerate(got, 1):
        assert item == items[i]
        # Never more read than the items handed over and the chunk being decoded.
        assert sum(reads.sizes) <= len(json.dumps(items[:i + 1])) + chunk
    assert max(reads.sizes) <= chunk and len(reads.sizes) >= path.stat().st_size // chunk


def test_an_item_larger_than_a_chunk_grows_the_buffer_for_that_item_only(tmp_path, monkeypatch):
    """A question far larger than a chunk (an M haystack is ~5 MB) is read by doubling reads until
    it fits; the next items are read a chunk at a time again."""
    big = {"haystack_sessions": [[{"role": "user", "content": "y" * 1000}]] * 60}  # ~65 KB
    items = [big] + [{"n": i} for i in range(3000)]
    path = _write(tmp_path, json.dumps(items))
    chunk = 1024
    reads = _Reads(monkeypatch, path)
    got = iter_json_list(path, "a list", chunk=chunk)
    assert next(got) == big
    assert sum(reads.sizes) <= 2 * len(json.dumps(big)) + chunk  # doubling: at most about twice the item
    grown = len(reads.sizes)
    assert list(got) == items[1:]
    assert max(reads.sizes[grown:]) <= chunk
