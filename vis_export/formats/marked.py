"""Redaction markers styled in HTML (and so in WeasyPrint's PDF): they read as inserted, not as data.

Markers are plain text in the view (``[redacted: email 1]``), so every projection
shows them without knowing of redaction. Only a document made from a redacted
view is touched, after it is written: each marker in text (never inside a tag,
an attribute, the title, a style or a script) is wrapped in ``<span
class="redacted">``. A marker's text has nothing HTML escapes, so it is found
as it was written.
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


def styled(html: str) -> str:
    """``html`` with each marker in its text wrapped in a span of class ``redacted``."""
    if "[redacted: " not in html:
        return html
    parts = _PARTS.split(html)
    raw: str | None = None  # the element whose text is not markup (title, style, script, textarea)
    for index, part in enumerate(parts):
        if index % 2:  # a tag
            if raw is None:
                opened = _RAW.match(part)
                raw = opened.group(1).lower() if opened else None
            elif part.lower().startswith(f"</{raw}"):
                raw = None
        elif raw is None and "[redacted: " in part:
            parts[index] = MARKERS.sub(r'<span class="redacted">\g<0></span>', part)
    return "".join(parts)
