"""Prose Markdown on a terminal: rich's renderer, with what it would let through closed.

Imported only when prose is drawn for a terminal (rich is the ``show`` extra).
rich's ``Markdown`` parses with HTML on and drops raw HTML unseen, makes
links terminal hyperlinks (an escape sequence carrying the data's URL), and
highlights fenced code with Pygments unbounded. Here the parser reads raw HTML
as text (R4: shown as written), every string of every token is escaped by the
terminal rule after parsing (a character reference such as ``&#27;`` is
decoded by the parser, so escaping before it would not do), links are written
as ``text (address)``, headings keep their ``#`` marks, footnotes are numbered
(``[1]``, and the notes a list after a rule), and fenced code is lexed under the budget of ``lexing``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar, Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.footnote import footnote_plugin
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Heading, Markdown, MarkdownElement
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from vis_export.formats.terminal_code import LiteralText, styled_lines
from vis_export.terminal import escaped

# CommonMark, raw HTML read as text, with the two GitHub extensions rich draws, and footnotes.
_PARSER = MarkdownIt("commonmark", {"html": False}).enable(["strikethrough", "table"]).use(footnote_plugin)
# Footnotes as rich draws them: the notes a numbered list after a rule, a reference its number.
_FOOTNOTE_TOKENS: dict[str, tuple[tuple[str, str, Literal[-1, 0, 1]], ...]] = {
    "footnote_block_open": (("hr", "hr", 0), ("ordered_list_open", "ol", 1)),
    "footnote_block_close": (("ordered_list_close", "ol", -1),),
    "footnote_open": (("list_item_open", "li", 1),),
    "footnote_close": (("list_item_close", "li", -1),),
    "footnote_anchor": (),  # the way back to the reference: no place to go on a terminal
}
# The parser drops what lies deeper than this (markdown-it's ``maxNesting``).
_DEEPEST = _PARSER.options["maxNesting"] - 1
# The tokens whose text a reader must see: inline text and code, fenced and indented code.
_READ = frozenset({"text", "code_inline", "fence", "code_block"})


class ProseCode(CodeBlock):
    """Code fenced inside prose, highlighted within ``lexing``'s budget and wrapped to the width."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).removesuffix("\n")
        yield Text.assemble(
            *(
                (piece, Style.parse(style) if style else Style())
                for style, piece in styled_lines(code, self.lexer_name)
            ),
            overflow="fold",
        )


class ProseHeading(Heading):
    """A heading as its level's ``#`` marks and its text, left where it starts:
    readable through a pipe, and no line padded to the width."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        marks = "#" * int(self.tag[1:]) + " "
        yield Text.assemble((marks, console.get_style(self.style_name, default="bold")), self.text)


class Prose(Markdown):
    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "heading_open": ProseHeading,
        "fence": ProseCode,
        "code_block": ProseCode,
    }

    def __init__(self, markdown: str, style: str = "none"):
        super().__init__("", style=style, hyperlinks=False, justify="default")  # no padding to the width
        self.markup = markdown
        self.parsed = list(_made_safe(_PARSER.parse(markdown)))
        self.letters = None if _too_deep(self.parsed) else Counter(_letters(_read(self.parsed)))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The rendered prose, unless rendering lost a letter or a digit of it: rich
        drops what it has no room for (a table of more columns than fit, lists or
        quotes nested deeper than the width allows), and then the prose is shown
        as written instead, so nothing is lost silently (R6)."""
        if self.letters is not None:
            segments = [
                piece
                for item in super().__rich_console__(console, options)
                for piece in ([item] if isinstance(item, Segment) else console.render(item, options))
            ]
            if not self.letters - Counter(_letters(s.text for s in segments if not s.control)):
                yield from _unpadded(segments)
                return
        yield from LiteralText(self.markup).__rich_console__(console, options)


def _made_safe(tokens: Iterable[Token]) -> Iterable[Token]:
    """The tokens with every string they carry escaped (tokens are fresh from the parser: ours to change),
    each image as text where it stands (rich draws an image ahead of the text around it), and
    footnotes as numbered references to a numbered list."""
    for token in tokens:
        if token.type in _FOOTNOTE_TOKENS:
            yield from (Token(kind, tag, nesting) for kind, tag, nesting in _FOOTNOTE_TOKENS[token.type])
            continue
        if token.type == "footnote_ref":
            token = Token("text", "", 0, content=f"[{int(token.meta.get('id', 0)) + 1}]")
        if token.type == "image":
            token = Token("text", "", 0, content=f"[image: {token.content}]" if token.content else "[image]")
        token.content = escaped(token.content)
        token.info = escaped(token.info)
        token.attrs = {key: _safe_value(value) for key, value in token.attrs.items()}
        if token.children:
            token.children = list(_made_safe(token.children))
        yield token


def _too_deep(tokens: list[Token]) -> bool:
    return any(token.level >= _DEEPEST for token in tokens)


def _read(tokens: Iterable[Token]) -> Iterator[str]:
    """Every string of the prose a reader must see: its text, its code, its link addresses."""
    for token in tokens:
        if token.type in _READ:
            yield token.content
        elif token.type == "link_open":
            yield str(token.attrs.get("href", ""))
        if token.children:
            yield from _read(token.children)


def _letters(texts: Iterable[str]) -> Iterator[str]:
    return (character for text in texts for character in text if character.isalnum())


def _unpadded(segments: list[Segment]) -> Iterator[Segment]:
    """The lines without the spaces rich pads them with to the width."""
    for line in Segment.split_lines(segments):
        while line and not line[-1].control and not line[-1].text.rstrip(" "):
            line.pop()
        if line and not line[-1].control:
            last = line.pop()
            line.append(Segment(last.text.rstrip(" "), last.style))
        yield from line
        yield Segment.line()


def _safe_value(value: Any) -> Any:
    return escaped(value) if isinstance(value, str) else value
