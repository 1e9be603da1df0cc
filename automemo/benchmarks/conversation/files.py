"""Reading a release from disk: JSON and JSON-lines files with errors that name the file (and
the line), image files that may be missing or git-LFS pointers (public copies of Mem-Gallery
often hold ~130-byte pointer text files where the JPGs should be) or only a URL, and sessions
put in date order."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable, Iterator, TypeVar
from urllib.parse import urlparse

from automemo.benchmarks.conversation.model import DatasetError

T = TypeVar("T")

_LFS_POINTER = b"version https://git-lfs"
_IMAGE_MAGIC = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a", b"RIFF")


def as_list(value: Any) -> list:
    """A release field that holds one value or a list of them (or nothing) as a list."""
    if value is None or value == "":
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise DatasetError(f"{path}: not a text file; expected {what}") from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not valid JSON ({exc}); expected {what}") from None


def iter_json_lines(path: Path, what: str) -> Iterator[tuple[int, Any]]:
    """The (line number, value) of every non-blank line of a JSON-lines file, numbered from 1 as
    an editor shows them. A line that is not UTF-8 or not valid JSON raises `DatasetError`
    naming the file, the line and the JSON error; `what` says what each line should hold."""
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise DatasetError(f"{path}: cannot be read ({exc})") from None
    with fh:
        for number, raw in enumerate(fh, 1):
            try:
                # utf-8-sig: an editor's byte-order mark at the start of the file is not text.
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError:
                raise DatasetError(f"{path} line {number}: not UTF-8 text; save the file as UTF-8; "
                                   f"each line must be {what}") from None
            if not line.strip():
                continue
            try:
                # Without its line break, a JSON error's column is where it is on the line.
                value = json.loads(line.rstrip("\r\n"))
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path} line {number}: not valid JSON ({exc.msg}, column {exc.colno}); "
                                   f"each line must be {what}") from None
            yield number, value


STREAM_CHUNK = 1 << 20
"""Characters read at a time by `iter_json_list` (doubled while one item does not fit)."""

_WHITESPACE = " \t\n\r"
_SCALAR_END = re.compile(r"[,\]\s]")


def iter_json_list(path: Path, what: str, chunk: int = STREAM_CHUNK) -> Iterator[Any]:
    """The items of a file holding one JSON list, one at a time, as `json.loads` would give them,
    holding about one item (and one chunk) in memory rather than the whole file: LongMemEval's M
    file is ~2.7 GB. Each item is decoded by `json.JSONDecoder.raw_decode` from a buffer that is
    refilled from the file, and grown while the item does not fit yet.

    Raises `DatasetError` "<path>: not <what>" when the top-level value is not a list (before any
    item), and one naming the file, the character offset and what to do when the text is not
    valid JSON or ends before the list closes (a truncated download)."""
    decoder = json.JSONDecoder()
    try:
        fh = path.open(encoding="utf-8")
    except OSError as exc:
        raise DatasetError(f"{path}: cannot be read ({exc})") from None
    with fh:
        buf, pos, base, eof = "", 0, 0, False  # base: file offset (in characters) of buf[0]

        def fill(at_least: int) -> bool:
            """Drop what was decoded and append at least `at_least` more characters; False at
            the end of the file."""
            nonlocal buf, pos, base, eof
            if eof:
                return False
            try:
                more = fh.read(max(at_least, chunk))
            except UnicodeDecodeError:
                raise DatasetError(f"{path}: not a text file (not UTF-8); expected {what}") from None
            if not more:
                eof = True
                return False
            base += pos
            buf, pos = buf[pos:] + more, 0
            return True

        def skip_space() -> str:
            """The next character that is not whitespace ("" at the end of the file)."""
            nonlocal pos
            while True:
                while pos < len(buf) and buf[pos] in _WHITESPACE:
                    pos += 1
                if pos < len(buf):
                    return buf[pos]
                if not fill(chunk):
                    return ""

        def truncated() -> DatasetError:
            return DatasetError(f"{path}: ends at character {base + len(buf)} before its list closes "
                                f"(a truncated or partial download?); download the file again. "
                                f"Expected {what}")

        first = skip_space()
        if first != "[":
            raise DatasetError(f"{path}: not {what}" + ("" if first else " (the file is empty)"))
        pos += 1
        expect_item = True  # after "[" or ",": an item (or "]" right after "[")
        count = 0
        while True:
            c = skip_space()
            if not c:
                raise truncated()
            if c == "]" and (count == 0 or not expect_item):
                pos += 1
                break
            if not expect_item:
                if c != ",":
                    raise DatasetError(f"{path}: not valid JSON at character {base + pos} (expected ',' "
                                       f"or ']' after item {count}); expected {what}")
                pos += 1
                expect_item = True
                continue
            if c not in '{["':
                # A number or literal ends only where a delimiter follows ("-1.5e-3" cut after
                # "-1.5" would decode as -1.5): read until one is in the buffer.
                while not _SCALAR_END.search(buf, pos) and fill(chunk):
                    pass
            while True:
                try:
                    item, end = decoder.raw_decode(buf, pos)
                except json.JSONDecodeError as exc:
                    # Incomplete or invalid: only more text can tell. Grow the buffer (doubling,
                    # so one large item costs a bounded number of re-decodes).
                    if fill(len(buf) - pos):
                        continue
                    if "Unterminated" in exc.msg or exc.pos >= len(buf.rstrip(_WHITESPACE)):
                        raise truncated() from None
                    raise DatasetError(f"{path}: not valid JSON at character {base + exc.pos} ({exc.msg}, "
                                       f"in item {count + 1}); expected {what}") from None
                break
            pos = end
            count += 1
            expect_item = False
            yield item
        if skip_space():
            raise DatasetError(f"{path}: not valid JSON at character {base + pos} (text after the list "
                               f"closes); expected {what}")


def readable_image(path: Path) -> bool:
    """True when `path` is an image file with pixels: not missing, not a git-LFS pointer, and
    starting like a JPG / PNG / GIF / WebP."""
    try:
        with path.open("rb") as fh:
            head = fh.read(32)
    except OSError:
        return False
    if head.startswith(_LFS_POINTER):
        return False
    return any(head.startswith(m) for m in _IMAGE_MAGIC)


def resolve_image(rel: str, base: Path, image_dir: Path | None) -> Path:
    """Where an image named in a release file lives. With `image_dir`, the file's last two path
    parts (`<scenario>/<name>.jpg`) are looked up under it, then its bare name; without, the
    path is relative to the JSON file that names it."""
    if image_dir is None:
        return (base / rel).resolve()
    parts = Path(rel.replace("\\", "/")).parts
    for tail in (parts[-2:], parts[-1:]):
        candidate = image_dir.joinpath(*tail)
        if candidate.exists():
            return candidate
    return image_dir.joinpath(*parts[-1:])


def url_image(url: str, image_dir: Path | None) -> Path | None:
    """The local file of an image a release names by URL (LoCoMo's `img_url`): nothing is
    fetched, so it is the file under `image_dir` named as the URL's last path part, when that is
    a readable image; else None (the image keeps its caption only)."""
    name = Path(urlparse(url).path).name
    if image_dir is None or not name:
        return None
    candidate = image_dir / name
    return candidate if readable_image(candidate) else None


def in_date_order(dated: Iterable[tuple[str, T]]) -> list[T]:
    """Items given as (date key, item) in release order, sorted by date as they happened. Keys
    must sort as the dates do (ISO strings); "" is undated: such an item keeps its place after
    the item released before it (it inherits its key), and ties keep release order."""
    last, keyed = "", []
    for position, (key, item) in enumerate(dated):
        last = key or last
        keyed.append((last, position, item))
    return [item for _, _, item in sorted(keyed, key=lambda x: (x[0], x[1]))]
