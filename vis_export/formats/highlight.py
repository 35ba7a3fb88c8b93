"""Code highlighting with Pygments that keeps every character of the code (R1).

Pygments' usual entry point rewrites the text (CRLF and CR become LF, a BOM
and, by option, blank lines and tabs go), so tokens come from the raw text and
must add up to it exactly (``lexing.token_runs``); ``lexing`` also bounds the
time a lexer may take. Only a handful of token kinds get a colour class, and
adjacent tokens of one kind share one span. A CR is written as ``&#13;``,
since an HTML parser turns a literal CR into LF.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

from vis_export.formats import lexing

# What each colour class looks like, in the light theme: the stylesheet's token
# rules are written from this table, and a pasted fragment (the clipboard's
# text/html, which a document or a chat keeps without any stylesheet) carries
# the same declarations inline.
TOKEN_COLOURS = {
    "k": "#cf222e",
    "s": "#0a3069",
    "c": "#59636e",
    "m": "#0550ae",
    "nf": "#8250df",
    "nb": "#953800",
    "nt": "#116329",
    "gd": "#82071e",
    "gi": "#116329",
}
TOKEN_STYLES = {
    "k": "color:var(--k)",
    "s": "color:var(--s)",
    "c": "color:var(--c);font-style:italic",
    "m": "color:var(--m)",
    "nf": "color:var(--nf)",
    "nc": "color:var(--nf)",
    "nd": "color:var(--nf)",
    "nb": "color:var(--nb)",
    "nt": "color:var(--nt)",
    "na": "color:var(--m)",
    "gd": "color:var(--gd)",
    "gi": "color:var(--gi)",
    "gh": "font-weight:bold",
}
_VARIABLE = re.compile(r"var\(--(\w+)\)")


def inline_style(css_class: str) -> str:
    """A colour class's declarations with the light theme's colours written in."""
    return _VARIABLE.sub(lambda match: TOKEN_COLOURS[match.group(1)], TOKEN_STYLES[css_class])


def _style_attribute(css: str) -> str:
    return f'style="{inline_style(css)}"'


def _class_attribute(css: str) -> str:
    return f'class="{css}"'


def _html_text(escaped: str) -> str:
    # A parser turns a literal CR into LF, and drops NUL: a character reference
    # keeps the CR; NUL, which HTML text cannot hold, shows as U+FFFD.
    return escaped.replace("\r", "&#13;").replace("\x00", "\ufffd")


def plain(text: str) -> Markup:
    """Escaped code, CRs kept as ``&#13;``."""
    return Markup(_html_text(str(escape(text))))


def highlight(
    text: str, language: str | None, inline: bool = False, budget: lexing.HighlightBudget | None = None
) -> Markup:
    """HTML for the inside of ``<code>``: coloured spans when the language is known
    and its lexer keeps within its budget, escaped text otherwise. Its text content
    is ``text``, exactly. ``inline``: styles in the spans, not classes; ``budget``:
    the document's lexing (``lexing.HighlightBudget``)."""
    runs = lexing.runs(language, text, budget) if language and text else None
    if runs is None:
        return plain(text)
    attribute = _style_attribute if inline else _class_attribute
    spans = (f"<span {attribute(css)}>{escape(value)}</span>" if css else str(escape(value)) for css, value in runs)
    return Markup(_html_text("".join(spans)))
