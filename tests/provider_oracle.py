"""The test oracle for ``--to provider``: is a written request one the real APIs take?

Two parts, both needed: the official SDKs' request types (``openai``, ``anthropic``; test
dependencies only, never imported by ``vis_export``), held strictly, and the APIs' own rules
that no type says (role order, calls answered, no empty text). Every provider test asks here,
so the rules live in one place.

The SDK types are TypedDicts, which pydantic validates leniently: unknown keys ignored and
``Iterable`` fields as lazy generators that check nothing until consumed. Their core schema is
rewritten once so that every TypedDict (and SDK model) forbids unknown keys and every iterable
is a list, checked at once, then validated in strict mode (no coercion of values).
"""

from __future__ import annotations

import copy
import re
from dataclasses import replace
from functools import cache
from typing import Any

from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.chat import ChatCompletionMessageParam
from pydantic import TypeAdapter, ValidationError
from pydantic_core import SchemaValidator

from vis_export.formats.options import ExportOptions, ProviderFormat
from vis_export.formats.provider import conversation, unreplayable
from vis_export.model import Session

# OpenAI refuses a tool call id that is longer or holds anything else ("string_above_max_length").
CALL_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")
# What the written request holds besides the API's parameters: the line's key, not sent.
_EXPORT_KEYS = ("session_id",)
# Parameters every Anthropic request needs that a replayed conversation does not say.
_ANTHROPIC_CALL = {"model": "oracle", "max_tokens": 1}


def _forbidding(schema: Any) -> None:
    """Unknown keys refused and iterables checked eagerly, throughout ``schema`` (in place)."""
    if isinstance(schema, dict):
        if schema.get("type") in ("typed-dict", "model-fields"):
            schema["extra_behavior"] = "forbid"
        if schema.get("type") == "generator":
            schema["type"] = "list"
        if isinstance(schema.get("config"), dict):
            schema["config"]["extra_fields_behavior"] = "forbid"
        for value in schema.values():
            _forbidding(value)
    elif isinstance(schema, list):
        for value in schema:
            _forbidding(value)


@cache
def _validator(flavour: str) -> SchemaValidator:
    shape: Any = list[ChatCompletionMessageParam] if flavour == "openai" else MessageCreateParamsNonStreaming
    schema = copy.deepcopy(TypeAdapter(shape).core_schema)
    _forbidding(schema)
    return SchemaValidator(schema)


def _sdk_types(request: dict[str, Any], flavour: str) -> None:
    sent = {k: v for k, v in request.items() if k not in _EXPORT_KEYS}
    if flavour == "openai":
        assert set(sent) == {"messages"}, f"keys the chat API does not take: {sorted(set(sent) - {'messages'})}"
        value: Any = sent["messages"]
    else:
        value = {**_ANTHROPIC_CALL, **sent}
    try:
        _validator(flavour).validate_python(value, strict=True)
    except ValidationError as error:
        raise AssertionError(f"{flavour} SDK types refuse the request: {error}") from None


def _anthropic_rules(messages: list[dict[str, Any]]) -> None:
    assert messages[0]["role"] == "user", "the first message must be the user's"
    for before, after in zip(messages, messages[1:], strict=False):
        assert before["role"] != after["role"], f"roles must alternate: two {after['role']} messages"
    for index, message in enumerate(messages):
        assert message["content"], f"message {index} is empty"
        for part in message["content"]:
            assert part["type"] != "text" or part["text"].strip(), f"message {index} holds empty text"
        calls = [p["id"] for p in message["content"] if p["type"] == "tool_use"]
        if calls:  # answered first thing in the next user message, in order
            assert index + 1 < len(messages), f"tool_use {calls} never answered"
            answer = messages[index + 1]["content"][: len(calls)]
            assert [p.get("tool_use_id") for p in answer] == calls, f"tool_use {calls} not answered next"
    results = [p["tool_use_id"] for m in messages for p in m["content"] if p["type"] == "tool_result"]
    used = [p["id"] for m in messages for p in m["content"] if p["type"] == "tool_use"]
    assert sorted(results) == sorted(used) and len(set(used)) == len(used), "tool_result without its tool_use"
    if messages[-1]["role"] == "assistant":  # "final assistant content cannot end with trailing whitespace"
        last = messages[-1]["content"][-1]
        assert last["type"] != "text" or last["text"] == last["text"].rstrip(), "closing text ends with whitespace"


def _openai_rules(messages: list[dict[str, Any]]) -> None:
    waiting: list[str] = []  # calls of the last assistant message not yet answered
    seen: set[str] = set()
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            assert message["tool_call_id"] in waiting, f"message {index}: a tool message answers no call before it"
            waiting.remove(message["tool_call_id"])
            continue
        assert not waiting, f"message {index}: calls {waiting} not answered right after their message"
        if message["role"] == "assistant":
            calls = [call["id"] for call in message.get("tool_calls") or ()]
            assert message.get("content") is not None or calls, f"message {index}: assistant says nothing"
            for call in calls:
                assert CALL_ID.fullmatch(call), f"call id {call!r} is not one OpenAI takes"
                assert call not in seen, f"call id {call!r} used twice"
                seen.add(call)
            waiting = calls
    assert not waiting, f"calls {waiting} never answered"


def check(request: dict[str, Any], flavour: str) -> None:
    """Fail (``AssertionError``) unless ``request`` is one the ``flavour`` API takes."""
    _sdk_types(request, flavour)
    messages = request["messages"]
    assert messages, "a request without messages"
    (_openai_rules if flavour == "openai" else _anthropic_rules)(messages)


def accepted(
    session: Session, options: ExportOptions | None = None, flavour: ProviderFormat = "openai"
) -> dict[str, Any]:
    """The request written for ``session``, checked: one the API takes, or, holding no message
    (nothing to replay), one ``unreplayable`` says so about. Returned for further checks."""
    options = options or ExportOptions()
    request = conversation(session, options, flavour)
    if request["messages"]:
        check(request, flavour)
    else:
        chosen = replace(options, provider_format=flavour)
        assert unreplayable(session, chosen), "a request without messages, and no word of it"
    return request
