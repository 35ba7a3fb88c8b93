"""Provider messages: every user request once and in order, no private reasoning,
every tool call with exactly one result, unfinished turns closed with a notice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import INPUT
from hypothesis import given, strategies as st
from provider_oracle import accepted, check
from sessions import message_of, session_of, sessions_read
from strategies import PRIVATE_CANARY, session_documents, small_blocks

from vis_export import load
from vis_export.formats.options import PROVIDER_FORMATS, ExportOptions, ProviderFormat
from vis_export.formats.provider import conversation
from vis_export.model import ToolBlock

SESSION = next(load(INPUT / "session.json"))
FOREIGN = INPUT.parent / "foreign"
FOREIGN_FILES = sorted(p for kind in ("claude_code", "codex") for p in (FOREIGN / kind).iterdir())


def user_texts_openai(messages: list[dict[str, Any]]) -> list[str]:
    texts = []
    for m in messages:
        if m["role"] == "user" and not str(m["content"]).startswith("[Notice:"):
            texts.append(m["content"] if isinstance(m["content"], str) else m["content"][0]["text"])
    return texts


def user_texts_anthropic(messages: list[dict[str, Any]]) -> list[str]:
    return [
        part["text"]
        for m in messages
        if m["role"] == "user"
        for part in m["content"]
        if part["type"] == "text" and not part["text"].startswith("[Notice:")
    ]


def expected_requests(session) -> list[str]:  # type: ignore[no-untyped-def]
    openai = conversation(session, ExportOptions())
    return user_texts_openai(openai["messages"])


@given(session_documents(small_blocks), st.sampled_from(["none", "visible"]))
def test_properties_of_both_formats(document: dict[str, Any], reasoning: str) -> None:
    session = session_of(document)
    requests = [m for m in session.messages if m.role in ("user", "tool")]
    for flavour in PROVIDER_FORMATS:  # calls answered, roles in order: the oracle's
        result = accepted(session, ExportOptions(reasoning=reasoning), flavour)
        assert PRIVATE_CANARY not in json.dumps(result)
        if flavour == "openai":  # one user message per request, in order
            assert len(user_texts_openai(result["messages"])) == len(requests)
    texts = [t for t in user_texts_openai(conversation(session, ExportOptions())["messages"])]
    for request, text in zip(requests, texts, strict=True):
        for block in request.blocks:
            if block.type == "prose":
                assert block.markdown in text


def test_reasoning_only_when_all_is_authorised() -> None:
    assert "I will write `parse_config` first" not in json.dumps(conversation(SESSION, ExportOptions()))
    every = json.dumps(conversation(SESSION, ExportOptions(reasoning="all")))
    assert "PRIVATE-CANARY" in every and "I will write `parse_config` first" in every


def test_unfinished_turns_close_with_a_notice() -> None:
    def closing(status: str, content: list[dict[str, Any]]) -> list[dict[str, Any]]:
        asked = message_of({"id": "p", "type": "prose", "markdown": "Go."}, id="u", role="user")
        answer = message_of(*content, id="a", status=status, created_at=1)
        session = session_of({"messages": [asked, answer]})
        return conversation(session, ExportOptions())["messages"][1:]

    said = [{"id": "t", "type": "prose", "markdown": "Half"}]
    cancelled = closing("cancelled", said)
    assert cancelled[0] == {"role": "assistant", "content": "Half"}
    assert cancelled[1]["role"] == "user" and "cancelled" in cancelled[1]["content"]
    assert "What was said before it stopped is above." in cancelled[1]["content"]
    interrupted = closing("streaming", [])
    assert interrupted == [
        {
            "role": "user",
            "content": "[Notice: the previous turn was interrupted before it finished. No partial answer exists.]",
        }
    ]
    assert "interrupted" in closing("failed", said)[1]["content"]
    failed = closing("failed", [*said, {"id": "e", "type": "error", "code": "boom", "message": "SECRET-ERROR"}])
    assert failed == [{"role": "assistant", "content": "Half"}]  # an error's text is not replayed
    assert closing("completed", []) == []  # a finished turn without an answer closes with nothing


def test_system_and_developer_keep_their_roles() -> None:
    said = [("system", "Be brief."), ("developer", "Use tools."), ("user", "Hi")]
    prose = [
        message_of({"id": f"{role}-text", "type": "prose", "markdown": text}, id=role, role=role) for role, text in said
    ]
    session = session_of({"messages": prose})
    openai = conversation(session, ExportOptions())["messages"]
    assert [m["role"] for m in openai] == ["system", "developer", "user"]
    anthropic = conversation(session, ExportOptions(), "anthropic")
    assert anthropic["system"] == "Be brief.\n\nUse tools." and anthropic["messages"][0]["role"] == "user"


def test_images_with_attachment_bytes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "att_01").write_bytes(b"\x89PNG fake")
    openai = conversation(SESSION, ExportOptions(attachments=tmp_path))["messages"][0]
    assert openai["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    anthropic = conversation(SESSION, ExportOptions(attachments=tmp_path), "anthropic")["messages"][0]
    assert anthropic["content"][1]["source"]["media_type"] == "image/png"


@pytest.mark.parametrize("flavour", ["openai", "anthropic"])
def test_cli_writes_json_lines(flavour: str) -> None:
    from click.testing import CliRunner

    from vis_export.cli import main

    result = CliRunner().invoke(main, ["convert", str(INPUT), "--to", "provider", "--provider-format", flavour])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["session_id"] for line in lines] == ["golden_events", "lonis", "messages", "golden_session"]


@given(session_documents(small_blocks), st.sampled_from(["none", "all"]), st.sampled_from(PROVIDER_FORMATS))
def test_requests_the_apis_take(document: dict[str, Any], reasoning: str, flavour: ProviderFormat) -> None:
    """Every generated session gives a request the SDK types and the API's rules take
    (``provider_oracle``), or one said to hold no message."""
    accepted(session_of(document), ExportOptions(reasoning=reasoning), flavour)


@pytest.mark.parametrize("flavour", PROVIDER_FORMATS)
@pytest.mark.parametrize("path", [*sorted(INPUT.iterdir()), *FOREIGN_FILES], ids=lambda p: p.name)
def test_golden_and_real_sessions_give_requests_the_apis_take(path: Path, flavour: ProviderFormat) -> None:
    """The golden sessions and every real Claude Code and Codex file, as the APIs take them."""
    for session in sessions_read(path):
        for reasoning in ("none", "all"):
            accepted(session, ExportOptions(reasoning=reasoning), flavour)


@pytest.mark.parametrize("path", sorted((INPUT.parent / "expected" / "provider").iterdir()), ids=lambda p: p.name)
def test_golden_requests_are_ones_the_apis_take(path: Path) -> None:
    """Every golden provider file (the store's sessions and images from attachments too)."""
    flavour = "anthropic" if path.name.endswith(".anthropic.jsonl") else "openai"
    for line in path.read_text(encoding="utf-8").splitlines():
        check(json.loads(line), flavour)


def _valid_anthropic() -> dict[str, Any]:
    return {
        "session_id": "s",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "t", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": "ok"}]},
        ],
    }


def _valid_openai() -> dict[str, Any]:
    call = {"id": "c", "type": "function", "function": {"name": "t", "arguments": "{}"}}
    return {
        "session_id": "s",
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c", "content": "ok"},
        ],
    }


def _spoiled(flavour: str, path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    request = _valid_openai() if flavour == "openai" else _valid_anthropic()
    *where, last = path
    target = request
    for step in where:
        target = target[step]
    if value is _DROP:
        del target[last]
    elif isinstance(target, list) and last == len(target):  # one message more
        target.append(value)
    else:
        target[last] = value
    return request


_DROP = object()
_BAD = [
    ("anthropic", ("messages", 0, "content", 0, "text"), "", "empty text"),
    ("anthropic", ("messages", 0, "role"), "human", "SDK types refuse"),
    ("anthropic", ("messages", 0, "content", 0, "cache"), True, "SDK types refuse"),
    ("anthropic", ("messages", 2, "content", 0, "tool_use_id"), "other", "not answered next"),
    ("anthropic", ("messages", 1, "content", 0, "id"), _DROP, "SDK types refuse"),
    ("anthropic", ("messages", 0, "role"), "assistant", "first message"),
    ("anthropic", ("messages", 3), {"role": "assistant", "content": [{"type": "text", "text": "x "}]}, "whitespace"),
    ("anthropic", ("messages", 3), {"role": "user", "content": [{"type": "text", "text": "x"}]}, "alternate"),
    ("anthropic", ("system",), 3, "SDK types refuse"),
    ("openai", ("messages", 0, "role"), "human", "SDK types refuse"),
    ("openai", ("messages", 0, "name_of"), "x", "SDK types refuse"),
    ("openai", ("messages", 1, "tool_calls", 0, "function", "extra"), 1, "SDK types refuse"),
    ("openai", ("messages", 2, "tool_call_id"), "nobody", "answers no call"),
    ("openai", ("messages", 1), {"role": "user", "content": "x"}, "answers no call"),
    ("openai", ("messages", 2), {"role": "user", "content": "x"}, "not answered"),
    ("openai", ("messages", 1, "tool_calls", 0, "id"), "c" * 41, "not one OpenAI takes"),
    ("openai", ("messages", 1, "tool_calls"), _DROP, "assistant says nothing"),
    ("openai", ("stream",), True, "does not take"),
]


@pytest.mark.parametrize(("flavour", "path", "value", "said"), _BAD)
def test_the_oracle_refuses_what_the_apis_refuse(flavour: str, path: tuple[Any, ...], value: Any, said: str) -> None:
    """The oracle can fail: each known-bad request (one change to a good one) is refused, saying why."""
    check(_valid_openai() if flavour == "openai" else _valid_anthropic(), flavour)
    with pytest.raises(AssertionError, match=said):
        check(_spoiled(flavour, path, value), flavour)


_LONG_IDS = st.sampled_from(["m", "m", "0f8e2c1a-5b7d-4e3f-9a6b-1c2d3e4f5a6b", "msg_" + "x" * 60, "é" * 50])


@given(session_documents(small_blocks), st.lists(_LONG_IDS, min_size=1), st.integers(1, 40))
def test_tool_call_ids_are_ones_openai_takes(document: dict[str, Any], ids: list[str], calls: int) -> None:
    """Message ids may be long (a Claude Code entry's uuid) and need not be unique: every
    call id is still at most 40 characters (OpenAI refuses more), unique, and answered by
    the tool message right after its call (``provider_oracle``)."""
    tool = {"type": "tool", "tool": "t", "status": "completed", "output": "ok"}
    for n, message in enumerate(document["messages"]):
        message["id"] = ids[n % len(ids)]
        if message["role"] == "assistant":
            message["content"] += [{**tool, "id": f"t{k}"} for k in range(calls)]
    accepted(session_of(document))


@given(session_documents(small_blocks), st.sampled_from([" ", "\n", "\t\r\n", "  \n\n"]))
def test_a_closing_assistant_message_ends_without_whitespace(document: dict[str, Any], space: str) -> None:
    """A conversation that ends with the assistant's text (as most sessions do) is taken by
    Anthropic only if that text does not end with whitespace."""
    last = {"id": "closing", "role": "assistant", "status": "completed", "created_at": 0}
    document["messages"].append({**last, "content": [{"id": "p", "type": "prose", "markdown": f"Done.{space}"}]})
    messages = accepted(session_of(document), ExportOptions(), "anthropic")["messages"]
    assert messages[-1]["content"][-1]["text"].endswith("Done.")


@pytest.mark.parametrize("flavour", ["openai", "anthropic"])
@pytest.mark.parametrize("to_file", [False, True])
def test_a_request_no_api_takes_is_said_in_one_line(tmp_path: Path, flavour: str, to_file: bool) -> None:
    """A session of system text only (Anthropic takes it as ``system``) or of no message at
    all gives a request without messages, which the APIs refuse: a warning says so."""
    from click.testing import CliRunner

    from vis_export.cli import main

    system = {"id": "m", "role": "system", "status": "completed", "created_at": 0}
    system["content"] = [{"id": "b", "type": "prose", "markdown": "Be brief."}]
    source = tmp_path / "s.json"
    source.write_text(json.dumps({"id": "s", "messages": [system]}), encoding="utf-8")
    out = ["-o", str(tmp_path / "out.jsonl")] if to_file else []
    args = ["convert", str(source), "--to", "provider", "--provider-format", flavour, *out]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    warned = [line for line in result.stderr.splitlines() if "no message a provider takes" in line]
    assert len(warned) == (1 if flavour == "anthropic" else 0), result.stderr
    normal = CliRunner().invoke(main, ["convert", str(INPUT / "session.json"), "--to", "provider", *out[:0]])
    assert "no message a provider takes" not in normal.stderr


def _user_text(result: dict[str, Any]) -> str:
    """Every text a user message of either flavour holds, joined."""
    texts = []
    for m in result["messages"]:
        if m["role"] == "user":
            parts = [m["content"]] if isinstance(m["content"], str) else m["content"]
            texts += [p if isinstance(p, str) else p.get("text", "") for p in parts]
    return "\n".join(texts)


@given(session_documents(small_blocks))
def test_a_tool_result_no_assistant_called_is_replayed_as_user_text(document: dict[str, Any]) -> None:
    """A tool block outside an assistant's turn (an importer's orphaned result) has no call a
    provider knows: its tool and output reach the provider as user text, not as nothing."""
    session = session_of(document)
    uncalled = [
        b
        for m, b in session.blocks()
        if isinstance(b, ToolBlock) and m.role not in ("assistant", "system", "developer")
    ]
    for flavour in ("openai", "anthropic"):
        said = _user_text(conversation(session, ExportOptions(), flavour))
        for block in uncalled:
            assert f"[Tool result from {block.tool};" in said
            if block.status != "failed" and isinstance(block.output, str):
                assert block.output in said
