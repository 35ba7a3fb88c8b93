"""The model is frozen and gives back the canonical JSON it was read from (R3)."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from sessions import message_of, session_of
from strategies import session_documents

from vis_export.model import CodeBlock, ReasoningBlock, ToolBlock, UnknownBlock
from vis_export.sources import load


def load_document(tmp_path: Path, document: dict[str, Any], name: str = "s.json"):
    path = tmp_path / name
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return next(load(path))


@given(session_documents())
def test_to_json_round_trips_stored_fields_and_order(document: dict[str, Any]) -> None:
    original = copy.deepcopy(document)
    session = session_of(document)
    assert document == original  # reading never touches the parsed input
    out = session.to_json()
    assert json.dumps(out) == json.dumps(
        {k: document[k] for k in ("id", "title", "created_at", "messages") if k in document}
    )
    for message, stored in zip(out["messages"], document["messages"], strict=True):
        assert list(message) == list(stored)
        for block, stored_block in zip(message["content"], stored["content"], strict=True):
            assert list(block) == list(stored_block)


def test_every_part_is_immutable(tmp_path: Path) -> None:
    session = load_document(
        tmp_path,
        {
            "id": "s",
            "messages": [
                message_of(
                    {
                        "id": "t",
                        "type": "tool",
                        "tool": "x",
                        "status": "completed",
                        "input": {"paths": ["a"], "deep": {"k": 1}},
                    },
                    {"id": "u", "type": "diagram", "source": {"nodes": [1]}},
                    created_at=1,
                )
            ],
        },
    )
    message = session.messages[0]
    tool, unknown = message.blocks
    assert isinstance(tool, ToolBlock) and isinstance(unknown, UnknownBlock)
    with pytest.raises(dataclasses.FrozenInstanceError):
        session.title = "changed"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.status = "failed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        tool.input["paths"] = []  # type: ignore[index]
    with pytest.raises(TypeError):
        tool.input["deep"]["k"] = 2  # type: ignore[index]
    with pytest.raises(AttributeError):
        tool.input["paths"].append("b")  # type: ignore[union-attr]
    with pytest.raises(TypeError):
        unknown.fields["source"] = None  # type: ignore[index]
    with pytest.raises(AttributeError):
        session.messages.append(message)  # type: ignore[attr-defined]
    assert unknown.to_json() == {"id": "u", "type": "diagram", "source": {"nodes": [1]}}


def test_typed_fields_and_defaults(tmp_path: Path) -> None:
    session = load_document(
        tmp_path,
        {
            "messages": [
                {
                    "id": "m",
                    "role": "assistant",
                    "status": "completed",
                    "created_at": 1,
                    "model": "gpt-5.6",
                    "provider": "openai-codex",
                    "author": {"display_name": "Vis"},
                    "content": [
                        {"id": "r", "type": "reasoning", "text": "hidden"},
                        {"id": "c", "type": "code", "text": "x = 1\n"},
                    ],
                }
            ]
        },
        name="chat.json",
    )
    assert session.id == "chat"  # no id: the file name without its extension
    message = session.messages[0]
    reasoning, code = message.blocks
    assert isinstance(reasoning, ReasoningBlock) and reasoning.visibility == "private" and reasoning.is_private
    assert isinstance(code, CodeBlock) and code.language is None and code.text == "x = 1\n"
    assert (message.model, message.provider, message.author["display_name"]) == ("gpt-5.6", "openai-codex", "Vis")
    assert "visibility" not in message.to_json()["content"][0]  # defaults are not written back


def _frozen_all_through(value: Any) -> bool:
    """No dict or list anywhere inside a model's stored fields."""
    if isinstance(value, (dict, list)):
        return False
    if isinstance(value, MappingProxyType):
        return all(_frozen_all_through(item) for item in value.values())
    if isinstance(value, tuple):
        return all(_frozen_all_through(item) for item in value)
    return True


@given(session_documents())
def test_a_parsed_document_taken_in_place_gives_the_model_a_copied_one_gives(document: dict[str, Any]) -> None:
    """Readers hand the model maps they just parsed, frozen where they are
    (``owned``): the same session, as frozen all through, as from a copy."""
    from vis_export.model import message_from_json, session_from_json

    copied = session_from_json(document, "s", "s.json")
    owned = session_from_json(copy.deepcopy(document), "s", "s.json", owned=True)
    assert owned == copied
    assert owned.to_json() == copied.to_json() == session_from_json(document, "s", "s.json").to_json()
    assert _frozen_all_through(owned.metadata)
    for message in owned.messages:
        assert _frozen_all_through(message.fields)
        assert all(_frozen_all_through(block.fields) for block in message.blocks)
    for stored, message in zip(document["messages"], copied.messages, strict=True):
        assert message_from_json(copy.deepcopy(stored), owned=True) == message


@given(session_documents())
def test_a_message_made_without_its_init_is_the_one_its_init_makes(document: dict[str, Any]) -> None:
    """``message_of`` sets a message's slots on an unfrozen twin and then makes it a
    ``Message``: the same object ``__init__`` makes (type, fields, equality,
    copies), as frozen."""
    from vis_export.model import Message, session_from_json

    for message in session_from_json(document, "s", "s.json", owned=True).messages:
        assert type(message) is Message
        made = Message(**{field.name: getattr(message, field.name) for field in dataclasses.fields(Message)})
        assert message == made and repr(message) == repr(made)
        assert copy.copy(message) == dataclasses.replace(message) == message
        with pytest.raises(dataclasses.FrozenInstanceError):
            message.role = "user"  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError):
            del message.role
        with pytest.raises((TypeError, AttributeError)):  # no room for an attribute of its own
            message.extra = 1  # type: ignore[attr-defined]
        assert not hasattr(message, "__dict__") and message.__getstate__() == made.__getstate__()
        for value in (message, made):  # its read-only maps make neither hashable: alike
            with pytest.raises(TypeError):
                hash(value)
