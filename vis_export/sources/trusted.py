"""Sessions built in one pass from the quick reading's values, checked as they are built.

A value the compiled parser read (``jsontext.read_quick``) has no duplicate
key and nothing the exact reading would refuse; what is left to know is
whether it keeps the contract. Checking it (``check_session``) and then
freezing it into the model (``session_from_json``) walked every container
twice; here each is visited once: its keys judged, its depth counted and it
is frozen in place, with the contract's own fast predicates
(``session_shape_ok``, ``envelope_shape_ok``, ``block_shape_ok``,
``snake_keys``), so what is built is exactly what the check and the model
would have made. A block or envelope whose fields are all ones its predicate
has found to be strings, integers or booleans (``SCALAR_FIELDS``,
``ENVELOPE_FIELDS``) is not looked over again for containers and floats (the
16 MB read: 2% fewer instructions, about 6% less CPU time at load 9-10).

Anything those predicates cannot vouch for (a problem, or a rare valid shape
such as a time written ``3.0``) raises ``NotCertain``. The value may by then be
partly frozen, so the reader drops it and reads the text again, exactly:
every problem line still comes from the exact reading and the detailed checks.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from vis_export.contract.check import (
    ENVELOPE_FIELDS,
    MAX_DEPTH,
    SCALAR_FIELDS,
    block_shape_ok,
    envelope_shape_ok,
    session_shape_ok,
    snake_keys,
)
from vis_export.contract.duplicates import any_recorded
from vis_export.model import (
    BLOCK_CLASSES,
    Block,
    LonisBlock,
    Message,
    Session,
    block_of,
    message_of,
    new_bare,
    session_of,
    set_block_fields,
)
from vis_export.sources.jsontext import INFINITE


class NotCertain(Exception):
    """The value may break the contract: read the text exactly (the value may have been changed)."""


def trusted_session(value: dict[str, Any], default_id: str, source: str) -> Session:
    """The session of a session object, as ``check_session`` and then ``session_from_json`` would make it."""
    if not session_shape_ok(value) or any_recorded():
        raise NotCertain
    for key, item in value.items():  # the metadata's containers: keys, depth and numbers judged as frozen
        if key != "messages" and type(item) in _SEEN:
            value[key] = _frozen(item, 1)
    return session_of(value, trusted_messages(value["messages"], 2), default_id, source, owned=True)


def trusted_messages(values: list[Any], depth: int) -> tuple[Message, ...]:
    """The messages of ``values``, each at ``depth`` (the length of its path in the
    document: 2 in a session's ``messages`` or an array's, 0 for a lone message)."""
    if any_recorded():
        raise NotCertain
    return tuple([_message(value, depth) for value in values])


def _message(envelope: Any, depth: int) -> Message:
    """The message, its blocks made in its own loop: blocks are most of a session,
    and the calls saved a block were 7% of the pass's instructions."""
    if not envelope_shape_ok(envelope):
        raise NotCertain
    inner = depth + 3  # a block's fields: messages[i].content[j].field
    blocks: list[Block] = []
    append = blocks.append
    for block in envelope["content"]:
        if not block_shape_ok(block):
            raise NotCertain
        name = block["type"]
        if not SCALAR_FIELDS.get(name, _NONE).issuperset(block):  # some field may hold a container or a float
            for key, item in block.items():
                if type(item) in _SEEN:
                    block[key] = _frozen(item, inner)
        kind = _PLAIN.get(name)
        if kind is None:  # an unknown type, or a Lonis envelope to look at
            append(block_of(MappingProxyType(block)))
        else:
            made = new_bare(kind)
            set_block_fields(made, MappingProxyType(block))
            append(made)
    envelope["content"] = ()
    if not ENVELOPE_FIELDS.issuperset(envelope):
        depth += 1
        for key, item in envelope.items():
            if type(item) in _SEEN:
                envelope[key] = _frozen(item, depth)
    return message_of(MappingProxyType(envelope), tuple(blocks))


def _frozen(value: Any, depth: int) -> Any:
    """A container frozen in place, or a float, which must be finite."""
    kind = type(value)
    if kind is float:
        if value in INFINITE:
            raise NotCertain
        return value
    if depth >= MAX_DEPTH:
        raise NotCertain
    depth += 1
    if kind is dict:
        if not snake_keys(value):
            raise NotCertain
        for key, item in value.items():
            if type(item) in _SEEN:
                value[key] = _frozen(item, depth)
        return MappingProxyType(value)
    if _PLAIN_VALUES.issuperset(map(type, value)):  # nothing to look into: copied in C
        return tuple(value)
    return tuple([_frozen(item, depth) if type(item) in _SEEN else item for item in value])


# What the pass looks into: containers, to freeze; floats, which the quick reading
# gives as infinities where the exact one refuses them (``jsontext.read_quick``).
_SEEN = frozenset({dict, list, float})
_PLAIN_VALUES = frozenset({str, int, bool, type(None)})
_NONE: frozenset[str] = frozenset()
# The known types' classes, made here as ``block_of`` makes them; a Lonis block
# (whose envelope decides its class) and an unknown type are ``block_of``'s.
_PLAIN = {name: kind for name, kind in BLOCK_CLASSES.items() if kind is not LonisBlock}
