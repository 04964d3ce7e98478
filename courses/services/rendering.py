"""Lesson Markdown to safe HTML: markdown-it-py with tables, Pygments for code, nh3 to sanitise.

Rendered once, at import or when an instructor saves a lesson in the admin, and stored in
`Lesson.body_html`; the lesson page only prints it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markdown_it.token import Token
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

ALLOWED_TAGS = {
    "p", "br", "hr", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote",
    "a", "em", "strong", "code", "pre", "span", "div", "del", "sup", "sub",
    "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "span": {"class"},
    "code": {"class"},
    # tabindex, role and aria-label come only from the renderer below (raw HTML is escaped):
    # a box that scrolls sideways must be reachable by keyboard and named for screen readers.
    "pre": {"class", "tabindex"},
    "div": {"class", "tabindex", "role", "aria-label"},
    "ol": {"start"},
}
URL_SCHEMES = {"http", "https", "mailto"}


def _highlight(code: str, lang: str, attrs: str) -> str:
    """A fenced block in a known language becomes Pygments spans; others fall back to escaping."""
    if not lang:
        return ""
    try:
        lexer = get_lexer_by_name(lang)
    except ClassNotFound:
        return ""
    name = lexer.aliases[0] if lexer.aliases else "text"
    spans = highlight(code, lexer, HtmlFormatter(nowrap=True))
    return f'<pre class="highlight" tabindex="0"><code class="language-{name}">{spans}</code></pre>'


TABLE_OPEN = (
    '<div class="table-wrap" tabindex="0" role="region" aria-label="Table, scrolls sideways">\n'
    "<table>\n"
)


def _table_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    # Wide comparison tables scroll sideways on a phone instead of overflowing the page.
    return TABLE_OPEN


def _table_close(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    return "</table>\n</div>\n"


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"highlight": _highlight, "html": False}).enable("table")
    md.add_render_rule("table_open", _table_open)
    md.add_render_rule("table_close", _table_close)
    return md


_MD = _parser()


def html_sanitise(*, html: str) -> str:
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer",
    )


def markdown_render(*, text: str) -> str:
    """Markdown in, sanitised HTML out. Raw HTML in the source is escaped, then nh3 has the last word."""
    return html_sanitise(html=_MD.render(text))
