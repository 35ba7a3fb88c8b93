"""JSON text to values, refusing what Python's parser takes but no output can carry.

``json`` reads ``NaN``, ``Infinity`` and ``-Infinity``, turns ``1e400`` into
``inf``, keeps a lone surrogate escape (``"\\ud800"``) as a string no UTF-8
output can encode, stops with ``ValueError`` on an integer of more than 4300
digits and with ``RecursionError`` on deep nesting. Every reader (JSON, JSON
Lines, event logs, Lonis, the store's ``content_json``) parses through
``parse`` here, so each of these is a ``json.JSONDecodeError`` at its line and
column, reported like any other syntax error.

Memory is bounded before parsing, by two limits. Python holds a loaded
session in several times its text's size: a scalar or a string costs 8 to 18
bytes of memory per byte of JSON (loaded, checked and frozen into the model;
measured: 17.5x for a list of two-letter strings, 16.8x for a session of tiny
prose blocks, 8.5x for numbers, 4.4x for the benchmark's mix), a JSON
container up to about 500 bytes (46x its text for ``[{"a":1},...]``). So:

- ``MAX_TEXT_BYTES`` (40 MiB): the most JSON text read into memory at once
  (a file, standard input, one store session's content): at 18x, 0.75 GB;
- ``MAX_CONTAINERS`` (500,000 opening brackets): at 500 bytes, 0.25 GB.
  Refused at the bracket past the limit, as ``TooManyContainers``. The count
  takes every ``{`` and ``[``, those inside strings too: an over-estimate,
  but one fast pass. The 16 MB benchmark session holds 84,602: a session of
  that mix reaches it near 95 MB, past the size limit anyway.

Together they keep loading any input under about 1 GB; a larger input is
refused with one line naming it, never read in part.

Valid input pays little: the hooks run only for floats and constants, one
regular expression looks for a surrogate escape (about 0.3 ms per MB), and the
exact check runs only when it finds one. Finding where a problem is (a scan of
the text) happens only once a problem is known.

A duplicate key is a contract problem (R2), and ``json`` keeps the last value
without a word, so every object's pairs go to ``contract.duplicates.merged``
(``object_pairs_hook``). Measured against a parser that reports duplicates
itself (jiter, ``catch_duplicate_keys``) on the benchmark sessions: the hook
costs parse 0 to 12 % (1.38-1.67x ``json.loads`` with it, 1.38-1.48x without);
jiter is faster on large blocks (0.8x) but slower on many small ones (1.75x on
a session of small blocks), and reads ``1e400`` as infinity, which a scan of
the text must then rule out (another 0.4x): 2.1-2.4x in all. So the hook.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from typing import Any

from vis_export.contract.check import MAX_DEPTH
from vis_export.contract.duplicates import DuplicateKey, merged

# Tokens that matter for locating a problem: a whole string (so brackets and
# escapes inside it are skipped), a bracket, a constant, a number.
_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+"|[\[\]{}]|NaN|-?Infinity|-?[0-9][0-9.eE+-]*', re.DOTALL)
# The first lone surrogate escape: everything else (text, other escapes, escaped
# backslashes, surrogate pairs) is consumed possessively, so this is one linear
# pass, and a backslash's parity is always right.
_LONE_SURROGATE = re.compile(
    r"(?:[^\\]++|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u(?![dD][89a-fA-F])|\\[^u])*+"
    r"\\u([dD][89a-fA-F][0-9a-fA-F]{2})",
    re.DOTALL,
)
_SURROGATE_HINT = re.compile(r"\\u[dD][89a-fA-F]")


class _Refused(ValueError):
    """Raised by a parser hook with the refused token; its position is found afterwards."""

    def __init__(self, token: str, message: str):
        super().__init__(message)
        self.token = token
        self.message = message


def _constant(name: str) -> Any:
    raise _Refused(name, f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Refused(text, f"{text} is too large for a number")
    return value


_DECODER = json.JSONDecoder(parse_float=_finite, parse_constant=_constant, object_pairs_hook=merged)
MAX_CONTAINERS = 500_000
MAX_TEXT_BYTES = 40 << 20
_OPENING = re.compile(r"[\[{]")
_CHUNK = 1 << 20


def too_large(limit: int, what: str) -> str:
    """The problem of ``what`` (a file, a session) holding more than ``limit`` bytes of text."""
    size = f"{limit // 2**20} MiB" if limit >= 2**20 and limit % 2**20 == 0 else f"{limit:,} byte"
    return f"larger than the {size} limit of {what} read whole (it keeps memory under 1 GB)"


class TooManyContainers(json.JSONDecodeError):
    """More JSON objects and arrays than memory allows; located at the first one past the limit."""


def _crowded(text: str) -> TooManyContainers | None:
    """The problem if ``text`` has more than ``MAX_CONTAINERS`` opening brackets:
    counted a chunk at a time with ``str.count``; only the chunk that passes the
    limit is searched bracket by bracket, for where."""
    if len(text) <= MAX_CONTAINERS:  # too short to hold that many: nothing to count
        return None
    left = MAX_CONTAINERS
    for start in range(0, len(text), _CHUNK):
        chunk = text[start : start + _CHUNK]
        found = chunk.count("{") + chunk.count("[")
        if found > left:
            past = next(m.start() for n, m in enumerate(_OPENING.finditer(chunk)) if n == left)
            message = f"holds more than {MAX_CONTAINERS:,} JSON objects and arrays; the limit keeps memory bounded"
            return TooManyContainers(message, text, start + past)
        left -= found
    return None


def parse(text: str) -> Any:
    """The JSON value of ``text``; anything not JSON or not representable raises
    ``json.JSONDecodeError`` with its position (``lineno``, ``colno``, ``msg``);
    ``TooManyContainers`` (one) before parsing, if it holds too many containers.

    Each object's keys go through ``merged``: a map with a duplicate key keeps
    the value that hides more and is recorded for the checks to report
    (``contract.duplicates``); with nothing recording, it is refused here.
    """
    crowded = _crowded(text)
    if crowded is not None:
        raise crowded
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError:
        raise
    except _Refused as refused:
        raise _located(text, refused.token.__eq__, refused.message) from None
    except DuplicateKey:
        raise json.JSONDecodeError("an object has a duplicate key", text, 0) from None
    except ValueError:  # int(): more digits than Python converts
        limit = sys.get_int_max_str_digits()
        raise _located(
            text, lambda token: len(token.lstrip("-")) > limit, f"a number of more than {limit} digits"
        ) from None
    except RecursionError:
        raise _too_deep(text) from None
    if _SURROGATE_HINT.search(text):
        lone = _LONE_SURROGATE.match(text)
        if lone:
            raise json.JSONDecodeError(
                f"lone surrogate \\u{lone.group(1)} is not Unicode text", text, lone.start(1) - 2
            )
    return value


def _located(text: str, wanted: Callable[[str], bool], message: str) -> json.JSONDecodeError:
    """``message`` at the first number or constant for which ``wanted`` holds."""
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token[0] not in '"[]{}' and wanted(token):
            return json.JSONDecodeError(message, text, match.start())
    return json.JSONDecodeError(message, text, 0)


def _too_deep(text: str) -> json.JSONDecodeError:
    """The problem at the bracket that opens level ``MAX_DEPTH + 1``."""
    message = f"nested deeper than {MAX_DEPTH} levels"
    depth = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                return json.JSONDecodeError(message, text, match.start())
        elif token in ("]", "}"):
            depth -= 1
    return json.JSONDecodeError(message, text, 0)
