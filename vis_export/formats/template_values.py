"""What a template receives: the values the HTML projector prepares, typed.

A ``--template-dir`` author writes against these names (``session.title``,
``message.blocks``, ``block.html`` ...). Strings are plain text, which the
templates escape; ``Markup`` values are HTML the projector made safe (prose
through mistune and nh3, code through the highlighter). ``block.kind`` names
the template that renders a block: ``blocks/<kind>.html.j2``. A label from the
data (the title, models, a tool's or an attachment's name) comes with its
controls escaped (``strings.data_label``); a template puts it in ``<bdi>``, and
``message.label`` holds its author's name in one already.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from markupsafe import Markup


class ProseValues(TypedDict):
    kind: Literal["prose"]
    html: Markup


class CodeValues(TypedDict):
    kind: Literal["code"]
    language: str | None
    language_class: str  # the language as a CSS class name: letters, digits and + - # _ .
    html: Markup


class ToolPartValues(TypedDict):
    label: str
    html: Markup
    language: str  # "json" for a structure, "text" for terminal text
    truncated: str | None  # the marker saying how much output is not shown
    left_out: str | None  # PDF: the line saying how many lines are left out between html and tail_html
    tail_html: Markup | None  # PDF: the last lines of a long output


class ToolValues(TypedDict):
    kind: Literal["tool"]
    name: str
    summary: str | None  # what the call did, in one line (``tool_inputs.tool_summary``)
    status: str
    duration: str | None
    parts: list[ToolPartValues]
    rows: int  # about how many lines its parts take on a page (see ``html.rows``)


class ReasoningValues(TypedDict):
    kind: Literal["reasoning"]
    private: bool
    html: Markup


class ErrorValues(TypedDict):
    kind: Literal["error"]
    code: str
    message: str
    retryable: bool


class NoticeValues(TypedDict):
    kind: Literal["notice"]
    code: str
    message: str


class AttachmentValues(TypedDict):
    kind: Literal["attachment"]
    name: str
    media_type: str
    size: str | None
    data_uri: str | None  # a checked image, embedded
    refused: Markup | None  # why an image is not shown


class SpeechValues(TypedDict):
    kind: Literal["speech"]
    text: str


class LonisFieldValues(TypedDict):
    name: str
    style: str  # "text", "list" or "json" (then ``value`` is highlighted HTML)
    value: Any


class LonisValues(TypedDict):
    kind: Literal["lonis"]
    lonis_kind: str
    category: str
    summary: str
    header: tuple[tuple[str, str], ...]  # (label, value)
    fields: list[LonisFieldValues]
    content_hash: str
    replay: str


class UnknownValues(TypedDict):
    kind: Literal["unknown"]
    type: str
    fields: list[tuple[str, str]]  # (key, indented JSON)
    rows: int  # about how many lines its fields take on a page (see ``html.rows``)


BlockValues = (
    ProseValues
    | CodeValues
    | ToolValues
    | ReasoningValues
    | ErrorValues
    | NoticeValues
    | AttachmentValues
    | SpeechValues
    | LonisValues
    | UnknownValues
)


class MessageValues(TypedDict):
    anchor: str  # the element id the contents link to: m-<message id> (formats/anchors.py)
    role: str
    status: str
    label: Markup  # role, and author name in <bdi>
    note: str | None  # "failed", "interrupted" ... when it did not complete
    model: str | None
    time_iso: str | None  # shown with --timestamps, and always in PDF
    time_text: str
    summary: str  # the first words of its prose, for the contents
    blocks: list[BlockValues]
    block_anchors: list[str]  # each block's element id, b-<block id>, in the order of blocks


class SessionValues(TypedDict):
    id: str
    title: str
    created_iso: str | None
    created_text: str | None
    models: list[str]
    messages: list[MessageValues]
    continuation: bool  # a later part of a PDF rendered in parts
