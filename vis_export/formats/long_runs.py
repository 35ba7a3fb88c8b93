"""Break opportunities in long runs of code without white space, for WeasyPrint.

WeasyPrint wraps a line of code with no space in it (``overflow-wrap:
anywhere``) by laying out what is left of its text again for every printed
line: a 100,000-character line took 48 s, a megabyte minutes. And it breaks
such a run only where a text node starts a printed line: a run of highlighted
tokens (a span each) ran past the page's edge, and a plain one left a short
line wherever a bounded piece began mid-line (91, 91, 20 characters).

So a run longer than ``LONG`` characters gets a break opportunity every
``STEP`` characters: each piece WeasyPrint lays out is bounded, so the time
grows with the line, not its square, and a printed line holds as many pieces
as fit, short of full by less than a piece. ``STEP`` divides the A4 code
column (91 characters of 9 pt DejaVu Sans Mono): those lines come out full.
The opportunity is a zero-width space in the text, which a ``<wbr>`` is too
(WeasyPrint draws ``wbr::before`` as one), without an element and its pseudo-
element per piece; every ``NODE``-th is a ``<wbr>`` all the same, since
WeasyPrint copies the rest of a text node for each printed line (a line of a
million characters took minutes in one node). Neither is drawn as a glyph, so
the text a PDF reader extracts is the code's (R1), as with the Typst engine's
wrap points (``typst_tree.wrap``). A browser wraps long lines itself: only
the print projector adds them.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from markupsafe import Markup

from vis_export.redaction.rules import MARKERS

LONG = 64  # a run up to this long wraps as CSS wraps it: whole onto the next line, broken only if longer than one
STEP = 7  # characters between two break opportunities of a longer run (91 = 13 x 7)
BREAK = "\u200b"  # zero-width space: a break opportunity that is not drawn
NODE = 28  # every this many breaks, a ``<wbr>``: a text node WeasyPrint copies whole for each printed line stays short
WBR = "<wbr>"
# A tag, a character reference, a redaction marker (kept whole: ``marked`` finds it by its text),
# a break opportunity (white space, a carriage return included, which the highlighter writes as
# ``&#13;``), or text.
_PIECE = re.compile(rf"(<[^>]*>)|((?!&#13;)&#?\w+;|{MARKERS.pattern})|([ \t\n\r]|&#13;)|([^<&\[ \t\n\r]+|[\[&<])")
_LONG = re.compile(rf"[^ \t\n\r]{{{LONG + 1},}}")
_TAG = re.compile(r"<[^>]*>")


def breakable(html: Markup) -> Markup:
    """``html`` (escaped text and tags, as the highlighter writes it) with a ``BREAK``
    every ``STEP`` characters of each run without white space longer than ``LONG``,
    never inside a redaction marker, even one a highlighter's token spans cut."""
    if not _LONG.search(_TAG.sub("", html)):  # a tag's own spaces (``<span class="s1">``) break no run
        return html
    found = _PIECE.findall(html)
    markers = [marker.span() for marker in MARKERS.finditer(_TAG.sub("", html))]  # in text without tags
    pieces: list[str] = []
    at = 0  # where the next piece starts in the text without tags
    long_run: bool | None = None  # whether the run being written is long; None between runs
    since = 0  # characters of a long run since its last break opportunity
    breaks = 0  # break opportunities written
    for index, (tag, atom, space, text) in enumerate(found):
        if tag:
            pieces.append(tag)
            continue
        if space:
            pieces.append(space)
            at += 1
            long_run, since = None, 0
            continue
        if long_run is None:
            long_run = _longer(found, index)
        for taken in _pieces(atom, text, since if long_run else -1):
            if long_run and since and since + _width(taken) > STEP and not _inside(markers, at):
                breaks += 1
                pieces.append(WBR if breaks % NODE == 0 else BREAK)
                since = 0
            pieces.append(taken)
            at += len(taken)
            since += _width(taken)
    return Markup("".join(pieces))


def _pieces(atom: str, text: str, since: int) -> list[str]:
    """An atom whole; text cut at each ``STEP`` from the last break (``since`` -1: not cut)."""
    if atom or since < 0:
        return [atom or text]
    first = max(STEP - since, 0)
    return [piece for piece in [text[:first], *(text[i : i + STEP] for i in range(first, len(text), STEP))] if piece]


def _width(piece: str) -> int:
    return 1 if piece.startswith("&") else len(piece)


def _inside(markers: list[tuple[int, int]], at: int) -> bool:
    """Whether ``at`` falls inside one of ``markers`` (in order, none overlapping)."""
    before = bisect_left(markers, (at, at)) - 1  # the last marker that starts before ``at``
    return before >= 0 and at < markers[before][1]


def _longer(found: list[tuple[str, str, str, str]], start: int) -> bool:
    """Whether the run that starts at ``found[start]`` is longer than ``LONG`` (a reference is one character)."""
    length = 0
    for index in range(start, len(found)):
        _, atom, space, text = found[index]
        if space:
            break
        length += 1 if atom.startswith("&") else len(atom or text)
        if length > LONG:
            return True
    return False
