"""A session, message or block drawn for a person at a terminal (``vis-export show``), with rich.

The walk is the projector's (the reasoning policy first, one method per block
type); rich only draws: each block becomes a rich renderable and each message
is drawn to text at once, so ``pieces`` yields strings like every text format.
With ``colours`` the text carries rich's styles; without, it is plain (a pipe).

Data never steers the terminal (R4, R6): every string from a session passes
``terminal.escaped`` before rich sees it, and reaches rich as ``Text``, never as
markup (``[bold]`` in data prints as written, ``:smile:`` stays a word). Prose
is parsed first and escaped after, so a character reference (``&#27;``) cannot
smuggle a control character past the rule; raw HTML in prose shows as text,
links show their address and are never terminal hyperlinks, and code fenced in
prose is lexed under the same CPU budget as code blocks (``lexing``).

Code blocks stay literal (R1): written between backtick fences sized as the
text format sizes them, never wrapped, cropped, tab-expanded or trimmed; a
control character in code (a CR too) shows as its ``\\uXXXX`` escape, the one
change the terminal rule makes.

Structure is the projector's alone (R6): a message header is the one line that
starts with ``HEADER``; a line of data outside a code block that starts so is
written with a leading backslash, as the text format guards its ``== `` lines.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from vis_export.extras import require
from vis_export.formats import lexing
from vis_export.formats.facts import SessionFacts
from vis_export.formats.markdown_syntax import fence_for, info_string
from vis_export.formats.options import ExportOptions
from vis_export.formats.projector import Projector, json_text, tool_duration, with_marker
from vis_export.formats.terminal_code import LiteralText, shown
from vis_export.lonis_parsed import parsed as parsed_lonis
from vis_export.model import (
    AttachmentBlock,
    Block,
    CodeBlock,
    ErrorBlock,
    LonisBlock,
    Message,
    NoticeBlock,
    ProseBlock,
    ReasoningBlock,
    Session,
    SpeechBlock,
    ToolBlock,
)
from vis_export.policy import Exportable
from vis_export.strings import data_label
from vis_export.timefmt import utc

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

ROLE_STYLES = {
    "user": "bold green",
    "assistant": "bold bright_blue",
    "system": "bold yellow",
    "developer": "bold yellow",
}
HEADER = "── "  # how a message header starts; no other line does
# A line that starts like a header, after any styles of ours.
_FORGED_HEADER = re.compile(f"^(?=(?:\x1b\\[[0-9;]*m)*{HEADER})", re.MULTILINE)
DEFAULT_WIDTH = 80
ALL_REASONING_NOTE = "Private reasoning is shown (--reasoning all)."


class TerminalProjector(Projector):
    """``width``: the columns prose is wrapped to (code never is); ``colours``:
    a rich colour system (``standard``, ``256``, ``truecolor``) for a terminal,
    ``None`` for plain text; ``no_color``: styles without colours (``NO_COLOR``)."""

    def __init__(
        self,
        options: ExportOptions | None = None,
        width: int = DEFAULT_WIDTH,
        colours: str | None = None,
        no_color: bool = False,
    ):
        super().__init__(options)
        console = require("rich.console", "show")
        require("mdit_py_plugins", "show")  # footnotes in prose
        self.console: Console = console.Console(
            file=io.StringIO(),
            width=max(width, 20),
            force_terminal=colours is not None,
            color_system=colours,
            no_color=no_color,
            markup=False,
            emoji=False,
            highlight=False,
            legacy_windows=False,
            _environ={},  # drawn from the arguments alone, not from the environment (R7)
        )
        self.highlighting = lexing.HighlightBudget()

    def drawn(self, renderables: Iterable[RenderableType]) -> str:
        """Renderables as terminal text; nothing is cropped (code runs past the edge, and the terminal wraps it)."""
        with self.console.capture() as capture:
            for renderable in renderables:
                self.console.print(renderable, crop=False)
        return capture.get()

    # --- frames -------------------------------------------------------------------------

    def pieces(self, obj: Exportable) -> Iterator[str]:
        """What the projector draws, after a line saying so when private reasoning may show."""
        if self.options.reasoning == "all":
            yield self.drawn([self._styled(ALL_REASONING_NOTE, "bold red")])
        yield from super().pieces(obj)

    def session(self, session: Session) -> Iterator[str]:
        from rich.text import Text

        self.highlighting = lexing.HighlightBudget()  # each session's own, as in every format
        facts = SessionFacts.of(session)
        count = len(session.messages)
        about = [f"session {session.id}", f"{count} message{'' if count == 1 else 's'}"]
        if facts.created is not None:
            about.append(utc(facts.created))
        about += facts.models
        yield unforged(self.drawn([Text(shown(facts.title), style="bold"), self._dim(" · ".join(about))]))
        for message in session.messages:
            yield "\n"
            yield from self.message(message)

    def message(self, message: Message) -> Iterator[str]:
        from rich.cells import cell_len
        from rich.text import Text

        label = " · ".join(self.header_parts(message, data_label))
        fill = "─" * max(self.console.width - len(HEADER) - cell_len(label) - 1, 3)
        header = Text.assemble((HEADER, "dim"), (label, ROLE_STYLES.get(message.role, "bold")), (f" {fill}", "dim"))
        header.truncate(self.console.width, overflow="ellipsis")  # one line, however long the names in it
        yield self.drawn([header])
        for block in self.blocks(message):
            yield self.block_drawn(block)

    def lone_block(self, block: Block) -> Iterator[str]:
        yield self.block_drawn(block, first=True)

    def block_drawn(self, block: Block, first: bool = False) -> str:
        """One block as text, after a blank line unless it comes first. Outside
        a code block no line of data can pass for a message header (R6): one
        that starts like a header is written with a leading backslash, as the
        text format does; code between its fences stays as written (R1)."""
        drawn = self.drawn([self.block(block)] if first else ["", self.block(block)])
        return drawn if isinstance(block, CodeBlock) else unforged(drawn)

    # --- one method per block type ----------------------------------------------------

    def block_prose(self, block: ProseBlock) -> RenderableType:
        return prose(block.markdown)

    def block_code(self, block: CodeBlock) -> RenderableType:
        return FencedCode(block.text, block.language, self.highlighting)

    def block_tool(self, block: ToolBlock) -> RenderableType:
        from rich.console import Group

        heading = f"Tool {data_label(block.tool)} ({data_label(block.status)})"
        timing = tool_duration(block)
        parts: list[RenderableType] = [self._styled(heading + (f" · {timing}" if timing else ""), "bold")]
        for part in self.tool_parts(block):
            parts.append(self._styled(f"{data_label(part.label)}:", "dim"))
            parts.append(LiteralText(with_marker(part.text, part.cut), part.language, self.highlighting))
        return Group(*parts)

    def block_reasoning(self, block: ReasoningBlock) -> RenderableType:
        from rich.console import Group

        label = "Private reasoning" if block.is_private else "Reasoning"
        return Group(self._styled(label, "dim bold"), prose(block.text, style="dim italic"))

    def block_error(self, block: ErrorBlock) -> RenderableType:
        retry = " (retryable)" if block.retryable else ""
        return self._styled(f"Error [{data_label(block.code)}]: {shown(block.message.strip())}{retry}", "bold red")

    def block_notice(self, block: NoticeBlock) -> RenderableType:
        return self._styled(f"Notice [{data_label(block.code)}]: {shown(block.message.strip())}", "yellow")

    def block_attachment(self, block: AttachmentBlock) -> RenderableType:
        return self._styled(f"[attachment: {data_label(block.name)} ({data_label(block.media_type)})]", "cyan")

    def block_speech(self, block: SpeechBlock) -> RenderableType:
        return self._styled(f"Speech: {shown(block.text.strip())}", "italic")

    def block_lonis(self, block: LonisBlock) -> RenderableType:
        from rich.console import Group

        lonis = parsed_lonis(block.envelope)
        parts: list[RenderableType] = [
            self._styled(f"{data_label(lonis.summary)} ({lonis.category})", "bold"),
            self._dim(" · ".join(f"{label} {data_label(value)}" for label, value in lonis.header)),
        ]
        for field in lonis.fields:
            if field.style == "list":
                lines = [f"{data_label(field.name)}:"]
                lines += [f"  {n}. {data_label(item)}" for n, item in enumerate(field.value, 1)]
                parts.append(self._styled("\n".join(lines), ""))
            elif field.apart(marks_code=True, breaks_inline=False):
                parts.append(self._dim(f"{data_label(field.name)}:"))
                parts.append(LiteralText(field.value, field.language, self.highlighting))
            else:
                parts.append(self._styled(f"{data_label(field.name)}: {shown(field.value)}", ""))
        return Group(*parts)

    def block_unknown(self, block: Block) -> RenderableType:
        from rich.console import Group

        kind = data_label(block.type) if isinstance(block.type, str) else "?"
        fields = LiteralText(json_text(block.fields), "json", self.highlighting)
        return Group(self._dim(f"[unsupported block: {kind or '?'}]"), fields)

    # --- helpers ------------------------------------------------------------------------

    @staticmethod
    def _styled(text: str, style: str) -> RenderableType:
        """Text already made safe, with a style of ours: never parsed as markup."""
        from rich.text import Text

        return Text(text, style=style)

    def _dim(self, text: str) -> RenderableType:
        return self._styled(shown(text), "dim")


def unforged(drawn: str) -> str:
    """Drawn data in which no line passes for a message header: one that starts like it gets a backslash."""
    return _FORGED_HEADER.sub("\\\\", drawn)


def prose(markdown: str, style: str = "none") -> RenderableType:
    """Prose Markdown rendered for the terminal, every string in it made safe."""
    from vis_export.formats import terminal_prose

    return terminal_prose.Prose(markdown, style)


class FencedCode(LiteralText):
    """A code block between backtick fences, as the text format writes it, so a
    reader sees where it starts and ends and a copy of it is Markdown."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        fence = fence_for(self.text)
        style = console.get_style("dim")
        yield Segment(fence + shown(info_string(self.language)), style)
        yield Segment.line()
        yield from super().__rich_console__(console, options)
        yield Segment(fence, style)
        yield Segment.line()


def to_terminal(obj: Any, width: int = DEFAULT_WIDTH, colours: str | None = None, **options: object) -> str:
    """A session, message, block or list of messages as ``vis-export show`` draws
    it: plain text by default, styled for a terminal with ``colours``."""
    return TerminalProjector(ExportOptions(**options), width, colours).render(obj)  # type: ignore[arg-type]
