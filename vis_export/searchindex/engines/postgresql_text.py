"""Strings as a PostgreSQL index holds them: text (and ``jsonb``) cannot hold NUL.

Apart from the engine, so the question a job asks before opening the index
(``postgresql_quick``) spells its keys the same without importing the engine.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

# PostgreSQL's text cannot hold NUL, nor a lone surrogate (UTF-8 has none: a
# file name of bytes that are not UTF-8 holds them as Python reads it, and so
# do the file's key and a session id taken from its name). Strings are stored
# with NUL as _ESCAPE "0", _ESCAPE (a noncharacter) as _ESCAPE "1" and a
# surrogate as _ESCAPE "2" and its four hex digits: one to one, so ids stay
# distinct and come back as they were, and a phrase's stored form occurs in a
# text's stored form whenever the phrase occurs in the text (the search's
# exact check on the texts as they were drops the rare converse).
_ESCAPE = "\U0010fffe"
_ESCAPED = re.compile(f"{_ESCAPE}(?:([01])|2([0-9a-f]{{4}}))")
_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """A string as the database holds it."""
    if _ESCAPE in text:
        text = text.replace(_ESCAPE, _ESCAPE + "1")
    if "\x00" in text:
        text = text.replace("\x00", _ESCAPE + "0")
    if not text.isascii() and _SURROGATE.search(text):
        text = _SURROGATE.sub(lambda found: f"{_ESCAPE}2{ord(found[0]):04x}", text)
    return text


def restored(text: str) -> str:
    """A string the database holds, as it was given."""
    if _ESCAPE not in text:
        return text
    return _ESCAPED.sub(_restored, text)


def _restored(escaped: re.Match[str]) -> str:
    if escaped[2] is not None:
        return chr(int(escaped[2], 16))
    return "\x00" if escaped[1] == "0" else _ESCAPE


def each_string(value: Any, change: Callable[[str], str]) -> Any:
    """A JSON value with ``change`` made to every string in it, keys too
    (``storable`` or ``restored``: ``jsonb`` cannot hold NUL either)."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {change(key): each_string(item, change) for key, item in value.items()}
    if isinstance(value, list):
        return [each_string(item, change) for item in value]
    return value
