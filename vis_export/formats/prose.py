"""Keeping prose inside its block.

Prose is written as it was (it is Markdown), but a fence or an HTML block
(``<pre>``, ``<!--`` ...) left open at its end would swallow everything after it:
the next code block, the next message heading. Prose that could do that is
checked with a CommonMark parser (markdown-it-py) and, if it does, closed; if it
cannot be closed, it is shown literally in a fence of its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from vis_export.formats.markdown_syntax import fenced
from vis_export.strings import ended, lf

# Lines that can open a block running past a blank line: fences and HTML blocks
# of kinds 1-5. Prose without any of them cannot leak and is never parsed.
_MAY_LEAK = re.compile(r"^[ \t>*+\-0-9.)]*(```|~~~|<(script|pre|style|textarea|!|\?))", re.IGNORECASE | re.MULTILINE)
_SENTINEL = "vis-export-sentinel-paragraph"
_HTML_CLOSERS = (
    ("<!--", "-->"),
    ("<?", "?>"),
    ("<![CDATA[", "]]>"),
    ("<!", ">"),
    ("<script", "</script>"),
    ("<pre", "</pre>"),
    ("<style", "</style>"),
    ("<textarea", "</textarea>"),
)


_FENCE_AT_MARGIN = re.compile(r"(`{3,}|~{3,})(.*)")
_CLOSER = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
_FENCE_OR_HTML = re.compile(r"[ \t>*+\-0-9.)]*(```|~~~|<(script|pre|style|textarea|!|\?))", re.IGNORECASE)


def _surely_closed(markdown: str) -> bool:
    """A quick proof for the common case: every fence starts at the left margin
    (so it is outside any list or quote) and is closed, and no other line could
    open a fence or an HTML block. ``False`` means "ask the parser", not "open"."""
    fence: tuple[str, int] | None = None
    for line in markdown.split("\n"):
        if fence is not None:
            closer = _CLOSER.fullmatch(line)
            if closer and closer.group(1)[0] == fence[0] and len(closer.group(1)) >= fence[1]:
                fence = None
            continue
        opener = _FENCE_AT_MARGIN.match(line)
        if opener:
            marks, info = opener.groups()
            if marks[0] == "`" and "`" in info:
                return False
            fence = (marks[0], len(marks))
        elif _FENCE_OR_HTML.match(line):
            return False
    return fence is None


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


def _closed(markdown: str) -> bool:
    """Whether a paragraph after this prose (and a blank line) is still a paragraph."""
    tokens = _parser().parse(f"{markdown}\n\n{_SENTINEL}\n")
    for index, token in enumerate(tokens):
        if token.type == "inline" and token.content == _SENTINEL:
            return bool(tokens[index - 1].type == "paragraph_open" and tokens[index - 1].level == 0)
    return False


def _closer(markdown: str) -> str | None:
    tokens = [t for t in _parser().parse(markdown) if t.level == 0 and t.type in ("fence", "html_block")]
    if not tokens:
        return None
    last = tokens[-1]
    if last.type == "fence":
        return str(last.markup)
    start = last.content.lstrip().lower()
    for opener, closer in _HTML_CLOSERS:
        if start.startswith(opener):
            return closer
    return None


def contained(markdown: str) -> str:
    """``markdown``, ending with a newline, that cannot run into what follows it."""
    text = ended(lf(markdown))
    if not _MAY_LEAK.search(text) or _surely_closed(text) or _closed(text):
        return text
    closer = _closer(text)
    if closer is not None:
        closed = f"{text}{closer}\n"
        if _closed(closed):
            return closed
    return fenced(text, "markdown")


_ATTACHMENT = "attachment:"


def attachment_links(markdown: str, targets: Mapping[str, str]) -> str:
    """Prose whose ``attachment:<id|name>`` links and images point at the
    attachment's file (``targets``: reference -> URL), as HTML resolves them.

    Only a destination the parser reads as a link or an image is rewritten, and
    only where each ``(attachment:...)`` written in the text is one of those
    (the same reference in a code span stays as written): prose is otherwise
    left exactly as it was.
    """
    if _ATTACHMENT not in markdown or not targets:
        return markdown
    found: dict[str, int] = {}
    for token in _parser().parse(markdown):
        for child in token.children or ():
            url = child.attrGet("href") if child.type == "link_open" else child.attrGet("src")
            if child.type in ("link_open", "image") and isinstance(url, str) and url.startswith(_ATTACHMENT):
                found[url] = found.get(url, 0) + 1
    for url, count in found.items():
        target = targets.get(unquote(url[len(_ATTACHMENT) :]))
        written = f"]({url})"
        if target is not None and markdown.count(written) == count:
            markdown = markdown.replace(written, f"]({target})")
    return markdown
