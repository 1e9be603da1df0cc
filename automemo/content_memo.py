"""Functions of program texts computed once per text: a search reads every program of its tree
again at every step (the generator parses them, the live report highlights and diffs them), and a
committed program never changes. A program with a fitted ranking stage carries its constants
(about 480 000 characters), so reading every one again at every step cost more CPU than the
search's evaluations on the dev data (docs/discovery.md). Results are kept by the texts'
SHA-256 (no copy of a text is held), at most `ENTRIES` per function, the least recently used
dropped first.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections import OrderedDict
from typing import Any, Callable, TypeVar

ENTRIES = 128
"""Results each memoised function keeps: more than the programs of a 100-step search's tree."""

T = TypeVar("T")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def by_content(fn: Callable[..., T] | None = None, *, ignore: tuple[str, ...] = ()) -> Any:
    """`fn` of text arguments (None allowed) and hashable keywords, memoised by the texts'
    digests and the keywords; keywords named in `ignore` (a parse of the same text the caller
    has already) are passed on but are no part of the key."""
    if fn is None:
        return functools.partial(by_content, ignore=ignore)
    cache: OrderedDict[tuple, Any] = OrderedDict()
    lock = threading.Lock()

    @functools.wraps(fn)
    def wrapper(*texts: str | None, **kwargs: Any) -> T:
        key = (tuple(None if t is None else digest(t) for t in texts),
               tuple(sorted((k, v) for k, v in kwargs.items() if k not in ignore)))
        with lock:
            if key in cache:
                cache.move_to_end(key)
                return cache[key]
        value = fn(*texts, **kwargs)
        with lock:
            cache[key] = value
            while len(cache) > ENTRIES:
                cache.popitem(last=False)
        return value

    wrapper.cache_clear = cache.clear  # type: ignore[attr-defined]
    return wrapper
