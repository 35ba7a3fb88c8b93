"""The block types, declared once.

The Vis contract's known types (``schema/block.json`` names the same ones, a
test holds them equal), the Lonis envelope carried as a block, and the
``unknown`` rendering every other type gets. Each table keyed by block type
(the checks, the model classes, the provider projection, the index's text) is
built through ``for_each_type``, which refuses one that leaves a type out, and
a test holds every projector and ``templates/blocks/`` to the same list:
adding a type is its declaration here, its check, its model class, its
renderers and its template.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from vis_export.contract.reasoning_words import names_reasoning

KNOWN_TYPES: tuple[str, ...] = ("prose", "code", "tool", "reasoning", "error", "attachment", "notice", "speech")
CARRIED_TYPES: tuple[str, ...] = ("lonis",)  # not a Vis type: a Lonis envelope carried whole
UNKNOWN = "unknown"
RENDERED_TYPES: tuple[str, ...] = (*KNOWN_TYPES, *CARRIED_TYPES, UNKNOWN)

T = TypeVar("T")


def for_each_type(table: Mapping[str, T], types: tuple[str, ...], what: str) -> dict[str, T]:
    """``table`` in declaration order, or ``TypeError`` naming the types it lacks or adds."""
    missing = [name for name in types if name not in table]
    extra = [name for name in table if name not in types]
    if missing or extra:
        raise TypeError(f"{what}: missing block types {missing}, undeclared {extra}")
    return {name: table[name] for name in types}


def looks_like_reasoning(block_type: object) -> bool:
    """Whether a block type is reasoning or a disguise of it: the one rule that
    judges types, keys and flags (``reasoning_words``)."""
    return isinstance(block_type, str) and names_reasoning(block_type)
