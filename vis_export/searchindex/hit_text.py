"""Hits as a person reads them: on a terminal, or through a pipe.

Code is full of ``**``, so on a terminal the matches are shown in bold reverse
video instead. The snippet's data is escaped first (R6: no control character
from data reaches the terminal) and only then are the markers added around
each match: the only escape sequences written are these, never data's. A pipe
or a file gets the text as it is, with the matches marked ``**so**``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vis_export.strings import single_line
from vis_export.terminal import escaped

if TYPE_CHECKING:
    from vis_export.searchindex import Hit

MATCH_START, MATCH_END = "\x1b[1;7m", "\x1b[0m"  # bold and reverse video on; all attributes off
TITLE_WIDTH = 60
INDENT = "    "


def hit_text(hit: Hit, terminal: bool) -> str:
    """A heading line (where the hit is, what it is, its score and its session's
    title), then the snippet's lines, indented."""
    title = single_line(hit.session_title)
    if len(title) > TITLE_WIDTH:
        title = title[: TITLE_WIDTH - 1] + "…"
    kind = hit.block_type + (f" ({hit.language})" if hit.language else "")
    heading = f"{hit.session_id} {hit.message_id} {hit.block_id}  {hit.role} {kind}  {hit.score:.2f}"
    heading += f"  {title}" if title else ""
    if terminal:
        snippet = hit.marks.marked(lambda match: f"{MATCH_START}{escaped(match)}{MATCH_END}", escaped)
        heading = escaped(heading)
    else:
        snippet = hit.snippet
    return "\n".join([heading, *(INDENT + line for line in snippet.split("\n"))])
