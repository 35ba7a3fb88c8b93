"""A duplicate JSON key is a contract problem located where it is, in every
reader (JSON, JSON Lines, event logs, Lonis, the store's content_json); read
leniently, the reading that hides more wins (R2)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import GOLDEN
from hypothesis import given, strategies as st
from strategies import session_documents, small_blocks
from visstore import build_store

from vis_export.contract.duplicates import hides_more
from vis_export.formats.json import to_json
from vis_export.policy import visible_session
from vis_export.sources import read
from vis_export.sources.files import read_bytes
from vis_export.sources.jsontext import parse


class Pairs(list[tuple[str, Any]]):
    """A JSON object written pair by pair, so a key can repeat."""


def dumps(value: Any) -> str:
    if isinstance(value, Pairs):
        return "{" + ",".join(f"{json.dumps(k)}:{dumps(v)}" for k, v in value) + "}"
    if isinstance(value, dict):
        return dumps(Pairs(value.items()))
    if isinstance(value, list):
        return "[" + ",".join(dumps(item) for item in value) + "]"
    return json.dumps(value)


def message(*blocks: Any) -> dict[str, Any]:
    return {"id": "m", "role": "assistant", "status": "completed", "created_at": 1, "content": list(blocks)}


SECRET = "the secret plan"
DISGUISES = [
    # visibility private, then visible: JSON readers keep the last, visible
    Pairs([("id", "b"), ("type", "reasoning"), ("visibility", "private"), ("text", SECRET), ("visibility", "visible")]),
    # typed reasoning, then prose: the last makes it prose
    Pairs([("id", "b"), ("type", "reasoning"), ("markdown", SECRET), ("text", SECRET), ("type", "prose")]),
    # the other order: prose, then reasoning
    Pairs([("id", "b"), ("type", "prose"), ("markdown", SECRET), ("text", SECRET), ("type", "reasoning")]),
    # a tool whose input is plain, then holds thinking
    Pairs(
        [("id", "b"), ("type", "tool"), ("tool", "t"), ("status", "completed"), ("input", {"thinking": SECRET})]
        + [("input", {"q": 1})]
    ),
]


def _lines(results: list[Any]) -> list[str]:
    return [problem.line("f") for result in results for problem in result.problems]


@pytest.mark.parametrize("block", DISGUISES)
def test_a_duplicate_key_is_refused_with_its_place(block: Pairs) -> None:
    key = next(k for k, _ in block if sum(1 for other, _ in block if other == k) > 1)
    data = dumps({"id": "s", "messages": [message({"id": "a", "type": "prose", "markdown": "hi"}, block)]}).encode()
    (result,) = read_bytes(data, "f", "s")
    assert result.session is None
    assert f'f: messages[0].content[1]: duplicate key "{key}"' in _lines([result])


@pytest.mark.parametrize("block", DISGUISES)
def test_read_leniently_the_reading_that_hides_more_wins(block: Pairs) -> None:
    data = dumps({"id": "s", "messages": [message(block)]}).encode()
    (result,) = read_bytes(data, "f", "s", lenient=True)
    assert result.session is not None and any("duplicate key" in line for line in _lines([result]))
    shown = to_json(visible_session(result.session, "visible"))
    assert SECRET not in shown


@given(session_documents(small_blocks), st.data())
def test_a_key_repeated_anywhere_is_found_there(document: dict[str, Any], data: st.DataObject) -> None:
    """Any map of a valid session, at any depth, with one of its keys written twice."""
    maps: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def walk(value: Any, path: tuple[Any, ...]) -> None:
        if isinstance(value, dict):
            if value:
                maps.append((path, value))
            for key, item in value.items():
                walk(item, (*path, key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, (*path, index))

    walk(document, ())
    path, target = data.draw(st.sampled_from(maps))
    key = data.draw(st.sampled_from(sorted(target)))
    document = copy.deepcopy(document)
    holder: Any = document
    for part in path:
        holder = holder[part]
    pairs = Pairs(holder.items())
    pairs.insert(0, (key, holder[key]))
    text = _replace(document, path, pairs)
    (result,) = read_bytes(text.encode(), "f", "s")
    assert result.session is None
    assert any(
        line.endswith(f"duplicate key {json.dumps(key)}") or "details withheld" in line for line in _lines([result])
    )


def _replace(document: Any, path: tuple[Any, ...], pairs: Pairs) -> str:
    if not path:
        return dumps(pairs)
    parent: Any = document
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = pairs
    return dumps(document)


def test_json_lines_and_event_logs_locate_it_by_line() -> None:
    block = Pairs(
        [("id", "b"), ("type", "reasoning"), ("visibility", "private"), ("text", "x"), ("visibility", "visible")]
    )
    lines = [dumps(message({"id": "a", "type": "prose", "markdown": "hi"})), dumps(message(block))]
    (result,) = read_bytes("\n".join(lines).encode(), "f", "s")
    assert 'f: line 2, content[0]: duplicate key "visibility"' in _lines([result])

    started = {"type": "content.block.started", "turn_id": "t", "seq": 1, "session_id": "one"}
    other = {**started, "session_id": "two", "block": {"id": "p", "type": "prose", "markdown": "fine"}}
    log = [dumps({**started, "block": block}), dumps(other), dumps(Pairs([*started.items(), ("seq", 2)]))]
    results = read_bytes("\n".join(log).encode(), "f", "s")
    assert 'f: line 1, block: duplicate key "visibility"' in _lines(results)
    assert 'f: line 3: duplicate key "seq"' in _lines(results)
    assert [r.session is not None for r in results] == [False, True]  # the other session still loads


def test_lonis_blocks_locate_it() -> None:
    block = json.loads((GOLDEN / "input" / "lonis.jsonl").read_text().splitlines()[1])
    text = dumps(block).replace('"kind":"answer"', '"kind":"answer","kind":"answer"')
    (result,) = read_bytes(text.encode(), "f", "s")
    assert _lines([result]) == ['f: payload: duplicate key "kind"']


def test_the_store_content_json_locates_it(tmp_path: Path) -> None:
    rows = json.loads((GOLDEN / "store" / "rows.json").read_text())
    state = rows["session_turn_state"][1]
    block = Pairs(
        [("id", "b"), ("type", "reasoning"), ("visibility", "private"), ("text", "x"), ("visibility", "visible")]
    )
    state["content_json"] = dumps([block])
    store = build_store(tmp_path / "vis.db", rows)
    results = list(read(store))
    assert any(line.endswith(', content[0]: duplicate key "visibility"') for line in _lines(results)), _lines(results)
    assert [r.session is None for r in results] == [True, False]


def test_under_private_reasoning_not_even_the_key_is_said() -> None:
    thinking = Pairs([("Zq9Secret", 1), ("Zq9Secret", 2)])
    tool = {"id": "t", "type": "tool", "tool": "run", "status": "completed", "input": {"thinking": thinking}}
    (result,) = read_bytes(dumps(message(tool)).encode(), "f", "s")
    lines = _lines([result])
    assert lines == ["f: content[0].input.thinking: details withheld (private reasoning)"]


def test_parsed_where_nothing_can_report_it_is_refused() -> None:
    with pytest.raises(json.JSONDecodeError, match="duplicate key"):
        parse('{"a": 1, "a": 2}')


def test_hides_more_keeps_the_private_value_in_either_order() -> None:
    assert hides_more("visibility", ["visible", "private"]) == "private"
    assert hides_more("visibility", ["private", "visible"]) == "private"
    assert hides_more("type", ["prose", "Thinking"]) == "Thinking"
    assert hides_more("thought", [False, True]) is True
    assert hides_more("markdown", ["a", "b"]) == "b"  # neither hides more: the last, as JSON readers take it


def test_a_type_given_twice_as_a_map_or_list_is_judged_not_crashed_on() -> None:
    """A ``type`` (or ``kind``) repeated with a map or list value (found by the foreign
    near-miss property: the reading crashed, unhashable) keeps the value that holds
    reasoning, else the last, and the file gets its located problem."""
    assert hides_more("type", [{"thinking": "x"}, "prose"]) == {"thinking": "x"}
    assert hides_more("kind", ["prose", ["a"]]) == ["a"]
    assert hides_more("type", ["Thinking", {"x": 1}]) == "Thinking"
    entry = '{"type": "user", "type": {"x": 1}, "message": {"role": "user", "content": "hi"}}\n'
    (result,) = read_bytes(entry.encode(), "f.jsonl", "f")
    assert result.session is None and any('duplicate key "type"' in p.message for p in result.problems)
