"""String rules every output shares, each with one home: line endings, one-line
text, a final newline, lone surrogates (which JSON can carry and UTF-8
cannot), and the columns a text takes on a terminal."""

from __future__ import annotations

import re
import unicodedata

from vis_export.terminal import escaped

_LINE_END = re.compile(r"\r\n?")
_TRAILING = re.compile(r"[ \t]+$", re.MULTILINE)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lf(text: str) -> str:
    """LF line endings (a CR or CRLF ends a line in Markdown too)."""
    return _LINE_END.sub("\n", text) if "\r" in text else text


def clean(text: str) -> str:
    """LF line endings and no trailing spaces: for everything but code."""
    text = lf(text)
    if " \n" in text or "\t\n" in text or text.endswith((" ", "\t")):  # most text has none: no scan
        return _TRAILING.sub("", text)
    return text


def single_line(text: str) -> str:
    """``text`` on one line: every run of whitespace (newlines too) one space."""
    return " ".join(text.split())


def data_label(text: str) -> str:
    """A short string from the data shown beside the format's own words (a title, an
    author, a model, a tool's name): on one line, each control written as ``\\uXXXX``.

    A bidirectional override or isolate in a name would reorder the words beside it
    (show the status after it reversed), and a lone isolate's end (U+2069) closes
    HTML's ``<bdi>`` early; escaped, the reader sees that the name holds one. HTML also
    puts each label in a ``<bdi>``, so that right-to-left letters, which are no attack,
    cannot move the numbers and marks beside them either."""
    return escaped(single_line(text))


def ended(text: str, endings: tuple[str, ...] = ("\n",)) -> str:
    """``text`` ending with a newline, unless it is empty or already ends a line."""
    return text if not text or text.endswith(endings) else text + "\n"


def surrogates_replaced(text: str) -> str:
    """Each lone surrogate as U+FFFD: what text output shows of one."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def surrogates_escaped(text: str) -> str:
    """Each lone surrogate as a ``\\uXXXX`` escape: what JSON output keeps of one."""
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def columns(text: str) -> int:
    """The columns ``text`` takes on a terminal: two for a wide character (CJK,
    most emoji), none for a combining mark or a format character."""
    if text.isascii():
        return len(text)
    return sum(map(_char_columns, text))


def _char_columns(char: str) -> int:
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return 2
    return 0 if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf") else 1


def shortened(text: str, width: int) -> str:
    """``text`` in at most ``width`` columns: cut with ``…`` where it is wider."""
    if columns(text) <= width:
        return text
    kept, used = [], 0
    for char in text:
        if used + _char_columns(char) > width - 1:
            break
        kept.append(char)
        used += _char_columns(char)
    return "".join(kept) + "…"


def fit(text: str, width: int) -> str:
    """``text`` in exactly ``width`` columns: padded with spaces, or cut with ``…``."""
    text = shortened(text, width)
    return text + " " * (width - columns(text))
