"""A file is read first by a compiled parser (``parse_quick``); whatever it reads
is exactly what the exact reading (``parse``) gives, and every input with a
problem gets the exact reading's problems, messages and places."""

from __future__ import annotations

import copy
import json
import random
import sys
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, strategies as st
from strategies import invalid_sessions, session_documents, small_blocks
from test_duplicate_keys import message

from corpus import session_bytes
from vis_export.contract.duplicates import any_recorded, recording
from vis_export.problems import Problem
from vis_export.sources import files
from vis_export.sources.files import read_bytes
from vis_export.sources.jsontext import UNSURE, TooManyContainers, parse, parse_quick

# Pieces of JSON text, valid or nearly: what the compiled parser must refuse,
# or read as the exact reading does.
_NUMBERS = (
    st.sampled_from(
        ["0", "-0", "-0.0", "1.5", "1E2", "1e400", "-1e400", "1e-400", "2.2250738585072011e-308", "NaN", "-Infinity"]
        + ["18446744073709551616", "-9223372036854775809", "9" * 4300, "9" * 4301, "01", "1.", ".5"]
    )
    | st.integers().map(str)
    | st.floats(allow_nan=False, allow_infinity=False).map(repr)
)
_STRINGS = st.sampled_from(
    ['"a:b"', '"\\u003a"', '"\\u003A:"', '"\\\\u003a"', '"\\ud800"', '"\\udc00x"', '"\\ud83d\\ude00"', '"\\"a\\":1"']
    + ['"a\x01b"', '"a\nb"', '"\x7f"', '"é"', '"\\/"', '"\ufeff"', '"{["', '":"']
) | st.text(max_size=8).map(lambda s: json.dumps(s, ensure_ascii=False))
_SPACE = st.sampled_from(["", " ", "\n", "\t", "\r\n", "\x0c", "\xa0"])


_KEYS = st.sampled_from(["a", "b", "a:b", "\\u0061", "c\\u003ad"])  # few: keys repeat


def _containers(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    arrays = st.tuples(_SPACE, st.lists(inner, max_size=4)).map(lambda t: "[" + t[0] + ",".join(t[1]) + "]")
    pairs = st.lists(st.tuples(_KEYS, _SPACE, inner), max_size=4)
    objects = pairs.map(lambda p: "{" + ",".join(f'"{key}"{space}:{value}' for key, space, value in p) + "}")
    return arrays | objects


_texts = st.recursive(_NUMBERS | _STRINGS | st.sampled_from(["true", "false", "null"]), _containers, max_leaves=12)


def _exact(text: str) -> tuple[bool, Any]:
    """What the exact reading gives: whether it is taken as it stands (no
    error, no duplicate key), and the value (or the error's words)."""
    with recording():
        try:
            value = parse(text)
        except json.JSONDecodeError as error:
            return False, error.msg
        return not any_recorded(), value


def _same(a: Any, b: Any) -> bool:
    """Equal, and alike in every type and order (``1`` is not ``1.0``, ``-0.0`` not ``0.0``)."""
    return type(a) is type(b) and repr(a) == repr(b)


@given(_texts, _SPACE, _SPACE)
def test_what_the_compiled_parser_reads_is_what_the_exact_reading_gives(text: str, before: str, after: str) -> None:
    text = before + text + after
    quick = parse_quick(text)
    if quick is UNSURE:
        return
    taken, exact = _exact(text)
    assert taken, exact
    assert _same(quick, exact)


def test_duplicates_hidden_by_escaped_colons_are_not_read_quickly() -> None:
    # One key twice (a colon fewer) and an escaped colon (a colon more): the counts alone would agree.
    text = '{"a":"x","a":"\\u003a"}'
    assert parse_quick(text) is UNSURE
    assert _exact(text)[0] is False


def test_a_valid_session_is_read_quickly() -> None:
    """The fast reading is taken for what it is for: a large valid session."""
    text = session_bytes(200_000).decode()
    assert parse_quick(text) is not UNSURE
    assert _same(parse_quick(text), _exact(text)[1])


def _read(text: str, lenient: bool, quick: bool) -> list[Any]:
    if quick:
        return read_bytes(text.encode(), "f.json", "f", lenient)
    with mock.patch.object(files, "parse_quick", return_value=UNSURE):
        return read_bytes(text.encode(), "f.json", "f", lenient)


def _near_miss(document: dict[str, Any], seed: int) -> str:
    """The document's text, perhaps with a key given twice, an escaped colon, or a number out of range."""
    text = json.dumps(document, ensure_ascii=bool(seed & 1))
    rng = random.Random(seed)
    change = rng.randrange(5)
    if change == 1:
        text = text.replace('"id": ', '"id": "x", "id": ', 1)
    elif change == 2:
        text = text.replace(":", ':"\\u003a", "extra_key":', 1)
    elif change == 3:
        text = text.replace('"created_at": ', '"created_at": 1e400, "y": ', 1)
    elif change == 4:
        text = text.replace('"status": ', '"status": "\\ud800", "z": ', 1)
    return text


@given(
    st.one_of(session_documents(small_blocks), invalid_sessions().map(lambda found: found[0])),
    st.integers(0, 2**16),
    st.booleans(),
)
def test_a_file_read_quickly_gives_what_the_exact_reading_gives(
    document: dict[str, Any], seed: int, lenient: bool
) -> None:
    """The same sessions (models), problems, messages and places, valid or not."""
    text = _near_miss(copy.deepcopy(document), seed)
    assert _read(text, lenient, quick=True) == _read(text, lenient, quick=False)


def test_nesting_near_the_recursion_limit_gets_the_exact_readings_problem() -> None:
    """The compiled parser reads a level or two deeper than ``json`` before its
    recursion limit: such input has a problem, so it is read again, exactly."""
    limit = sys.getrecursionlimit()
    for depth in range(limit - 300, limit + 10):
        tool = {"id": "b", "type": "tool", "tool": "t", "status": "completed", "input": "@"}
        text = json.dumps({"id": "s", "messages": [message(tool)]}).replace('"@"', "[" * depth + "]" * depth)
        assert _read(text, False, quick=True) == _read(text, False, quick=False), depth


def test_the_containers_are_counted_once_whichever_reading_is_kept() -> None:
    """Counting a large text's brackets is a pass over all of it: the quick
    reading counts them with the colons, in one pass, and the exact reading
    after it does not count again; only a text refused for them is counted a
    chunk at a time, for where."""
    from vis_export.sources import jsontext

    text = session_bytes(200_000).decode()
    crowded = "[" + "[]," * 4_000_000 + "[]]"  # 12 MB: room for 2.6 million
    for data in (text, text.replace('"id": ', '"id": "x", "id": ', 1), crowded):  # quick; exact; refused
        with mock.patch.object(jsontext, "_crowded", wraps=jsontext._crowded) as counting:
            (result,) = read_bytes(data.encode(), "f.json", "f")
        assert counting.call_count == (data is crowded)
    with pytest.raises(TooManyContainers) as refused:  # the exact reading's problem, at its place
        parse(crowded)
    error = refused.value
    assert result.problems == (Problem(f"line {error.lineno} column {error.colno}", error.msg),)
