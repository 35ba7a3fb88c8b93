"""An RE2 expression read on JSON text: what finds in a string's JSON text what it finds in the string.

The prefilter searches each message's JSON text for ``rules.TRIGGERS`` read so
(``json_form``), so that a trigger is written once, in ``rules``. JSON writes a
quote, a backslash and the control characters escaped (``\\"``, ``\\n``,
``\\u001f``) and every other character as itself: each piece of an expression
that stands for one character (a literal, an escape such as ``\\s``, a class)
is read as the characters it matches that JSON writes as themselves, or the
escapes of those it escapes. A string's start (``^``) is after its opening
quote. The detector searches many strings joined by ``detect.SEPARATOR``, which
a piece may match before or after a string (``(?:^|[^A-Za-z0-9_-])pin``,
``Bearer\\s``): where a string starts or ends JSON text has a quote, so such a
piece matches a quote too. What cannot be read alike (an assertion such as
``\\b`` or ``$``, ``.``, a flag other than ``i``, a look-around) is refused: the
trigger fails where it is written, not by a message left unwalked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import msgspec
import re2

from vis_export.redaction.detect import SEPARATOR

# How JSON writes each character it escapes (all ASCII: any other one it writes as itself, in UTF-8).
_WRITTEN = {
    char: written[1:-1]
    for char in map(chr, range(128))
    if (written := msgspec.json.encode(char).decode()) != f'"{char}"'
}
_ESCAPED = "".join(_WRITTEN)
# The pieces of an expression: one character's (a class, an escape, a literal), a string's start,
# and what stays as it is (a group's opening, its end, an alternative's bar, a repeat).
_PIECE = re.compile(
    r"(?P<one>\[\^?\]?(?:\\.|[^\]\\])*\]|\\[^0-9A-Za-z]|\\[dDsSwWtnfr]|[^\\.$\[\]{}()^|*+?])"
    r"|(?P<start>\^)"
    r"|(?P<syntax>\((?:\?i?:)?(?!\?)|\)|\||[*+?]|\{\d+(?:,\d*)?\})",
    re.DOTALL,
)
# A class's items: a class escape (``\s``), or a character or a range of them.
_ITEM = re.compile(r"\\([dsw])|(\\.|[^\\])(?:-(\\.|[^\\]))?", re.DOTALL)
_CONTROLS = {"t": "\t", "n": "\n", "f": "\f", "r": "\r"}


def json_form(pattern: str) -> str:
    """``pattern`` read on JSON text (RE2 syntax both): it finds something in a string's JSON text
    wherever ``pattern`` finds something in the string (or starts or ends at a separator beside it)."""
    out, at = [], 0
    for piece in _PIECE.finditer(pattern):
        if piece.start() != at:
            break
        at = piece.end()
        kind, text = piece.lastgroup, piece.group()
        out.append(_one_character(text) if kind == "one" else '"' if kind == "start" else text)
    if at != len(pattern):
        raise ValueError(f"{pattern!r}: cannot be read on JSON text at {pattern[at : at + 10]!r}")
    return "".join(out)


def _one_character(piece: str) -> str:
    """A piece that matches one character, read on JSON text."""
    if piece[-1] not in _WRITTEN and (len(piece) == 1 or len(piece) == 2 and not piece[1].isalnum()):
        return piece  # a character JSON writes as itself: most are
    escaped = [match.group() for match in re2.finditer(piece, _ESCAPED)]
    if not escaped:
        return piece
    forms = [_as_itself(piece), *_escapes(escaped), '"' if SEPARATOR in escaped else ""]
    return "(?:" + "|".join(form for form in forms if form) + ")"


def _escapes(chars: list[str]) -> Iterator[str]:
    """The escapes JSON writes ``chars`` as: ``\\n`` and its kind, and ``\\u00XX``."""
    forms = [_WRITTEN[char] for char in chars]
    assert all(len(form) == 2 or form.startswith("\\u00") and len(form) == 6 for form in forms), forms
    if short := "".join(re.escape(form[1]) for form in forms if len(form) == 2):
        yield rf"\\[{short}]"
    if codes := "|".join(form[4:] for form in forms if len(form) == 6):
        yield rf"\\u00(?:{codes})"


def _as_itself(piece: str) -> str:
    """The class of what ``piece`` matches that JSON writes as itself ("": nothing)."""
    negated, body = _class(piece)
    escapes, ranges = _items(body)
    points = sorted(map(ord, _WRITTEN))
    if negated:
        return "[^" + "".join(escapes) + _ranges([*ranges, *((point, point) for point in points)]) + "]"
    if r"\s" in escapes:  # of the blanks, JSON writes only the space as itself
        escapes.remove(r"\s")
        ranges.append((0x20, 0x20))
    body = "".join(escapes) + _ranges(list(_without(ranges, points)))
    return f"[{body}]" if body else ""


def _class(piece: str) -> tuple[bool, str]:
    """``piece`` as a class: whether it is negated, and its items."""
    if piece.startswith("["):
        return piece.startswith("[^"), piece[2:-1] if piece.startswith("[^") else piece[1:-1]
    if piece in (r"\S", r"\D", r"\W"):
        return True, piece.lower()
    return False, piece


def _items(body: str) -> tuple[list[str], list[tuple[int, int]]]:
    """A class's class escapes, and its characters as ranges of code points."""
    escapes, ranges, at = [], [], 0
    for item in _ITEM.finditer(body):
        assert item.start() == at, body
        at = item.end()
        if item.group(1):
            escapes.append(item.group())
        else:
            first = _character(item.group(2))
            ranges.append((first, _character(item.group(3)) if item.group(3) else first))
    assert at == len(body), body
    return escapes, ranges


def _character(text: str) -> int:
    if len(text) == 1:
        return ord(text)
    if text[1] in _CONTROLS:
        return ord(_CONTROLS[text[1]])
    if text[1].isalnum():
        raise ValueError(f"{text!r} in a class cannot be read on JSON text")
    return ord(text[1])


def _without(ranges: list[tuple[int, int]], points: list[int]) -> Iterator[tuple[int, int]]:
    for first, last in ranges:
        for point in points:
            if first <= point <= last:
                if first < point:
                    yield first, point - 1
                first = point + 1
        if first <= last:
            yield first, last


def _ranges(ranges: list[tuple[int, int]]) -> str:
    """Ranges of code points as a class's items, those that touch made one."""
    merged: list[tuple[int, int]] = []
    for first, last in sorted(ranges):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(last, merged[-1][1]))
        else:
            merged.append((first, last))
    return "".join(rf"\x{{{first:x}}}" + (rf"-\x{{{last:x}}}" if last > first else "") for first, last in merged)
