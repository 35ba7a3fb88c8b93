"""The session model: frozen types that every source produces and every format reads.

A loaded session cannot be changed: every type is a frozen dataclass, sequences
are tuples and maps are read-only views (``MappingProxyType``) of maps nobody
else holds. Each object keeps ``fields``, every field exactly as stored and in
stored order, so ``to_json`` gives back the canonical JSON, unknown fields and
unknown block types included.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Iterator, Mapping

EMPTY: Mapping[str, Any] = MappingProxyType({})


def freeze(value: Any) -> Any:
    """A deep read-only copy of a JSON value: maps become read-only views, lists tuples."""
    if isinstance(value, dict):
        return MappingProxyType({key: freeze(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(freeze(item) for item in value)
    return value


def thaw(value: Any) -> Any:
    """The plain JSON value (dicts and lists) of a frozen one."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [thaw(item) for item in value]
    return value


# --- blocks ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Block:
    """A content block. ``fields`` holds every stored field (``id`` and ``type`` too)."""

    id: str
    type: str
    fields: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return thaw(self.fields)


@dataclass(frozen=True, slots=True)
class ProseBlock(Block):
    markdown: str


@dataclass(frozen=True, slots=True)
class CodeBlock(Block):
    text: str
    language: str | None = None


@dataclass(frozen=True, slots=True)
class ToolBlock(Block):
    tool: str
    status: str
    input: Any = None
    output: Any = None
    error: Any = None
    started_at: Any = None
    completed_at: Any = None


@dataclass(frozen=True, slots=True)
class ReasoningBlock(Block):
    text: str
    visibility: str = "private"

    @property
    def is_private(self) -> bool:
        return self.visibility != "visible"


@dataclass(frozen=True, slots=True)
class ErrorBlock(Block):
    code: str
    message: str
    retryable: bool = False


@dataclass(frozen=True, slots=True)
class AttachmentBlock(Block):
    attachment_id: str
    name: str
    media_type: str


@dataclass(frozen=True, slots=True)
class NoticeBlock(Block):
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class SpeechBlock(Block):
    text: str


@dataclass(frozen=True, slots=True)
class UnknownBlock(Block):
    """A block type this version does not know: kept whole, shown only as inert data."""


def _make_prose(f: Mapping[str, Any]) -> Block:
    return ProseBlock(f["id"], "prose", f, f["markdown"])


def _make_code(f: Mapping[str, Any]) -> Block:
    return CodeBlock(f["id"], "code", f, f["text"], f.get("language"))


def _make_tool(f: Mapping[str, Any]) -> Block:
    return ToolBlock(
        f["id"], "tool", f, f["tool"], f["status"], f.get("input"), f.get("output"),
        f.get("error"), f.get("started_at"), f.get("completed_at"),
    )


def _make_reasoning(f: Mapping[str, Any]) -> Block:
    return ReasoningBlock(f["id"], "reasoning", f, f["text"], f.get("visibility", "private"))


def _make_error(f: Mapping[str, Any]) -> Block:
    return ErrorBlock(f["id"], "error", f, f["code"], f["message"], f.get("retryable", False))


def _make_attachment(f: Mapping[str, Any]) -> Block:
    return AttachmentBlock(f["id"], "attachment", f, f["attachment_id"], f["name"], f["media_type"])


def _make_notice(f: Mapping[str, Any]) -> Block:
    return NoticeBlock(f["id"], "notice", f, f["code"], f["message"])


def _make_speech(f: Mapping[str, Any]) -> Block:
    return SpeechBlock(f["id"], "speech", f, f["text"])


_BLOCK_MAKERS: dict[str, Callable[[Mapping[str, Any]], Block]] = {
    "prose": _make_prose,
    "code": _make_code,
    "tool": _make_tool,
    "reasoning": _make_reasoning,
    "error": _make_error,
    "attachment": _make_attachment,
    "notice": _make_notice,
    "speech": _make_speech,
}


def block_from_json(data: Mapping[str, Any]) -> Block:
    """The model of one block that passed ``check_block``."""
    fields = freeze(data) if isinstance(data, dict) else data
    make = _BLOCK_MAKERS.get(fields["type"])
    if make is None:
        return UnknownBlock(fields["id"], fields["type"], fields)
    return make(fields)


# --- messages and sessions ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Message:
    """A message envelope and its ordered blocks.

    ``fields`` holds every stored envelope field in stored order; its
    ``content`` entry only marks where ``blocks`` go when written back.
    """

    id: str
    role: str
    status: str
    created_at: int
    blocks: tuple[Block, ...]
    completed_at: int | None = None
    model: str | None = None
    provider: str | None = None
    author: Any = None
    fields: Mapping[str, Any] = field(default_factory=lambda: EMPTY)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in self.fields.items():
            out[key] = [block.to_json() for block in self.blocks] if key == "content" else thaw(value)
        if "content" not in self.fields:
            out["content"] = [block.to_json() for block in self.blocks]
        return out


def message_from_json(data: dict[str, Any]) -> Message:
    """The model of one message that passed ``check_message``."""
    blocks = tuple(block_from_json(block) for block in data["content"])
    fields = MappingProxyType(
        {key: (() if key == "content" else freeze(value)) for key, value in data.items()}
    )
    return Message(
        id=data["id"],
        role=data["role"],
        status=data["status"],
        created_at=data["created_at"],
        blocks=blocks,
        completed_at=data.get("completed_at"),
        model=data.get("model"),
        provider=data.get("provider"),
        author=fields.get("author"),
        fields=fields,
    )


@dataclass(frozen=True, slots=True)
class StoredAttachment:
    """Attachment bytes and metadata kept by the Vis store (``session_attachment``)."""

    id: str
    turn_id: str
    media_type: str | None
    filename: str | None
    size_bytes: int | None
    data: bytes | None
    storage_uri: str | None
    transcription: str | None


@dataclass(frozen=True, slots=True)
class Session:
    """An ordered list of messages with the session's own metadata.

    ``metadata`` holds the session object's other stored fields, in order;
    ``source`` says where the session was read from, for messages to people.
    """

    id: str
    messages: tuple[Message, ...]
    title: str | None = None
    created_at: int | None = None
    metadata: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    source: str = ""
    attachments: Mapping[str, StoredAttachment] = field(default_factory=lambda: EMPTY)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        if self.title is not None:
            out["title"] = self.title
        if self.created_at is not None:
            out["created_at"] = self.created_at
        out.update(thaw(self.metadata))
        out["messages"] = [message.to_json() for message in self.messages]
        return out

    def blocks(self) -> Iterator[tuple[Message, Block]]:
        for message in self.messages:
            for block in message.blocks:
                yield message, block

    @property
    def first_time(self) -> int | None:
        return min((m.created_at for m in self.messages), default=self.created_at)

    @property
    def last_time(self) -> int | None:
        times = [m.completed_at if m.completed_at is not None else m.created_at for m in self.messages]
        return max(times, default=self.created_at)


SESSION_FIELDS = ("id", "title", "created_at", "messages")


def session_from_json(
    data: dict[str, Any], default_id: str, source: str = ""
) -> Session:
    """The model of one session object that passed ``check_session``."""
    return Session(
        id=data.get("id") or default_id,
        messages=tuple(message_from_json(m) for m in data["messages"]),
        title=data.get("title"),
        created_at=data.get("created_at"),
        metadata=freeze({k: v for k, v in data.items() if k not in SESSION_FIELDS}),
        source=source,
    )
