"""Break opportunities in long runs of code without white space, for WeasyPrint.

WeasyPrint wraps a line of code with no space in it (``overflow-wrap:
anywhere``) by laying out what is left of its text again for every printed
line: a 100,000-character line took 48 s, a megabyte minutes. A ``<wbr>``
after every ``RUN`` characters of such a run bounds each piece it lays out,
so the time grows with the line, not its square, and the lines still fill the
page's width. ``<wbr>`` is an element, not a character: the text a PDF reader
extracts is the code's (R1), as with the Typst engine's wrap points
(``typst_tree.wrap``). A browser wraps long lines itself: only the print
projector adds them.
"""

from __future__ import annotations

import re

from markupsafe import Markup

from vis_export.redaction.rules import MARKERS

RUN = 200  # characters of a run between two break opportunities: a few printed lines
WBR = "<wbr>"
# A tag, a character reference, a redaction marker (kept whole: ``marked`` finds it by its text),
# a break opportunity (white space), or text.
_PIECE = re.compile(rf"(<[^>]*>)|(&#?\w+;|{MARKERS.pattern})|([ \t\n\r])|([^<&\[ \t\n\r]+|[\[&<])")
_LONG = re.compile(rf"[^ \t\n\r]{{{RUN + 1},}}")
_TAG = re.compile(r"<[^>]*>")


def breakable(html: Markup) -> Markup:
    """``html`` (escaped text and tags, as the highlighter writes it) with a ``<wbr>``
    wherever a run without white space would otherwise exceed ``RUN`` characters."""
    if not _LONG.search(_TAG.sub("", html)):  # a tag's own spaces (``<span class="s1">``) break no run
        return html
    pieces: list[str] = []
    run = 0
    for tag, atom, space, text in _PIECE.findall(html):
        if tag:
            pieces.append(tag)
        elif space:
            pieces.append(space)
            run = 0
        elif atom:  # one character, or a marker: never cut
            width = 1 if atom.startswith("&") else len(atom)
            if run and run + width > RUN:
                pieces.append(WBR)
                run = 0
            pieces.append(atom)
            run += width
        else:
            while text:
                if run == RUN:
                    pieces.append(WBR)
                    run = 0
                taken = text[: RUN - run]
                pieces.append(taken)
                run += len(taken)
                text = text[len(taken) :]
    return Markup("".join(pieces))
