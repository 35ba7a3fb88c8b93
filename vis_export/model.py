"""The session model: frozen types that every source produces and every format reads.

A loaded session cannot be changed: every type is a frozen dataclass, sequences
are tuples and maps are read-only proxies (``MappingProxyType``) of maps nobody
else holds. Each object keeps ``fields``, every field exactly as stored and in
stored order, so ``to_json`` gives back the canonical JSON, unknown fields and
unknown block types included.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import FrozenInstanceError, dataclass, field
from types import MappingProxyType
from typing import Any

from vis_export.contract.blocktypes import CARRIED_TYPES, KNOWN_TYPES, for_each_type

EMPTY: Mapping[str, Any] = MappingProxyType({})


def freeze(value: Any) -> Any:
    """A deep read-only copy of a JSON value: maps become read-only proxies, lists tuples.

    Written for speed (it touches every container of every loaded session): leaves
    are returned as they are without a call.
    """
    kind = type(value)
    if kind is dict:
        return MappingProxyType(
            {key: freeze(item) if type(item) in _CONTAINERS else item for key, item in value.items()}
        )
    if kind is list:
        return tuple([freeze(item) if type(item) in _CONTAINERS else item for item in value])
    return value


_CONTAINERS = frozenset({dict, list})


def adopt(value: Any) -> Any:
    """``freeze`` for a value nobody else holds (just parsed, as a reader has it):
    its maps are frozen where they are, not copied. Copying a 16 MB session's
    maps, and then freeing the parsed ones, was a sixth of loading it. The maps
    inside ``value`` are changed (lists become tuples) and must not be used after."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(item) in _CONTAINERS:
                value[key] = adopt(item)
        return MappingProxyType(value)
    if kind is list:
        return tuple([adopt(item) if type(item) in _CONTAINERS else item for item in value])
    return value


def thaw(value: Any) -> Any:
    """The plain JSON value (dicts and lists) of a frozen one."""
    kind = type(value)
    if kind is MappingProxyType or kind is dict:
        return {key: thaw(item) if type(item) in _FROZEN else item for key, item in value.items()}
    if kind is tuple or kind is list:
        return [thaw(item) if type(item) in _FROZEN else item for item in value]
    return value


_FROZEN = frozenset({MappingProxyType, dict, tuple, list})


# --- blocks ----------------------------------------------------------------------

_REQUIRED: Any = object()


def _field(name: str, default: Any = _REQUIRED) -> Any:
    """A read-only attribute that reads one stored field (with the contract's default)."""
    if default is _REQUIRED:
        return property(lambda self: self.fields[name], doc=f"The stored ``{name}`` field.")
    return property(lambda self: self.fields.get(name, default), doc=f"The stored ``{name}`` field, if any.")


class Block:
    """A content block: ``fields`` holds every stored field, ``id`` and ``type`` too.

    Typed attributes (``markdown``, ``status`` ...) read from ``fields``, so a
    block is one small object over one read-only map: loading a 16 MB session
    builds tens of thousands of them, and a dataclass per block costs twice as much.
    """

    __slots__ = ("fields",)
    fields: Mapping[str, Any]

    def __init__(self, fields: Mapping[str, Any]):
        object.__setattr__(self, "fields", fields)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Block) and type(other) is type(self) and self.fields == other.fields

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self.fields)!r})"

    id = _field("id")
    type = _field("type")

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = thaw(self.fields)
        return value


class ProseBlock(Block):
    __slots__ = ()
    markdown = _field("markdown")


class CodeBlock(Block):
    __slots__ = ()
    text = _field("text")

    @property
    def language(self) -> str | None:
        """The stored ``language``; ``None`` when absent, empty or blank, which name no language."""
        value = self.fields.get("language")
        return value if isinstance(value, str) and value.strip() else None


class ToolBlock(Block):
    __slots__ = ()
    tool = _field("tool")
    status = _field("status")
    input = _field("input", None)
    output = _field("output", None)
    error = _field("error", None)
    started_at = _field("started_at", None)
    completed_at = _field("completed_at", None)


class ReasoningBlock(Block):
    __slots__ = ()
    text = _field("text")
    visibility = _field("visibility", "private")

    @property
    def is_private(self) -> bool:
        return self.fields.get("visibility") != "visible"


class ErrorBlock(Block):
    __slots__ = ()
    code = _field("code")
    message = _field("message")
    retryable = _field("retryable", False)


class AttachmentBlock(Block):
    __slots__ = ()
    attachment_id = _field("attachment_id")
    name = _field("name")
    media_type = _field("media_type")


class NoticeBlock(Block):
    __slots__ = ()
    code = _field("code")
    message = _field("message")


class SpeechBlock(Block):
    __slots__ = ()
    text = _field("text")


class LonisBlock(Block):
    """A Lonis block (``lonis.block/v1``) carried whole in ``envelope``."""

    __slots__ = ()
    envelope = _field("envelope")


class UnknownBlock(Block):
    """A block type this version does not know: kept whole, shown only as inert data."""

    __slots__ = ()


BLOCK_CLASSES: dict[str, type[Block]] = for_each_type(
    {
        "prose": ProseBlock,
        "code": CodeBlock,
        "tool": ToolBlock,
        "reasoning": ReasoningBlock,
        "error": ErrorBlock,
        "attachment": AttachmentBlock,
        "notice": NoticeBlock,
        "speech": SpeechBlock,
        "lonis": LonisBlock,
    },
    (*KNOWN_TYPES, *CARRIED_TYPES),
    "model classes",
)


def block_from_json(data: Mapping[str, Any], owned: bool = False) -> Block:
    """The model of one block that passed ``check_block``; ``owned``: ``data`` is
    nobody else's, to be frozen in place (``adopt``)."""
    return block_of((adopt(data) if owned else freeze(data)) if type(data) is dict else data)


# How a block is made without ``__init__``: a bare object, then its one slot set past the
# frozen ``__setattr__``; here and in ``sources.trusted``, which makes the known types' own.
new_bare = object.__new__
set_block_fields = Block.__dict__["fields"].__set__


def block_of(fields: Mapping[str, Any]) -> Block:
    """The model of one checked block whose fields are already frozen. Made
    without a call to ``__init__`` (a third of the cost of a block, and loading
    a 16 MB session makes tens of thousands)."""
    kind = BLOCK_CLASSES.get(fields["type"], UnknownBlock)
    if kind is LonisBlock and not _carries_lonis(fields):
        kind = UnknownBlock  # "lonis" is no Vis type: without an envelope it is just unknown
    block = new_bare(kind)
    set_block_fields(block, fields)
    return block


def _carries_lonis(fields: Mapping[str, Any]) -> bool:
    """Whether the block carries a whole, valid Lonis envelope: only then is it
    rendered as one; any other is inert data, so no renderer meets a broken one."""
    from vis_export.contract.lonis_check import check_lonis_block

    envelope = fields.get("envelope")
    return isinstance(envelope, Mapping) and not check_lonis_block(thaw(envelope))


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


def message_from_json(data: dict[str, Any], owned: bool = False) -> Message:
    """The model of one message that passed ``check_message``; ``owned``: ``data``
    is nobody else's, to be frozen in place (``adopt``)."""
    blocks = tuple([block_from_json(block, owned) for block in data["content"]])
    envelope = data if owned else dict(data)
    for key, value in envelope.items():
        if key == "content":
            envelope[key] = ()
        elif type(value) in _CONTAINERS:
            envelope[key] = adopt(value) if owned else freeze(value)
    return message_of(MappingProxyType(envelope), blocks)


# The slots ``message_of`` sets, in ``Message``'s order.
_MESSAGE_SLOTS = (
    *("id", "role", "status", "created_at", "blocks"),
    *("completed_at", "model", "provider", "author", "fields"),
)
if Message.__slots__ != _MESSAGE_SLOTS:  # pragma: no cover - caught on import by every test
    raise TypeError(f"message_of sets {_MESSAGE_SLOTS}, but Message has {Message.__slots__}")


class _OpenMessage:
    """``Message``'s slots, not frozen: ``message_of`` sets them as plain
    attributes and then makes the object a ``Message`` (the same layout). Its
    frozen ``__init__`` took 2.6 µs a message; setting its slots one by one
    through their descriptors, 0.7; this, a third of that."""

    __slots__ = _MESSAGE_SLOTS


def message_of(fields: Mapping[str, Any], blocks: tuple[Block, ...]) -> Message:
    """The model of one checked message: ``fields``, its envelope already frozen
    (``content`` as ``()``, marking where ``blocks`` go), and its blocks."""
    message: Any = _OpenMessage()
    message.id = fields["id"]
    message.role = fields["role"]
    message.status = fields["status"]
    message.created_at = fields["created_at"]
    message.blocks = blocks
    get = fields.get
    message.completed_at = get("completed_at")
    message.model = get("model")
    message.provider = get("provider")
    message.author = get("author")
    message.fields = fields
    message.__class__ = Message
    return message  # type: ignore[no-any-return]


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


def session_from_json(data: dict[str, Any], default_id: str, source: str = "", owned: bool = False) -> Session:
    """The model of one session object that passed ``check_session``; ``owned``:
    ``data`` is nobody else's, to be frozen in place (``adopt``)."""
    messages = tuple([message_from_json(m, owned) for m in data["messages"]])
    return session_of(data, messages, default_id, source, owned)


def session_of(
    data: dict[str, Any], messages: tuple[Message, ...], default_id: str, source: str = "", owned: bool = False
) -> Session:
    """``session_from_json`` for a session object whose messages are already built."""
    metadata = {k: v for k, v in data.items() if k not in SESSION_FIELDS}
    return Session(
        id=data.get("id") or default_id,
        messages=messages,
        title=data.get("title"),
        created_at=data.get("created_at"),
        metadata=adopt(metadata) if owned else freeze(metadata),
        source=source,
    )
