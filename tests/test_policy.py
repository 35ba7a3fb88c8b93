"""R2: private reasoning reaches no output unless explicitly authorised."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from sessions import one_message, session_of
from strategies import PRIVATE_CANARY, session_documents

from vis_export.formats.json import to_json
from vis_export.policy import (
    REASONING_CHOICES,
    check_index_reasoning,
    index_level,
    is_private,
    shows,
    visible,
    visible_session,
)


@given(session_documents())
def test_private_reasoning_never_in_json_unless_all(document: dict[str, Any]) -> None:
    session = session_of(document)
    has_private = any(is_private(b) for _, b in session.blocks())
    for reasoning in ("none", "visible"):
        assert PRIVATE_CANARY not in to_json(session, reasoning=reasoning)
        shown = visible_session(session, reasoning)
        assert not any(is_private(b) for _, b in shown.blocks())
    assert (PRIVATE_CANARY in to_json(session, reasoning="all")) == has_private
    assert visible_session(session, "all").to_json() == session.to_json()


@given(session_documents())
def test_policy_keeps_order_of_everything_else(document: dict[str, Any]) -> None:
    session = session_of(document)
    for reasoning in ("none", "visible", "all"):
        shown = visible_session(session, reasoning)
        for before, after in zip(session.messages, shown.messages, strict=True):
            assert [b for b in before.blocks if shows(b, reasoning)] == list(after.blocks)
            assert after.id == before.id and after.role == before.role


def test_levels_on_each_kind_of_reasoning() -> None:
    session = one_message(
        {"id": "p", "type": "reasoning", "text": "private"},
        {"id": "q", "type": "reasoning", "text": "p2", "visibility": "private"},
        {"id": "v", "type": "reasoning", "text": "shown", "visibility": "visible"},
        {"id": "x", "type": "prose", "markdown": "answer"},
    )
    ids = lambda reasoning: [b.id for b in visible_session(session, reasoning).messages[0].blocks]  # noqa: E731
    assert ids("none") == ["x"]
    assert ids("visible") == ["v", "x"]
    assert ids("all") == ["p", "q", "v", "x"]
    private_block = session.messages[0].blocks[0]
    assert visible(private_block, "visible") is None and visible(private_block, "all") is private_block
    with pytest.raises(ValueError):
        visible_session(session, "everything")  # type: ignore[arg-type]


@given(session_documents())
def test_an_index_for_a_policy_holds_what_it_shows_and_never_private_reasoning(document: dict[str, Any]) -> None:
    session = session_of(document)
    for reasoning in REASONING_CHOICES:
        indexed = visible_session(session, index_level(reasoning))
        held = [(m.id, b.id) for m, b in indexed.blocks()]
        shown = [(m.id, b.id) for m, b in visible_session(session, reasoning).blocks()]
        assert not any(is_private(b) for _, b in indexed.blocks())
        assert held == shown if reasoning != "all" else set(held) <= set(shown)
    with pytest.raises(ValueError, match="private reasoning is never indexed"):
        check_index_reasoning("all")
