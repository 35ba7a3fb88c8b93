"""Code highlighting with Pygments that keeps every character of the code (R1).

Pygments' usual entry point rewrites the text (CRLF and CR become LF, a BOM
and, by option, blank lines and tabs go), so tokens come from the raw text and
must add up to it exactly (``lexing.token_runs``); ``lexing`` also bounds the
time a lexer may take. Only a handful of token kinds get a colour class, and
adjacent tokens of one kind share one span. A CR is written as ``&#13;``,
since an HTML parser turns a literal CR into LF.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from vis_export.formats import lexing


def _html_text(escaped: str) -> str:
    # A parser turns a literal CR into LF, and drops NUL: a character reference
    # keeps the CR; NUL, which HTML text cannot hold, shows as U+FFFD.
    return escaped.replace("\r", "&#13;").replace("\x00", "\ufffd")


def plain(text: str) -> Markup:
    """Escaped code, CRs kept as ``&#13;``."""
    return Markup(_html_text(str(escape(text))))


def highlight(text: str, language: str | None) -> Markup:
    """HTML for the inside of ``<code>``: coloured spans when the language is known
    and its lexer keeps within its budget, escaped text otherwise. Its text content
    is ``text``, exactly."""
    runs = lexing.runs(language, text) if language and text else None
    if runs is None:
        return plain(text)
    spans = (f'<span class="{css}">{escape(value)}</span>' if css else str(escape(value)) for css, value in runs)
    return Markup(_html_text("".join(spans)))
