"""Redaction markers styled in HTML (and so in WeasyPrint's PDF): they read as inserted, not as data.

Markers are plain text in the view (``[redacted: email 1]``), so every projection
shows them without knowing of redaction. Only a document made from a redacted
view is touched, after it is written: each marker in text (never inside a tag,
an attribute, the title, a style or a script) is wrapped in ``<span
class="redacted">``. A marker's text has nothing HTML escapes, so it is found
as it was written. In highlighted code a lexer cuts a marker into tokens (its
number is a number token): the token spans inside a marker are moved out of it,
the text between them kept as it is (R1), so the marker is one span there too.
"""

from __future__ import annotations

import re

from vis_export.redaction.rules import MARKERS

STYLE = (
    "\n.redacted{font-style:italic;background:rgba(127,127,127,.18);border-radius:3px;padding:0 .2em;"
    "white-space:nowrap}\n"
)
# A tag (quoted attribute values may hold '>'), or a run of text.
_PARTS = re.compile(r"""(<[A-Za-z/!?](?:[^>"']|"[^"]*"|'[^']*')*>)""")
_RAW = re.compile(r"<(title|style|script|textarea)\b", re.IGNORECASE)
# The tags a marker may be cut by: a highlighter's token spans, and word-break points.
_CROSSABLE = re.compile(r"</?span\b[^>]*>|<wbr\s*/?>", re.IGNORECASE)
_OPEN = '<span class="redacted">'


def styled(html: str) -> str:
    """``html`` with each marker in its text wrapped in a span of class ``redacted``."""
    if "redacted" not in html:
        return html
    parts = _PARTS.split(html)
    raw: str | None = None  # the element whose text is not markup (title, style, script, textarea)
    stretch: list[int] = []  # the parts of a stretch of text that only crossable tags cut
    for index, part in enumerate(parts):
        if index % 2 == 0:
            if raw is None:
                stretch.append(index)
            continue
        if raw is None:
            opened = _RAW.match(part)
            raw = opened.group(1).lower() if opened else None
            if raw is None and _CROSSABLE.fullmatch(part):
                stretch.append(index)
                continue
        elif part.lower().startswith(f"</{raw}"):
            raw = None
        _mark(parts, stretch)
        stretch = []
    _mark(parts, stretch)
    return "".join(parts)


def _mark(parts: list[str], stretch: list[int]) -> None:
    """Wrap each marker in the text of ``stretch`` (indices of ``parts``: odd ones
    are crossable tags). A tag inside a marker goes out of it: a close before the
    marker, an open after it, an open and its close both; a word-break point goes."""
    if len(stretch) == 1:  # text no tag cuts, the usual case
        parts[stretch[0]] = MARKERS.sub(_OPEN + r"\g<0></span>", parts[stretch[0]])
        return
    text = "".join(parts[index] for index in stretch if index % 2 == 0)
    markers = [found.span() for found in MARKERS.finditer(text)]
    if not markers:
        return
    out: list[str] = []
    at = 0  # where in ``text`` the next part starts
    which = 0  # the next marker, or the one being written
    slot = -1  # where the open of the marker being written goes in ``out``, -1 outside one
    cut: list[str] = []  # the tags inside the marker being written

    def close() -> None:
        nonlocal slot, which, cut
        opens: list[str] = []
        closes = 0
        for tag in cut:
            if tag.startswith("</"):
                if opens:
                    opens.pop()
                else:
                    closes += 1
            elif tag.lower().startswith("<span"):
                opens.append(tag)
        out[slot] = "</span>" * closes + _OPEN
        out.append("</span>" + "".join(opens))
        slot, which, cut = -1, which + 1, []

    for index in stretch:
        part = parts[index]
        parts[index] = ""
        if index % 2:
            (cut if slot >= 0 else out).append(part)
            continue
        cursor = 0
        while cursor < len(part):
            here = at + cursor
            if slot < 0 and which < len(markers) and markers[which][0] == here:
                slot = len(out)
                out.append("")
            if slot >= 0:
                stop = min(len(part), markers[which][1] - at)
            else:
                stop = min(len(part), markers[which][0] - at) if which < len(markers) else len(part)
            out.append(part[cursor:stop])
            cursor = stop
            if slot >= 0 and at + cursor == markers[which][1]:
                close()
        at += len(part)
    parts[stretch[0]] = "".join(out)
