"""Python syntax highlighting for the node pages, with pygments (already a dependency of rich).

Each line gets an anchor (`#L-12`) so a diagnosis or a traceback line can be linked to.
"""

from __future__ import annotations

import functools
import zlib

from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from automemo.content_memo import by_content

CSS_CLASS = "hl"
STYLE = "friendly"   # a light style with strong contrast for keywords and strings


@functools.lru_cache(maxsize=1)
def _formatter() -> HtmlFormatter:
    return HtmlFormatter(
        cssclass=CSS_CLASS, style=STYLE, linenos="table", lineanchors="L", anchorlinenos=True
    )


def highlight_python(source: str) -> Markup:
    """The source as highlighted HTML (pygments escapes the text), lines numbered and linkable."""
    return Markup(zlib.decompress(_highlighted(source)).decode())


@by_content
def _highlighted(source: str) -> bytes:
    """Highlighted once per text (a live report shows every node's program at every step), kept
    compressed: a ranked program's page is 4 MB of HTML, 0.2 MB compressed."""
    return zlib.compress(highlight(source, PythonLexer(), _formatter()).encode(), 1)


def highlight_css() -> str:
    """The token colours for `highlight_python` output, scoped to its container class."""
    return _formatter().get_style_defs(f".{CSS_CLASS}")
