"""Code and literal text as a terminal shows them, for ``show``'s drawing
(``terminal_projector``) and its prose (``terminal_prose``, whose fenced code is
drawn the same way): written exactly as it is, highlighted within the lexing
budget, only control characters escaped (R1, R4)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from vis_export.formats import lexing
from vis_export.terminal import escaped

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

# What each colour class of ``lexing`` looks like: the terminal's own palette,
# so code reads in the user's light or dark theme alike.
TOKEN_STYLES = {
    "k": "magenta",
    "s": "green",
    "c": "dim italic",
    "m": "cyan",
    "nf": "bright_blue",
    "nc": "bright_blue",
    "nd": "bright_blue",
    "nb": "yellow",
    "nt": "green",
    "na": "cyan",
    "gd": "red",
    "gi": "green",
    "gh": "bold",
}
ESCAPE_STYLE = "reverse"  # a control character of the data, shown as its escape


def shown(text: str) -> str:
    """A string from data as a terminal may show it: the one door to rich."""
    return escaped(text)


def styled_lines(
    text: str, language: str | None, budget: lexing.HighlightBudget | None = None
) -> Iterator[tuple[str, str]]:
    """(style, piece) pairs of ``text`` as shown, highlighted when the language's
    lexer keeps within its budget (``budget``: the document's); ``piece`` is one
    line's part or ``"\\n"``. Control characters are shown as their escapes, in reverse video."""
    runs = lexing.runs(language, text, budget) if language and text else None
    for css, value in runs if runs is not None else [("", text)]:
        style = TOKEN_STYLES.get(css, "")
        for index, line in enumerate(value.split("\n")):
            if index:
                yield "", "\n"
            if line:
                yield from _escapes_marked(line, style)


def _escapes_marked(line: str, style: str) -> Iterator[tuple[str, str]]:
    safe = shown(line)
    if safe == line:
        yield style, line
        return
    for character in line:
        fixed = shown(character)
        yield (style if fixed == character else ESCAPE_STYLE), fixed


class LiteralText:
    """Text written exactly as it is (tabs, trailing spaces, long lines), only
    control characters escaped: rich's own ``Syntax`` expands tabs and crops or
    wraps lines, which code must never be. Ends with a line break."""

    def __init__(self, text: str, language: str | None = None, budget: lexing.HighlightBudget | None = None):
        self.text = text
        self.language = language
        self.budget = budget

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        for style, piece in styled_lines(self.text, self.language, self.budget):
            yield Segment.line() if piece == "\n" else Segment(piece, console.get_style(style) if style else None)
        if self.text and not self.text.endswith("\n"):
            yield Segment.line()
