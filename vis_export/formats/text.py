"""Plain text (``--to text``, the clipboard's ``text/plain``): readable with no renderer.

Prose stays the Markdown it was written in; code is written verbatim and
contiguous (R1), even a CR inside it, between backtick fences longer than any
run inside it, so a reader sees where code starts and ends and nothing in it
can close the fence; a copied code block on its own is exactly its code.
Everything the projector writes itself ends lines with LF and leaves no
trailing spaces.

Structure is the projector's alone (R6): a message header is a line
``== Role · ... ==``, and a line of data outside code that could pass for a
header or a reasoning marker is written with a leading backslash.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from vis_export.formats.facts import SessionFacts
from vis_export.formats.markdown_syntax import fenced
from vis_export.formats.options import ToolOutputLimit, options_given
from vis_export.formats.projector import Projector, with_marker
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
from vis_export.policy import DEFAULT_REASONING, Exportable, Reasoning
from vis_export.strings import clean, data_label, ended

if TYPE_CHECKING:
    from vis_export.redaction import Redaction

REASONING_BEGIN = "--- reasoning ---"
PRIVATE_REASONING_BEGIN = "--- private reasoning ---"
REASONING_END = "--- end of reasoning ---"
# A line start, by LF or by any other character some readers break lines at
# (VT, FF, the file/group/record separators, NEL, U+2028, U+2029: str.splitlines).
_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_START = f"(?:^|(?<=[{_BREAKS}]))"
_LINE_END = f"(?=$|[{_BREAKS}])"
_MARKER = f"(?:== |--- (?:private )?reasoning ---{_LINE_END}|--- end of reasoning ---{_LINE_END})"
_FORGED = re.compile(f"{_LINE_START}(?={_MARKER})", re.MULTILINE)
_FORGED_AT_LF = re.compile(f"^(?={_MARKER})", re.MULTILINE)  # the same, for text with no other breaks
_OTHER_BREAKS = re.compile(f"[{_BREAKS}]")


def data_lines(text: str) -> str:
    """Data as lines of text that cannot draw a header or a reasoning marker."""
    text = clean(text)
    if "== " not in text and "--- " not in text:  # nothing could pass for structure: no scan
        return text
    forged = _FORGED if _OTHER_BREAKS.search(text) else _FORGED_AT_LF  # the common case scans only line starts
    return forged.sub("\\\\", text)


class TextProjector(Projector):
    def session(self, session: Session) -> Iterator[str]:
        title = data_lines(SessionFacts.of(session).title)
        yield f"{title}\n{'=' * min(len(title), 72)}\n\n"
        yield from self.messages(list(session.messages))

    def message(self, message: Message) -> Iterator[str]:
        yield self.header(message) + "\n"
        for block in self.blocks(message):
            yield "\n" + self.block(block)

    def header(self, message: Message) -> str:
        return f"== {' · '.join(self.header_parts(message, data_label))} =="

    def lone_block(self, block: Block) -> Iterator[str]:
        if isinstance(block, CodeBlock):
            yield block.text  # a copied code block is exactly its code
        else:
            yield self.block(block)

    # --- one method per block type ----------------------------------------------------

    def block_prose(self, block: ProseBlock) -> str:
        return ended(data_lines(block.markdown))

    def block_code(self, block: CodeBlock) -> str:
        return fenced(block.text, block.language)

    def block_tool(self, block: ToolBlock) -> str:
        lines = [f"Tool {data_label(block.tool)} ({block.status})"]
        lines += [
            f"{data_label(part.label)}:\n{data_lines(with_marker(part.text, part.cut))}"
            for part in self.tool_parts(block)
        ]
        return "\n".join(lines) + "\n"

    def block_reasoning(self, block: ReasoningBlock) -> str:
        begin = PRIVATE_REASONING_BEGIN if block.is_private else REASONING_BEGIN
        return f"{begin}\n{ended(data_lines(block.text))}{REASONING_END}\n"

    def block_error(self, block: ErrorBlock) -> str:
        retry = " (retryable)" if block.retryable else ""
        return f"Error [{block.code}]: {_labelled(block.message)}{retry}\n"

    def block_notice(self, block: NoticeBlock) -> str:
        return f"Notice [{block.code}]: {_labelled(block.message)}\n"

    def block_attachment(self, block: AttachmentBlock) -> str:
        return f"[attachment: {data_label(block.name)} ({data_label(block.media_type)})]\n"

    def block_speech(self, block: SpeechBlock) -> str:
        return f"Speech: {_labelled(block.text)}\n"

    def block_lonis(self, block: LonisBlock) -> str:
        shown = parsed_lonis(block.envelope)
        lines = [
            data_label(shown.summary),
            "  " + " · ".join(f"{label} {data_label(value)}" for label, value in shown.header),
        ]
        for field in shown.fields:
            if field.style == "list":
                lines.append(f"  {field.name}:")
                lines += [f"    {n}. {data_label(item)}" for n, item in enumerate(field.value, 1)]
            elif field.apart(marks_code=False, breaks_inline=False):
                lines.append(f"  {field.name}:")
                lines += [f"    {line}" for line in clean(field.value).split("\n")]
            else:
                lines.append(f"  {field.name}: {data_label(field.value)}")
        return "\n".join(line.rstrip() for line in lines) + "\n"

    def block_unknown(self, block: Block) -> str:
        return f"[unsupported block: {data_label(block.type) or '?'}]\n"


def _labelled(text: str) -> str:
    """Text that follows a label on its line: it starts and ends with something to read."""
    return data_lines(text.strip())


def to_text(
    obj: Exportable,
    *,
    reasoning: Reasoning = DEFAULT_REASONING,
    timestamps: bool = False,
    no_tools: bool = False,
    tool_output_limit: ToolOutputLimit = None,
    redact: Redaction | bool | None = None,
) -> str:
    """Plain text of a session, message, block or list of messages; the options
    are those of ``vis-export convert --to text`` (see ``ExportOptions``)."""
    options = options_given(locals())
    return TextProjector(options).render(obj)
