"""Which messages of a session may hold a find, judged on their JSON text without a walk in Python.

Walking a session's maps in Python to gather its strings for ``triggered_among``
cost as much as searching them: msgspec writes every message's fields and blocks
as JSON at C speed, and one RE2 pass over that text (``JSON_TRIGGER``) tells the
messages that may hold a find from those that cannot. Only the former are walked
(``redact.Redactor._helds``), so the rest are left as they are, as before.

The expression is ``TRIGGER`` read on JSON text, where a string's quote,
backslash and control characters are written escaped, widened so that it finds
something in a message whenever any of its strings is ``triggered`` alone, may
read otherwise than written (``detect.hides``: a backslash before punctuation,
an invisible character), or sits under a key that makes it a find (a key that
hints at a secret over a string; a secret's name over a string or a number).
It finds more than that (a keyword in an escaped quote's company): a message
found in vain costs its walk, never a find.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from operator import attrgetter

import msgspec
import re2

from vis_export.model import Message
from vis_export.redaction.detect import _INVISIBLE
from vis_export.redaction.rules import SECRET_KEY

# Python's case-insensitive ``i`` also matches U+0130 and U+0131, which RE2's does not;
# every other letter and digit of the key rules folds alike in both (checked for every code point).
_I = "[i\u0130\u0131]"
_KEYWORD = f"(?i:pass|pwd|secret|token|key|auth|credent{_I}al|cookie|contrase)"
_ESCAPED = r"(?:\\[\\\"]|['\]])*"  # a quote, backslash or bracket as written inside a JSON string
_BLANKS = r"(?:[ ]|\\t)*"
# After a character that is no letter, digit, _ or -: itself, or the last of its escape (\n, \u001f).
_NOT_WORD = r"(?:[^A-Za-z0-9_-]|\\[bfnrt]|\\u00[0-9a-f]{2})"


def _secret_name() -> str:
    """``SECRET_KEY`` in RE2 syntax, as Python matches it (whole keys hold only what it spells out)."""
    pattern = SECRET_KEY.pattern
    assert pattern.startswith("(?i)"), pattern
    return "(?i:" + pattern[4:].replace("i", _I).replace("[a-z0-9]", "[a-z0-9\u0130\u0131]") + ")"


JSON_TRIGGER = "|".join(
    [
        # ``KEYWORD_LINE``
        _KEYWORD + r"[A-Za-z0-9_.\-]*" + _ESCAPED + _BLANKS + r"(?:[=:!]|\.assign\(|\(\\\")",
        _NOT_WORD + f"(?i:p{_I}n(?:[_-]?code)?)" + r"(?:\\\"|['\]])*" + _BLANKS + "[=:]",
        # the rest of ``TRIGGER``: no character they match is escaped in JSON, or each of its escape's is matched too
        r"(?:@|%40)[A-Za-z0-9-]+\.",
        r"://[^\s/?#@]*:[^\s/?#@]+@",
        r"/home/|/Users/|(?i:users)\\",
        r"PRIVATE KEY",
        r"sk-|gh[pousr]_|github_pat_|gl[a-z]+-|GR1348941|(?i:xox[a-z]-|hooks\.slack)|AIza|[rsp]k_(?:live|test)_",
        r"npm_|_authToken|pypi-|A3T|AKIA|ASIA|ABIA|ACCA|(?i:aws)|eyJ|(?i:authorization)",
        r"Bearer(?:[ \"]|\\[tnfr])",  # a blank, escaped or not, or the end of its string (the separator's blank)
        r"AccountKey=|SG\.|sq0csp-|T3BlbkFJ|[0-9a-z]{32}-us[0-9]|\d{8,10}:[0-9A-Za-z_-]{35}|(?:AC|SK)[a-z0-9]{32}",
        r"[MNO][a-zA-Z0-9_-]{23,25}\.[a-zA-Z0-9_-]{6}\.",
        # ``detect.hides``: a backslash before punctuation (Markdown shows the punctuation alone), an invisible one
        r"\\\\[!-/:-@\[-`{-~]",
        f"[{_INVISIBLE}]",
        # a key that hints at a secret over a string; a secret's name over a string or a number
        _KEYWORD + r'(?:[^"\\]|\\.)*":"',
        '"' + _secret_name() + '":(?:[-0-9"]|null)',
    ]
)
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
