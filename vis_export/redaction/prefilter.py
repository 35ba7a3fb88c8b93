"""Which messages of a session may hold a find, judged on their JSON text without a walk in Python.

Walking a session's maps in Python to gather its strings for ``triggered_among``
cost as much as searching them: msgspec writes every message's fields and blocks
as JSON at C speed, and one RE2 pass over that text (``JSON_TRIGGER``) tells the
messages that may hold a find from those that cannot. Only the former are walked
(``redact.Redactor._helds``), so the rest are left as they are, as before.

The expression is every trigger of ``rules.TRIGGERS`` read on JSON text, where a
string's quote, backslash and control characters are written escaped
(``jsontext.json_form``: a trigger is written once, in ``rules``), and what else
makes a message worth a walk: a string that may read otherwise than written
(``detect.hides``: a backslash before punctuation, an invisible character), or
one under a key that makes it a find (a key that hints at a secret over a
string; a secret's name over a string or a number). It finds more than that (a
key's word anywhere in a key, a trigger that ends at a string's end): a message
found in vain costs its walk, never a find.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Sequence
from operator import attrgetter

import msgspec
import re2

from vis_export.model import Message
from vis_export.redaction.detect import INVISIBLE, PUNCTUATION
from vis_export.redaction.jsontext import json_form
from vis_export.redaction.rules import KEYWORD, SECRET_KEY, TRIGGERS

# Python's case-insensitive ``i`` also matches U+0130 and U+0131, which RE2's does not;
# every other letter and digit of the key rules folds alike in both (checked for every code point).
_I = "[i\u0130\u0131]"


def _python_folds(pattern: str) -> str:
    """A case-insensitive expression of the key rules (``(?i)`` or ``(?i:…)`` whole) in RE2 syntax,
    as Python matches it."""
    assert pattern.startswith(("(?i)", "(?i:")), pattern
    body = pattern[4:-1] if pattern.startswith("(?i:") else pattern[4:]
    return "(?i:" + body.replace("i", _I).replace("[a-z0-9]", "[a-z0-9\u0130\u0131]") + ")"


def json_trigger(triggers: Iterable[str]) -> str:
    """What tells, in a message's JSON text, that it may hold a find: ``triggers`` read on JSON
    text; what ``detect.hides`` looks for (a backslash before punctuation, an invisible character); a key
    that hints at a secret over a string; a secret's name over a string or a number."""
    return "|".join(
        [
            *map(json_form, triggers),
            json_form(rf"\\{PUNCTUATION}"),
            json_form(f"[{INVISIBLE}]"),
            _python_folds(KEYWORD) + r'(?:[^"\\]|\\.)*":"',
            '"' + _python_folds(SECRET_KEY.pattern) + '":(?:[-0-9"]|null)',
        ]
    )


JSON_TRIGGER = json_trigger(TRIGGERS.values())
_JSON_TRIGGER = re2.compile(JSON_TRIGGER)
# Maps are read-only views of the loader's dicts: what one holds is its dict, found at C speed.
_ENCODER = msgspec.json.Encoder(enc_hook=gc.get_referents)
_END = msgspec.Raw(b"\n")  # after each message: JSON text holds no raw line break
_FIELDS = attrgetter("fields")


def flagged(messages: Sequence[Message]) -> list[int] | None:
    """The indices of the messages that may hold a find, in order; ``None`` when their JSON
    cannot be written (a lone surrogate, which UTF-8 does not hold): all may."""
    parts: list[object] = []
    append, extend = parts.append, parts.extend
    for message in messages:
        append(message.fields)
        extend(map(_FIELDS, message.blocks))
        append(_END)
    try:
        data = _ENCODER.encode(parts)
    except (TypeError, ValueError, RecursionError):  # ValueError: UnicodeEncodeError
        return None
    found: list[int] = []
    index = at = 0  # the message that starts at ``at``
    while (match := _JSON_TRIGGER.search(data, at)) is not None:
        start = match.start()  # once: the wrapper's Match computes it anew each time
        # The messages that ended before the hit, found one line break at a time: a count of
        # them all read every byte, twice as slowly as the search.
        while -1 < (end := data.find(b"\n", at)) < start:
            at, index = end + 1, index + 1
        if end < 0:  # past the last message (the closing bracket): none is
            break
        found.append(index)
        at, index = end + 1, index + 1
    return found
