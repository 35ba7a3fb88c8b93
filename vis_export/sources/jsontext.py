"""JSON text to values, refusing what Python's parser takes but no output can carry.

``json`` reads ``NaN``, ``Infinity`` and ``-Infinity``, turns ``1e400`` into
``inf``, keeps a lone surrogate escape (``"\\ud800"``) as a string no UTF-8
output can encode, stops with ``ValueError`` on an integer of more than 4300
digits and with ``RecursionError`` on deep nesting. Every reader (JSON, JSON
Lines, event logs, Lonis, the store's ``content_json``) parses through
``parse`` here, so each of these is a ``json.JSONDecodeError`` at its line and
column, reported like any other syntax error.

Memory is bounded before parsing, by one budget, ``MEMORY_BUDGET`` (1 GB).
Python holds a loaded session in several times its text's size (loaded,
checked and frozen into the model; the text itself included): up to about
18 bytes per character for scalars and strings (measured: 17.5x for a list of
two-letter strings, 16.8x for a session of tiny prose blocks, 8.5x for
numbers, 4.4x for the benchmark's mix), and a JSON container about 300 more
(``[{"a":1},...]`` took 46x its text). So what text will take is estimated
as ``PER_CHARACTER`` bytes per character and ``PER_CONTAINER`` per ``{`` or
``[`` (inside strings too: an over-estimate), and refused past the budget:

- a text of more than ``MAX_TEXT_BYTES`` (50 MiB) is refused unread (a file,
  standard input; a store's session, read a turn at a time, keeps its own
  account, ``estimated_memory``);
- a text with more containers than its size leaves room for (a 16 MB text,
  2.4 million; one of up to 5.9 MB cannot hold too many) is refused at the bracket
  past that, as ``TooManyContainers``, before anything is built. The count is
  one fast pass (``str.count`` a chunk at a time, made only for a text long
  enough to hold too many; for a whole file, ``read_quick``'s one pass). The
  estimate is generous: a 37 MB session of tiny blocks, estimated at 0.89 GB,
  took 0.49 GB; 60 MB of empty lists, which took 1.9 GB before, are refused.

Valid input pays little: the hooks run only for floats and constants, one
regular expression looks for a surrogate escape (about 0.3 ms per MB), and the
exact check runs only when it finds one. Finding where a problem is (a scan of
the text) happens only once a problem is known.

A duplicate key is a contract problem (R2), and ``json`` keeps the last value
without a word, so every object's pairs go to ``contract.duplicates.merged``
(``object_pairs_hook``). It costs load+validate about 10 % on large sessions
(CPU time, best of 9: the 16 MB benchmark session 3.5x ``json.loads`` before,
3.8-4.0x after; 37 MB of small blocks 2.7x, 3.1x; 1 MB unchanged, 3.7x).
Measured against a parser that reports duplicates itself (jiter,
``catch_duplicate_keys``): jiter is faster on large blocks (0.9x ``json.loads``)
but slower on many small ones (1.3-1.5x), and reads ``1e400`` as infinity,
which another scan of the text must rule out (0.4x): no faster in all. So
the hook, for the exact reading; jiter reads a whole file first (below), and
JSON Lines a line at a time (``parse_lines``), where its value is taken only
when it is certainly the exact reading's.

A whole file is first read by ``read_quick``, from its bytes, with a compiled
parser that refuses nearly everything the exact reading refuses or locates
(jiter: NaN, lone surrogates, integers past 4300 digits, control characters,
bytes that are not UTF-8, and duplicate keys, escaped ones too): its value is
taken when it is certainly the one ``parse`` gives, and the reader checks it
as it builds the session (``sources.trusted``); input with any problem is
decoded and read again by ``parse`` and checked again, so every problem line
comes from the exact reading (nesting near the recursion limit is always a
problem: jiter stops past 201 levels, deeper than ``MAX_DEPTH``). The one thing
it takes that ``parse`` refuses, a number too large for a float (``1e400``,
an infinity), is found by the pass that builds the session, which looks at
every value anyway, or by a look over the value for any other reader
(``holds_infinity``); no scan of the bytes finds it for less than the parsing
costs. On the 16 MB benchmark session (CPU time, median of 9, freeing the
value included, the collector paused, load average 9.8) the quick reading
takes 63 ms against ``json.loads``'s 82: jiter 59, the brackets counted 5-10
(only for a text long enough to hold too many containers, over 5.9 MB). It read
with msgspec before, 93 ms: msgspec keeps a repeated key's last value without
a word, and counting colons to find one (in the bytes, and in the value
written out again) cost more than msgspec's own parsing. It reads the bytes,
not a text decoded from them: valid input never needs the text, and decoding
16 MB took up to 14 ms more in place.
"""

from __future__ import annotations

import io
import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import jiter
import msgspec

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


_SHOWN_DIGITS = 16  # a refused number's problem names its start: one of a million digits was a 1 MB line


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        shown = text if len(text) <= 2 * _SHOWN_DIGITS else f"{text[:_SHOWN_DIGITS]}… ({len(text):,} characters)"
        raise _Refused(text, f"{shown} is too large for a number")
    return value


_DECODER = json.JSONDecoder(parse_float=_finite, parse_constant=_constant, object_pairs_hook=merged)
MEMORY_BUDGET = 1_000_000_000
PER_CHARACTER = 18
PER_CONTAINER = 300
MAX_TEXT_BYTES = 50 << 20  # at 18 bytes a character, 0.94 GB
_OPENING = re.compile(r"[\[{]")
_CHUNK = 1 << 20


class TooManyContainers(json.JSONDecodeError):
    """More JSON objects and arrays than memory allows; located at the first one past the limit."""


def containers_allowed(length: int, budget: int) -> int:
    """How many JSON objects and arrays a text of ``length`` characters may hold
    within ``budget`` bytes of memory."""
    return max(0, (budget - PER_CHARACTER * length) // PER_CONTAINER)


def estimated_memory(text: str) -> int:
    """The bytes of memory loading ``text`` may take, as ``parse`` estimates it."""
    return PER_CHARACTER * len(text) + PER_CONTAINER * (text.count("{") + text.count("["))


def _crowded(text: str, budget: int) -> TooManyContainers | None:
    """The problem if ``text`` has more opening brackets than ``budget`` leaves room
    for: counted a chunk at a time with ``str.count``; only the chunk that passes
    the limit is searched bracket by bracket, for where."""
    allowed = containers_allowed(len(text), budget)
    if len(text) <= 2 * allowed:  # a container takes two characters at least: nothing to count
        return None
    left = allowed
    for start in range(0, len(text), _CHUNK):
        end = start + _CHUNK
        found = text.count("{", start, end) + text.count("[", start, end)  # no copy of the chunk
        if found > left:
            past = next(m.start() for n, m in enumerate(_OPENING.finditer(text, start, end)) if n == left)
            message = (
                f"holds more than {allowed:,} JSON objects and arrays for its size:"
                f" reading it would take more than {budget / 1e9:g} GB of memory"
            )
            return TooManyContainers(message, text, past)
        left -= found
    return None


UNSURE: Any = object()
# An escaped colon, or one of a few other characters as rare (a regular expression
# finds it faster than ``in``): JSON Lines' duplicate-key count must not meet one.
_COLON_ESCAPE_TEXT = re.compile(r"\\u003")
_COMPILED = msgspec.json.Decoder()
_ENCODED = msgspec.json.Encoder()
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"{[")
# jiter refuses an integer of more digits than this whatever ``sys.set_int_max_str_digits`` says.
_JITER_INT_DIGITS = 4300
INFINITE = frozenset({math.inf, -math.inf})


@dataclass(frozen=True, slots=True)
class Quick:
    """What the quick reading found: ``value``, the value ``parse`` gives for the
    text (but for an infinity where ``parse`` refuses a number too large, see
    ``read_quick``), or ``UNSURE``; ``counted``, whether the text's containers
    are known to be within the memory budget (``parse`` need not count them again)."""

    value: Any
    counted: bool


def read_quick(raw: bytes) -> Quick:
    """The quick reading of a whole file's bytes, by a compiled parser that
    reports duplicate keys (jiter), before they are decoded (a text is made only
    for the exact reading). ``UNSURE`` where the value may not be the one
    ``parse`` gives, where ``parse`` refuses the text, or where the bytes are not
    UTF-8 text (the compiled parser checks them, and refuses a byte order mark):
    the exact reading then says what is wrong. A value whose reading has a
    contract problem may still be read differently by ``parse`` (nesting past the
    recursion limit): problems are for ``parse`` to locate.

    One difference is left to the caller, whose pass over the value finds it for
    nothing: a number too large for a float (``1e400``), which ``parse`` refuses,
    is read as an infinity (``INFINITE``); finding it in the bytes would cost a
    scan as long as the parsing."""
    # Against the budget of as many characters as there are bytes, which allows
    # no more than the text's: more is for ``parse`` to count exactly, and locate.
    allowed = containers_allowed(len(raw), MEMORY_BUDGET)
    # No ASCII byte is part of another character in UTF-8, so the count is the
    # text's; a container takes two bytes at least, so a short text needs none.
    if len(raw) > 2 * allowed and len(raw.translate(None, _NOT_BRACKETS)) > allowed:
        return Quick(UNSURE, False)
    if 0 < sys.get_int_max_str_digits() < _JITER_INT_DIGITS:
        return Quick(UNSURE, True)  # jiter would take integers ``parse`` refuses
    try:  # keys cached (the quickest: all strings 1.7% slower, none 5.6%); the cache is behind a lock
        value = jiter.from_json(raw, allow_inf_nan=False, cache_mode="keys", catch_duplicate_keys=True)
    except ValueError:
        return Quick(UNSURE, True)
    return Quick(value, True)


def holds_infinity(value: Any) -> bool:
    """Whether a quick reading's value (or the model made of it) holds a number
    ``parse`` refuses: for readers that do not pass over every value as they check it."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict or kind is MappingProxyType:
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif kind is float and item in INFINITE:
            return True
    return False


def parse_lines(text: str) -> list[tuple[int, Any]]:
    """The line number and value of each non-blank line of JSON Lines, as ``parse``
    gives them one by one (its ``json.JSONDecodeError`` as the value of a line that
    is not JSON). Read by jiter a line at a time where the text certainly holds no
    number too large for a float (``_finite_for_sure``; jiter reports a key given
    twice, and refuses all else ``parse`` refuses), else by msgspec where that is
    certainly the same value (as ``read_quick`` judges it, the duplicate-key count
    taken over all the lines it read); a line either refuses is read by ``parse``.
    The text's containers are the caller's to count. On the generated 300 KB
    Claude Code file jiter's way takes 16.5 M instructions against msgspec's 19.8 M
    (its duplicate-key count, the shape of the lines, the escaped colons), on its
    anchor (the same conversation as Vis JSON Lines) 7.0 M against 10.2 M.
    """
    raw = text.encode("utf-8", "surrogatepass")
    if _jiter_agrees() and _finite_for_sure(raw):
        return _jiter_lines(raw)
    count = _one_object_a_line(text)
    if count:  # the lines are numbered 1, 2, ...: nothing to look at line by line
        quick = _whole_lines(text, raw, count)
        if quick is not None:
            return list(enumerate(quick, 1))
    numbered = [(lineno, line) for lineno, line in enumerate(text.split("\n"), 1) if line and not line.isspace()]
    lines = [line for _, line in numbered]
    whole = _whole_lines(text, raw, len(lines)) if all(map(_one_object, lines)) else None
    if whole is not None:
        return [(lineno, value) for (lineno, _), value in zip(numbered, whole, strict=True)]
    values: list[Any] = [UNSURE] * len(numbered)
    if not _COLON_ESCAPE_TEXT.search(text):
        # Near the recursion limit the two parsers part (the compiled one reads a level or
        # two deeper, then a reader recursing into the value would not): a line with more
        # brackets than half the limit, so perhaps that deep, is read exactly.
        shallow = sys.getrecursionlimit() // 2
        values = [_quick(line) if line.count("[") + line.count("{") < shallow else UNSURE for _, line in numbered]
        colons = sum(line.count(":") for (_, line), v in zip(numbered, values, strict=True) if v is not UNSURE)
        if colons != _ENCODED.encode([v for v in values if v is not UNSURE]).count(b":"):  # a key given twice
            values = [UNSURE] * len(numbered)
    pairs = zip(numbered, values, strict=True)
    return [(lineno, _exact(line) if value is UNSURE else value) for (lineno, line), value in pairs]


# jiter refuses a value nested deeper than this, whatever ``sys.getrecursionlimit`` says.
_JITER_DEPTH = 201
# Each byte as what it may be in a number: a digit or a sign (``0``), an exponent's letter
# (``e``), the decimal point, what may stand before a number (``b``: JSON's blanks, ``[``,
# ``:``, ``,``), anything else (``x``): ``:-1e+400`` is ``b00e0000``.
_CLASS_OF = {
    **dict.fromkeys(b"0123456789+-", ord("0")),
    **dict.fromkeys(b"eE", ord("e")),
    ord("."): ord("."),
    **dict.fromkeys(b" \t\r\n[:,", ord("b")),
}
_NUMBER_CLASSES = bytes(_CLASS_OF.get(byte, ord("x")) for byte in range(256))
_LONG_DIGITS = b"0" * 200
_BIG_EXPONENT = b"e000"


def _jiter_agrees() -> bool:
    """Whether a line jiter reads is read as ``parse`` reads it, but for an infinity:
    jiter refuses values nested deeper than ``_JITER_DEPTH``, whatever the recursion
    limit, and ``parse`` must not meet that limit first (at half of it, as
    ``parse_lines`` judges a line). (jiter takes integers of up to 4300 digits
    whatever ``sys.set_int_max_str_digits`` says, which is 640 at least: a text
    with 200 digits in a row is not vouched finite, so jiter never reads one.)"""
    return sys.getrecursionlimit() // 2 > _JITER_DEPTH


def _finite_for_sure(raw: bytes) -> bool:
    """Whether JSON text ``raw`` certainly holds no number too large for a float, which
    jiter reads as an infinity and ``parse`` refuses. Such a number has an exponent of
    three digits or more (``1e400``, ``1E+0400``; ``1e-400`` too, a zero, judged alike)
    or 200 digits in a row (``1`` and 250 zeros, then ``e99``), signs counted as
    digits (``1e+99`` is judged a three-digit exponent: rare, and only read
    exactly). One translation to classes of bytes and two searches; an exponent
    found in a string (a hexadecimal id's ``4e123``) is a number's only where the
    digits and point before it follow what a number follows (``b``), so ids
    rarely send a text to the exact reading."""
    classes = raw.translate(_NUMBER_CLASSES)
    if _LONG_DIGITS in classes:
        return False
    at = classes.find(_BIG_EXPONENT)
    while at >= 0:
        start = at
        while start and classes[start - 1] in b"0.":
            start -= 1
        if start < at and (start == 0 or classes[start - 1] == ord("b")):
            return False
        at = classes.find(_BIG_EXPONENT, at + 1)
    return True


def _jiter_lines(raw: bytes) -> list[tuple[int, Any]]:
    """``parse_lines`` of a text (``raw``, its UTF-8) that holds no number too large
    for a float: each line read by jiter, which reports a key given twice, refuses
    what ``parse`` refuses or locates (``read_quick``) and needs no other pass, and by
    ``parse`` where jiter refuses it (a line that is blank only to ``str.isspace``,
    such as an ideographic space, left out as ``parse_lines`` leaves it)."""
    lines = []
    # Its lines as a file gives them (a line break ends each), found far quicker
    # than ``bytes.split`` finds them (a tenth of its instructions).
    for lineno, line in enumerate(io.BytesIO(raw), 1):
        if not line.isspace():
            try:  # every string cached: a transcript's lines repeat their envelope's (ids, folder, version)
                value = jiter.from_json(line, allow_inf_nan=False, cache_mode="all", catch_duplicate_keys=True)
            except ValueError:
                text = line.decode("utf-8", "surrogatepass").removesuffix("\n")
                if text.isspace():
                    continue
                value = _exact(text)
            lines.append((lineno, value))
    return lines


_JSON_BLANKS = " \t\r"
_NOT_SHAPE = bytes(byte for byte in range(256) if byte not in b"{[:\n")


def _one_object(line: str) -> bool:
    """Whether a non-blank line starts with ``{`` and ends with ``}`` (blanks aside)."""
    return line.lstrip(_JSON_BLANKS)[:1] == "{" and line.rstrip(_JSON_BLANKS)[-1:] == "}"


def _one_object_a_line(text: str) -> int:
    """How many lines ``text`` has if each is one object (``_one_object``) with no
    blank line and no blank around a line, else 0: told by counting (every line
    break but a last one between ``}`` and ``{``) instead of splitting the text and
    looking at every line, which was a tenth of reading a Claude Code file (its
    lines are many and short)."""
    last = text.endswith("\n")
    if text[:1] != "{" or not text.endswith("}\n" if last else "}"):
        return 0
    inner = text.count("\n") - last
    return inner + 1 if text.count("}\n{") == inner else 0


def _whole_lines(text: str, raw: bytes, count: int) -> list[Any] | None:
    """The values of the text's ``count`` non-blank lines, each one object
    (``_one_object``), read by the compiled parser in one call, when that is
    certainly what ``parse`` gives line by line; else ``None``, and the lines are
    read one by one. ``raw`` is the text's UTF-8 (``parse_lines`` made it).

    ``decode_lines`` does not hold a value to its line (``[1`` and ``,2]`` are one
    value), so it is taken only where every line is one object: each starts with
    ``{`` and ends with ``}``, so each line break sits between a ``}`` and a ``{``,
    which JSON allows only between values, and there are as many values as lines.
    The duplicate-key count and the depth rule are ``parse_lines``' own, taken
    over the whole text at once: one pass over its bytes keeps their brackets,
    colons and line breaks (counting each in the text took longer)."""
    if _COLON_ESCAPE_TEXT.search(text):
        return None
    shape = raw.translate(None, _NOT_SHAPE)
    colons = shape.count(b":")
    shallow = sys.getrecursionlimit() // 2
    if len(shape) - colons >= shallow and re.search(b"[^\n]{%d}" % shallow, shape.replace(b":", b"")):
        return None  # a line with brackets enough to be near the recursion limit: read exactly
    try:
        values = _COMPILED.decode_lines(text)
    except (msgspec.DecodeError, RecursionError):
        return None
    if len(values) != count or colons != _ENCODED.encode(values).count(b":"):  # a key given twice
        return None
    return values


def parse_quickly(text: str) -> Any:
    """``parse(text)`` for a short JSON text held in a value (a Codex call's
    ``arguments``), read by the compiled parser where that is certainly the same
    value, as ``parse_lines`` judges a line: no escaped colon, brackets too few to
    near the recursion limit or the memory budget, and no key given twice (the
    colon count). Anything else is ``parse``'s, problems and duplicate keys included."""
    if not _COLON_ESCAPE_TEXT.search(text) and text.count("[") + text.count("{") < sys.getrecursionlimit() // 2:
        value = _quick(text)
        if value is not UNSURE and text.count(":") == _ENCODED.encode(value).count(b":"):
            return value
    return parse(text)


def _quick(line: str) -> Any:
    try:
        return _COMPILED.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return UNSURE


def _exact(line: str) -> Any:
    try:
        return parse(line, counted=True)
    except json.JSONDecodeError as error:
        return error


def parse(text: str, budget: int | None = None, counted: bool = False) -> Any:
    """The JSON value of ``text``; anything not JSON or not representable raises
    ``json.JSONDecodeError`` with its position (``lineno``, ``colno``, ``msg``);
    ``TooManyContainers`` (one) before parsing, if it holds more containers than
    ``budget`` bytes of memory leave room for.

    Each object's keys go through ``merged``: a map with a duplicate key keeps
    the value that hides more and is recorded for the checks to report
    (``contract.duplicates``); with nothing recording, it is refused here.
    """
    crowded = None if counted else _crowded(text, MEMORY_BUDGET if budget is None else budget)
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
