"""The reasoning policy (rule R2): the one door every projection takes blocks through.

Private reasoning (``visibility`` private, or none given) reaches an output only
when the caller passes ``reasoning="all"``. Visible reasoning is shown by
default and dropped with ``reasoning="none"``. No format filters reasoning on
its own: ``visible_session`` makes the one view of a session (``SessionView``)
that every projection receives, and ``visible`` the same of a message or block.

Disguises count (hostile or careless input must not leak): a block whose type
only *looks* like reasoning (``"Reasoning"``, ``"thinking"``, ``" reasoning_v2"``),
a reasoning block salvaged by ``--lenient`` because its ``visibility`` was
mis-cased, unknown or ``null``, and any block that carries a ``visibility`` other
than exactly ``"visible"`` are all private. Only a well-formed ``reasoning``
block that says exactly ``visible`` is visible reasoning, and it shows its own
text only: private reasoning it carries in other fields is taken out.

Reasoning held inside data (a tool's input or output, an unknown block, Lonis
data, a message's or the session's fields) is found by one rule
(``reasoning_words.names_reasoning``) that judges a map's type, its keys and
its flags alike: a map whose type names reasoning, a key that names it, and a
map with a true flag that names it (Gemini's ``{"text": ..., "thought": true}``)
are private reasoning wherever they sit. A message or a session whose own map
says so is private reasoning whole: unless all is authorised, a message keeps
its envelope and no blocks (as one whose blocks are all private reasoning), a
session all its messages so, and no title, metadata or attachments.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from vis_export.choices import (  # the levels, where checking one imports neither this module nor the model
    DEFAULT_REASONING as DEFAULT_REASONING,
    INDEX_REASONING as INDEX_REASONING,
    REASONING_CHOICES as REASONING_CHOICES,
    IndexReasoning as IndexReasoning,
    Reasoning as Reasoning,
    check_index_reasoning as check_index_reasoning,
    check_reasoning as check_reasoning,
)
from vis_export.contract.check import ENVELOPE_FIELDS
from vis_export.contract.reasoning_words import SAYING_KEYS, flagged, is_reasoning_map, names_reasoning, says_reasoning
from vis_export.model import EMPTY, Block, LonisBlock, Message, ReasoningBlock, Session, UnknownBlock

if TYPE_CHECKING:
    from vis_export.redaction import Redaction

Exportable = Session | Message | Block | list[Message] | tuple[Message, ...]


def index_level(reasoning: Reasoning) -> IndexReasoning:
    """The most of the reasoning an index searched under the policy ``reasoning`` may hold: the visible reasoning
    the policy shows, never private reasoning (``all`` shows it on a page, but an index outlives the page)."""
    return "none" if reasoning == "none" else "visible"


HIDDEN = "[private reasoning not shown]"


def is_reasoning(block: Block) -> bool:
    """Whether the policy treats ``block`` as reasoning: ``reasoning="none"`` drops it.

    A block shown as data (unknown types, Lonis envelopes) is searched through:
    one that holds reasoning anywhere is hidden whole. A known block that holds
    it inside (a tool's output with a sub-agent's thinking) is shown with that
    part taken out (``redacted``); one that says it is reasoning (a visibility,
    a true reasoning flag) is reasoning.
    """
    if isinstance(block, ReasoningBlock):
        return True
    if isinstance(block, (UnknownBlock, LonisBlock)):
        return _holds_reasoning(block.fields)
    # A known block's type is its own: what makes it reasoning is a visibility or a flag.
    return block.fields.get("visibility", "visible") != "visible" or flagged(block.fields)


_FROZEN = frozenset({MappingProxyType, dict, tuple, list})


def _holds_reasoning(value: object) -> bool:
    """Whether a stored value is or holds reasoning: a map that looks like it, or
    a key that names it. Loading bounds nesting, so the recursion is bounded too."""
    kind = type(value)  # exact types, not ABCs: this walks every stored container of every export
    if kind is MappingProxyType or kind is dict:
        mapping: Mapping[str, Any] = value  # type: ignore[assignment]
        if says_reasoning(mapping) or any(map(names_reasoning, mapping)):  # a flag's key names reasoning too
            return True
        return any(_holds_reasoning(item) for item in mapping.values() if type(item) in _FROZEN)
    if kind is tuple or kind is list:
        return any(_holds_reasoning(item) for item in value if type(item) in _FROZEN)  # type: ignore[attr-defined]
    return False


def _redacted(value: Any) -> Any:
    """``value`` with every part that is or holds reasoning replaced by ``HIDDEN``."""
    if isinstance(value, Mapping):
        if is_reasoning_map(value):
            return HIDDEN
        return MappingProxyType(
            {key: HIDDEN if names_reasoning(key) else _redacted(item) for key, item in value.items()}
        )
    if isinstance(value, (tuple, list)):
        return tuple(_redacted(item) for item in value)
    return value


def _fields_shown(fields: Mapping[str, Any], named: bool | None = None) -> Mapping[str, Any]:
    """Stored fields with reasoning inside them taken out; the same map when there
    is none. ``named``: whether a key names reasoning, when the caller knows."""
    # This runs for every block and message of every export: keys are judged at C
    # speed, and only stored containers are searched (text and numbers hold no key).
    if named is None:
        named = any(map(names_reasoning, fields))
    if not named:
        for item in fields.values():  # a plain loop: cheaper than a generator, for a few items
            if type(item) in _FROZEN and _holds_reasoning(item):
                break
        else:
            return fields
    return MappingProxyType({key: HIDDEN if names_reasoning(key) else _redacted(item) for key, item in fields.items()})


def is_private(block: Block) -> bool:
    """Whether ``block`` is private reasoning: reasoning that does not say exactly ``visible``.

    Only a block the loader typed as reasoning can be visible reasoning; a
    disguised one (an unknown type that looks like reasoning, a salvaged
    block) is private whatever it says.
    """
    if isinstance(block, ReasoningBlock):
        return block.is_private
    return is_reasoning(block)


def shows(block: Block, reasoning: Reasoning = DEFAULT_REASONING) -> bool:
    """Whether ``block`` may reach an output under this policy."""
    if reasoning == "all" or not is_reasoning(block):
        return True
    return reasoning == "visible" and not is_private(block)


def _shown_block(block: Block, reasoning: Reasoning) -> Block | None:
    """The block as the policy shows it (``None``: hidden), with reasoning held
    inside it taken out unless all is authorised: visible reasoning shows its own
    text, never private reasoning it carries. The same judgement as ``shows``,
    with one look at a known block's keys (this runs for every block of every export)."""
    if reasoning == "all":
        return block
    fields = block.fields
    if isinstance(block, ReasoningBlock):
        if reasoning == "none" or block.is_private:
            return None
        named = None
    elif isinstance(block, (UnknownBlock, LonisBlock)):
        return None if _holds_reasoning(fields) else block  # holds none: nothing to take out
    else:
        named = any(map(names_reasoning, fields))
        if fields.get("visibility", "visible") != "visible" or (named and flagged(fields)):
            return None  # a known block that says it is reasoning is private
    shown = _fields_shown(fields, named)
    return block if shown is fields else type(block)(shown)


def visible_blocks(blocks: Iterable[Block], reasoning: Reasoning = DEFAULT_REASONING) -> tuple[Block, ...]:
    check_reasoning(reasoning)
    return tuple(shown for shown in (_shown_block(block, reasoning) for block in blocks) if shown is not None)


def _hidden_message(message: Message) -> Message:
    """A message that is private reasoning as every projection gets it: its envelope and no
    blocks, as a message all of whose blocks are private reasoning becomes (never its text)."""
    # The contract's envelope, nothing it may hold beside (a field of a message that is reasoning is its reasoning).
    fields = MappingProxyType({key: value for key, value in message.fields.items() if key in ENVELOPE_FIELDS})
    return replace(message, blocks=(), fields=fields, author=None)


def _private_map(fields: Mapping[str, Any], named: bool) -> bool:
    """Whether a message's or a session's own map says it is reasoning (a type that names it,
    a visibility other than exactly ``visible``, a true reasoning flag): then it is private reasoning,
    whatever its blocks say. ``named``: whether a key names reasoning."""
    return (named and flagged(fields)) or (not SAYING_KEYS.isdisjoint(fields) and says_reasoning(fields))


def visible_message(message: Message, reasoning: Reasoning = DEFAULT_REASONING) -> Message:
    """``message`` as the policy shows it: a message that says it is reasoning shows
    nothing but its envelope (a message cannot be visible reasoning: only a block can)."""
    fields = message.fields
    if reasoning != "all":
        named = any(map(names_reasoning, fields))  # keys judged once, for the flag and for what is shown
        if _private_map(fields, named):
            return _hidden_message(message)
        fields = _fields_shown(fields, named)
    blocks = visible_blocks(message.blocks, reasoning)
    if (
        fields is message.fields
        and all(a is b for a, b in zip(blocks, message.blocks, strict=False))
        and len(blocks) == len(message.blocks)
    ):
        return message
    return replace(message, blocks=blocks, fields=fields, author=fields.get("author"))


@dataclass(frozen=True, slots=True)
class SessionView(Session):
    """A session as the policy shows it under ``reasoning``: the one thing every
    projection receives (R2).

    Made once, by ``visible_session``, before anything is projected: formats (a
    plugin's too), the index's documents, ``serve``, the clipboard, provider
    messages and Dask tasks take this type, never the loaded ``Session``, so what
    a projection is handed cannot hold what the policy hides.

    ``redaction``: the rules whose finds were replaced by markers (R8), applied
    after reasoning is hidden (``vis_export.redaction.redact`` says why).
    """

    reasoning: Reasoning = DEFAULT_REASONING
    redaction: Redaction | None = None


_SESSION_FIELDS = tuple(field.name for field in fields(Session))
# From the policy that hides most to the one that hides least.
_STRICTNESS: dict[Reasoning, int] = {"none": 0, "visible": 1, "all": 2}


def visible_session(
    session: Session, reasoning: Reasoning = DEFAULT_REASONING, redaction: Redaction | None = None
) -> SessionView:
    """The view of ``session`` under ``reasoning`` (and ``redaction``, when given); a
    view already made under a policy that hides as much or more is returned as it
    is (a view never shows more than it holds)."""
    check_reasoning(reasoning)
    if isinstance(session, SessionView) and _STRICTNESS[session.reasoning] <= _STRICTNESS[reasoning]:
        view = session
    else:
        kept = {name: getattr(session, name) for name in _SESSION_FIELDS}
        metadata = session.metadata
        if reasoning != "all" and _private_map(metadata, any(map(names_reasoning, metadata))):
            # A session that says it is reasoning: every message of it is, and its title and attachments too.
            messages = tuple(_hidden_message(m) for m in session.messages)
            kept.update(title=None, attachments=EMPTY)
            metadata = EMPTY
        else:
            messages = tuple(visible_message(m, reasoning) for m in session.messages)
            metadata = metadata if reasoning == "all" else _fields_shown(metadata)
        view = SessionView(**{**kept, "messages": messages, "metadata": metadata}, reasoning=reasoning)
    if redaction is None or view.redaction == redaction:
        return view
    from vis_export.redaction import redacted  # only a redacting caller needs its dependencies

    return replace(redacted(view, redaction), redaction=redaction)


def visible(
    obj: Exportable, reasoning: Reasoning = DEFAULT_REASONING, redaction: Redaction | None = None
) -> Exportable | None:
    """The same kind of object with what the policy hides taken out (and, with
    ``redaction``, its secrets replaced by markers numbered within ``obj``).

    A single block the policy hides gives ``None``: a copy button on a private
    reasoning block copies nothing.
    """
    check_reasoning(reasoning)
    if isinstance(obj, Session):
        return visible_session(obj, reasoning, redaction)
    if redaction is not None:
        from vis_export.redaction.redact import redacted_part  # only a redacting caller needs its dependencies

        return redacted_part(visible(obj, reasoning), redaction)
    if isinstance(obj, Message):
        return visible_message(obj, reasoning)
    if isinstance(obj, Block):
        return _shown_block(obj, reasoning)
    if isinstance(obj, (list, tuple)):
        return [visible_message(m, reasoning) for m in obj]
    raise TypeError(f"cannot export a {type(obj).__name__}; expected a Session, Message, Block or list of messages")
