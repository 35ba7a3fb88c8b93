"""Code highlighting with Pygments that keeps every character of the code (R1).

Pygments' usual entry point rewrites the text (CRLF and CR become LF, a BOM
and, by option, blank lines and tabs go), so tokens come from the raw text
(``get_tokens_unprocessed``) and are checked to add up to it. Only a handful
of token kinds get a colour class: far fewer inline boxes for a browser or
WeasyPrint to lay out, and adjacent tokens of one kind merge into one span.
A CR is written as ``&#13;``, since an HTML parser turns a literal CR into LF.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from markupsafe import Markup, escape

# Coarse classes, from the most specific token type to the least.
_CLASSES = (
    ("Comment", "c"), ("Literal.String", "s"), ("Literal.Number", "m"), ("Keyword", "k"),
    ("Name.Builtin", "nb"), ("Name.Function", "nf"), ("Name.Class", "nc"), ("Name.Decorator", "nd"),
    ("Name.Tag", "nt"), ("Name.Attribute", "na"), ("Operator.Word", "k"), ("Generic.Deleted", "gd"),
    ("Generic.Inserted", "gi"), ("Generic.Heading", "gh"), ("Generic.Subheading", "gh"), ("Error", ""),
)


@lru_cache(maxsize=None)
def _class_of(ttype: Any) -> str:
    name = str(ttype)[len("Token."):]
    for prefix, css in _CLASSES:
        if name == prefix or name.startswith(prefix + "."):
            return css
    return ""


@lru_cache(maxsize=64)
def _lexer(language: str) -> Any:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(language.lower(), stripnl=False, ensurenl=False, tabsize=0)
    except ClassNotFound:
        return None


def _html_text(escaped: str) -> str:
    # A parser turns a literal CR into LF, and drops NUL: a character reference
    # keeps the CR; NUL, which HTML text cannot hold, shows as U+FFFD.
    return escaped.replace("\r", "&#13;").replace("\x00", "\ufffd")


def plain(text: str) -> Markup:
    """Escaped code, CRs kept as ``&#13;``."""
    return Markup(_html_text(str(escape(text))))


def highlight(text: str, language: str | None) -> Markup:
    """HTML for the inside of ``<code>``: coloured spans when the language is known,
    escaped text otherwise. Its text content is ``text``, exactly."""
    lexer = _lexer(language) if language else None
    if lexer is None or not text:
        return plain(text)
    pieces: list[str] = []
    current, run = "", []  # type: tuple[str, list[str]]  # merge adjacent tokens that share a class
    total = 0
    for _, ttype, value in lexer.get_tokens_unprocessed(text):
        total += len(value)
        css = _class_of(ttype)
        if css != current:
            _flush(pieces, current, run)
            current, run = css, []
        run.append(value)
    _flush(pieces, current, run)
    html = "".join(pieces)
    if total != len(text):  # a lexer that loses or adds text: show the code as it is
        return plain(text)
    return Markup(_html_text(html))


def _flush(pieces: list[str], css: str, run: list[str]) -> None:
    if not run:
        return
    text = str(escape("".join(run)))
    pieces.append(f'<span class="{css}">{text}</span>' if css else text)
