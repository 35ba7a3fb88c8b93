"""The reasoning policy (rule R2): the one door every projection takes blocks through.

Private reasoning (``visibility`` private, or none given) reaches an output only
when the caller passes ``reasoning="all"``. Visible reasoning is shown by
default and dropped with ``reasoning="none"``. No format filters reasoning on
its own; each calls ``visible_session``, ``visible_message`` or ``visible_blocks``.

Disguises count (hostile or careless input must not leak): a block whose type
only *looks* like reasoning (``"Reasoning"``, ``"thinking"``, ``" reasoning_v2"``),
a reasoning block salvaged by ``--lenient`` because its ``visibility`` was
mis-cased, unknown or ``null``, and any block that carries a ``visibility`` other
than exactly ``"visible"`` are all private. Only a well-formed ``reasoning``
block that says exactly ``visible`` is visible reasoning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Literal

from vis_export.model import Block, Message, ReasoningBlock, Session, UnknownBlock

Exportable = Session | Message | Block | list[Message] | tuple[Message, ...]

Reasoning = Literal["none", "visible", "all"]
REASONING_CHOICES: tuple[Reasoning, ...] = ("none", "visible", "all")
DEFAULT_REASONING: Reasoning = "visible"


def check_reasoning(reasoning: str) -> Reasoning:
    if reasoning not in REASONING_CHOICES:
        raise ValueError(f"reasoning must be one of {', '.join(REASONING_CHOICES)}, not {reasoning!r}")
    return reasoning


# Words that make a block type look like reasoning once case, digits and
# punctuation are stripped: what agents and providers call private thought.
_REASONING_WORDS = ("reason", "think", "thought")
_NOT_LETTERS = re.compile(r"[^a-z]+")


def looks_like_reasoning(block_type: object) -> bool:
    """Whether a block type is reasoning or a disguise of it (any case, spacing or suffix)."""
    if not isinstance(block_type, str):
        return False
    letters = _NOT_LETTERS.sub("", block_type.casefold())
    return any(word in letters for word in _REASONING_WORDS)


def is_reasoning(block: Block) -> bool:
    """Whether the policy treats ``block`` as reasoning: ``reasoning="none"`` drops it.

    An unknown block is searched through: one that wraps a reasoning block (or
    anything marked with a visibility) is shown as data, so it hides it.
    """
    if isinstance(block, ReasoningBlock):
        return True
    if isinstance(block, UnknownBlock):
        return _holds_reasoning(block.fields)
    return bool(block.fields.get("visibility", "visible") != "visible")


def _holds_reasoning(value: object) -> bool:
    """Whether a stored value is or holds a map that is or looks like reasoning.

    Loading bounds nesting, so the recursion is bounded too."""
    if isinstance(value, Mapping):
        if looks_like_reasoning(value.get("type")) or value.get("visibility", "visible") != "visible":
            return True
        return any(_holds_reasoning(item) for item in value.values() if isinstance(item, (Mapping, tuple, list)))
    if isinstance(value, (tuple, list)):
        return any(_holds_reasoning(item) for item in value if isinstance(item, (Mapping, tuple, list)))
    return False


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


def visible_blocks(blocks: Iterable[Block], reasoning: Reasoning = DEFAULT_REASONING) -> tuple[Block, ...]:
    check_reasoning(reasoning)
    return tuple(block for block in blocks if shows(block, reasoning))


def visible_message(message: Message, reasoning: Reasoning = DEFAULT_REASONING) -> Message:
    blocks = visible_blocks(message.blocks, reasoning)
    if len(blocks) == len(message.blocks):
        return message
    return replace(message, blocks=blocks)


def visible_session(session: Session, reasoning: Reasoning = DEFAULT_REASONING) -> Session:
    check_reasoning(reasoning)
    messages = tuple(visible_message(m, reasoning) for m in session.messages)
    if all(a is b for a, b in zip(messages, session.messages, strict=True)):
        return session
    return replace(session, messages=messages)


def visible(obj: Exportable, reasoning: Reasoning = DEFAULT_REASONING) -> Exportable | None:
    """The same kind of object with what the policy hides taken out.

    A single block the policy hides gives ``None``: a copy button on a private
    reasoning block copies nothing.
    """
    check_reasoning(reasoning)
    if isinstance(obj, Session):
        return visible_session(obj, reasoning)
    if isinstance(obj, Message):
        return visible_message(obj, reasoning)
    if isinstance(obj, Block):
        return obj if shows(obj, reasoning) else None
    if isinstance(obj, (list, tuple)):
        return [visible_message(m, reasoning) for m in obj]
    raise TypeError(f"cannot export a {type(obj).__name__}; expected a Session, Message, Block or list of messages")
