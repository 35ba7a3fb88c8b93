"""The Markdown rules every format that writes Markdown goes through.

Each rule has exactly one home here: how long a fence is (R1), what an info
string may hold, how a string that is not Markdown is written so it renders as
itself (R4), and how a string is written as YAML.
"""

from __future__ import annotations

import html
import json
import re

from vis_export.strings import data_label, ended

_BACKTICK_RUNS = re.compile(r"`+")
_INLINE = re.compile(r"([\\`*_\[\]<>&~|$]|(?:^|(?<=\s))#)")
_LINE_START = re.compile(r"^(\d{1,9}(?=[.)])|(?=[-+=]))")
_AUTOLINK = re.compile(r"(?i)\b(?:https?|ftps?|mailto|file|data|javascript|vbscript|xmpp|irc):|\bwww\.|@")
_NEWLINES = re.compile(r"\r\n?|\n")
_NOT_PRINTABLE_IN_YAML = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")


def fence_for(text: str) -> str:
    """A backtick fence one longer than the longest backtick run in ``text`` (at least 3)."""
    longest = max((len(run) for run in _BACKTICK_RUNS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def info_string(language: str | None) -> str:
    """The fence's info string: the language with backticks, whitespace and control
    characters removed, and ``\\`` and ``&`` escaped so a parser reads the name back
    as written rather than as an escape or an entity."""
    if not language:
        return ""
    kept = "".join(ch for ch in language if ch != "`" and not ch.isspace() and ch.isprintable())
    return kept.replace("\\", "\\\\").replace("&", "\\&")


def fenced(text: str, language: str | None = None) -> str:
    """``text`` as a fenced code block whose content a CommonMark parser reads back
    exactly (plus the final newline the block needs)."""
    fence = fence_for(text)
    body = ended(text, ("\n", "\r"))
    return f"{fence}{info_string(language)}\n{body}{fence}\n"


def escape(text: str) -> str:
    """Inline text that renders as itself, lines kept: each line escaped as
    ``escape_one_line`` does (its spaces kept), and line breaks as hard breaks so
    no line can start a block of its own."""
    lines = [line.strip() for line in _NEWLINES.split(text)]
    return "\\\n".join(_inline(line) for line in lines if line)


def escape_one_line(text: str) -> str:
    """Inline text on one line (headings, labels) that renders as itself, with
    whitespace runs as one space.

    Only what could become structure is escaped, so ``gpt-5.6`` and ``/profile``
    read as written: the characters of emphasis, code, links, images, HTML,
    entities, strikethrough, tables and math; a ``#`` that could open or close
    a heading; a first character that could open a block (quote, list, setext
    underline); the ``:`` or ``.`` that makes a URL scheme or ``www.`` an
    autolink, and the ``@`` of an e-mail address. (Bare domains such as
    ``example.com``, which only some renderers link, are left as written.)
    Controls are written as ``\\uXXXX``, as in every label (``strings.data_label``): Markdown
    has no ``<bdi>`` a renderer keeps, so an override would reorder the words beside it.
    """
    return _inline(data_label(text))


def _inline(text: str) -> str:
    escaped = _LINE_START.sub(r"\1\\", _INLINE.sub(r"\\\1", text), count=1)
    return _AUTOLINK.sub(lambda m: m.group()[:-1] + "\\" + m.group()[-1], escaped)


def escape_html(text: str) -> str:
    """Text inside an HTML block of the Markdown (``<summary>``): entities, a label
    (``strings.data_label``: one line, controls as ``\\uXXXX``)."""
    return html.escape(data_label(text), quote=True)


def yaml_string(text: str) -> str:
    """A YAML double-quoted scalar for any string: JSON's escapes are YAML's, and the
    characters YAML will not take literally are escaped as well."""
    quoted = json.dumps(text, ensure_ascii=False)
    return _NOT_PRINTABLE_IN_YAML.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
