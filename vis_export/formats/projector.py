"""The shape every text-like format shares: walk the model, one method per block type.

A format subclasses ``Projector`` and writes ``block_prose``, ``block_code``, ...
``block_unknown`` (dispatch is by ``block.type``, as mistune dispatches on node
type), plus the message and session frames. Blocks reach a projector only
through the reasoning policy. ``pieces`` yields the output in pieces, so a large
session can be written without building one string.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from vis_export.formats.options import ExportOptions
from vis_export.formats.tool_inputs import input_form, tool_summary
from vis_export.model import Block, Message, Session, ToolBlock, UnknownBlock
from vis_export.policy import Exportable, visible
from vis_export.timefmt import utc

# The same words in every format that cuts tool output.
TRUNCATED_NOTE = "{} more characters of tool output not shown"
TRUNCATED = f"… [{TRUNCATED_NOTE}]"


class Projector:
    def __init__(self, options: ExportOptions | None = None):
        self.options = options or ExportOptions()

    # --- entry points ---------------------------------------------------------------

    def render(self, obj: Exportable) -> str:
        return "".join(self.pieces(obj))

    def pieces(self, obj: Exportable) -> Iterator[str]:
        view = visible(obj, self.options.reasoning, self.options.redaction)
        if view is None:
            return
        if isinstance(view, Session):
            yield from self.session(view)
        elif isinstance(view, Message):
            yield from self.message(view)
        elif isinstance(view, Block):
            yield from self.lone_block(view)
        else:
            yield from self.messages(list(view))

    # --- frames a format overrides ----------------------------------------------------

    def session(self, session: Session) -> Iterator[str]:
        yield from self.messages(list(session.messages))

    def messages(self, messages: list[Message]) -> Iterator[str]:
        for index, message in enumerate(messages):
            if index:
                yield "\n"
            yield from self.message(message)

    def message(self, message: Message) -> Iterator[str]:
        raise NotImplementedError

    def lone_block(self, block: Block) -> Iterator[str]:
        """One block on its own, as a copy button on that block copies it."""
        yield self.block(block)

    # --- blocks ---------------------------------------------------------------------------

    def blocks(self, message: Message) -> list[Block]:
        if self.options.no_tools:
            return [b for b in message.blocks if not isinstance(b, ToolBlock)]
        return list(message.blocks)

    def block(self, block: Block) -> Any:
        """What this format makes of one block: text for text formats, values for templates (``template_values``)."""
        method: Callable[[Any], Any]
        if isinstance(block, UnknownBlock):
            method = self.block_unknown
        else:
            method = getattr(self, f"block_{block.type}")
        return method(block)

    def block_unknown(self, block: Block) -> Any:
        raise NotImplementedError

    # --- shared helpers -----------------------------------------------------------------

    def header_parts(self, message: Message, written: Callable[[str], str]) -> list[str]:
        """What a message header says: role (and author), how it ended if not
        completed, model, and time with ``timestamps``. ``written`` makes a string
        from the data safe for the format; the rest are the projector's own words."""
        label = role_label(message)
        name = author_name(message)
        if name:
            label += f" {written(f'({name})')}"
        parts = [label]
        note = status_note(message)
        if note:
            parts.append(note)
        if message.model:
            parts.append(written(message.model))
        if self.options.timestamps:
            parts.append(utc(message.created_at))
        return parts

    def tool_parts(self, block: ToolBlock) -> list[ToolPart]:
        """What a tool block shows of its input, output and error, as stored;
        each part of the output cut as ``output_part`` cuts it."""
        parts = []
        for label, key in (("Input", "input"), ("Output", "output"), ("Error", "error")):
            if key not in block.fields:
                continue
            form = input_form(block.tool, block.fields[key]) if key == "input" else None
            if form is None:
                shown = shown_parts(label, block.fields[key])
            else:  # what the form leaves out is still shown, as data
                shown = [ToolPart(*part) for part in form[0]] + (shown_parts(label, form[1]) if form[1] else [])
            for part in shown:
                parts.append(self.output_part(part) if key == "output" else part)
        return parts

    def tool_summary(self, block: ToolBlock) -> str | None:
        """What a folded tool block's heading says the call did (``tool_inputs.tool_summary``),
        from the input as this view holds it."""
        return tool_summary(block.tool, block.fields["input"]) if "input" in block.fields else None

    def output_part(self, part: ToolPart) -> ToolPart:
        """A part of tool output as this format keeps it: the first ``tool_output_limit``
        characters (PDF keeps first and last lines instead: ``tool_lines``)."""
        limit = self.options.tool_output_limit
        text = part.text
        cut = len(text) - limit if isinstance(limit, int) and len(text) > limit else 0
        return part._replace(text=text[: len(text) - cut], cut=cut)


class ToolPart(NamedTuple):
    """One labelled piece of a tool block: JSON (``language`` "json") or terminal text (``None``)."""

    label: str
    text: str
    language: str | None
    cut: int = 0  # characters cut from the end
    left_out: int = 0  # printed lines left out before ``tail`` (PDF)
    tail: str = ""


def shown_parts(label: str, value: Any) -> list[ToolPart]:
    """A stored value as people read it: a string (a command's output) as its
    lines, a map's multi-line strings (``stdout``, ``stderr``) each as their own
    lines after the rest of the map as JSON, anything else as indented JSON."""
    if isinstance(value, str):
        return [ToolPart(label, value, None)]
    if not isinstance(value, Mapping) or not any(isinstance(v, str) and "\n" in v for v in value.values()):
        return [ToolPart(label, json_text(value), "json")]
    rest = {key: item for key, item in value.items() if not (isinstance(item, str) and "\n" in item)}
    parts = [ToolPart(label, json_text(rest), "json")] if rest else []
    parts += [ToolPart(f"{label} · {key}", item, None) for key, item in value.items() if key not in rest]
    return parts


def with_marker(text: str, cut: int) -> str:
    """Cut tool output with the visible marker that says how much is missing."""
    return f"{text}\n{TRUNCATED.format(cut)}" if cut else text


def tool_duration(block: ToolBlock) -> str | None:
    start, end = block.started_at, block.completed_at
    if isinstance(start, int) and isinstance(end, int) and end >= start:
        return f"{(end - start) / 1000:.1f} s"
    return None


def json_text(value: Any) -> str:
    """Indented JSON of a stored value (frozen maps included), one line per item."""
    return json.dumps(value, ensure_ascii=False, indent=2, default=dict)


def role_label(message: Message) -> str:
    return message.role.capitalize()


def author_name(message: Message) -> str | None:
    author = message.author
    if isinstance(author, str):
        return author
    if hasattr(author, "get"):
        name = author.get("display_name") or author.get("name")
        return name if isinstance(name, str) else None
    return None


def status_note(message: Message) -> str | None:
    """What a header says about a message that did not simply complete.

    A ``streaming`` message in stored data was interrupted (a persisted running
    turn is interrupted by a restart): it is never shown as live.
    """
    if message.status == "completed":
        return None
    if message.status == "streaming":
        return "interrupted"
    return message.status
