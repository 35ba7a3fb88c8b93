"""R2 at message level: a message, an entry, an item or a session whose own map says it is
reasoning (a true reasoning flag, a type that names reasoning, a visibility other than exactly
``visible``), under any disguise, is private reasoning: none of its text reaches any output
unless ``reasoning="all"``, in a Vis file and in every importer alike.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, strategies as st
from sessions import session_of
from strategies import PRIVATE_CANARY, reasoning_names

from vis_export.contract.check import snake_keys
from vis_export.copying import clipboard
from vis_export.formats.html import to_html
from vis_export.formats.json import to_json
from vis_export.formats.markdown import to_markdown
from vis_export.formats.provider import to_provider
from vis_export.formats.text import to_text
from vis_export.model import Session
from vis_export.policy import visible_session
from vis_export.searchindex.documents import documents
from vis_export.sources.files import read_bytes

SECRET = f"{PRIVATE_CANARY} the plan nobody may read"
SAID = "an ordinary question"


@st.composite
def reasoning_marks(draw: st.DrawFn) -> dict[str, Any]:
    """A map's own fields that say it is reasoning, as hostile or careless input writes them."""
    mark = draw(st.sampled_from(["flag", "type", "visibility"]))
    if mark == "flag":
        return {draw(reasoning_names): draw(st.sampled_from([True, 1, 1.0, "true", " TRUE "]))}
    if mark == "type":  # saying "visible" beside it makes no visible reasoning: only a block can be
        said: dict[str, Any] = draw(st.sampled_from([{}, {"visibility": "visible"}]))
        return {draw(st.sampled_from(["type", "kind"])): draw(reasoning_names), **said}
    return {"visibility": draw(st.sampled_from(["private", "Private", None, "hidden", "VISIBLE", "visible "]))}


def _document(marks: dict[str, Any], where: str) -> dict[str, Any]:
    """A user's question, then an answer whose text is ``SECRET`` (prose, a tool's input, visible
    reasoning) with ``marks`` on the answer (``where="message"``) or on the session."""
    answer = [
        {"id": "p2", "type": "prose", "markdown": SECRET},
        {"id": "t2", "type": "tool", "tool": "shell", "status": "completed", "input": {"cmd": SECRET}},
        {"id": "r2", "type": "reasoning", "visibility": "visible", "text": SECRET},
    ]
    document: dict[str, Any] = {
        "id": "s",
        "title": "a title",
        "messages": [
            {"id": "m1", "role": "user", "status": "completed", "created_at": 1, "content": []},
            {"id": "m2", "role": "assistant", "status": "completed", "created_at": 2, "content": answer},
        ],
    }
    document["messages"][0]["content"].append({"id": "p1", "type": "prose", "markdown": SAID})
    (document if where == "session" else document["messages"][1]).update(marks)
    return document


def _outputs(session: Session, reasoning: str, alone: bool = True) -> list[str]:
    """What each projection makes of ``session`` under ``reasoning``, and, with ``alone``, the
    clipboard of its last message copied on its own (a message alone knows nothing of its session)."""
    made = [
        to_text(session, reasoning=reasoning),
        to_markdown(session, reasoning=reasoning),
        to_html(session, reasoning=reasoning),
        to_json(session, reasoning=reasoning),
        json.dumps(to_provider(session, reasoning=reasoning)),
        json.dumps(clipboard(session, reasoning=reasoning)),
    ]
    return [*made, json.dumps(clipboard(session.messages[-1], reasoning=reasoning))] if alone else made


def _lenient(document: dict[str, Any]) -> Session:
    """The session read leniently: a disguised key is no snake_case key, which the strict reader refuses."""
    (result,) = read_bytes(json.dumps(document).encode(), "s.json", "s", lenient=True)
    assert result.session is not None, result.problems
    return result.session


def _indexed(session: Session, reasoning: str) -> str:
    return json.dumps(list(documents(session, "none" if reasoning == "none" else "visible")), default=str)


@given(reasoning_marks(), st.sampled_from(["message", "session"]))
def test_a_message_or_session_that_says_it_is_reasoning_shows_none_of_its_text(
    marks: dict[str, Any], where: str
) -> None:
    session = _lenient(_document(marks, where))
    for reasoning in ("none", "visible"):
        made = _outputs(session, reasoning, alone=where == "message")
        assert not any(PRIVATE_CANARY in one for one in made), (marks, reasoning)
        indexed = _indexed(session, reasoning)
        assert PRIVATE_CANARY not in indexed
        assert (SAID in indexed) is (where == "message")  # the question is no reasoning: only a session says so
    assert all(PRIVATE_CANARY in made for made in _outputs(session, "all"))  # authorised: shown


def test_a_hidden_message_keeps_its_envelope_only() -> None:
    """What a message that is reasoning becomes: as one whose blocks are all private reasoning,
    its place and nothing it holds (a field beside its blocks may be its reasoning too)."""
    marked = _document({"thought": True, "summary": SECRET, "author": {"name": SECRET}}, "message")
    view = visible_session(session_of(marked))
    hidden = view.messages[1]
    assert (hidden.id, hidden.role, hidden.blocks, hidden.author) == ("m2", "assistant", (), None)
    assert set(hidden.fields) == {"id", "role", "status", "content", "created_at"}
    assert PRIVATE_CANARY not in to_json(view) and PRIVATE_CANARY in to_json(session_of(marked), reasoning="all")


def test_ordinary_messages_and_sessions_are_the_same_objects_in_the_view() -> None:
    """A message or session that says nothing of reasoning passes as it is (the goldens hold the rest)."""
    document = _document({"type": "message", "visibility": "visible"}, "message")
    document["messages"][1]["content"] = [{"id": "p2", "type": "prose", "markdown": "fine"}]
    document["kind"] = "chat"
    session = session_of(document)
    view = visible_session(session, "none")
    assert all(a is b for a, b in zip(view.messages, session.messages, strict=True))
    assert view.title == "a title" and view.metadata is session.metadata
    # a flag that says no is no reasoning: the message shows (the flag's value is hidden, as any so named)
    document["messages"][1]["thought"] = False
    unflagged = visible_session(session_of(document), "none").messages[1]
    assert unflagged.blocks == session.messages[1].blocks and unflagged.fields["type"] == "message"


# --- importers: an entry, item or message that says it is reasoning is read as reasoning -------------


def _read(lines: list[Any]) -> list[Session]:
    """The sessions of ``lines`` read leniently: a disguised key is no snake_case key (a Vis event log refuses it)."""
    data = "\n".join(json.dumps(line) for line in lines).encode()
    sessions = [result.session for result in read_bytes(data, "log.jsonl", "log", lenient=True)]
    assert all(sessions)
    return [session for session in sessions if session is not None]


def _shown_only_when_authorised(sessions: list[Session], authorised: bool = True) -> None:
    """No output of ``sessions`` shows the secret unless all reasoning is authorised; then it
    is shown (unless not ``authorised``: what was read as reasoning had no text to keep)."""
    for session in sessions:
        for reasoning in ("none", "visible"):
            assert not any(PRIVATE_CANARY in made for made in _outputs(session, reasoning)), reasoning
            assert PRIVATE_CANARY not in _indexed(session, reasoning)
    assert (PRIVATE_CANARY in "".join(to_json(session, reasoning="all") for session in sessions)) is authorised
    assert SAID in "".join(to_json(session, reasoning="none") for session in sessions)  # the rest is read as it was


def _claude_entry(kind: str, uuid: str, content: Any, **extra: Any) -> dict[str, Any]:
    message = {"role": kind, "content": content}
    return {"type": kind, "uuid": uuid, "sessionId": "cc", "timestamp": "2025-01-01T00:00:00Z", "message": message}


@given(reasoning_marks(), st.sampled_from(["entry", "message"]), st.sampled_from(["user", "assistant", "system"]))
def test_claude_code_entry_that_says_it_is_reasoning(marks: dict[str, Any], where: str, kind: str) -> None:
    said = _claude_entry("user", "u1", SAID)
    marked = _claude_entry(kind, "a1", [{"type": "text", "text": SECRET}])
    marked["message"]["id"] = "msg_1"
    (marked if where == "entry" else marked["message"]).update(marks)
    if "type" in marks and where == "entry":
        return  # an entry's type says what it is: one that names reasoning is no conversation (skipped)
    summary = {"type": "summary", "summary": SECRET, **marks}  # the title it would give is its text too
    _shown_only_when_authorised(_read([summary, said, marked]))


@given(reasoning_marks(), st.sampled_from(["user", "assistant"]), st.sampled_from(["message", "function_call"]))
def test_codex_item_that_says_it_is_reasoning(marks: dict[str, Any], role: str, kind: str) -> None:
    def record(payload: dict[str, Any], record_type: str = "response_item") -> dict[str, Any]:
        return {"timestamp": "2025-01-01T00:00:00Z", "type": record_type, "payload": payload}

    said = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": SAID}]}
    if kind == "message":
        item: dict[str, Any] = {"type": "message", "role": role, "content": [{"type": "output_text", "text": SECRET}]}
    else:
        item = {"type": "function_call", "name": "shell", "arguments": json.dumps({"cmd": SECRET}), "call_id": "c"}
    event = {"type": "agent_message" if role == "assistant" else "user_message", "message": SECRET, **marks}
    lines = [record({"id": "cx"}, "session_meta"), record(said), record({**item, **marks}), record(event, "event_msg")]
    # a call that is reasoning is reasoning without text: its arguments are not read
    _shown_only_when_authorised(_read(lines), authorised=kind == "message")


@given(reasoning_marks(), st.sampled_from(["openai", "anthropic"]), st.sampled_from(["user", "assistant", "tool"]))
def test_provider_message_that_says_it_is_reasoning(marks: dict[str, Any], flavour: str, role: str) -> None:
    said = {"role": "user", "content": SAID}
    if flavour == "anthropic":
        content: Any = [{"type": "text", "text": SECRET}, {"type": "tool_use", "id": "c", "name": "x", "input": {}}]
    else:
        content = SECRET
    marked = {"role": role, "content": content, "tool_call_id": "c", **marks}
    _shown_only_when_authorised(_read([said, marked]))


@given(reasoning_marks())
def test_provider_conversation_that_says_it_is_reasoning(marks: dict[str, Any]) -> None:
    messages = [{"role": "user", "content": SECRET}, {"role": "assistant", "content": SECRET}]
    other = {"messages": [{"role": "user", "content": SAID}]}
    _shown_only_when_authorised(_read([{"messages": messages, "system": SECRET, **marks}, other]))


@given(reasoning_marks(), st.sampled_from(["started", "delta", "completed"]))
def test_gateway_block_event_that_says_it_is_reasoning(marks: dict[str, Any], marked: str) -> None:
    if "type" in marks:
        return  # an event's type says which event it is: one that names reasoning is no event of the protocol
    block = {"id": "b1", "type": "prose", "markdown": ""}
    events = [
        {"type": "content.block.started", "turn_id": "t0", "block": {"id": "b0", "type": "prose", "markdown": SAID}},
        {"type": "content.block.started", "turn_id": "t1", "block": block},
        {"type": "content.block.delta", "turn_id": "t1", "block_id": "b1", "field": "markdown", "text": SECRET},
        {"type": "content.block.completed", "turn_id": "t1", "block_id": "b1"},
        {"type": "turn.completed", "turn_id": "t1", "status": "completed"},
    ]
    events[{"started": 1, "delta": 2, "completed": 3}[marked]].update(marks)
    # an event whose key is no snake_case key is refused (read leniently, left out, its block still
    # private): a block never started or a text never streamed is not there to show
    _shown_only_when_authorised(_read(events), authorised=snake_keys(marks) or marked == "completed")
