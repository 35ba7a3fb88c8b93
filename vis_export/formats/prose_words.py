"""What a reader sees of prose, as plain words: previews and search snippets.

A regular expression cannot tell ``parse_config`` (a word) from ``_emphasis_``
or keep a link's text while dropping its address, so the prose is parsed
(markdown-it-py, CommonMark) and only the text a renderer would show is kept:
words, code spans as their code, link and image text, a table's cells (GFM's
tables, as every format renders them), line breaks as breaks.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_TEXT_CHILDREN = {
    "text": None,
    "code_inline": None,
    "html_inline": None,
    "softbreak": "\n",
    "hardbreak": "\n",
    "image": None,
}


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")  # a table's cells, not its pipes and dashes


# What can make Markdown differ from its words: inline marks, HTML, entities,
# escapes, and a line that opens a block (heading, quote, list, fence, indented
# code). A CR ends a line for CommonMark but not for ``^``: any CR is parsed.
_MARKUP = re.compile(r"[\x00\r\\`*_\[\]<>#!&|~]|^(?: {4}|\t|[ ]{0,3}(?:[-+=>]|\d+[.)]))", re.MULTILINE)


# A footnote's definition (``[^1]: ...``), and its mark where it is referred to or defined.
_FOOTNOTE_DEFINITION = re.compile(r"^ {0,3}\[\^([^\]\s]+)\]:", re.MULTILINE)
_FOOTNOTE_MARK = re.compile(r"\[\^([^\]\s]+)\]")


def prose_words(markdown: str) -> str:
    """``markdown`` as the words a reader sees, blocks ending in a newline. A
    footnote's mark (``[^1]``, drawn as a small number) is left out where the
    footnote is defined, as the parser reads it literally."""
    if not _MARKUP.search(markdown):  # plain words already (most previews): no parse
        return "".join(f"{line}\n" for line in (" ".join(block.split()) for block in markdown.split("\n\n")) if line)
    footnotes = set(_FOOTNOTE_DEFINITION.findall(markdown))
    if footnotes:  # a definition is its note's words (CommonMark would read a link reference)
        markdown = _FOOTNOTE_DEFINITION.sub("", markdown)
    out: list[str] = []
    for token in _parser().parse(markdown):
        if token.type == "inline":
            for child in token.children or ():
                if child.type == "text" and footnotes:
                    out.append(_FOOTNOTE_MARK.sub(lambda m: "" if m[1] in footnotes else m[0], child.content))
                elif child.type in _TEXT_CHILDREN:
                    out.append(_TEXT_CHILDREN[child.type] or child.content)
        elif token.type in ("fence", "code_block", "html_block"):
            out.append(token.content)
        elif token.nesting == -1 and token.block and out and not out[-1].endswith("\n"):
            out.append("\n")
    return "".join(out)
