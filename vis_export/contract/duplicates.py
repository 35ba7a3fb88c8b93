"""Duplicate JSON keys: which maps had them, for the checks to report where.

JSON parsers keep the last value of a repeated key, so
``{"visibility": "private", ..., "visibility": "visible"}`` would load as
visible reasoning. A duplicate key is a contract problem instead (R2). The
parser keeps, of a duplicated key's values, the one that hides more (see
``hides_more``): strictly read, the input is refused anyway; read leniently,
that reading is the one exported.

The parser finds duplicates but does not know where its value will sit in a
session (``messages[2].content[0]``, ``line 4, block``, a store's turn); the
checks do. So while a source is read (``recording``), the parser records each
map that had a duplicate here, and the checks name it when they reach it. A
record holds the map itself, so its identity stays valid while reading.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import Any

from vis_export.contract.private import holds_reasoning
from vis_export.contract.reasoning_words import names_reasoning

_Found = dict[int, tuple[dict[str, Any], tuple[str, ...]]]
_FOUND: ContextVar[_Found | None] = ContextVar("duplicate_keys", default=None)


class recording:
    """Record the maps with duplicate keys that are parsed while reading one source.
    A class, not a generator: every file read enters one (a small file's reading
    pays for a generator's context manager)."""

    __slots__ = ("token",)
    token: Token[_Found | None]

    def __enter__(self) -> None:
        self.token = _FOUND.set({})

    def __exit__(self, *_: object) -> None:
        _FOUND.reset(self.token)


def record(obj: dict[str, Any], keys: tuple[str, ...]) -> bool:
    """Note that ``obj`` had the duplicated ``keys``; false when nothing records
    (a caller that cannot report it must refuse the input)."""
    found = _FOUND.get()
    if found is None:
        return False
    found[id(obj)] = (obj, keys)
    return True


def any_recorded() -> bool:
    """Whether a map with duplicate keys was parsed in the source being read: the
    checks' fast paths, which see no duplicates, are then not taken."""
    return bool(_FOUND.get())


def duplicated(obj: dict[str, Any]) -> tuple[str, ...]:
    """The keys ``obj`` had more than once in its JSON text."""
    found = _FOUND.get()
    entry = found.get(id(obj)) if found else None
    return entry[1] if entry is not None and entry[0] is obj else ()


def merged(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The map of a JSON object's ``pairs``: as ``dict`` makes it, and, when a key
    repeats, recorded with its duplicated keys, each with the value that hides more."""
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    values: dict[str, list[Any]] = {}
    for key, value in pairs:
        values.setdefault(key, []).append(value)
    keys = tuple(key for key, found in values.items() if len(found) > 1)
    for key in keys:
        obj[key] = hides_more(key, values[key])
    if not record(obj, keys):
        raise DuplicateKey(keys)
    return obj


class DuplicateKey(ValueError):
    """A duplicate key parsed where no source is being read to report it."""

    def __init__(self, keys: tuple[str, ...]):
        super().__init__("an object has a duplicate key")
        self.keys = keys


def hides_more(key: str, values: list[Any]) -> Any:
    """Of the values a key had, the first that makes its map private reasoning
    (as ``reasoning_map`` judges a map) or is or holds reasoning itself; else
    the last, as JSON readers take it.

    ``"type": "reasoning"`` beats ``"type": "prose"``, a ``visibility`` other than
    ``visible`` beats ``visible``, ``"thought": true`` beats ``false``, and a tool
    input that holds thinking beats one that does not. Each value is judged
    alone (not the whole map again), so a map with many repeated keys costs no
    more than its size.
    """
    return next((value for value in values if _makes_private(key, value)), values[-1])


def _makes_private(key: str, value: Any) -> bool:
    if key in ("type", "kind"):  # a name, or else (a map, a list: never hashed) what it holds
        return names_reasoning(value) if isinstance(value, str) else holds_reasoning(value)
    if key == "visibility":
        return bool(value != "visible")
    return (value is True and names_reasoning(key)) or holds_reasoning(value)
