"""Markdown (``--to markdown``/``md``, the clipboard's ``text/markdown``): GitHub Flavored.

Prose is written as it was, but for raw HTML, shown as text, and headings, set
below the turn's (``prose_markdown``); everything else a message holds (tool names,
error messages, titles, attachment names, model names, unknown fields) goes
through ``markdown_syntax`` so it renders as the literal text it is (R4). Code
is fenced with a fence longer than any backtick run inside it (R1).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from vis_export.attachments import Attachments
from vis_export.formats.facts import SessionFacts
from vis_export.formats.markdown_syntax import escape, escape_html, escape_one_line, fenced, yaml_string
from vis_export.formats.options import ExportOptions, Folder, ToolOutputLimit, options_given
from vis_export.formats.projector import Projector, json_text, tool_duration, with_marker
from vis_export.formats.prose import attachment_links, contained
from vis_export.formats.prose_markdown import prose_in_markdown
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
from vis_export.timefmt import iso

if TYPE_CHECKING:
    from vis_export.redaction import Redaction


class MarkdownProjector(Projector):
    def __init__(self, options: ExportOptions | None = None):
        super().__init__(options)
        self.attachments = Attachments.of(None, self.options.attachments)
        self._attached: dict[str, str] = {}  # attachment:<id|name> in prose -> a link to its file

    def session(self, session: Session) -> Iterator[str]:
        self.attachments = Attachments.of(session, self.options.attachments)
        self._attached = {}
        for _, block in session.blocks():
            if isinstance(block, AttachmentBlock):
                target = self._link_to(block.attachment_id)
                if target is not None:
                    self._attached.setdefault(block.attachment_id, target)
                    self._attached.setdefault(block.name, target)
        if self.options.front_matter:
            yield self.front_matter(session)
        yield f"# {escape_one_line(SessionFacts.of(session).title)}\n\n"
        yield from self.messages(list(session.messages))

    def front_matter(self, session: Session) -> str:
        lines = ["---", f"session_id: {yaml_string(session.id)}"]
        if session.title is not None:
            lines.append(f"title: {yaml_string(session.title)}")
        facts = SessionFacts.of(session)
        if facts.created is not None:
            lines.append(f"created: {yaml_string(iso(facts.created))}")
        models = list(facts.models)
        providers = sorted({m.provider for m in session.messages if m.provider})
        for key, values in (("model", models), ("provider", providers)):
            if len(values) == 1:
                lines.append(f"{key}: {yaml_string(values[0])}")
            elif values:
                lines.append(f"{key}s: [{', '.join(yaml_string(v) for v in values)}]")
        return "\n".join(lines) + "\n---\n\n"

    def message(self, message: Message) -> Iterator[str]:
        yield self.heading(message) + "\n"
        for block in self.blocks(message):
            yield "\n" + self.block(block)

    def heading(self, message: Message) -> str:
        return "## " + " · ".join(self.header_parts(message, escape_one_line))

    # --- one method per block type ----------------------------------------------------

    def block_prose(self, block: ProseBlock) -> str:
        return contained(attachment_links(prose_in_markdown(block.markdown), self._attached))

    def block_code(self, block: CodeBlock) -> str:
        return fenced(block.text, block.language)

    def block_tool(self, block: ToolBlock) -> str:
        summary = f"Tool <code>{escape_html(block.tool)}</code>"
        said = self.tool_summary(block)
        if said:
            summary += f" <code>{escape_html(said)}</code>"
        summary += f" · {escape_html(block.status)}"
        timing = tool_duration(block)
        if timing:
            summary += f" · {timing}"
        parts = [f"<details>\n<summary>{summary}</summary>\n"]
        parts += [
            f"**{escape_one_line(part.label)}**\n\n{fenced(with_marker(part.text, part.cut), part.language)}"
            for part in self.tool_parts(block)
        ]
        parts.append("</details>\n")
        return "\n".join(parts)

    def block_reasoning(self, block: ReasoningBlock) -> str:
        label = "Private reasoning" if block.is_private else "Reasoning"
        return f"<details>\n<summary>{label}</summary>\n\n{contained(prose_in_markdown(block.text))}\n</details>\n"

    def block_error(self, block: ErrorBlock) -> str:
        retry = " *(retryable)*" if block.retryable else ""
        return _quote(f"**Error** ({escape_one_line(block.code)}): {escape(block.message)}{retry}")

    def block_notice(self, block: NoticeBlock) -> str:
        return _quote(f"**Notice** ({escape_one_line(block.code)}): {escape(block.message)}")

    def block_attachment(self, block: AttachmentBlock) -> str:
        label = escape_one_line(block.name)
        kind = escape_one_line(block.media_type)
        target = self._link_to(block.attachment_id)
        if target is None:  # no file to link to: named, never a broken link
            return f"*Attachment:* {label} ({kind})\n"
        bang = "!" if block.media_type.startswith("image/") else ""
        return f"{bang}[{label}]({target})\n"

    def _link_to(self, attachment_id: str) -> str | None:
        """A URL to the attachment's file, relative to where the output is written."""
        path = self.attachments.file(attachment_id)
        if path is None:
            return None
        base = (self.options.links_from or Path.cwd()).resolve()
        return "/".join(quote(part, safe="") for part in Path(os.path.relpath(path, base)).parts)

    def block_speech(self, block: SpeechBlock) -> str:
        return f"*Speech:* {escape(block.text)}\n"

    def block_lonis(self, block: LonisBlock) -> str:
        shown = parsed_lonis(block.envelope)
        parts = [
            f"**{escape_one_line(shown.summary)}** *({shown.category})*",
            " · ".join(f"*{label}* {escape_one_line(value)}" for label, value in shown.header),
        ]
        for field in shown.fields:
            label = f"**{escape_one_line(field.name)}:**"
            if field.style == "list":
                items = "\n".join(f"{n}. {escape_one_line(item)}" for n, item in enumerate(field.value, 1))
                parts.append(f"{label}\n\n{items}" if items else label)
            elif field.apart(marks_code=True, breaks_inline=True):
                parts.append(f"{label}\n\n{fenced(field.value, field.language)}".rstrip())
            else:
                parts.append(f"{label} {escape(field.value)}")
        return "\n\n".join(parts) + "\n"

    def block_unknown(self, block: Block) -> str:
        summary = f"Unsupported block <code>{escape_html(block.type)}</code>"
        return f"<details>\n<summary>{summary}</summary>\n\n{fenced(json_text(block.fields), 'json')}\n</details>\n"


def _quote(text: str) -> str:
    return "> " + text.replace("\n", "\n> ") + "\n"


def to_markdown(
    obj: Exportable,
    *,
    reasoning: Reasoning = DEFAULT_REASONING,
    timestamps: bool = False,
    no_tools: bool = False,
    tool_output_limit: ToolOutputLimit = None,
    attachments: Folder = None,
    front_matter: bool = False,
    links_from: Folder = None,
    redact: Redaction | bool | None = None,
) -> str:
    """GitHub Flavored Markdown of a session, message, block or list of messages;
    the options are those of ``vis-export convert --to markdown`` (see
    ``ExportOptions``), and ``links_from`` is the folder the Markdown will be
    in, which links to attachment files are relative to (the working directory
    when ``None``)."""
    options = options_given(locals())
    return MarkdownProjector(options).render(obj)
