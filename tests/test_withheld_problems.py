"""R2 in problem lines: a problem under private reasoning names its place up to
the reasoning and says that details are withheld, never the value or its keys,
in every reader and every command that prints problems."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import given, strategies as st
from strategies import session_documents, small_blocks
from timelimit import time_limit

from vis_export.cli import main
from vis_export.contract.lonis_check import check_lonis_block
from vis_export.contract.private import WITHHELD
from vis_export.problems import format_path
from vis_export.sources.files import read_bytes

MARK = "Zq9Secret"  # not snake_case, so a key holding it is a problem wherever it is


# What private reasoning holds: the marker in keys and values, with contract
# problems of its own (a camelCase key, a block that breaks its type).
_leaves = st.one_of(st.just(MARK), st.just(f"value {MARK}"), st.integers(), st.none())
_private = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from([MARK, f"x{MARK}", "plain", f"{MARK.lower()}_key"]), inner, max_size=3),
    ),
    max_leaves=8,
).map(lambda value: {MARK: value, "text": {MARK: 1}})


def _reasoning_points(payload: dict[str, Any]) -> st.SearchStrategy[tuple[dict[str, Any], tuple[Any, ...]]]:
    """Where private reasoning can start, each as (a map holding it, the path to where it starts)."""
    return st.sampled_from(
        [
            ({"thinking": payload}, ("thinking",)),
            ({"reasoning_content": payload}, ("reasoning_content",)),
            ({"note": {"type": "redacted_thinking", **payload}}, ("note",)),
            ({"note": {"visibility": "private", **payload}}, ("note",)),
            ({"note": {"thought": True, **payload}}, ("note",)),
            ({"items": [{"kind": "Thinking", **payload}]}, ("items", 0)),
        ]
    )


@st.composite
def sessions_hiding_problems(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    """A session with private reasoning (holding problems) at a random place and
    depth, and the location its problem line must name."""
    document = copy.deepcopy(draw(session_documents(small_blocks)))
    payload = draw(_private)
    m = draw(st.integers(0, len(document["messages"]) - 1))
    message = document["messages"][m]
    where = draw(st.sampled_from(["block", "tool_input", "tool_output", "metadata"]))
    if where == "block":
        block = {"id": "r", "type": draw(st.sampled_from(["reasoning", "Thinking", "reasoning_v2"])), **payload}
        message["content"].append(block)
        return document, format_path(("messages", m, "content", len(message["content"]) - 1))
    holder, point = draw(_reasoning_points(payload))
    nest = draw(st.lists(st.sampled_from(["args", "deep"]), max_size=4))
    for key in reversed(nest):
        holder = {key: holder}
    if where == "metadata":
        message["extra"] = holder
        prefix: tuple[Any, ...] = ("messages", m, "extra")
    else:
        field = "input" if where == "tool_input" else "output"
        message["content"].append({"id": "t", "type": "tool", "tool": "run", "status": "completed", field: holder})
        prefix = ("messages", m, "content", len(message["content"]) - 1, field)
    return document, format_path((*prefix, *nest, *point))


def _lines(data: bytes, lenient: bool) -> list[str]:
    results = read_bytes(data, "s.json", "s", lenient)
    return [problem.line("s.json") for result in results for problem in result.problems]


@given(sessions_hiding_problems())
def test_no_problem_line_quotes_private_reasoning(case: tuple[dict[str, Any], str]) -> None:
    document, location = case
    with time_limit(20):
        for data, expected in _encodings(document, location):
            for lenient in (False, True):
                lines = _lines(data, lenient)
                assert f"s.json: {expected}: {WITHHELD}" in lines, lines
                assert not [line for line in lines if MARK in line or MARK.lower() in line], lines


def _encodings(document: dict[str, Any], location: str) -> list[tuple[bytes, str]]:
    """The session as a JSON document, as JSON Lines of messages and, for what a
    block holds, as an event log: each with where its problem line must point."""
    found = [(json.dumps(document).encode(), location)]
    m = int(location.split("]")[0].split("[")[1])
    inside = location.split("]", 1)[1].lstrip(".")
    lines = "\n".join(json.dumps(message) for message in document["messages"])
    one = len(document["messages"]) == 1  # one line is a JSON document of one message
    found.append((lines.encode(), inside if one else f"line {m + 1}, {inside}"))
    if inside.startswith("content["):
        b = int(inside.split("]")[0].split("[")[1])
        block = document["messages"][m]["content"][b]
        event = {"type": "content.block.started", "turn_id": "t", "block": block}
        where = "block" + inside.split("]", 1)[1]
        found.append((json.dumps(event).encode(), f"line 1, {where}"))
    return found


def test_every_command_withholds(tmp_path: Path) -> None:
    """validate, validate --json, convert and index print the same withheld line."""
    source = tmp_path / "s.json"
    block = {"id": "t", "type": "tool", "tool": "run", "status": "completed", "input": {"thinking": {MARK: MARK}}}
    source.write_text(json.dumps({"id": "s", "messages": [{**_message(), "content": [block]}]}))
    expected = f"messages[0].content[0].input.thinking: {WITHHELD}"
    runner = CliRunner()
    outputs = [
        runner.invoke(main, ["validate", str(source)]),
        runner.invoke(main, ["validate", "--json", str(source)]),
        runner.invoke(main, ["convert", str(source), "--to", "markdown", "-o", str(tmp_path / "out")]),
        runner.invoke(main, ["convert", "--lenient", str(source), "--to", "markdown", "-o", str(tmp_path / "out")]),
        runner.invoke(main, ["index", str(source), "--index", str(tmp_path / "idx")]),
    ]
    for result in outputs:
        said = result.output + (result.stderr if result.stderr_bytes is not None else "")
        assert MARK not in said, said
        assert expected in said or json.dumps(expected.split(": ")[0]) in said, said


def _message() -> dict[str, Any]:
    return {"id": "m", "role": "assistant", "status": "completed", "created_at": 1}


def test_a_lonis_field_holding_thinking_is_not_quoted() -> None:
    """The schema library's messages quote the value (``{'thinking': ...} is not of
    type 'string'``) and its keys (``'thinking' was unexpected``)."""
    block = {
        "schema_version": "lonis.block/v1",
        "attribution": {"identity": "lonis:test", "provenance": {"when": "2026-08-10T00:00:00Z", "producer": "x"}},
        "payload": {"kind": "answer", "data": {"question": "q", "text": {"thinking": MARK}, "confidence": 0.9}},
    }
    problems = check_lonis_block(block)
    assert [(p.location, p.message) for p in problems] == [("payload.data.text", WITHHELD)]
    block["payload"]["data"]["text"] = "yes"
    block["payload"]["data"]["thinking"] = {MARK: 1}
    problems = check_lonis_block(block)
    assert problems and all(MARK not in p.message and "thinking" not in p.message for p in problems), problems


def test_event_log_problems_name_no_private_block() -> None:
    start = {"type": "content.block.started", "turn_id": "t", "seq": 1}
    lines = [
        {**start, "block": {"id": MARK, "type": "reasoning", "text": ""}},
        {**start, "seq": 2, "block": {"id": MARK, "type": "reasoning", "text": ""}},
        {"type": "content.block.delta", "turn_id": "t", "seq": 3, "block_id": "u", "field": "text", "text": "x"},
        {**start, "seq": 4, "block": {"id": "u", "type": f"thinking {MARK}"}},
        {"type": "content.block.delta", "turn_id": "t", "seq": 5, "block_id": "u", "field": "text", "text": "x"},
    ]
    data = "\n".join(json.dumps(line) for line in lines).encode()
    said = _lines(data, lenient=False) + _lines(data, lenient=True)
    assert any("started twice" in line for line in said), said
    assert any("does not stream" in line for line in said), said
    assert not [line for line in said if MARK in line], said
