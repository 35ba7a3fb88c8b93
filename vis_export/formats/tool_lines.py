"""Long tool output on paper: its first and last lines, and how many are left out.

A browser folds a long tool block away; a page cannot, and a 4,000-line log
took 70 of a session's 88 pages. So both PDF engines keep the first two thirds
and the last third of ``PDF_TOOL_LINES`` printed lines of each tool output (a
command's start says what ran, its end how it ended; the middle is where logs
repeat themselves) with a line saying how many are left out between them. 60
lines is about one page of 9-point code. Lines are counted as printed: one
longer than ``ROW_LENGTH`` characters wraps, and counts once per
``ROW_LENGTH``, so a megabyte on one line is cut too. ``--tool-output-limit N``
keeps ``N`` lines instead, ``all`` keeps every line; the other formats keep
their meaning of the option (the first ``N`` characters).
"""

from __future__ import annotations

from typing import NamedTuple

from vis_export.formats.options import ToolOutputLimit
from vis_export.formats.projector import ToolPart

PDF_TOOL_LINES = 60
ROW_LENGTH = 100  # characters of code on a line of a printed page, about (as ``html.ROW_LENGTH``)
LEFT_OUT_NOTE = "… {:,} lines of tool output left out …"


class Kept(NamedTuple):
    """What a page shows of one tool output: ``head``, ``left_out`` printed lines, ``tail``."""

    head: str
    left_out: int
    tail: str


def rows(text: str) -> list[int]:
    """Where each printed line of ``text`` starts (a final newline starts none, nor does empty text)."""
    starts: list[int] = []
    position = 0
    end = len(text)
    while position < end:
        newline = text.find("\n", position)
        line_end = end if newline < 0 else newline
        starts.extend(range(position, max(line_end, position + 1), ROW_LENGTH))
        position = line_end + 1
        if newline < 0:
            break
    return starts


def kept_lines(text: str, limit: int) -> Kept:
    """The first two thirds and the last third of ``limit`` printed lines of ``text``
    (all of it when it is no longer); what is kept is the stored text, unchanged."""
    starts = rows(text)
    if len(starts) <= limit:
        return Kept(text, 0, "")
    head_rows = -(-2 * limit // 3)
    tail_rows = limit - head_rows
    head_end = starts[head_rows] if head_rows else 0
    tail_start = starts[len(starts) - tail_rows] if tail_rows else len(text)
    return Kept(text[:head_end], len(starts) - head_rows - tail_rows, text[tail_start:])


def paper_part(part: ToolPart, limit: ToolOutputLimit) -> ToolPart:
    """A part of tool output as both PDF engines keep it (``limit`` in printed lines)."""
    if limit == "all":
        return part
    kept = kept_lines(part.text, PDF_TOOL_LINES if limit is None else limit)
    return part._replace(text=kept.head, left_out=kept.left_out, tail=kept.tail)
