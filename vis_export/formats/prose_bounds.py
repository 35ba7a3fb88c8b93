"""Prose with more list items and table cells than a page engine lays out in time,
shown as its text (R6).

Both PDF engines spend time and memory on every list item and table cell:
WeasyPrint took 87 s and 1.6 GB for a list of 40,000 items, 143 s for a table
of 20,000 rows; Typst, which lays a block out whole, peaked at 1.7 GB on a
table of 60,000 rows. A block of more than ``MAX_BLOCK_PIECES`` items and cells,
or one that would take a document past ``MAX_DOCUMENT_PIECES``, is shown as its
Markdown text instead, after a note that says so: nothing is dropped. The text
flows in paragraphs of at most ``FLOW_CHARS``, with a mark where each of its
lines ends: a line apiece (or a ``<pre>``) cost WeasyPrint a line box each,
about as much as the list itself, and a paragraph grows slower than linearly
with its length.

The check is a mistune hook that runs after the block parse and before any
inline parse or rendering, on the tokens both engines render from (``html_prose``
for WeasyPrint, ``typst_tree`` for Typst). An HTML page, which a browser lays out
lazily, keeps its lists (100,000 items: about 10 s).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

MAX_BLOCK_PIECES = 2000
MAX_DOCUMENT_PIECES = 6000
FLOW_CHARS = 4000
LINE_MARK = " \u21b5"  # ↵, where a line of the Markdown ended

Token = dict[str, Any]


def _walk(tokens: list[Token]) -> Iterator[Mapping[str, Any]]:
    stack = list(tokens)
    while stack:
        token = stack.pop()
        yield token
        stack.extend(token.get("children") or ())


class LayoutBudget:
    """The list items and table cells one document (one part of a PDF) may still lay out."""

    def __init__(self, block: int = MAX_BLOCK_PIECES, document: int = MAX_DOCUMENT_PIECES) -> None:
        self.block = block
        self.left = document

    def hook(self, markdown: Any, state: Any) -> None:
        """A mistune ``before_render_hooks`` entry: an oversized block's tokens become its text."""
        items = rows = cells = 0
        for token in _walk(state.tokens):
            kind = token.get("type")
            if kind in ("list_item", "task_list_item"):
                items += 1
            elif kind == "table_cell":
                cells += 1
            elif kind in ("table_row", "table_head"):
                rows += 1
        if items + cells <= min(self.block, self.left):
            self.left -= items + cells
            return
        state.tokens = as_text(state.src, items, rows)


def note(items: int, rows: int) -> str:
    shown = [f"{count:,} {what}" for count, what in ((items, "list items"), (rows, "table rows")) if count]
    return f"Shown as text, too large to lay out: {' and '.join(shown)}.{LINE_MARK} ends each line."


def as_text(markdown: str, items: int, rows: int) -> list[Token]:
    """Tokens of a note and of ``markdown`` as plain text, in paragraphs of at most
    ``FLOW_CHARS`` (a longer line is a paragraph of its own). Text tokens are never
    parsed again: whatever the Markdown says is shown as written."""
    tokens: list[Token] = [_paragraph({"type": "emphasis", "children": [_text(note(items, rows))]})]
    group: list[str] = []
    size = 0
    # NUL is U+FFFD in any Markdown a reader sees (CommonMark), in both engines.
    for line in markdown.replace("\x00", "\ufffd").rstrip("\n").split("\n"):
        if group and size + len(line) > FLOW_CHARS:
            tokens.append(_paragraph(_text("".join(group))))
            group, size = [], 0
        group.append(line + LINE_MARK + " ")
        size += len(line)
    if group:
        tokens.append(_paragraph(_text("".join(group).rstrip(" "))))
    return tokens


def _text(raw: str) -> Token:
    return {"type": "text", "raw": raw}


def _paragraph(child: Token) -> Token:
    return {"type": "paragraph", "children": [child]}
