"""Strings as a PostgreSQL index holds them: text (and ``jsonb``) cannot hold NUL.

Apart from the engine, so the question a job asks before opening the index
(``postgresql_quick``) spells its keys the same without importing the engine.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

# PostgreSQL's text cannot hold NUL. Strings are stored with NUL as _ESCAPE "0"
# and _ESCAPE (a noncharacter) as _ESCAPE "1": one to one, so ids stay distinct
# and come back as they were, and a phrase's stored form occurs in a text's
# stored form whenever the phrase occurs in the text (the search's exact check
# on the texts as they were drops the rare converse).
_ESCAPE = "\U0010fffe"
_ESCAPED = re.compile(f"{_ESCAPE}([01])")


def storable(text: str) -> str:
    """A string as the database holds it."""
    if _ESCAPE in text:
        text = text.replace(_ESCAPE, _ESCAPE + "1")
    return text.replace("\x00", _ESCAPE + "0") if "\x00" in text else text


def restored(text: str) -> str:
    """A string the database holds, as it was given."""
    if _ESCAPE not in text:
        return text
    return _ESCAPED.sub(lambda escaped: "\x00" if escaped.group(1) == "0" else _ESCAPE, text)


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
