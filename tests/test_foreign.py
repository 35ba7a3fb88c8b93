"""Other agents' transcripts (Claude Code, Codex CLI, provider message logs): real
sample files and generated ones read onto the model, recognised by content, with
the rules on foreign data (private reasoning, encrypted content, tool pairing,
ids, unknown entries, files still being written)."""

from __future__ import annotations

import base64
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import examples
from hypothesis import given, settings, strategies as st
from sessions import sessions_read
from strategies import json_values, session_documents, small_blocks
from timelimit import time_limit

from vis_export import to_html, to_json, to_markdown, to_text
from vis_export.formats.options import ExportOptions
from vis_export.formats.provider import session_lines
from vis_export.model import Session, ToolBlock, session_from_json, thaw
from vis_export.sources import read
from vis_export.sources.files import read_bytes

FOREIGN = Path(__file__).parent.parent / "golden" / "foreign"
CLAUDE_FILES = sorted((FOREIGN / "claude_code").glob("*.json*"))
CODEX_FILES = sorted((FOREIGN / "codex").glob("*.jsonl"))
CALL_TYPES = ("function_call", "custom_tool_call", "local_shell_call")
THOUGHT = "SECRET-THOUGHT-do-not-show"
SIGNATURE = "SIGNATURE-opaque-bytes"
REDACTED = "REDACTED-DATA-opaque"
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()


def entries(path: Path) -> list[dict[str, Any]]:
    """The entries of a transcript: JSON Lines, or Claude Code's web export ``{"loglines": [...]}``."""
    if path.suffix == ".json":
        return [e for e in json.loads(path.read_text(encoding="utf-8"))["loglines"] if isinstance(e, dict)]
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def claude_parts(path: Path) -> list[dict[str, Any]]:
    """Every content block of the user and assistant entries of a Claude Code file."""
    parts = []
    for entry in entries(path):
        message = entry.get("message")
        if entry.get("type") not in ("user", "assistant") or not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        parts += [part for part in blocks if isinstance(part, dict)]
    return parts


def _outputs(session: Session) -> list[str]:
    return [to_text(session), to_markdown(session), to_html(session), to_json(session)]


@pytest.mark.parametrize("path", CLAUDE_FILES, ids=lambda p: p.name)
def test_real_claude_code_files(path: Path, tmp_path: Path) -> None:
    """Every prompt and answer shown, no thinking, every tool call once with its result, commands found."""
    (session,) = sessions_read(path)
    assert dict(session.metadata)["origin"] == "claude_code"
    text = to_text(session)
    parts = claude_parts(path)
    for said in (p["text"] for p in parts if p.get("type") == "text"):
        for line in said.splitlines():
            assert line.strip() in text
    thoughts = [p["thinking"] for p in parts if p.get("type") == "thinking" and p["thinking"].strip()]
    for out in _outputs(session):
        assert not any(thought in out for thought in thoughts)
    assert all(thought in to_text(session, reasoning="all") for thought in thoughts)
    calls = [p for p in parts if p.get("type") == "tool_use"]
    results = {p["tool_use_id"]: p["content"] for p in parts if p.get("type") == "tool_result"}
    tools = [b for _, b in session.blocks() if isinstance(b, ToolBlock)]
    assert sorted(b.id for b in tools) == sorted(c["id"] for c in calls)  # each call once, by its own id
    for name in {c["name"] for c in calls}:  # and shown once
        assert text.count(f"Tool {name} (") == sum(c["name"] == name for c in calls)
    for block in tools:
        answer = results.get(block.id)
        assert (block.status == "pending") == (answer is None)
        if isinstance(answer, str) and answer.strip():
            assert answer.strip().splitlines()[0] in text
    commands = [c["input"]["command"] for c in calls if c["name"] == "Bash"]
    if commands:
        from vis_export import index, search

        index([session], tmp_path / "index")
        word = max(commands[0].split(), key=len)
        assert search(f'"{word}"', tmp_path / "index", type="tool")


def codex_said(path: Path) -> list[str]:
    """What was said in a Codex rollout: message items' text and the events that repeat it (or stand alone)."""
    said = []
    for record in entries(path):
        item = record.get("payload", record)
        if item.get("type") == "message":
            said += [p["text"] for p in item.get("content", []) if isinstance(p.get("text"), str)]
        elif item.get("type") in ("user_message", "agent_message"):
            said.append(item["message"])
    return said


@pytest.mark.parametrize("path", CODEX_FILES, ids=lambda p: p.name)
def test_real_codex_files(path: Path) -> None:
    """Every prompt and answer shown once (the events that repeat them are not shown again),
    no reasoning by default, never encrypted content, each tool call once."""
    (session,) = sessions_read(path)
    assert dict(session.metadata)["origin"] == "codex"
    text = to_text(session)
    body = text.split("\n== ", 1)[1]  # past the title
    for said in set(codex_said(path)):
        assert body.count(f"\n{said}\n") == 1, said  # as its own paragraph, once
    for record in entries(path):
        item = record.get("payload", {})
        if item.get("type") == "reasoning":
            summary = [p["text"] for p in item.get("summary", [])]
            assert all(s not in out for s in summary for out in _outputs(session))
            assert item.get("encrypted_content", "") not in "".join(
                _outputs(session) + [to_text(session, reasoning="all")]
            )
    items = [r.get("payload", r) for r in entries(path) if r.get("type") in ("response_item", *CALL_TYPES)]
    calls = [item["call_id"] for item in items if item.get("type") in CALL_TYPES]
    assert sorted(b.id for _, b in session.blocks() if isinstance(b, ToolBlock)) == sorted(calls)


def test_real_codex_session_in_detail(tmp_path: Path) -> None:
    (session,) = sessions_read(CODEX_FILES[0])
    assert session.id == "11111111-1111-4111-8111-111111111111"
    assert dict(session.metadata)["cwd"] == "/workspace/synthetic-project"
    text = to_text(session)
    assert text.count("The synthetic files are alpha.txt") == 1  # the repeating event is not shown again
    assert "I will inspect" not in text and "I will inspect" in to_text(session, reasoning="all")
    for out in (text, to_text(session, reasoning="all"), to_json(session), to_html(session, reasoning="all")):
        assert "SYNTHETIC_ENCRYPTED_CONTENT" not in out
    tools = [b for _, b in session.blocks() if isinstance(b, ToolBlock)]
    assert [(b.tool, b.status) for b in tools] == [
        ("exec_command", "completed"),
        ("apply_patch", "completed"),
        ("mcp__synthetic__lookup", "completed"),
    ]
    assert thaw(tools[0].input) == {"cmd": "find . -maxdepth 1 -type f"}  # arguments parsed as JSON
    from vis_export import index, search

    index([session], tmp_path / "index")
    assert search('"maxdepth 1"', tmp_path / "index")


def test_real_codex_subagent_and_malformed() -> None:
    spawned = next(p for p in CODEX_FILES if "33333333" in p.name)
    (session,) = sessions_read(spawned)
    assert session.title == "Subagent of 22222222-2222-4222-8222-222222222222: Spawn a synthetic researcher."
    malformed = FOREIGN / "codex_malformed" / "rollout-66666666-6666-4666-8666-666666666666.jsonl"
    (refused,) = read(malformed)
    assert refused.session is None and refused.problems[0].location == "line 3"
    (kept,) = read(malformed, lenient=True)
    assert kept.session is not None and "Safe line before malformed input." in to_text(kept.session)


def _entry(kind: str, uuid: str, content: Any, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=extra.pop("api_id", f"msg_{uuid}"), model="claude-test")
    return {
        "type": kind,
        "uuid": uuid,
        "sessionId": "sess-1",
        "cwd": "/work/project",
        "version": "2.0.1",
        "timestamp": f"2025-06-01T10:00:{len(uuid):02d}.000Z",
        "message": message,
        **extra,
    }


def claude_session() -> list[dict[str, Any]]:
    """A Claude Code session with one of each thing the importer maps."""
    return [
        {"type": "summary", "summary": "Fixing the parser", "leafUuid": "a3"},
        _entry("user", "u1", "Please fix the parser in src/parse.py"),
        _entry("assistant", "a1", [{"type": "thinking", "thinking": THOUGHT, "signature": SIGNATURE}], api_id="m1"),
        _entry("assistant", "a2", [{"type": "redacted_thinking", "data": REDACTED}], api_id="m1"),
        _entry("assistant", "a3", [{"type": "text", "text": "Running the tests first."}], api_id="m1"),
        _entry(
            "assistant",
            "a4",
            [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "pytest -q tests/"}}],
            api_id="m1",
        ),
        _entry("user", "r1", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "3 passed"}]),
        _entry("user", "r9", [{"type": "tool_result", "tool_use_id": "toolu_gone", "content": "orphan output"}]),
        _entry(
            "assistant",
            "a5",
            [{"type": "tool_use", "id": "toolu_2", "name": "TodoWrite", "input": {"todos": [{"activeForm": "x"}]}}],
        ),
        _entry("user", "u2", [{"type": "text", "text": "Here is a screenshot"}, _image()]),
        {"type": "system", "uuid": "s1", "content": "Conversation compacted", "timestamp": "2025-06-01T10:01:00Z"},
        {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}},
        _entry("user", "m1", "<command-name>/clear</command-name>"),
        _entry("assistant", "a6", [{"type": "server_tool_use", "id": "srv_1", "name": "web_search"}]),
    ]


def _image() -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}


def shuffled_and_cut(values: list[Any], order: random.Random, cut: int) -> bytes:
    """A transcript's entries in ``order``'s shuffle, as JSON Lines cut after ``cut`` bytes (one at least): a file
    being written, or one written by a tool that did not keep the order."""
    order.shuffle(values)
    return "".join(json.dumps(v) + "\n" for v in values).encode()[: max(cut, 1)]


def write_lines(path: Path, values: list[Any]) -> Path:
    path.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")
    return path


def test_claude_code_mapping(tmp_path: Path) -> None:
    result = list(read(write_lines(tmp_path / "sess-1.jsonl", claude_session())))
    ((session, problems),) = [(r.session, r.problems) for r in result]
    assert session is not None and session.id == "sess-1" and session.title == "Fixing the parser"
    assert dict(session.metadata)["cwd"] == "/work/project"
    assert [p.message for p in problems] == [
        "skipped entries this version does not show: 1 file-history-snapshot"
    ]  # counted in one warning
    first = session.messages[1]
    assert (first.role, first.model, first.provider) == ("assistant", "claude-test", "anthropic")
    assert [b.type for b in first.blocks] == ["reasoning", "reasoning", "prose", "tool"]  # one API message
    bash = first.blocks[3]
    assert isinstance(bash, ToolBlock) and (bash.status, bash.output) == ("completed", "3 passed")
    assert [m.role for m in session.messages].count("user") == 3  # results make no turn of their own
    todo = next(b for _, b in session.blocks() if b.id == "toolu_2")
    assert isinstance(todo, ToolBlock) and todo.status == "pending"
    assert thaw(todo.input) == {"todos": [{"active_form": "x"}]}  # keys in the contract's case
    orphan = next(b for _, b in session.blocks() if b.id == "toolu_gone_result")
    assert isinstance(orphan, ToolBlock) and orphan.output == "orphan output"
    assert any(b.type == "server_tool_use" for _, b in session.blocks())  # unknown: kept, inert
    html = to_html(session)
    assert f"data:image/png;base64,{PNG}" in html  # the image is embedded
    for out in (to_text(session), html, to_json(session), to_markdown(session)):
        assert THOUGHT not in out and "orphan output" in out
    for out in (to_text(session, reasoning="all"), to_json(session), to_html(session, reasoning="all")):
        assert SIGNATURE not in out and REDACTED not in out
    assert THOUGHT in to_text(session, reasoning="all")
    again = list(read(write_lines(tmp_path / "again.jsonl", claude_session())))[0].session
    assert again is not None and to_json(again) == to_json(session)  # same file, same bytes (R7)


def test_claude_code_folder_with_subagents(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-work-project"
    write_lines(project.mkdir(parents=True) or project / "sess-1.jsonl", claude_session())
    agent = [{**e, "isSidechain": True, "agentId": "ag7"} for e in claude_session()[1:3]]
    write_lines(
        (project / "sess-1" / "subagents").mkdir(parents=True) or project / "sess-1/subagents/agent-ag7.jsonl", agent
    )
    sessions = sessions_read(tmp_path / "projects")
    assert [s.id for s in sessions] == ["sess-1", "sess-1/ag7"]
    assert sessions[1].title is not None and sessions[1].title.startswith("Subagent of sess-1")
    assert dict(sessions[0].metadata)["project"] == "-work-project"


def test_file_still_being_written(tmp_path: Path) -> None:
    text = "".join(json.dumps(e) + "\n" for e in claude_session())
    path = tmp_path / "sess-1.jsonl"
    path.write_text(text + '{"type": "assistant", "message": {"conte', encoding="utf-8")
    (result,) = read(path)
    assert result.session is not None
    assert [p.location for p in result.problems][0] == f"line {len(claude_session()) + 1}"
    broken = text.replace('{"type": "system"', '{"type": "system" oops', 1)
    path.write_text(broken, encoding="utf-8")
    (result,) = read(path)
    assert result.session is None and result.problems[0].message.startswith("not JSON")


@settings(max_examples=60, deadline=None)
@given(order=st.randoms(use_true_random=False), cut=st.integers(min_value=0, max_value=20_000))
def test_any_order_or_truncation_reads_without_thinking(order: random.Random, cut: int) -> None:
    data = shuffled_and_cut(claude_session(), order, cut)
    with time_limit(20):
        results = read_bytes(data, "s.jsonl", "s", lenient=order.random() < 0.5)
        for result in results:
            if result.session is None:
                continue
            for out in (to_text(result.session), to_html(result.session), to_markdown(result.session)):
                assert THOUGHT not in out and SIGNATURE not in out and REDACTED not in out
            assert SIGNATURE not in to_json(result.session) and REDACTED not in to_json(result.session)


def test_codex_generated(tmp_path: Path) -> None:
    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "2025-09-01T00:00:00Z", "type": "response_item", "payload": payload}

    records = [
        {"timestamp": "2025-09-01T00:00:00Z", "type": "session_meta", "payload": {"id": "c1", "cwd": "/w"}},
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>"}]}),
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "run ls"}]}),
        item({"type": "local_shell_call", "call_id": "c", "action": {"type": "exec", "command": ["ls"]}}),
        item({"type": "reasoning", "summary": [], "encrypted_content": "ENC"}),
        item({"type": "function_call_output", "call_id": "c", "output": "a.txt"}),
        item({"type": "function_call", "name": "shell", "arguments": "not json", "call_id": "never"}),
    ]
    (session,) = sessions_read(write_lines(tmp_path / "rollout.jsonl", records))
    assert session.id == "c1" and session.title == "run ls"
    assert session.messages[0].blocks[0].type == "notice"
    shell = [b for _, b in session.blocks() if isinstance(b, ToolBlock)]
    assert [(b.tool, b.status, b.output) for b in shell] == [
        ("local_shell_call", "completed", "a.txt"),
        ("shell", "pending", None),
    ]
    assert shell[1].input == "not json"
    assert "ENC" not in to_json(session) and "ENC" not in to_text(session, reasoning="all")


# --- provider message logs ------------------------------------------------------------------


def test_openai_log(tmp_path: Path) -> None:
    log = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is 2+2?"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": THOUGHT,
            "tool_calls": [
                {"id": "call_9", "type": "function", "function": {"name": "calc", "arguments": '{"expr": "2+2"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_9", "content": "4"},
        {"role": "assistant", "content": "4."},
    ]
    (session,) = sessions_read(write_lines(tmp_path / "chat.jsonl", log))
    assert [m.role for m in session.messages] == ["system", "user", "assistant"]
    (calc,) = [b for _, b in session.blocks() if isinstance(b, ToolBlock)]
    assert (calc.id, thaw(calc.input), calc.output) == ("call_9", {"expr": "2+2"}, "4")
    assert THOUGHT not in to_text(session) and THOUGHT in to_text(session, reasoning="all")


def _roundtrip(line: str, flavour: str) -> str:
    (result,) = read_bytes(line.encode(), "log.jsonl", "log")
    assert result.session is not None, result.problems
    return session_lines(result.session, ExportOptions(provider_format=flavour))


@settings(max_examples=examples(150), deadline=None)
@given(document=session_documents(small_blocks), flavour=st.sampled_from(["openai", "anthropic"]))
def test_provider_round_trip(document: dict[str, Any], flavour: str) -> None:
    """What ``--to provider`` writes reads back to a session it writes again byte for byte."""
    session = session_from_json(document, "s")
    with time_limit(20):
        written = session_lines(session, ExportOptions(provider_format=flavour))
        if not json.loads(written)["messages"]:
            return  # nothing to read back: no conversation
        assert _roundtrip(written, flavour) == written


def test_sessions_lists_where_an_import_was_worked_on(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from vis_export.cli import main
    from vis_export.listing import SessionSummary

    (session,) = sessions_read(write_lines(tmp_path / "sess-1.jsonl", claude_session()))
    assert SessionSummary.of(session).row()["where"] == "/work/project"
    shown = CliRunner().invoke(main, ["sessions", str(tmp_path)])
    assert "WHERE" in shown.output and "/work/project" in shown.output


def test_tool_views_by_name_and_shape() -> None:
    """An edit reads as a diff with its file name, a shell call as its command line, a todo
    list as a checklist, whatever tool wrote it; the JSON projection keeps the input as stored."""
    edit = {"file_path": "src/a.py", "old_string": "x = 1\n", "new_string": "x = 2\n"}
    blocks = [
        {"id": "t1", "type": "tool", "tool": "Edit", "status": "completed", "input": edit},
        {"id": "t2", "type": "tool", "tool": "edit", "status": "completed", "input": edit},
        {"id": "t3", "type": "tool", "tool": "Bash", "status": "completed", "input": {"command": "ls -la"}},
        {
            "id": "t4",
            "type": "tool",
            "tool": "local_shell_call",
            "status": "completed",
            "input": {"type": "exec", "command": ["echo", "a b"]},
        },
        {
            "id": "t5",
            "type": "tool",
            "tool": "TodoWrite",
            "status": "completed",
            "input": {
                "todos": [{"content": "write tests", "status": "completed"}, {"content": "ship", "status": "pending"}]
            },
        },
    ]
    message = {"id": "m", "role": "assistant", "status": "completed", "content": blocks, "created_at": 0}
    session = session_from_json({"id": "s", "messages": [message]}, "s")
    text = to_text(session)
    assert text.count("Edit src/a.py:\n--- src/a.py\n+++ src/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n") == 2
    assert "Command:\nls -la\n" in text and "Command:\necho 'a b'\n" in text
    assert "[x] write tests\n[ ] ship" in text
    assert json.loads(to_json(session))["messages"][0]["content"] == blocks
    html = to_html(session)
    assert '<span class="gd">-x = 1</span>\n<span class="gi">+x = 2</span>' in html  # coloured lines


def test_tool_results_in_any_order(tmp_path: Path) -> None:
    """A result before its call still completes it; a second result for a call, or one whose
    call never comes, is an orphaned result shown where it came; the subagent a call ran is named."""
    call = [{"type": "tool_use", "id": "toolu_a", "name": "Task", "input": {"prompt": "look"}}]
    lines = [
        _entry("user", "u1", "go"),
        {
            **_entry("user", "r1", [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "early"}]),
            "toolUseResult": {"agentId": "ag1"},
        },
        _entry("assistant", "a1", call),
        _entry("user", "r2", [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "again"}]),
        _entry("user", "r3", [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "lost", "is_error": True}]),
    ]
    (session,) = sessions_read(write_lines(tmp_path / "s.jsonl", lines))
    tools = [(m.role, b.id, b.status, b.output, b.error) for m, b in session.blocks() if isinstance(b, ToolBlock)]
    assert tools == [
        ("assistant", "toolu_a", "completed", "early", None),
        ("tool", "toolu_a_result", "completed", "again", None),
        ("tool", "toolu_x_result", "failed", None, "lost"),
    ]
    text = to_text(session)
    assert text.index("early") < text.index("again") < text.index("lost")
    task = next(b for _, b in session.blocks() if b.id == "toolu_a")
    assert task.fields["subagent_session"] == "sess-1/ag1"


def test_image_in_a_tool_result_is_embedded(tmp_path: Path) -> None:
    call = [{"type": "tool_use", "id": "toolu_r", "name": "Read", "input": {"file_path": "shot.png"}}]
    result = {"type": "tool_result", "tool_use_id": "toolu_r", "content": [{"type": "text", "text": "read"}, _image()]}
    lines = [_entry("user", "u1", "look at shot.png"), _entry("assistant", "a1", call), _entry("user", "r1", [result])]
    (session,) = sessions_read(write_lines(tmp_path / "s.jsonl", lines))
    read_call = next(b for _, b in session.blocks() if isinstance(b, ToolBlock))
    assert (read_call.status, read_call.output) == ("completed", "read")
    assert [b.type for b in session.messages[1].blocks] == ["tool", "attachment"]
    assert f"data:image/png;base64,{PNG}" in to_html(session)


@pytest.mark.parametrize("path", CLAUDE_FILES + CODEX_FILES, ids=lambda p: p.name)
def test_imported_json_is_valid_and_reads_back(path: Path, tmp_path: Path) -> None:
    """The JSON projection of an imported session is a canonical session: it validates and reads back the same."""
    (session,) = sessions_read(path)
    written = write_lines(tmp_path / "out.json", [json.loads(to_json(session))])
    (again,) = sessions_read(written)
    assert to_json(again) == to_json(session)


def codex_rollout() -> list[dict[str, Any]]:
    def item(payload: dict[str, Any], kind: str = "response_item") -> dict[str, Any]:
        return {"timestamp": "2025-09-01T00:00:01Z", "type": kind, "payload": payload}

    return [
        item({"id": "c9", "cwd": "/w", "cli_version": "0.50.0"}, "session_meta"),
        item({"model": "gpt-5-codex"}, "turn_context"),
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]}),
        item({"type": "user_message", "message": "fix it"}, "event_msg"),
        item(
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": THOUGHT}],
                "encrypted_content": SIGNATURE,
            }
        ),
        item({"type": "agent_reasoning", "text": THOUGHT}, "event_msg"),
        item({"type": "function_call", "name": "shell", "arguments": '{"command": ["ls"]}', "call_id": "k1"}),
        item({"type": "function_call_output", "call_id": "k1", "output": "a.txt"}),
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}),
        item({"type": "agent_message", "message": "done"}, "event_msg"),
        item({"type": "token_count", "info": None}, "event_msg"),
    ]


@settings(max_examples=60, deadline=None)
@given(order=st.randoms(use_true_random=False), cut=st.integers(min_value=0, max_value=5_000))
def test_codex_any_order_or_truncation_reads_without_reasoning(order: random.Random, cut: int) -> None:
    data = shuffled_and_cut(codex_rollout(), order, cut)
    with time_limit(20):
        for result in read_bytes(data, "r.jsonl", "r", lenient=order.random() < 0.5):
            if result.session is not None:
                for out in _outputs(result.session):
                    assert THOUGHT not in out and SIGNATURE not in out
                assert SIGNATURE not in to_text(result.session, reasoning="all")


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (keys and indexes), the value itself included."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = list(value) if isinstance(value, list) else dict(value)
    copy[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy


PROVIDER_LOG = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "x"}}]},
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": THOUGHT,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
]


@settings(max_examples=examples(200), deadline=None)
@given(data=st.data(), kind=st.sampled_from(["claude", "codex", "provider"]))
def test_any_field_of_any_entry_may_be_anything(data: st.DataObject, kind: str) -> None:
    """Foreign files change with their tools' versions: any value anywhere replaced by any JSON
    value reads without a crash (a session or located problems), and no thinking reaches an output."""
    values = list({"claude": claude_session, "codex": codex_rollout, "provider": lambda: PROVIDER_LOG}[kind]())
    retyped = False  # a block given another type name is that block: redacted data is then its data
    for _ in range(data.draw(st.integers(1, 4))):
        line = data.draw(st.integers(0, len(values) - 1))
        path = data.draw(st.sampled_from(_paths(values[line])))
        new = data.draw(json_values)
        values[line] = _replaced(values[line], path, new)
        retyped |= bool(path) and path[-1] == "type" and isinstance(new, str) or isinstance(new, dict)
    raw = "".join(json.dumps(v) + "\n" for v in values).encode()
    with time_limit(20):
        for result in read_bytes(raw, "f.jsonl", "f", lenient=data.draw(st.booleans())):
            assert result.session is not None or result.problems
            if result.session is not None:
                for out in _outputs(result.session):
                    assert THOUGHT not in out and SIGNATURE not in out
                    assert retyped or REDACTED not in out


def test_foreign_keys_in_the_contracts_case_and_no_secret_payload() -> None:
    from vis_export.sources.foreign import foreign_value

    value = {
        "activeForm": 1,
        "active_form": 2,
        "Content-Type": "x",
        "2fa": True,
        "encryptedContent": "E",
        "ok": [{"signature": "S"}],
    }
    assert foreign_value(value) == {
        "active_form": 1,
        "active_form_2": 2,
        "content_type": "x",
        "k_2fa": True,
        "ok": [{}],
    }


def test_thinking_in_a_meta_or_system_entry_stays_private(tmp_path: Path) -> None:
    thinking = [{"type": "thinking", "thinking": THOUGHT}, {"type": "text", "text": "visible part"}]
    lines = [
        _entry("user", "u1", "hello"),
        {**_entry("assistant", "a1", thinking), "isMeta": True},
        {"type": "system", "uuid": "s1", "content": thinking, "timestamp": "2025-06-01T10:00:09Z"},
    ]
    (session,) = sessions_read(write_lines(tmp_path / "s.jsonl", lines))
    for out in _outputs(session):
        assert THOUGHT not in out and "visible part" in out


def test_validate_reports_skipped_entries_as_a_warning(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from vis_export.cli import main

    write_lines(tmp_path / "sess-1.jsonl", claude_session())
    result = CliRunner().invoke(main, ["validate", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "warning: skipped entries this version does not show: 1 file-history-snapshot" in result.output


def test_an_indexed_transcript_is_not_read_again_while_unchanged(tmp_path: Path, monkeypatch: Any) -> None:
    """Entries skipped by design are a note: the file counts as read in full, so a rerun skips it."""
    import vis_export.sources as sources
    from vis_export.searchindex.job import index_sources

    (tmp_path / "t").mkdir()
    path = write_lines(tmp_path / "t" / "sess-1.jsonl", claude_session())
    os.utime(path, (path.stat().st_mtime - 60,) * 2)  # not changed a moment ago (see sources/stamp.py)
    index_sources([tmp_path / "t"], tmp_path / "index")
    reads: list[Any] = []
    real = sources.read
    monkeypatch.setattr(sources, "read", lambda *a, **k: reads.append(a) or real(*a, **k))
    counts = index_sources([tmp_path / "t"], tmp_path / "index")
    assert reads == [] and counts.added == 0


def test_a_system_reminder_inside_a_prompt_is_a_notice(tmp_path: Path) -> None:
    text = "Please review.\n<system-reminder>\nCLAUDE.md is in scope.\n</system-reminder>\n# Notes\nThe tail."
    (session,) = sessions_read(
        write_lines(tmp_path / "s.jsonl", [_entry("user", "u1", [{"type": "text", "text": text}])])
    )
    blocks = [(b.type, b.fields.get("markdown", b.fields.get("message"))) for b in session.messages[0].blocks]
    assert blocks == [
        ("prose", "Please review.\n"),
        ("notice", "<system-reminder>\nCLAUDE.md is in scope.\n</system-reminder>\n"),
        ("prose", "# Notes\nThe tail."),
    ]
    assert session.title == "Please review."


@pytest.mark.xfail(strict=True, reason="known defect: two unanswered calls split by empty prose do not regroup alike")
def test_provider_round_trip_of_unanswered_calls_split_by_empty_prose() -> None:
    """Found by ``test_provider_round_trip`` in a local run (not yet fixed): a turn of a
    cancelled tool call, an empty prose block and another cancelled call, after two
    empty turns, reads back grouped otherwise than it was written."""
    turn = {"id": "0", "role": "assistant", "status": "cancelled", "created_at": 0, "author": {"display_name": ""}}
    call = {"id": "0", "type": "tool", "tool": "0", "status": "cancelled"}
    document = {
        "id": "0",
        "messages": [
            {**turn, "content": []},
            {**turn, "content": []},
            {**turn, "content": [call, {"id": "0", "type": "prose", "markdown": ""}, call]},
        ],
    }
    written = session_lines(session_from_json(document, "s"), ExportOptions(provider_format="openai"))
    assert _roundtrip(written, "openai") == written
