"""Prose written into Markdown output: as it was, but for what a renderer would
take from it that the other formats never give.

Raw HTML in prose is shown as text (R4): a renderer (pandoc, a wiki, GitHub)
would otherwise run a ``<script>`` or load an ``<img>``. An HTML block becomes a
fenced ``html`` code block, shown exactly as written; the ``<`` of inline HTML
becomes ``&lt;``, which every renderer shows as ``<``. A heading in prose sits
below the turn heading (``## Assistant``): ``# Plan`` becomes ``### Plan``,
capped at 6, as HTML and the PDF outlines place it.

Only what the CommonMark parser (markdown-it-py, with GFM tables) finds is
changed, in place: the parser gives each block's lines, and an inline token's
text is its lines without their container prefixes (``>``, list indentation),
which hold no ``<``; so the n-th ``<`` of a token's text is the n-th ``<`` of its
lines. Prose that still held raw HTML after a few passes is shown literally, fenced.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from vis_export.formats.html_prose import HEADING_OFFSET  # the title is #, a turn ##: prose starts at ###
from vis_export.formats.markdown_syntax import fence_for, fenced
from vis_export.strings import lf

PASSES = 4
_RAW_HTML = frozenset({"html_block", "html_inline"})
# A line that may open an ATX heading or underline a setext one: prose without any is not parsed for headings.
_MAY_HEAD = re.compile(r"^[ \t>*+\-0-9.)]*#|^[ \t>]*(=+|-+)[ \t]*$", re.MULTILINE)


def _record_lt(state: Any, silent: bool) -> bool:
    """An inline rule after ``autolink``, before ``html_inline``: a ``<`` reaching it
    opens raw HTML or is text (never one in code or an autolink), and is escaped,
    with every ``<`` inside the HTML it opens (``<!--<a>-->`` would leave an ``<a>``)."""
    from markdown_it.rules_inline.html_inline import html_inline

    start = state.pos
    if silent or state.src[start] != "<":
        return False
    end = start + 1
    if html_inline(state, True):  # moves past the tag it matched, pushing nothing
        end, state.pos = state.pos, start
    # By the text parsed, which is the inline token's own string: equal texts parse alike.
    found = state.env.setdefault("lt", {}).setdefault(id(state.src), set())
    found.update(i for i in range(start, end) if state.src[i] == "<")
    return False


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable("table")
    parser.inline.ruler.after("autolink", "vis_export_lt", _record_lt)
    return parser


def _tokens(markdown: str) -> tuple[list[Any], dict[str, Any]]:
    env: dict[str, Any] = {}
    return _parser().parse(markdown, env), env


def inert_html(markdown: str) -> str:
    """``markdown`` (LF line endings) with its raw HTML shown as text.

    Escaping may end a code span that began inside a tag (``<a title='`'>`<b>`):
    then the next pass escapes what that frees, and after a few the prose is
    shown literally instead."""
    if "<" not in markdown:
        return markdown
    text = markdown
    for _ in range(PASSES):
        escaped = _escaped(text)
        if escaped is None:
            return text
        text = escaped
    return fenced(markdown, "markdown")


def _escaped(markdown: str) -> str | None:
    """One pass: the HTML the parser finds, as text; ``None`` when it finds none."""
    tokens, env = _tokens(markdown)
    if not any(t.type in _RAW_HTML for t in _flat(tokens)):
        return None
    lines = markdown.split("\n")
    escapes: dict[int, set[int]] = {}  # line -> columns of a '<' to escape
    groups: dict[tuple[int, int], list[Any]] = {}  # the inline tokens of each line range (a table row's cells)
    for token in tokens:
        if token.type == "inline" and token.map and "<" in token.content:
            groups.setdefault(tuple(token.map), []).append(token)
    found = env.get("lt", {})
    for (start, end), inline in groups.items():
        text = "".join(t.content for t in inline)
        ranks = {at: n for n, at in enumerate(i for i, ch in enumerate(text) if ch == "<")}
        wanted: set[int] = set()
        offset = 0
        for token in inline:
            wanted |= {ranks[offset + p] for p in found.get(id(token.content), ())}
            offset += len(token.content)
        places = [(n, col) for n in range(start, end) for col, ch in enumerate(lines[n]) if ch == "<"]
        for rank in wanted:
            n, col = places[rank]
            escapes.setdefault(n, set()).add(col)
    for n, columns in escapes.items():
        line = lines[n]
        for col in sorted(columns, reverse=True):
            line = f"{line[:col]}&lt;{line[col + 1 :]}"
        lines[n] = line
    for token in reversed([t for t in tokens if t.type == "html_block" and t.map]):
        _fence_html_block(lines, token)
    return "\n".join(lines)


def _fence_html_block(lines: list[str], token: Any) -> None:
    """The block's lines inside a fence, in the containers it was in."""
    start, end = token.map
    first = token.content.split("\n", 1)[0].lstrip(" \t")
    prefix = lines[start][: len(lines[start]) - len(first)]
    continued = "".join(ch if ch in " \t>" else " " for ch in prefix)  # a list marker's width, as spaces
    fence = fence_for("\n".join(lines[start:end]))
    lines[end:end] = [continued + fence]
    lines[start : start + 1] = [f"{prefix}{fence}html", continued + first]


def shifted_headings(markdown: str, by: int = HEADING_OFFSET) -> str:
    """``markdown`` with each heading ``by`` levels deeper (at most 6); a setext
    heading (underlined) becomes an ATX one (``###``) on one line."""
    if not _MAY_HEAD.search(markdown):
        return markdown
    tokens = _tokens(markdown)[0]
    lines = markdown.split("\n")
    headings = [(t, tokens[i + 1]) for i, t in enumerate(tokens) if t.type == "heading_open" and t.map]
    for opening, inline in reversed(headings):
        level = int(opening.tag[1:])
        marks = "#" * min(6, level + by)
        start, end = opening.map
        line = lines[start]
        if opening.markup.startswith("#"):  # the first '#' opens it: container prefixes hold none
            at = line.index("#")
            lines[start] = line[:at] + marks + line[at + level :]
            continue
        raw = inline.content.split("\n")
        parts = [part.strip() for part in raw]
        written = line.rstrip()
        prefix = written[: len(written) - len(parts[0])]
        breaks = sum(child.type == "hardbreak" for child in inline.children or ())
        spaced = sum(part.endswith("  ") for part in raw[:-1])
        if breaks and breaks == spaced + sum(_odd_backslashes(part) for part in parts[:-1]):  # none in code
            parts[:-1] = [part[:-1] if _odd_backslashes(part) else part for part in parts[:-1]]
        joined = " ".join(parts)
        closing = " #" if joined.endswith("#") else ""  # a final '#' stays text, not a closing sequence
        lines[start:end] = [f"{prefix}{marks} {joined}{closing}"]
    return "\n".join(lines)


def _odd_backslashes(line: str) -> bool:
    """Whether a line ends in a hard break's backslash, which an ATX heading, on one line, cannot hold."""
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _flat(tokens: list[Any]) -> list[Any]:
    return [*tokens, *(child for token in tokens for child in token.children or ())]


def prose_in_markdown(markdown: str) -> str:
    """Prose as Markdown output holds it (LF line endings): raw HTML as text, headings below the turn."""
    return shifted_headings(inert_html(lf(markdown)))
