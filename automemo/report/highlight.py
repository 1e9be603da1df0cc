"""Python syntax highlighting for the node pages, with pygments (already a dependency of rich).

Each line gets an anchor (`#L-12`) so a diagnosis or a traceback line can be linked to.
"""

from __future__ import annotations

import functools

from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

CSS_CLASS = "hl"
STYLE = "friendly"   # a light style with strong contrast for keywords and strings


@functools.lru_cache(maxsize=1)
def _formatter() -> HtmlFormatter:
    return HtmlFormatter(
        cssclass=CSS_CLASS, style=STYLE, linenos="table", lineanchors="L", anchorlinenos=True
    )


def highlight_python(source: str) -> Markup:
    """The source as highlighted HTML (pygments escapes the text), lines numbered and linkable."""
    return Markup(highlight(source, PythonLexer(), _formatter()))


def highlight_css() -> str:
    """The token colours for `highlight_python` output, scoped to its container class."""
    return _formatter().get_style_defs(f".{CSS_CLASS}")
