"""Prose Markdown on a terminal: rich's renderer, with what it would let through closed.

Imported only when prose is drawn for a terminal (rich is the ``show`` extra).
rich's ``Markdown`` parses with HTML on and drops raw HTML from view, makes
links terminal hyperlinks (an escape sequence carrying the data's URL), and
highlights fenced code with Pygments unbounded. Here the parser reads raw HTML
as text (R4: shown as written), every string of every token is escaped by the
terminal rule after parsing (a character reference such as ``&#27;`` is
decoded by the parser, so escaping before it would not do), links are written
as ``text (address)``, headings keep their ``#`` marks, and fenced code is lexed under the budget of ``lexing``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Heading, Markdown, MarkdownElement
from rich.style import Style
from rich.text import Text

from vis_export.terminal import escaped

# CommonMark, raw HTML read as text, with the two GitHub extensions rich draws.
_PARSER = MarkdownIt("commonmark", {"html": False}).enable(["strikethrough", "table"])


class ProseCode(CodeBlock):
    """Code fenced inside prose, highlighted within ``lexing``'s budget and wrapped to the width."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from vis_export.formats.terminal_view import styled_lines

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


def _made_safe(tokens: Iterable[Token]) -> Iterable[Token]:
    """The tokens with every string they carry escaped (tokens are fresh from the parser: ours to change)."""
    for token in tokens:
        token.content = escaped(token.content)
        token.info = escaped(token.info)
        token.attrs = {key: _safe_value(value) for key, value in token.attrs.items()}
        if token.children:
            token.children = list(_made_safe(token.children))
        yield token


def _safe_value(value: Any) -> Any:
    return escaped(value) if isinstance(value, str) else value
