"""The fast validator agrees with the JSON Schemas (via the jsonschema library)
and says where each problem is."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

import pytest
from hypothesis import example, given, strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from strategies import blocks, invalid_sessions, json_values, messages, session_documents, snake_keys

from vis_export.contract import MAX_DEPTH, MAX_TIME, check_block, check_depth, check_event, check_message, check_session
from vis_export.contract.check import ENVELOPE_FIELDS, SCALAR_FIELDS, block_shape_ok, envelope_shape_ok

SCHEMAS = {
    name: json.loads((files("vis_export.contract") / "schema" / f"{name}.json").read_text())
    for name in ("common", "block", "message", "event", "session")
}
REGISTRY = Registry().with_resources((schema["$id"], Resource.from_contents(schema)) for schema in SCHEMAS.values())
VALIDATORS = {name: Draft202012Validator(SCHEMAS[name], registry=REGISTRY) for name in SCHEMAS}
CHECKS = {"block": check_block, "message": check_message, "session": check_session}


def test_schemas_are_valid_draft_2020_12() -> None:
    for schema in SCHEMAS.values():
        Draft202012Validator.check_schema(schema)


def schema_verdict(kind: str, value: Any) -> bool:
    return VALIDATORS[kind].is_valid(value)


def our_verdict(kind: str, value: Any) -> bool:
    problems: list = []
    CHECKS[kind](value, (), problems)
    return not [p for p in problems if p.kind == "schema"]


@given(session_documents())
def test_valid_sessions_pass_both(document: dict[str, Any]) -> None:
    assert schema_verdict("session", document)
    problems: list = []
    check_session(document, (), problems)
    assert problems == []


@given(invalid_sessions())
def test_broken_sessions_fail_with_location(case: tuple[dict[str, Any], str]) -> None:
    document, where = case
    problems: list = []
    check_session(document, (), problems)
    assert problems, "a broken session passed"
    assert any(p.location.startswith(where) for p in problems), (where, problems)
    if all(p.kind == "schema" for p in problems):
        assert not schema_verdict("session", document)


# Arbitrary values shaped like blocks and messages: both validators must agree on each.
loose_fields = st.dictionaries(
    st.sampled_from(
        [
            "id",
            "type",
            "markdown",
            "text",
            "language",
            "tool",
            "status",
            "visibility",
            "code",
            "message",
            "retryable",
            "attachment_id",
            "name",
            "media_type",
            "input",
        ]
    ),
    st.one_of(
        json_values,
        st.sampled_from(
            [
                "prose",
                "code",
                "tool",
                "reasoning",
                "error",
                "attachment",
                "notice",
                "speech",
                "completed",
                "private",
                "visible",
                "snake_case",
                " ",
                "",
                "Bad Code",
                "a\n",
                1.0,
                -1,
            ]
        ),
    ),
    max_size=8,
)


@given(st.one_of(loose_fields, blocks, json_values))
def test_block_verdicts_match_jsonschema(value: Any) -> None:
    assert our_verdict("block", value) == schema_verdict("block", value)


# A field given a value of another JSON type, or a number near a limit.
_ODD_VALUES = st.one_of(
    json_values, st.sampled_from([1.5, -0.0, float("inf"), 3, -1, True, None, [], {}, {"k": [1.5]}, "", " ", "x"])
)


@example({"id": "t", "type": "tool", "tool": "run", "status": "completed"}, "started_at", {"k": 1})
@example({"id": "c", "type": "code", "text": "x"}, "language", 1.5)
@given(
    blocks,
    st.sampled_from(sorted({"started_at", "completed_at", *(key for f in SCALAR_FIELDS.values() for key in f)})),
    _ODD_VALUES,
)
def test_a_certain_block_with_only_its_vouched_fields_holds_no_container_or_number(
    block: dict[str, Any], key: str, value: Any
) -> None:
    """``SCALAR_FIELDS``: a block ``block_shape_ok`` vouches for whose keys are all
    there holds only strings and booleans, so the one-pass building
    (``sources.trusted``) may pass over its fields: no container's keys or depth,
    no number's finiteness is left unjudged (a tool's times are not there:
    ``_tool_time_ok`` takes a container)."""
    vouched = SCALAR_FIELDS.get(block["type"], frozenset())
    block = {**{name: item for name, item in block.items() if name in vouched}, key: value}
    if block_shape_ok(block) and SCALAR_FIELDS.get(block["type"], frozenset()).issuperset(block):
        assert {type(item) for item in block.values()} <= {str, bool}


@example({"id": "m", "role": "user", "status": "completed", "content": [], "created_at": 0}, "author", {"name": 1.5})
@given(messages(), st.sampled_from(sorted({"author", *ENVELOPE_FIELDS})), _ODD_VALUES)
def test_a_certain_envelope_with_only_its_vouched_fields_holds_no_container_or_float(
    message: dict[str, Any], key: str, value: Any
) -> None:
    """``ENVELOPE_FIELDS``, as ``SCALAR_FIELDS`` for a message envelope (its
    ``content`` aside, whose blocks are built one by one)."""
    message = {**message, key: value}
    if envelope_shape_ok(message) and ENVELOPE_FIELDS.issuperset(message):
        assert {type(item) for name, item in message.items() if name != "content"} <= {str, int, type(None)}


loose_messages = st.one_of(
    messages(),
    st.dictionaries(
        st.sampled_from(["id", "role", "status", "content", "created_at", "completed_at", "model", "provider"]),
        st.one_of(
            json_values,
            st.lists(st.one_of(blocks, loose_fields), max_size=3),
            st.sampled_from(
                [
                    "user",
                    "assistant",
                    "completed",
                    "Assistant",
                    ":user",
                    0,
                    5.0,
                    -3,
                    2**70,
                    1e300,
                    MAX_TIME,
                    MAX_TIME + 1,
                ]
            ),
        ),
        max_size=8,
    ),
)


@given(loose_messages)
def test_message_verdicts_match_jsonschema(value: Any) -> None:
    assert our_verdict("message", value) == schema_verdict("message", value)


@given(
    st.one_of(
        session_documents(),
        st.dictionaries(
            st.sampled_from(["id", "title", "created_at", "messages"]),
            st.one_of(json_values, st.lists(loose_messages, max_size=2)),
            max_size=4,
        ),
    )
)
def test_session_verdicts_match_jsonschema(value: Any) -> None:
    assert our_verdict("session", value) == schema_verdict("session", value)


events = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("content.block.started"), "turn_id": st.text(max_size=3)},
        optional={"block": st.one_of(blocks, loose_fields), "seq": st.integers(-2, 5)},
    ),
    st.fixed_dictionaries(
        {"type": st.just("content.block.delta")},
        optional={
            "turn_id": st.just("t"),
            "block_id": st.text(max_size=2),
            "field": st.sampled_from(["markdown", "text", "Text", "code"]),
            "text": st.one_of(st.text(max_size=3), st.integers()),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.just("content.block.completed"), "turn_id": st.just("t")},
        optional={"block_id": st.one_of(st.text(max_size=2), st.none())},
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["turn.completed", "turn.failed", "turn.cancelled"]), "turn_id": st.just("t")},
        optional={
            "status": st.sampled_from(["completed", "failed", "cancelled", "done"]),
            "ts": st.one_of(st.integers(-1, 3), st.floats(allow_nan=False)),
        },
    ),
)


@given(events)
def test_event_verdicts_match_jsonschema(event: dict[str, Any]) -> None:
    problems: list = []
    check_event(event, (), problems)
    ours = not [p for p in problems if p.kind == "schema"]
    assert ours == VALIDATORS["event"].is_valid(event)


@given(snake_keys)
def test_snake_case_keys_pass(key: str) -> None:
    problems: list = []
    check_message(
        {
            "id": "m",
            "role": "user",
            "status": "completed",
            "content": [],
            "created_at": 0,
            "meta": {key: {key: [{key: 1}]}},
        },
        (),
        problems,
    )
    assert problems == []


@pytest.mark.parametrize(
    ("document", "location", "words"),
    [
        (
            {"content": [{"id": "b", "type": "tool", "tool": "t", "status": "completed", "input": {"llmActual": 1}}]},
            "content[0].input.llmActual",
            "key is not snake_case",
        ),
        ({"role": "Assistant"}, "role", "must be lowercase"),
        ({"role": ":assistant"}, "role", "keyword-looking"),
        ({"provider": ":openai"}, "provider", "keyword-looking"),
        ({"provider": "openai", "model": "gpt-5.6"}, "", None),
        ({"completed_at": 5, "created_at": 10}, "completed_at", "before created_at"),
        ({"content": [{"type": "prose", "markdown": ""}]}, "content[0]", 'missing required field "id"'),
        ({"content": [{"id": "  ", "type": "prose", "markdown": ""}]}, "content[0].id", "blank"),
        ({"content": [{"id": "e", "type": "error", "code": "Bad", "message": "m"}]}, "content[0].code", "snake_case"),
        ({"content": [{"id": "e", "type": "error", "code": "bad\n", "message": "m"}]}, "content[0].code", "snake_case"),
        ({"content": [{"id": "x", "type": "diagram", "Weird Key": 1}]}, 'content[0]["Weird Key"]', "not snake_case"),
    ],
)
def test_problem_locations(document: dict[str, Any], location: str, words: str | None) -> None:
    message = {"id": "m", "role": "assistant", "status": "completed", "content": [], "created_at": 0, **document}
    problems: list = []
    check_message(message, (), problems)
    if words is None:
        assert problems == []
        return
    assert [p.location for p in problems] == [location]
    assert words in problems[0].message


def test_unknown_block_types_are_valid_and_need_id() -> None:
    problems: list = []
    check_block({"id": "x", "type": "diagram", "anything": {"nested_ok": [1, 2]}}, (), problems)
    assert problems == []
    check_block({"type": "diagram"}, (), problems)
    assert [p.message for p in problems] == ['missing required field "id"']


# --- limits: times a format can show, nesting a renderer can walk -------------------------

MESSAGE = {"id": "m", "role": "assistant", "status": "completed", "content": [], "created_at": 0}


@pytest.mark.parametrize(
    ("document", "location"),
    [
        ({"created_at": 1e300}, "created_at"),
        ({"created_at": 10**30}, "created_at"),
        ({"created_at": MAX_TIME + 1}, "created_at"),
        ({"completed_at": 2**64}, "completed_at"),
        (
            {
                "content": [
                    {
                        "id": "t",
                        "type": "tool",
                        "tool": "x",
                        "status": "completed",
                        "started_at": 0,
                        "completed_at": 10**400,
                    }
                ]
            },
            "content[0].completed_at",
        ),
        (
            {"content": [{"id": "t", "type": "tool", "tool": "x", "status": "completed", "started_at": -1e300}]},
            "content[0].started_at",
        ),
    ],
)
def test_times_beyond_the_year_9999_are_a_located_limit(document: dict[str, Any], location: str) -> None:
    problems: list = []
    check_message({**MESSAGE, **document}, (), problems)
    assert [(p.location, p.kind) for p in problems] == [(location, "limit")]
    assert "out of range" in problems[0].message


def test_the_last_time_datetime_shows_is_valid() -> None:
    problems: list = []
    check_message({**MESSAGE, "created_at": MAX_TIME, "completed_at": MAX_TIME}, (), problems)
    check_session({"created_at": MAX_TIME, "messages": []}, (), problems)
    check_event({"type": "turn.completed", "turn_id": "t", "status": "completed", "ts": MAX_TIME}, (), problems)
    assert problems == []
    check_session({"created_at": MAX_TIME + 1, "messages": []}, (), problems)
    check_event({"type": "turn.completed", "turn_id": "t", "status": "completed", "ts": 1e300}, (), problems)
    assert [p.location for p in problems] == ["created_at", "ts"]


def nested(levels: int, leaf: Any = 1) -> Any:
    """``levels`` containers, lists and objects alternating, around ``leaf``."""
    for level in range(levels):
        leaf = [leaf] if level % 2 else {"k": leaf}
    return leaf


# Where a nested value can sit, and how many containers lie above it there.
PLACES = {
    "tool input": (
        lambda v: {**MESSAGE, "content": [{"id": "t", "type": "tool", "tool": "x", "status": "completed", "input": v}]},
        3,
    ),
    "unknown block": (lambda v: {**MESSAGE, "content": [{"id": "x", "type": "diagram", "data": v}]}, 3),
    "message field": (lambda v: {**MESSAGE, "meta": v}, 1),
}


@given(st.sampled_from(sorted(PLACES)), st.integers(MAX_DEPTH - 4, MAX_DEPTH + 4), st.booleans(), st.booleans())
def test_nesting_deeper_than_the_limit_is_a_located_problem(
    place: str, levels: int, in_session: bool, other_problem: bool
) -> None:
    """Fast and detailed paths (another problem forces the detailed one) agree on
    the limit, counted from the document down, in a session or a message file."""
    build, above = PLACES[place]
    message = build(nested(levels))
    if other_problem:
        message["badKey"] = 1
    problems: list = []
    if in_session:
        check_session({"messages": [message]}, (), problems)
        above += 2  # the session object and its messages array
    else:
        check_message(message, (), problems)
    deep = [p for p in problems if p.kind == "limit"]
    assert bool(deep) == (above + levels > MAX_DEPTH), (above + levels, problems)
    assert all(p.message == f"nested deeper than {MAX_DEPTH} levels" and p.location.endswith("…") for p in deep)
    assert len(problems) == len(deep) + other_problem


def test_nesting_limit_for_documents_not_in_the_vis_contract() -> None:
    problems: list = []
    check_depth({"Any Key": nested(MAX_DEPTH - 1)}, (), problems)
    assert problems == []
    check_depth({"Any Key": nested(MAX_DEPTH)}, (), problems)
    assert [p.kind for p in problems] == ["limit"] and problems[0].location.startswith('["Any Key"][0].k[0]')


@pytest.mark.parametrize("language", ["", " ", "\t\n"])
def test_an_empty_language_names_none(language: str) -> None:
    """An empty (or blank) ``language`` is valid for both validators and reads as no language."""
    from vis_export.model import CodeBlock

    block = {"id": "c", "type": "code", "language": language, "text": "x = 1\n"}
    assert our_verdict("block", block) and schema_verdict("block", block)
    assert CodeBlock(block).language is None
    for wrong in (None, 3, ["py"]):
        assert not our_verdict("block", {**block, "language": wrong}) and not schema_verdict(
            "block", {**block, "language": wrong}
        )
