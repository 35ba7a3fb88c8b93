"""A file is read first by a compiled parser (``read_quick``), from its bytes;
whatever it reads is exactly what the exact reading (``parse``) gives, the
session built from it in one pass (``sources.trusted``) is exactly the one the
checks and the model make, and every input with a problem gets the exact
reading's problems, messages and places."""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import re
import sys
import traceback
from types import MappingProxyType
from typing import Any
from unittest import mock

import jiter
import pytest
from conftest import examples
from hypothesis import example, given, settings, strategies as st
from strategies import invalid_sessions, session_documents, small_blocks
from test_duplicate_keys import message
from timelimit import cpu_limit

from corpus import session_bytes
from vis_export.contract import check
from vis_export.contract.check import MAX_DEPTH
from vis_export.contract.duplicates import any_recorded, recording
from vis_export.model import Block, Message, Session
from vis_export.problems import Problem
from vis_export.sources import files, messages as messages_module
from vis_export.sources.files import read_bytes
from vis_export.sources.jsontext import UNSURE, Quick, TooManyContainers, holds_infinity, parse, read_quick

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
    # a quote and a colon in a string, after an escaped backslash or not: ``\\":`` ends a key, ``\":`` does not
    + ['"\\":"', '"a\\\\"', '"\\\\\\":"', '"\\u0022:"', '" :"', '"\\" :"']
    # escapes written again otherwise: as another escape (``\\``), or as the character itself
    + ['"\\u005c"', '"\\u0075"', '"\\u00e9"']
) | st.text(max_size=8).map(lambda s: json.dumps(s, ensure_ascii=False))
_SPACE = st.sampled_from(["", " ", "\n", "\t", "\r\n", "\x0c", "\xa0"])


_KEYS = st.sampled_from(
    ["a", "b", "a:b", "\\u0061", "c\\u003ad", "a\\\\", '\\":', '\\\\\\":', "\\u0022:"]
)  # few: keys repeat


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


def parse_quick(text: str) -> Any:
    """The quick reading's value for ``text``, as a file holds it."""
    return read_quick(text.encode()).value


def _same(a: Any, b: Any) -> bool:
    """Equal, and alike in every type and order (``1`` is not ``1.0``, ``-0.0`` not ``0.0``)."""
    return type(a) is type(b) and repr(a) == repr(b)


@given(_texts, _SPACE, _SPACE)
@example('{"a": [1, -1e400]}', "", "")
@example("1e400", " ", "")
def test_what_the_compiled_parser_reads_is_what_the_exact_reading_gives(text: str, before: str, after: str) -> None:
    """The same value, but for the one difference ``read_quick`` leaves to its
    caller's pass: a number too large, which it reads as an infinity."""
    text = before + text + after
    quick = parse_quick(text)
    if quick is UNSURE:
        return
    taken, exact = _exact(text)
    if holds_infinity(quick):
        assert not taken and exact.endswith("is too large for a number")
        return
    assert taken, exact
    assert _same(quick, exact)


def test_duplicates_hidden_by_escaped_colons_are_not_read_quickly() -> None:
    # One key twice (a colon fewer) and an escaped colon (a colon more): the counts alone would agree.
    text = '{"a":"x","a":"\\u003a"}'
    assert parse_quick(text) is UNSURE
    assert _exact(text)[0] is False


@pytest.mark.parametrize(
    "text",
    [
        '{"a\\\\":1,"a\\\\":2}',  # a key ending in an escaped backslash, twice
        '{"a":"\\":","a":1}',  # an escaped quote and a colon in a value, then the key again
        '{"a":"\\\\\\":","a":1}',  # the same after an escaped backslash
        '{"\\":":1,"\\":":2}',  # a key that is a quote and a colon, twice
        '{"a":":","a":1}',  # a value that starts with a colon
        '{"a" :1,"a"\n:2}',  # space before the colons
        '{"a":1,"\\u0061":2}',  # the same key, escaped once
        '{"a":{"b":"\\":"},"c":[{"d":1,"d":"\\\\"}]}',  # nested, among near misses
    ],
)
def test_a_duplicate_key_among_near_misses_is_never_read_quickly(text: str) -> None:
    """msgspec keeps a repeated key's last value without a word: whatever
    surrounds it (a quote and a colon in a string, escaped or not, spaces
    before a colon, an escaped key), a text with one is read exactly."""
    assert parse_quick(text) is UNSURE
    assert _exact(text)[0] is False


def test_quotes_and_colons_in_strings_are_read_quickly() -> None:
    """What looks like a key's end inside a string (``\\":``, ``\\\\\\":``, a string
    that starts with a colon) keeps a valid session on the quick reading."""
    tool = {
        "id": "b",
        "type": "tool",
        "tool": "t",
        "status": "completed",
        "input": {"q": '"a": 1, \\": ", ":'},
        "output": ":+1:",
    }
    document = {"id": "s", "messages": [message({"id": "p", "type": "prose", "markdown": '{"k": "v\\"}'}, tool)]}
    text = json.dumps(document)
    assert parse_quick(text) is not UNSURE
    _alike(text, lenient=False)


def test_a_valid_session_is_read_quickly() -> None:
    """The fast reading is taken for what it is for: a large valid session."""
    text = session_bytes(200_000).decode()
    assert parse_quick(text) is not UNSURE
    assert _same(parse_quick(text), _exact(text)[1])


def _read(text: str, lenient: bool, quick: bool) -> list[Any]:
    if quick:
        return read_bytes(text.encode(), "f.json", "f", lenient)
    with mock.patch.object(files, "read_quick", return_value=Quick(UNSURE, False)):
        return read_bytes(text.encode(), "f.json", "f", lenient)


def _alike(text: str, lenient: bool) -> None:
    """Read quickly and exactly, ``text`` gives equal results, and sessions that
    write back the same JSON, every map in the same order (model equality
    compares maps, which ignores their order)."""
    quick, exact = _read(text, lenient, quick=True), _read(text, lenient, quick=False)
    assert quick == exact
    for ours, theirs in zip(quick, exact, strict=True):
        if ours.session is not None:
            assert json.dumps(ours.session.to_json()) == json.dumps(theirs.session.to_json())
            assert _kinds(ours.session) == _kinds(theirs.session)


def _kinds(value: Any) -> Any:
    """``value``'s types all the way down, through the model's objects: equality
    takes a read-only map for the dict it shows and ``1`` for ``True``; this does not."""
    kind = type(value)
    if kind in (Session, Message):
        return kind, [(field.name, _kinds(getattr(value, field.name))) for field in dataclasses.fields(value)]
    if isinstance(value, Block):
        return kind, _kinds(value.fields)
    if kind is MappingProxyType or kind is dict:
        return kind, [(key, _kinds(item)) for key, item in value.items()]
    if kind is tuple or kind is list:
        return kind, [_kinds(item) for item in value]
    return kind, repr(value)


def _near_miss(document: Any, seed: int) -> str:
    """The document's text, perhaps with a key given twice, an escaped colon, a
    number out of range (a time, or an unknown field of any map), or a valid
    shape the one-pass building does not vouch for (a time written as a float,
    a Lonis block, nesting at the limit)."""
    text = json.dumps(document, ensure_ascii=bool(seed & 1))
    rng = random.Random(seed)
    change = rng.randrange(9)
    if change == 1:
        text = text.replace('"id": ', '"id": "x", "id": ', 1)
    elif change == 2:
        text = text.replace(":", ':"\\u003a", "extra_key":', 1)
    elif change == 3:
        text = text.replace('"created_at": ', '"created_at": 1e400, "y": ', 1)
    elif change == 4:
        text = text.replace('"status": ', '"status": "\\ud800", "z": ', 1)
    elif change == 5:
        text = re.sub(r'"created_at": (\d+)', r'"created_at": \1.0', text, count=1)
    elif change == 6:
        lonis = '{"id": "l", "type": "lonis", "envelope": {"schema_version": "lonis.block/v1"}}, '
        text = text.replace('"content": [', f'"content": [{lonis}', 1)
    elif change == 7:
        text = text.replace('"content": [', '"content": [' + _nested(MAX_DEPTH - rng.randrange(2, 8)) + ", ", 1)
    elif change == 8:
        text = _too_large_at(text, rng)
    return "\ufeff" + text if seed & 2 else text  # a byte order mark, which the compiled parser does not read


def _too_large_at(text: str, rng: random.Random) -> str:
    """``text`` with a number too large for a float (read as an infinity by the
    compiled parser) as a field of one of its maps, or in a list there."""
    starts = [match.end() for match in re.finditer(r"\{(?=\s*[\"}])", text)]
    if not starts:
        return text
    at = rng.choice(starts)
    number = rng.choice(["1e400", "-1e400", "[0.5, 1E+309]", '{"big": -1e999}'])
    return text[:at] + f'"far": {number}' + ("" if text[at:].lstrip().startswith("}") else ", ") + text[at:]


def _nested(depth: int) -> str:
    """A tool block whose input nests ``depth`` arrays and an object, about where the limit falls."""
    return json.dumps({"id": "n", "type": "tool", "tool": "t", "status": "completed", "input": "@"}).replace(
        '"@"', "[" * depth + '{"k": 1}' + "]" * depth
    )


def _shape(document: dict[str, Any], seed: int) -> Any:
    """The document as one of the shapes a file may hold: a session, an array of
    its messages, its first message alone, an array of sessions."""
    shape = seed >> 8 & 3
    if shape == 1:
        return document["messages"]
    if shape == 2:
        return document["messages"][0]
    if shape == 3:
        return [document, document]
    return document


@given(
    st.one_of(session_documents(small_blocks), invalid_sessions().map(lambda found: found[0])),
    st.integers(0, 2**16),
    st.booleans(),
)
def test_a_file_read_quickly_gives_what_the_exact_reading_gives(
    document: dict[str, Any], seed: int, lenient: bool
) -> None:
    """The same sessions (models), problems, messages and places, valid or not,
    in every shape a file may hold them."""
    _alike(_near_miss(_shape(copy.deepcopy(document), seed), seed), lenient)


# Values a field may be given instead of its own: a near miss of every JSON type.
_ODD_VALUES = st.sampled_from(
    [True, False, 0, -1, 3.0, -0.0, 0.5, 1e300, 2**63, 10**30, check.MAX_TIME + 1, None, "", " ", "\x00", "NaN"]
    + [":user", "USER", "user", "completed", "x", [], {}, [None], {"k": []}, {"Camel": 1}, {"a-b": 1}, "@deep@"]
)
_ODD_KEYS = st.sampled_from(["id", "ID", "Id", "type", "role", "status", "content", "messages", "x_y", "x-y", "", "é"])


def _maps(value: Any) -> list[dict[str, Any]]:
    """Every map in ``value``, at any depth, in document order."""
    if type(value) is dict:
        return [value, *(found for item in value.values() for found in _maps(item))]
    if type(value) is list:
        return [found for item in value for found in _maps(item)]
    return []


@settings(max_examples=examples(300))
@given(
    session_documents(small_blocks),
    st.lists(st.tuples(st.integers(0, 2**16), st.integers(0, 3), _ODD_KEYS, _ODD_VALUES), min_size=1, max_size=3),
    st.integers(0, 3),
    st.booleans(),
)
def test_odd_values_anywhere_are_read_and_built_alike(
    document: dict[str, Any], changes: list[tuple[int, int, str, Any]], shape: int, lenient: bool
) -> None:
    """A near miss in any map (a session's, a message's, a block's, metadata's):
    a field given another type, removed, added, its key in another case, or
    nested about the depth limit: the same sessions, problems and model types
    read quickly or exactly."""
    shaped = _shape(document, shape << 8)
    for at, change, key, value in changes:
        maps = _maps(shaped)
        target = maps[at % len(maps)]
        names = list(target)
        name = names[at % len(names)] if names else key
        if change == 0:
            target[name] = copy.deepcopy(value)
        elif change == 1:
            target.pop(name, None)
        elif change == 2:
            target[key] = copy.deepcopy(value)
        else:
            target[name.upper()] = target.pop(name, value)
    depth = MAX_DEPTH - 6 + shape
    text = json.dumps(shaped).replace('"@deep@"', "[" * depth + "]" * depth)
    with cpu_limit(20):
        _alike(text, lenient)


def _document_text(kind: str) -> str:
    """One JSON document each reader takes whole: a Vis session, an array of its
    messages, an event log, Lonis blocks, a Claude Code export (``loglines``)."""
    from conftest import INPUT

    from corpus import claude_code_bytes

    if kind == "session":
        return (INPUT / "session.json").read_text()
    if kind == "loglines":
        lines = claude_code_bytes(6_000).decode().splitlines()
    else:
        lines = (INPUT / f"{kind}.jsonl").read_text().splitlines()
    values = [json.loads(line) for line in lines if line.strip()]
    return json.dumps({"loglines": values} if kind == "loglines" else values)


@pytest.mark.parametrize("kind", ["session", "messages", "events", "lonis", "loglines"])
def test_a_number_too_large_anywhere_gets_the_exact_readings_problem(kind: str) -> None:
    """The compiled parser reads ``1e400`` as an infinity, which the exact reading
    refuses: in a field of any map of any reader's document, the file gets the
    exact reading's problem, at its place (the one-pass building finds it; other
    readers' input is looked over for it)."""
    text = _document_text(kind)
    rng = random.Random(kind)
    refused = 0
    for _ in range(12):
        changed = _too_large_at(text, rng)
        _alike(changed, lenient=rng.random() < 0.5)
        (result, *_) = read_bytes(changed.encode(), "f.json", "f")
        refused += any(problem.message.endswith("is too large for a number") for problem in result.problems)
    assert refused >= 6  # most land outside strings


def test_under_a_lower_integer_limit_a_file_is_read_exactly() -> None:
    """The compiled parser takes integers of up to 4300 digits whatever
    ``sys.set_int_max_str_digits`` says; under a lower limit the exact reading's
    problem stands, and a valid file is still read."""
    tool = {"id": "b", "type": "tool", "tool": "t", "status": "completed", "input": "@"}
    text = json.dumps({"id": "s", "messages": [message(tool)]})
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(1000)
    try:
        for digits in (1000, 1001, 4300):
            _alike(text.replace('"@"', "9" * digits), lenient=False)
        (refused,) = read_bytes(text.replace('"@"', "9" * 1001).encode(), "f.json", "f")
        assert refused.problems[0].message == "not JSON: a number of more than 1000 digits"
    finally:
        sys.set_int_max_str_digits(limit)


@given(session_documents(small_blocks), st.integers(0, 3), st.booleans(), st.booleans())
def test_a_valid_file_is_checked_as_it_is_built(
    document: dict[str, Any], shape: int, deepest: bool, marked: bool
) -> None:
    """Valid input, nested as deep as allowed too, needs neither the exact
    reading nor a checking pass of its own: each container is visited once,
    checked and frozen (``sources.trusted``); the first file a process reads too,
    whose keys no check has seen before, and one that starts with a byte order mark."""
    if deepest:  # as deep as a block's field may nest: a lone message's blocks are two levels up
        document["messages"][0]["content"].append(json.loads(_nested(MAX_DEPTH - (4 if shape == 2 else 6))))
    text = ("\ufeff" if marked else "") + json.dumps(_shape(document, shape << 8))
    with (
        mock.patch.object(check, "_GOOD_KEYS", set()),
        mock.patch.object(files, "parse", side_effect=AssertionError("read exactly")),
        mock.patch.object(messages_module, "check_session", side_effect=AssertionError("checked apart")),
        mock.patch.object(messages_module, "check_message", side_effect=AssertionError("checked apart")),
    ):
        results = read_bytes(text.encode(), "f.json", "f")
    assert all(result.ok for result in results)


_SESSION_FIELDS = [
    *({"id": value} for value in ("", " \n", None, 3, ["s"], "s")),
    *({"title": value} for value in (None, 3, ["t"], {"t": 1}, "", "t")),
    *({"created_at": value} for value in (None, -1, 0, 3.0, 3.5, "1", True, check.MAX_TIME, check.MAX_TIME + 1)),
    {"messages": {}},
    {"camelCase": 1},
    {"meta": {"badKey": 1}},
    {"meta": [{"deep": "@"}]},
    {"meta": {"far": 1e400}},
    {"meta": {"ok": [1, 2.5, None, {"k": "v"}]}},
]


@pytest.mark.parametrize("fields", _SESSION_FIELDS, ids=repr)
@pytest.mark.parametrize("lenient", [False, True])
def test_a_sessions_own_fields_are_judged_alike_read_quickly_or_exactly(fields: dict[str, Any], lenient: bool) -> None:
    """The session object's own fields and metadata, valid, invalid or a rare
    valid shape (a time written ``3.0``), and nested about the depth limit:
    the same session or problems as the exact reading."""
    for depth in (MAX_DEPTH - 4, MAX_DEPTH - 3, MAX_DEPTH - 2):
        document = {"id": "s", "messages": [message({"id": "b", "type": "prose", "markdown": "x"})], **fields}
        text = json.dumps(document).replace('"@"', "[" * depth + "]" * depth).replace("Infinity", "1e400")
        _alike(text, lenient)


@pytest.mark.parametrize("shape", [0, 1 << 8, 2 << 8, 3 << 8])
def test_nesting_at_the_limit_is_judged_alike_in_every_shape(shape: int) -> None:
    """Each level about the depth limit, in a session, an array of messages, a
    lone message and an array of sessions: where a path is counted from differs."""
    for depth in range(MAX_DEPTH - 8, MAX_DEPTH + 1):
        document = {"id": "s", "messages": [message(json.loads(_nested(depth)))]}
        _alike(json.dumps(_shape(document, shape)), lenient=False)


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


def _exact_lines(text: str) -> list[tuple[int, Any]]:
    """JSON Lines read line by line by the exact reading, as ``parse_lines`` must give them."""
    out: list[tuple[int, Any]] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if line.strip():
            try:
                out.append((lineno, parse(line)))
            except json.JSONDecodeError as error:
                out.append((lineno, error))
    return out


def _same_or_same_problem(a: Any, b: Any) -> bool:
    """The same value (as ``_same``), or the same problem at the same place."""
    if isinstance(a, json.JSONDecodeError) and isinstance(b, json.JSONDecodeError):
        return (a.msg, a.pos) == (b.msg, b.pos)
    return _same(a, b)


def _lines_read_alike(text: str, lenient: bool) -> None:
    """JSON Lines read quickly give each line's value or problem, the duplicate keys
    recorded, and every reader's sessions and problems, as reading each line exactly."""
    from vis_export.sources.jsontext import parse_lines

    with recording():
        quick = parse_lines(text)
        quick_duplicates = any_recorded()
    with recording():
        exact = _exact_lines(text)
        exact_duplicates = any_recorded()
    assert [n for n, _ in quick] == [n for n, _ in exact] and quick_duplicates == exact_duplicates
    assert all(_same_or_same_problem(q, e) for (_, q), (_, e) in zip(quick, exact, strict=True))
    data = text.encode()
    read = read_bytes(data, "f.jsonl", "f", lenient)
    with mock.patch.object(files, "parse_lines", _exact_lines):
        assert read == read_bytes(data, "f.jsonl", "f", lenient)


_json_line_texts = st.lists(
    st.one_of(
        _texts,
        st.builds(_near_miss, session_documents(small_blocks).map(lambda d: d["messages"][0]), st.integers(0, 2**16)),
        _SPACE,
    ),
    min_size=1,
    max_size=6,
)


def _by_msgspec() -> Any:
    """``parse_lines`` as it reads a text that may hold a number too large for a
    float (``jsontext._finite_for_sure`` cannot vouch): msgspec, the colons counted."""
    from vis_export.sources import jsontext

    return mock.patch.object(jsontext, "_finite_for_sure", return_value=False)


@given(_json_line_texts, st.sampled_from(["", "\n", '\n{"a": "cut', "\r\n"]), st.booleans(), st.booleans())
@example(["\u3000", "\x1c", '{"a": 1}', "\xa0 "], "\n", False, False)
def test_json_lines_read_quickly_give_what_the_exact_reading_gives(
    lines: list[str], end: str, lenient: bool, msgspec: bool
) -> None:
    """Each line's value (or its problem), line numbers, and so every reader's
    sessions, problems and places, as reading each line exactly gives them, read
    by jiter or by msgspec (lines blank only to ``str.isspace`` left out alike)."""

    text = "\n".join(lines) + end
    if not text.strip():
        return
    if msgspec:
        with _by_msgspec():
            _lines_read_alike(text, lenient)
    else:
        _lines_read_alike(text, lenient)


def test_a_transcript_is_read_quickly() -> None:
    """The compiled parser takes every line of a valid Claude Code file, and of a
    file still being written all but its last, cut line."""
    from corpus import claude_code_bytes
    from vis_export.sources import jsontext

    text = claude_code_bytes(100_000).decode()
    for data, exact_lines in ((text, 0), (text + '{"type": "assistant", "mess', 1)):
        with mock.patch.object(jsontext, "_exact", wraps=jsontext._exact) as exact:
            assert all(not isinstance(v, json.JSONDecodeError) for _, v in jsontext.parse_lines(data)[:-1])
        assert exact.call_count == exact_lines


def test_json_lines_nested_near_the_recursion_limit_are_a_located_problem() -> None:
    """A line nested so deep that the compiled parser reads it but the exact one (or a
    reader recursing into it) would not is read exactly, and an importer stops at the
    contract's depth: one located problem, never a crash (Claude Code files crashed
    from 700 levels on)."""
    limit = sys.getrecursionlimit()
    head = json.dumps({"type": "user", "uuid": "u", "message": {"role": "user", "content": "hi"}})
    call = {"type": "tool_use", "id": "t", "name": "x", "input": "@"}
    line = json.dumps(
        {"type": "assistant", "uuid": "a", "message": {"id": "m", "role": "assistant", "content": [call]}}
    )
    tool = {"id": "b", "type": "tool", "tool": "t", "status": "completed", "input": "@"}
    for first, deep in ((head, line), (json.dumps(message()), json.dumps(message(tool)))):
        for depth in range(limit - 300, limit + 10):
            text = first + "\n" + deep.replace('"@"', "[" * depth + "]" * depth) + "\n"
            (result,) = read_bytes(text.encode(), "f.jsonl", "f")
            (problem,) = result.problems
            assert result.session is None and "nested deeper" in problem.message and problem.location, depth


def _some_map(value: Any, rng: random.Random) -> dict[str, Any] | None:
    """A map anywhere in ``value`` (at any depth), or ``None`` if it holds none."""
    found: list[dict[str, Any]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return rng.choice(found) if found else None


def _foreign_near_miss(codex: bool, seed: int, changes: list[int]) -> str:
    """A small generated Claude Code or Codex file with some of: a key given twice
    at any depth (``thinking`` and reasoning summaries included), an escaped colon,
    nesting near the contract's or the recursion limit, a line break inside an
    entry, two entries on a line, a line that is not an object, blank and CRLF
    lines, and a last line cut short."""
    from corpus import claude_code_bytes, codex_bytes

    rng = random.Random(seed)
    lines = (codex_bytes if codex else claude_code_bytes)(2_000, seed).decode().splitlines()
    for change in changes:
        n = rng.randrange(len(lines))
        if change == 0:  # a key given twice, somewhere in the entry
            try:
                entry = json.loads(lines[n])
            except ValueError:  # a line an earlier change broke
                continue
            target = _some_map(entry, rng)
            if target:
                key = rng.choice(list(target))
                target["@dup@"] = 1
                again = json.dumps(rng.choice(["", "shown", {"x": 1}, [key]]))
                lines[n] = json.dumps(entry).replace('"@dup@": 1', f"{json.dumps(key)}: {again}")
        elif change == 1:  # an escaped colon (it would hide a duplicate from the colon count)
            lines[n] = lines[n].replace(":", "\\u003a", 2).replace('\\u003a"', ':"', 1)
        elif change == 2:  # nesting near a limit, in a value the importer reads or not
            depth = rng.choice([MAX_DEPTH - 5, MAX_DEPTH + 1, sys.getrecursionlimit() // 2 - 1, 600])
            lines[n] = lines[n].replace('"2025', "[" * depth + "1" + "]" * depth + ', "x": "2025', 1)
        elif change == 3:  # a line break inside an entry, between tokens
            cuts = [m.end() for m in re.finditer(r"[,{\[]|\}(?=,)", lines[n])]
            if cuts:
                at = rng.choice(cuts)
                lines[n : n + 1] = [lines[n][:at], lines[n][at:]]
        elif change == 4 and n + 1 < len(lines):  # two entries on one line
            lines[n : n + 2] = [lines[n] + rng.choice(["", " ", "\t"]) + lines[n + 1]]
        elif change == 5:
            lines.insert(n, rng.choice(['["x"]', '"x"', "1", "{}", "{} {}", "{}\r", " ", "\x0c", "\r"]))
        elif change == 6:  # a key spelled with a colon, and colons in values
            lines[n] = lines[n].replace('"type"', '"ty:pe": "a:b", "type"', 1)
    text = "\r\n".join(lines) if 7 in changes else "\n".join(lines)
    return text[: rng.randrange(len(text) // 2, len(text))] if 8 in changes else text + "\n"


@settings(max_examples=examples(150), deadline=None)
@given(
    st.booleans(),
    st.integers(0, 2**16),
    st.lists(st.integers(0, 8), min_size=1, max_size=6),
    st.booleans(),
    st.booleans(),
)
def test_transcripts_read_in_one_call_give_what_the_exact_reading_gives(
    codex: bool, seed: int, changes: list[int], lenient: bool, msgspec: bool
) -> None:
    """A Claude Code or Codex file, read by jiter a line at a time, or by msgspec
    with its lines decoded in one call where that is certain, gives the sessions
    and problems (places included) that reading each line exactly gives, for near
    misses of every kind."""

    text = _foreign_near_miss(codex, seed, changes)
    with cpu_limit(20):
        if msgspec:
            with _by_msgspec():
                _lines_read_alike(text, lenient)
        else:
            _lines_read_alike(text, lenient)


def test_a_transcript_is_decoded_in_one_call() -> None:
    """Each line of a valid Claude Code or Codex file is one object, so the file is
    decoded by one msgspec call, not line by line, where jiter is not taken."""
    from corpus import claude_code_bytes, codex_bytes
    from vis_export.sources import jsontext

    for data in (claude_code_bytes(50_000), codex_bytes(50_000)):
        with _by_msgspec(), mock.patch.object(jsontext, "_quick", wraps=jsontext._quick) as per_line:
            values = jsontext.parse_lines(data.decode())
        assert per_line.call_count == 0 and len(values) == data.count(b"\n")


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(MAX_DEPTH - 12, MAX_DEPTH + 3), st.booleans(), st.booleans(), st.booleans(), st.integers(0, 2**16))
def test_imported_messages_built_in_one_pass_are_what_checking_then_building_gives(
    depth: int, deep_first: bool, lenient: bool, codex: bool, seed: int
) -> None:
    """An imported message is checked and built in one pass, which gives up (having
    frozen part of it) on nesting near the contract's limit: the message is then
    checked in detail, so sessions and problems are those of checking then building."""
    from vis_export.sources import foreign

    nested = "[" * depth + "1" + "]" * depth
    text = _foreign_near_miss(codex, seed, [])
    lines = text.splitlines()
    calls = [n for n, line in enumerate(lines) if '"Bash"' in line or '"shell"' in line]
    target = calls[0] if deep_first else calls[-1]
    if codex:  # the arguments are JSON text: nest inside it
        lines[target] = lines[target].replace('\\"workdir\\"', f'\\"deep\\": {nested}, \\"workdir\\"', 1)
    else:
        lines[target] = lines[target].replace('"description"', f'"deep": {nested}, "description"', 1)
    data = ("\n".join(lines) + "\n").encode()
    with cpu_limit(20):
        one_pass = read_bytes(data, "f.jsonl", "f", lenient)
        with mock.patch.object(foreign, "_in_one_pass", return_value=None):
            checked = read_bytes(data, "f.jsonl", "f", lenient)
    assert one_pass == checked
    for ours, theirs in zip(one_pass, checked, strict=True):
        if ours.session is not None:
            assert json.dumps(ours.session.to_json()) == json.dumps(theirs.session.to_json())


@given(st.lists(st.sampled_from(["{", "}", "\n", "\r", " ", "\t", "x", '{"a": 1}']), max_size=12))
def test_lines_told_one_object_each_by_counting_are_so(pieces: list[str]) -> None:
    """Counting line breaks and the braces around them says what looking at every line
    says: each line (a last line break aside) starts with ``{`` and ends with ``}``."""
    from vis_export.sources.jsontext import _one_object_a_line

    text = "".join(pieces)
    lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    each = bool(text) and all(line[:1] == "{" and line[-1:] == "}" for line in lines)
    assert _one_object_a_line(text) == (len(lines) if each else 0)


def test_a_transcript_is_not_looked_at_line_by_line() -> None:
    from corpus import claude_code_bytes, codex_bytes
    from vis_export.sources import jsontext

    for data in (claude_code_bytes(50_000), codex_bytes(50_000)):
        with _by_msgspec(), mock.patch.object(jsontext, "_one_object", wraps=jsontext._one_object) as looked:
            values = jsontext.parse_lines(data.decode())
        assert looked.call_count == 0 and [n for n, _ in values] == list(range(1, data.count(b"\n") + 1))


def _readers_documents() -> list[bytes]:
    """A file of each reader: a Vis session, event log, Lonis and messages (the golden
    inputs), Claude Code and Codex transcripts, OpenAI and Anthropic provider logs."""
    from pathlib import Path

    from test_foreign import claude_session, codex_rollout

    golden = Path(__file__).resolve().parent.parent / "golden" / "input"
    log = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi 1.5"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}],
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}],
        },
        {"role": "tool", "tool_call_id": "c", "content": "2"},
    ]
    anthropic = {
        "model": "claude",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {"n": 1.5}}]},
        ],
    }
    lines = ["".join(json.dumps(e) + "\n" for e in entries) for entries in (claude_session(), codex_rollout())]
    return [
        *(path.read_bytes() for path in sorted(golden.iterdir())),
        *(text.encode() for text in lines),
        json.dumps({"messages": log}).encode(),
        json.dumps(anthropic).encode(),
    ]


_READERS = _readers_documents()


def _mutated(data: bytes, rng: random.Random) -> bytes:
    """``data`` with a byte-level change: a number out of range or of another spelling, a key
    given again in escapes, a blank of another kind or a NUL, a lone surrogate (escaped or
    raw) or a byte that is not UTF-8 in a string, a BOM, trailing bytes, a cut, CRLF, nesting."""
    change = rng.randrange(7)
    if change <= 1:
        spelled = rng.choice([b"1e400", b"-1e400", b"1E+999", b"1e-400", b"-0", b"9" * 30, b"-0.0", b"01", b"-", b"1."])
        numbers = list(re.finditer(rb"(?<=[:\[,])\s*-?\d+(\.\d+)?", data))
        if numbers and rng.random() < 0.5:
            m = rng.choice(numbers)
            return data[: m.start()] + spelled + data[m.end() :]
        at = rng.choice([m.end() for m in re.finditer(rb"\{", data)])  # a field of its own, in any map
        return data[:at] + b'"extra_n": ' + spelled + b"," + data[at:]
    elif change == 2:
        keys = list(re.finditer(rb'"([a-z_]+)":', data))
        if keys:
            m = rng.choice(keys)
            escaped = b"".join(b"\\u%04x" % c if rng.random() < 0.5 else bytes([c]) for c in m.group(1))
            return data[: m.start()] + b'"' + escaped + b'":null,' + data[m.start() :]
    elif change == 3:
        at = rng.randrange(len(data))
        blank = rng.choice([b" ", b"\t", b"\r", b"\x0c", b"\xc2\xa0", b"\x00", b"\n", b"\r\n"])
        return data[:at] + blank + data[at:]
    elif change == 4:
        strings = list(re.finditer(rb'"[^"\\]{1,20}"', data))
        if strings:
            m = rng.choice(strings)
            inner = rng.choice([b"\\ud800", b"\\udc00", b"\xed\xa0\x80", b"\xff", b"\\u0000", b"\x01"])
            return data[: m.end() - 1] + inner + data[m.end() - 1 :]
    elif change == 5:
        cut = rng.randint(1, 5)
        edges = [b"\xef\xbb\xbf" + data, data + b"x", data + b"\n{", data[:-cut], b"\n\n" + data]
        return rng.choice([*edges, data.replace(b"\n", b"\r\n")])
    depth = rng.choice([MAX_DEPTH - 2, MAX_DEPTH, MAX_DEPTH + 1, 150, 200, 201, 202, 300])
    return re.sub(rb'"(text|content)":', b'"zz":' + b"[" * depth + b"]" * depth + b',"\\1":', data, count=1)


@settings(max_examples=examples(150), deadline=None)
@given(st.sampled_from(range(len(_READERS))), st.integers(0, 2**32), st.integers(1, 2), st.booleans())
def test_every_readers_file_changed_in_its_bytes_is_read_quickly_as_exactly(
    which: int, seed: int, changes: int, lenient: bool
) -> None:
    """Each reader's file (not only Vis sessions) changed byte by byte, past what a text can
    hold (bytes that are not UTF-8, raw surrogates, a BOM): read quickly, the results, problems
    (messages and places) and sessions are the exact reading's."""
    rng = random.Random(seed)
    data = _READERS[which]
    for _ in range(changes):
        data = _mutated(data, rng)
    with cpu_limit(20):
        quick = read_bytes(data, "f.json", "f", lenient)
        with mock.patch.object(files, "read_quick", return_value=Quick(UNSURE, False)):
            exact = read_bytes(data, "f.json", "f", lenient)
    assert quick == exact
    for ours, theirs in zip(quick, exact, strict=True):
        if ours.session is not None:
            assert json.dumps(ours.session.to_json()) == json.dumps(theirs.session.to_json())


# Numbers of every size a float may or may not hold: digits before and after the
# point, an exponent of up to four digits with a sign or none.
_SIZED_NUMBERS = st.builds(
    lambda sign, whole, point, letter, exponent: f"{sign}{whole}{point}{letter}{exponent}",
    st.sampled_from(["", "-"]),
    st.sampled_from(["0", "1", "9", "17976931348623157"]) | st.integers(1, 400).map(lambda n: "1" + "0" * (n - 1)),
    st.sampled_from(["", ".5", ".0", ".000001", "." + "9" * 30]),
    st.sampled_from(["", "e", "E", "e+", "e-", "E+", "E-"]),
    st.sampled_from(["", "0"]).flatmap(lambda zero: st.integers(0, 1500).map(lambda n: zero + str(n))),
).filter(lambda text: text[-1].isdigit())
# Strings like ids that hold exponents, and strings that look like numbers too large.
_IDS = ['"4e123"', '"ab4e400x"', '"5-e123"', '"0a1e2345"']
_AROUND = st.sampled_from([*_IDS, '"x 5e999"', '"1.5e400"', '"' + "7" * 250 + '"'])


@settings(max_examples=examples(500))
@given(st.lists(st.one_of(_SIZED_NUMBERS, _AROUND, _texts), min_size=1, max_size=6), _SPACE, st.booleans())
@example(["1e400"], "", False)
@example(["1" + "0" * 250 + "e99"], " ", True)
@example(["-1E+0400"], "\n", False)
@example(["0." + "0" * 5 + "1e999"], "", True)
def test_a_text_vouched_finite_holds_no_number_too_large(values: list[str], space: str, lines: bool) -> None:
    """Whatever ``_finite_for_sure`` vouches for, jiter reads without an infinity
    (so as ``parse`` reads it): numbers too large for a float, at any place, are
    never passed, while exponents in strings (ids) and small numbers are."""
    from vis_export.sources.jsontext import _finite_for_sure

    text = ("\n" if lines else f",{space}").join(values)
    data = text.encode() if lines else f"[{space}{text}{space}]".encode()
    vouched = _finite_for_sure(data)
    for line in data.split(b"\n"):
        try:
            value = jiter.from_json(line, allow_inf_nan=False)
        except ValueError:
            continue
        assert not (vouched and holds_infinity(value)), line
    if all(value in _IDS for value in values):
        assert vouched  # no number at all, though the strings hold exponents


def test_under_lower_limits_json_lines_are_read_exactly() -> None:
    """jiter takes integers of up to 4300 digits and nesting to 201 levels whatever
    the interpreter's limits say: under a lower integer limit, or a recursion limit
    that ``parse`` meets before jiter's depth, each line is read as the exact
    reading reads it (its problem stands)."""
    from vis_export.sources.jsontext import parse_lines

    long = '{"a": ' + "9" * 2000 + "}\n"
    deep = '{"b": ' + "[" * 199 + "]" * 199 + "}\n"
    digits, recursion = sys.get_int_max_str_digits(), sys.getrecursionlimit()
    try:
        frames = len(traceback.extract_stack())  # where the limit is met: 150 levels below the line's 200
        for text, lower_digits, lower_recursion in ((long, 1000, recursion), (deep, digits, frames + 150)):
            sys.set_int_max_str_digits(lower_digits)
            sys.setrecursionlimit(lower_recursion)
            with recording():
                exact = _exact_lines(text)
                quick = parse_lines(text)
            assert any(isinstance(value, json.JSONDecodeError) for _, value in exact)
            assert all(_same_or_same_problem(q, e) for (_, q), (_, e) in zip(quick, exact, strict=True))
    finally:
        sys.set_int_max_str_digits(digits)
        sys.setrecursionlimit(recursion)
