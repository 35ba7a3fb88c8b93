"""What a reader sees of prose, as plain words: previews and search snippets.

A regular expression cannot tell ``parse_config`` (a word) from ``_emphasis_``
or keep a link's text while dropping its address, so the prose is parsed
(markdown-it-py, CommonMark) and only the text a renderer would show is kept:
words, code spans as their code, link and image text, a table's cells (GFM's
tables, as every format renders them), line breaks as breaks.
"""

from __future__ import annotations

import re
import string
import unicodedata
from bisect import bisect_left
from collections.abc import Iterator
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


def visible_words(markdown: str) -> str:
    """``prose_words`` with its white space made single spaces (a snippet's
    line). Prose of paragraphs, emphasis, code spans and backtick fences only
    (most of what agents write) is read without a parse (``_simple_words``, a
    property test holds it to the parser's words): a parse was a third of a
    search's time, 0.1 ms a prose hit."""
    simple = _simple_words(markdown)
    return " ".join((prose_words(markdown) if simple is None else simple).split())


# What the simple reading leaves to the parser in a paragraph: escapes,
# entities, HTML and autolinks, links and images, tables, and white space but
# the space and the line feed (tabs set columns; others are trimmed by some
# rules and not by others). Anywhere: CR and NUL, which the parser normalises.
# One class, so that it is searched for fast (an alternation is tried at every character).
_OTHER_SPACES = "\t\x0b\x0c\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"  # str.isspace()
_NOT_SIMPLE = re.compile(f"[\\\\&<\\[\\]|{_OTHER_SPACES}]")
# A line that may open or close a block of another kind than a paragraph
# (indented, a heading, quote, list, thematic break, setext underline, table
# row, tilde fence).
_NOT_A_PARAGRAPH_LINE = re.compile(r"[ #>+=:~-]|\d{1,9}[.)]|[*_](?:[* ]*|[_ ]*)$|\*(?: |$)")
_FENCE = re.compile(r"(`{3,})[^`]*")
_MARKS = re.compile("[`*_]+")


def _simple_words(markdown: str) -> str | None:
    """The words of ``markdown`` as ``prose_words`` finds them (but for white
    space) when it is made of paragraphs and backtick fences at the margin,
    with emphasis and code spans inline; ``None`` for anything else."""
    if "\r" in markdown or "\x00" in markdown:
        return None
    out: list[str] = []
    paragraph: list[str] = []
    lines = markdown.split("\n")
    n = 0
    while n < len(lines):
        line = lines[n]
        n += 1
        fence = _FENCE.fullmatch(line)
        if fence is None and line.strip(" "):
            if line.startswith("```") or _NOT_A_PARAGRAPH_LINE.match(line) or _NOT_SIMPLE.search(line):
                return None
            paragraph.append(line)
            continue
        if paragraph:
            out.append(_inline_words("\n".join(paragraph).strip(" \n")))
            paragraph = []
        if fence is not None:  # its lines as written, to a closing fence of its own
            closer = fence.group(1)
            while n < len(lines) and not lines[n].lstrip(" ").startswith(closer):
                out.append(lines[n])
                n += 1
            if n == len(lines) or lines[n].strip("`"):
                return None  # unclosed, or a closing line other than bare backticks
            n += 1
    if paragraph:
        out.append(_inline_words("\n".join(paragraph).strip(" \n")))
    return "\n".join(out)


def _inline_words(source: str) -> str:
    """A paragraph's text as the inline parser leaves it: code spans as their
    code, and the emphasis markers that pair (CommonMark's delimiter runs,
    balanced as markdown-it balances them) dropped."""
    runs = _runs(source)
    if not runs:
        return source
    backticks: dict[int, list[int]] = {}  # a length's runs of backticks, in order: a closer found by bisection
    for index, (start, end) in enumerate(runs):
        if source[start] == "`":
            backticks.setdefault(end - start, []).append(index)
    pieces: list[str] = []  # the text: a piece per marker, and the text between
    delimiters: list[list[Any]] = []  # [marker, its run's length, its piece, opens, closes, paired with]
    done, k = 0, 0
    while k < len(runs):
        start, end = runs[k]
        k += 1
        pieces.append(source[done:start])
        marker = source[start]
        done = end
        if marker == "`":  # a code span to the next run of as many backticks, else text
            same = backticks[end - start]
            after = bisect_left(same, k)
            if after == len(same):
                pieces.append(source[start:end])
                continue
            closing = same[after]
            code = source[end : runs[closing][0]].replace("\n", " ")
            pieces.append(code[1:-1] if code.startswith(" ") and code.endswith(" ") and code.strip(" ") else code)
            done, k = runs[closing][1], closing + 1
            continue
        last = source[start - 1] if start > 0 else " "
        following = source[end] if end < len(source) else " "
        last_punct, next_punct = _punctuation(last), _punctuation(following)
        last_space, next_space = last in " \n", following in " \n"  # no other white space is simple
        left = not (next_space or (next_punct and not (last_space or last_punct)))
        right = not (last_space or (last_punct and not (next_space or next_punct)))
        can_open = left and (marker == "*" or not right or last_punct)
        can_close = right and (marker == "*" or not left or next_punct)
        for _ in range(end - start):
            pieces.append(marker)
            delimiters.append([marker, end - start, len(pieces) - 1, can_open, can_close, -1])
    pieces.append(source[done:])
    for index in _paired(delimiters):
        pieces[delimiters[index][2]] = ""
    return "".join(pieces)


def _runs(source: str) -> list[tuple[int, int]]:
    """Where each run of one of `` ` * _ `` starts and ends (found in one search)."""
    runs = []
    for found in _MARKS.finditer(source):
        start, end = found.span()
        for n in range(start + 1, end + 1):
            if n == end or source[n] != source[n - 1]:
                runs.append((start, n))
                start = n
    return runs


_ASCII_PUNCTUATION = frozenset(string.punctuation)


def _punctuation(char: str) -> bool:
    """Punctuation or a symbol, as CommonMark's flanking rules have it (markdown-it's ``isPunctChar``)."""
    return char in _ASCII_PUNCTUATION if char.isascii() else unicodedata.category(char)[0] in "PS"


def _paired(delimiters: list[list[Any]]) -> Iterator[int]:
    """The delimiters that pair, by markdown-it's ``processDelimiters`` (its
    bounds on openers keep it linear): each closer, in order, takes the
    nearest opener of its marker before it that the rule of three allows."""
    bottoms: dict[str, list[int]] = {}
    header, last_piece = 0, -2
    jumps: list[int] = []
    for index, closer in enumerate(delimiters):
        marker, length, piece = closer[0], closer[1], closer[2]
        jumps.append(0)
        if delimiters[header][0] != marker or last_piece != piece - 1:
            header = index
        last_piece = piece
        if not closer[4]:
            continue
        bottom = bottoms.setdefault(marker, [-1] * 6)
        slot = (3 if closer[3] else 0) + length % 3
        opener_index = header - jumps[header] - 1
        new_bottom = opener_index
        while opener_index > bottom[slot]:
            opener = delimiters[opener_index]
            if opener[0] == marker and opener[3] and opener[5] < 0:
                odd = (opener[4] or closer[3]) and (opener[1] + length) % 3 == 0 and (opener[1] % 3 or length % 3)
                if not odd:
                    after_closed = opener_index > 0 and not delimiters[opener_index - 1][3]
                    last_jump = jumps[opener_index - 1] + 1 if after_closed else 0
                    jumps[index] = index - opener_index + last_jump
                    jumps[opener_index] = last_jump
                    closer[3] = False
                    opener[5] = index
                    opener[4] = False
                    new_bottom = -1
                    last_piece = -2
                    break
            opener_index -= jumps[opener_index] + 1
        if new_bottom != -1:
            bottom[slot] = new_bottom
    for index, delimiter in enumerate(delimiters):
        if delimiter[5] >= 0:
            yield index
            yield delimiter[5]
