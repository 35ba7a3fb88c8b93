"""Other agents' transcripts (Claude Code, Codex CLI, provider message logs): real
sample files and generated ones read onto the model, recognised by content, with
the rules on foreign data (private reasoning, encrypted content, tool pairing,
ids, unknown entries, files still being written)."""

from __future__ import annotations

import base64
import json
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import examples
from hypothesis import assume, example, given, settings, strategies as st
from provider_oracle import accepted, check
from sessions import sessions_read
from strategies import json_values, reasoning_names, session_documents, small_blocks
from timelimit import cpu_limit, time_limit

from vis_export import to_html, to_json, to_markdown, to_text
from vis_export.contract.reasoning_words import names_reasoning
from vis_export.formats.options import PROVIDER_FORMATS, ExportOptions
from vis_export.formats.provider import session_lines
from vis_export.model import Session, ToolBlock, UnknownBlock, session_from_json, thaw
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
    assert thaw(todo.fields["original_keys"]) == [{"path": ["input", "todos", 0, "active_form"], "key": "activeForm"}]
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


@settings(max_examples=examples(60), deadline=None)
@given(order=st.randoms(use_true_random=False), cut=st.integers(min_value=0, max_value=20_000))
def test_any_order_or_truncation_reads_without_thinking(order: random.Random, cut: int) -> None:
    data = shuffled_and_cut(claude_session(), order, cut)
    with cpu_limit(20):
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
    """What reading ``line`` (a request the API takes) back writes again."""
    check(json.loads(line), flavour)
    (result,) = read_bytes(line.encode(), "log.jsonl", "log")
    assert result.session is not None, result.problems
    return session_lines(result.session, ExportOptions(provider_format=flavour))


@settings(max_examples=examples(150), deadline=None)
@given(document=session_documents(small_blocks), flavour=st.sampled_from(["openai", "anthropic"]))
def test_provider_round_trip(document: dict[str, Any], flavour: str) -> None:
    """What ``--to provider`` writes reads back to a session it writes again byte for byte."""
    session = session_from_json(document, "s")
    with cpu_limit(20):
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


def test_tool_input_forms_by_name_and_shape() -> None:
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


@settings(max_examples=examples(60), deadline=None)
@given(order=st.randoms(use_true_random=False), cut=st.integers(min_value=0, max_value=5_000))
def test_codex_any_order_or_truncation_reads_without_reasoning(order: random.Random, cut: int) -> None:
    data = shuffled_and_cut(codex_rollout(), order, cut)
    with cpu_limit(20):
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
    value reads without a crash (a session or located problems), no thinking reaches an output,
    and the session replays as requests the APIs take."""
    values = list({"claude": claude_session, "codex": codex_rollout, "provider": lambda: PROVIDER_LOG}[kind]())
    retyped = False  # a block given another type name is that block: redacted data is then its data
    for _ in range(data.draw(st.integers(1, 4))):
        line = data.draw(st.integers(0, len(values) - 1))
        path = data.draw(st.sampled_from(_paths(values[line])))
        new = data.draw(json_values)
        values[line] = _replaced(values[line], path, new)
        retyped |= bool(path) and path[-1] == "type" and isinstance(new, str) or isinstance(new, dict)
    raw = "".join(json.dumps(v) + "\n" for v in values).encode()
    with cpu_limit(20):
        for result in read_bytes(raw, "f.jsonl", "f", lenient=data.draw(st.booleans())):
            assert result.session is not None or result.problems
            if result.session is not None:
                replays = [json.dumps(accepted(result.session, flavour=f)) for f in PROVIDER_FORMATS]
                for out in [*_outputs(result.session), *replays]:
                    assert THOUGHT not in out and SIGNATURE not in out
                    assert retyped or REDACTED not in out


def test_foreign_keys_in_the_contracts_case_and_no_secret_payload() -> None:
    from vis_export.sources.foreign import Spellings, foreign_value

    value = {
        "activeForm": 1,
        "active_form": 2,
        "Content-Type": "x",
        "2fa": True,
        "encryptedContent": "E",
        "ok": [{"signature": "S"}],
    }
    spellings: Spellings = []
    assert foreign_value(value, spellings) == {
        "active_form": 1,
        "active_form_2": 2,
        "content_type": "x",
        "k_2fa": True,
        "ok": [{}],
    }
    assert spellings == [
        (("active_form",), "activeForm"),
        (("active_form_2",), "active_form"),
        (("content_type",), "Content-Type"),
        (("k_2fa",), "2fa"),
    ]


def test_a_key_ending_in_a_line_break_is_put_in_the_contracts_case() -> None:
    """``$`` also matches before a final line break: ``"a\\n"`` was kept as it was, and the
    session refused for a key not in snake_case (found by the tool-keys property)."""
    from vis_export.sources.foreign import snake_key

    assert snake_key("a\n") == "a" and snake_key("a_b\n") == "a_b" and snake_key("a_b") == "a_b"


# Keys as tools write them: any JSON key, with a few that fold alike or name reasoning.
_source_keys = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["activeForm", "active_form", "filePath", "Content-Type", "2fa", "reasoningContent", "thinkHard"]),
)
_source_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_source_keys, inner, max_size=4),
    max_leaves=12,
)


def _without(value: Any, names: frozenset[str]) -> Any:
    """``value`` less the maps' entries whose key folds to one of ``names``."""
    from vis_export.sources.foreign import snake_key

    if isinstance(value, dict):
        return {k: _without(v, names) for k, v in value.items() if snake_key(k) not in names}
    if isinstance(value, list):
        return [_without(v, names) for v in value]
    return value


def _names_reasoning_anywhere(value: Any) -> bool:
    from vis_export.contract.reasoning_words import is_reasoning_map, names_reasoning

    if isinstance(value, dict):
        return is_reasoning_map(value) or any(
            names_reasoning(k) or _names_reasoning_anywhere(v) for k, v in value.items()
        )
    return isinstance(value, list) and any(_names_reasoning_anywhere(v) for v in value)


@settings(max_examples=examples(300), deadline=None)
@given(tool_input=st.dictionaries(_source_keys, _source_values, max_size=5), output=_source_values)
@example(tool_input={"a\n": None}, output=None)  # a snake_case key but for its newline
def test_tool_keys_as_the_source_wrote_them_are_kept(
    tool_input: dict[str, Any], output: Any, tmp_path_factory: Any
) -> None:
    """A tool's input and output are stored with contract keys, and each renamed key's
    spelling is kept (``original_keys``), so the provider replay gives them back as read
    (secret payloads aside); no spelling is kept of a key in or naming private reasoning."""
    from vis_export.formats.provider import conversation
    from vis_export.sources.foreign import SECRET_KEYS

    call = [{"type": "tool_use", "id": "toolu_k", "name": "Tool", "input": tool_input}]
    result = {"type": "tool_result", "tool_use_id": "toolu_k", "content": [{"type": "json", "value": output}]}
    path = tmp_path_factory.mktemp("keys") / "s.jsonl"
    (session,) = sessions_read(
        write_lines(path, [_entry("user", "u1", "go"), _entry("assistant", "a1", call), _entry("user", "r1", [result])])
    )
    (tool,) = [b for _, b in session.blocks() if isinstance(b, ToolBlock)]
    kept = thaw(tool.fields.get("original_keys", []))
    from vis_export.contract.reasoning_words import names_reasoning

    assert not any(names_reasoning(entry["key"]) for entry in kept)
    messages = conversation(session, ExportOptions(reasoning="all"), "anthropic")["messages"]
    (replayed,) = [p for m in messages for p in m["content"] if p.get("type") == "tool_use"]
    if not _names_reasoning_anywhere(tool_input):
        assert replayed["input"] == _without(tool_input, SECRET_KEYS)
    (answer,) = [p for m in messages for p in m["content"] if p.get("type") == "tool_result"]
    if not _names_reasoning_anywhere(output):
        assert json.loads(answer["content"]) == [{"type": "json", "value": _without(output, SECRET_KEYS)}]
    for flavour in ("openai", "anthropic"):  # and the replay, read back, is written again the same
        written = session_lines(session, ExportOptions(provider_format=flavour))
        assert _roundtrip(written, flavour) == written


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
    from vis_export.jobs.indexing import index_sources

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


def test_a_prompt_of_many_unclosed_reminders_reads_in_linear_time(tmp_path: Path) -> None:
    """Each opening tag after the last end tag was searched to the text's end: 8,000
    of them (136 KB) took 5.4 CPU-s, a megabyte would take minutes."""
    text = "Review this log:\n" + "<system-reminder>" * 8000
    path = write_lines(tmp_path / "s.jsonl", [_entry("user", "u1", [{"type": "text", "text": text}])])
    start = time.process_time()
    (session,) = sessions_read(path)
    assert time.process_time() - start < 1  # CPU, not wall time
    assert [b.fields.get("markdown") for b in session.messages[0].blocks] == [text]


@pytest.mark.parametrize("flavour", ["openai", "anthropic"])
@pytest.mark.parametrize("nothing", ["", " \n"])
def test_provider_round_trip_of_calls_parted_by_text_that_says_nothing(flavour: str, nothing: str) -> None:
    """Found by ``test_provider_round_trip``: text that says nothing between two calls is
    written as nothing, so it must not part them into two steps that read back as one."""
    call = {"id": "0", "type": "tool", "tool": "0", "status": "cancelled"}
    turn = {"id": "0", "role": "assistant", "status": "cancelled", "created_at": 0}
    document = {
        "id": "0",
        "messages": [
            {**turn, "content": []},
            {**turn, "content": [call, {"id": "0", "type": "prose", "markdown": nothing}, call]},
        ],
    }
    written = session_lines(session_from_json(document, "s"), ExportOptions(provider_format=flavour))
    assert _roundtrip(written, flavour) == written


def _private_texts(path: Path) -> list[str]:
    """The private thought a real transcript holds: Claude Code's thinking, Codex's reasoning summaries."""
    found = [p["thinking"] for p in claude_parts(path) if p.get("type") == "thinking"]
    for record in entries(path):
        item = record.get("payload", record)
        if isinstance(item, dict) and item.get("type") == "reasoning":
            found += [
                p["text"] for p in item.get("summary", []) if isinstance(p, dict) and isinstance(p.get("text"), str)
            ]
    return [line.strip() for text in found for line in text.splitlines() if len(line.strip()) >= 12]


def _commands(session: Session) -> list[str]:
    """The command lines of the shell calls (``Bash``, ``exec_command``, ``shell``, ``local_shell_call``)."""
    found = []
    for _, block in session.blocks():
        if isinstance(block, ToolBlock) and block.fields.get("orphaned") is not True:
            tool_input = thaw(block.input) if block.input is not None else None
            if isinstance(tool_input, dict):
                command = tool_input.get("command", tool_input.get("cmd"))
                found.append(" ".join(command) if isinstance(command, list) else command)
    return [command for command in found if isinstance(command, str) and command.strip()]


@pytest.mark.parametrize("path", CLAUDE_FILES + CODEX_FILES, ids=lambda p: p.name)
def test_every_real_transcript_in_every_format(path: Path, tmp_path: Path) -> None:
    """Each real file through every projection: no private thought in any (text, Markdown,
    HTML, JSON, provider messages in both flavours), every prose block replayed, every
    tool call replayed once with its result, and each shell command found by search."""
    import re

    from vis_export import index, search

    (session,) = sessions_read(path)
    flavours = {
        f: json.loads(session_lines(session, ExportOptions(provider_format=f))) for f in ("openai", "anthropic")
    }
    outputs = [*_outputs(session), *(json.dumps(v, ensure_ascii=False) for v in flavours.values())]
    for thought in _private_texts(path):
        assert not any(thought in out for out in outputs), thought
    for flavour, request in flavours.items():  # every call answered: the oracle's
        check(request, flavour)
    calls = [b for m, b in session.blocks() if isinstance(b, ToolBlock) and m.role == "assistant"]
    openai = flavours["openai"]["messages"]
    called = [c["id"] for m in openai for c in m.get("tool_calls", [])]
    used = [p["id"] for m in flavours["anthropic"]["messages"] for p in m["content"] if p["type"] == "tool_use"]
    assert len(called) == len(calls) and sorted(used) == sorted(called)
    replayed = json.dumps([openai, flavours["anthropic"]], ensure_ascii=False)
    for message, block in session.blocks():
        if block.type == "prose" and message.role in ("user", "assistant") and block.markdown.strip():
            assert json.dumps(block.markdown, ensure_ascii=False)[1:-1] in replayed
    commands = _commands(session)
    if commands:
        index([session], tmp_path / "index")
        for command in commands:
            word = max(re.findall(r"[A-Za-z0-9_]{3,}", command) or [""], key=len)
            if word:
                assert search(f'"{word}"', tmp_path / "index", type="tool"), command


@pytest.mark.slow
@pytest.mark.parametrize("path", CLAUDE_FILES + CODEX_FILES, ids=lambda p: p.name)
def test_every_real_transcript_as_pdf(path: Path) -> None:
    """The PDF of each real file holds its prompts' and answers' first words and no private thought."""
    import io

    from pypdf import PdfReader

    from vis_export import to_pdf

    (session,) = sessions_read(path)
    with time_limit(120):
        pdf = to_pdf(session)
    text = " ".join((page.extract_text() or "") for page in PdfReader(io.BytesIO(pdf)).pages)
    flat = " ".join(text.split())
    for thought in _private_texts(path):
        assert " ".join(thought.split()) not in flat, thought
    for message, block in session.blocks():
        words = [w for w in block.fields.get("markdown", "").split() if w.isalpha() and len(w) >= 4]
        if block.type == "prose" and message.role in ("user", "assistant") and words:
            assert words[0] in flat, words[0]


def test_call_arguments_nested_near_the_recursion_limit_are_read_without_a_crash() -> None:
    """Arguments given as JSON text are parsed as every reader parses (``jsontext.parse``):
    nested past what the parser takes, they stay the text they are; nothing crashes."""
    import sys

    limit = sys.getrecursionlimit()
    for depth in range(limit - 30, limit + 5):
        nested = "[" * depth + "]" * depth
        item = {"type": "function_call", "name": "f", "call_id": "c", "arguments": nested}
        rollout = [{"timestamp": "2025-01-01T00:00:00Z", "type": "response_item", "payload": item}]
        call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": nested}}
        log = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [call]}]
        for data in ("".join(json.dumps(v) + "\n" for v in rollout), json.dumps({"messages": log})):
            for result in read_bytes(data.encode(), "f.json", "f", lenient=True):
                assert result.session is not None or result.problems, depth


def test_a_stored_spelling_never_gives_a_key_a_name_of_reasoning() -> None:
    """``original_keys`` in a stored session may say anything: the provider replay renames
    a key only to a spelling that names no reasoning (R2), and skips entries that do not fit."""
    from vis_export.formats.provider import conversation

    spellings = [
        {"path": ["input", "notes"], "key": "thinkingNotes"},
        {"path": ["input", "file_path"], "key": "filePath"},
        {"path": ["input", "gone"], "key": "Gone"},
        {"path": ["input", "todos", 0, "active_form"], "key": "activeForm"},
        {"path": "input", "key": 7},
    ]
    tool = {"id": "t", "type": "tool", "tool": "Edit", "status": "pending", "original_keys": spellings}
    tool["input"] = {"notes": "n", "file_path": "a.py", "todos": [{"active_form": "x"}]}
    message = {"id": "m", "role": "assistant", "status": "completed", "content": [tool], "created_at": 0}
    session = session_from_json({"id": "s", "messages": [message]}, "s")
    (call,) = conversation(session, ExportOptions(), "openai")["messages"][0]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {
        "notes": "n",
        "filePath": "a.py",
        "todos": [{"activeForm": "x"}],
    }


@settings(max_examples=examples(80), deadline=None)
@given(name=reasoning_names, flag=st.booleans(), openai=st.booleans())
def test_a_foreign_key_that_names_reasoning_stays_one_however_it_folds(name: str, flag: bool, openai: bool) -> None:
    """Importing turns a tool's keys to snake_case, which drops every letter outside
    ASCII: ``ｔｈｉｎｋｉｎｇ`` would become ``key`` and ``τhinking`` ``hinking``, and the
    thinking they hold would show. A key that names reasoning is stored as one (R2)."""
    assume(names_reasoning(name))
    tool_input = {name: True, "text": THOUGHT} if flag else {name: THOUGHT}
    if openai:
        call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": json.dumps(tool_input)}}
        log = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [call]}]
        data = json.dumps({"messages": log}, ensure_ascii=False)
    else:
        use = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": tool_input}
        lines = [_entry("user", "u1", "hi"), _entry("assistant", "a1", [use])]
        data = "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in lines)
    with cpu_limit(20):
        (result,) = read_bytes(data.encode(), "f.jsonl", "f")
        assert result.session is not None, result.problems
        session = result.session
        for flavour in ("openai", "anthropic"):
            assert THOUGHT not in session_lines(session, ExportOptions(provider_format=flavour))
        for out in (to_text(session), to_markdown(session), to_html(session), to_json(session)):
            assert THOUGHT not in out
        assert THOUGHT in to_json(session, reasoning="all")  # kept, shown only when authorised


@pytest.mark.parametrize("kind", ["reasoning", "prose", "code", "tool", "notice", "lonis", "unknown"])
def test_a_foreign_part_of_a_vis_type_stays_foreign(kind: str) -> None:
    """A Claude Code part whose type Vis gives a meaning is kept as an unknown block, not
    taken for a Vis block: ``{"type": "reasoning", "visibility": "visible"}`` would show."""
    part = {"type": kind, "visibility": "visible", "text": THOUGHT, "markdown": "**x**", "tool": "t"}
    part.update(status="completed", code="c", message="m")
    data = "".join(json.dumps(v) + "\n" for v in [_entry("user", "u1", "hi"), _entry("assistant", "a1", [part])])
    (result,) = read_bytes(data.encode(), "f.jsonl", "f")
    assert result.session is not None, result.problems
    (block,) = result.session.messages[1].blocks
    assert block.type == f"foreign_{kind}" and isinstance(block, UnknownBlock)
    if kind == "reasoning":
        for render in (to_text, to_markdown, to_html, to_json):
            assert THOUGHT not in render(result.session)


def _placed(where: str, payload: dict[str, Any]) -> list[dict[str, Any]]:
    """Claude Code entries holding ``payload`` as a content part, in a tool's input, in a
    tool's result (a sub-agent's transcript), in an orphaned result or in an unknown part."""
    call = {"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {"prompt": "go"}}
    if where == "part":
        parts = [payload]
    elif where == "input":
        parts = [{**call, "input": {"steps": [payload]}}]
    elif where == "unknown":
        parts = [{"type": "server_tool_use", "id": "srv_1", "input": payload}]
    else:
        parts = [call]
    entries = [_entry("user", "u1", "hi"), _entry("assistant", "a1", parts)]
    if where in ("result", "orphan"):
        result = {"type": "tool_result", "content": [{"type": "text", "text": "done"}, payload]}
        result["tool_use_id"] = "toolu_1" if where == "result" else "toolu_gone"
        entries.append(_entry("user", "r1", [result]))
    return entries


@settings(max_examples=examples(80), deadline=None)
@given(
    where=st.sampled_from(["part", "input", "unknown", "result", "orphan"]),
    kind=st.sampled_from(["redacted_thinking", "Redacted_Thinking", "thinking", "reasoning"]),
    type_key=st.sampled_from(["type", "Type", "kind"]),
    data_key=st.sampled_from(["data", "Data", "encrypted_content", "encryptedContent", "signature"]),
)
def test_opaque_reasoning_payloads_never_show_wherever_they_sit(
    where: str, kind: str, type_key: str, data_key: str
) -> None:
    """Redacted thinking's ``data`` and any encrypted payload are copied nowhere, not even
    with ``--reasoning all``, wherever the map that holds them sits."""
    payload = {type_key: kind, data_key: REDACTED}
    data = "".join(json.dumps(v) + "\n" for v in _placed(where, payload))
    with cpu_limit(20):
        (result,) = read_bytes(data.encode(), "f.jsonl", "f")
        assert result.session is not None, result.problems
        session = result.session
        for reasoning in ("visible", "all"):
            for flavour in ("openai", "anthropic"):
                assert REDACTED not in session_lines(
                    session, ExportOptions(provider_format=flavour, reasoning=reasoning)
                )
            for render in (to_text, to_markdown, to_html, to_json):
                assert REDACTED not in render(session, reasoning=reasoning)


@pytest.mark.parametrize("key", ["a{}".format, "keyNumber{}".format], ids=["folding-alike", "camel-case"])
def test_a_map_of_many_renamed_keys_reads_in_linear_time(key: Any) -> None:
    """R6: 20,000 keys in one tool input that fold to one snake_case key (``a一``, ``a丁``...:
    ``a``, ``a_2``...) or are all renamed (``keyNumber7``) took minutes: each key tried
    every suffix before it, and each spelling read the whole map again."""
    tool_input = {key(chr(0x4E00 + n) if key("") == "a" else n): n for n in range(20_000)}
    use = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": tool_input}
    data = "".join(
        json.dumps(v, ensure_ascii=False) + "\n" for v in [_entry("user", "u1", "hi"), _entry("assistant", "a1", [use])]
    )
    with cpu_limit(10):
        (result,) = read_bytes(data.encode(), "f.jsonl", "f")
    assert result.session is not None, result.problems
    (tool,) = [b for _, b in result.session.blocks() if isinstance(b, ToolBlock)]
    assert len(tool.input) == len(tool.fields["original_keys"]) == 20_000


@given(name=reasoning_names, said=st.sampled_from(["", ": the plan is to stall"]))
def test_a_skipped_entry_of_a_reasoning_type_is_counted_without_its_name(name: str, said: str) -> None:
    """Warnings count skipped entries by type; a type that names reasoning may carry the
    reasoning itself, so it is counted under a neutral label (R2 covers problem lines too)."""
    kind = f"{name}{said}"
    assume(names_reasoning(kind) and kind not in ("reasoning", "message"))
    at = "2025-01-01T00:00:00Z"
    records = [
        {"timestamp": at, "type": "response_item", "payload": {"type": "message", "role": "user", "content": "hi"}},
        {"timestamp": at, "type": "response_item", "payload": {"type": kind}},
        {"timestamp": at, "type": "event_msg", "payload": {"type": kind}},
        {"timestamp": at, "type": kind, "payload": {}},
    ]
    (result,) = read_bytes("".join(json.dumps(r) + "\n" for r in records).encode(), "f.jsonl", "f")
    assert result.session is not None and result.problems
    neutral = ("entries of a reasoning type", "entry of a reasoning type")
    said_lines = [problem.message.replace(neutral[0], "").replace(neutral[1], "") for problem in result.problems]
    assert all(name not in line and (not said or said not in line) for line in said_lines), said_lines


def _flagged_sources(part: dict[str, Any]) -> list[str]:
    """Files holding a text ``part``: as a Claude Code assistant part and tool result, a
    Codex message part, and in an OpenAI log's assistant content (with and without
    calls) and tool message."""
    call = {"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": [part]}
    claude = [
        [_entry("user", "u1", "hi"), _entry("assistant", "a1", [part])],
        [_entry("user", "u1", "hi"), _entry("assistant", "a1", [call]), _entry("user", "r1", [result])],
    ]
    function = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    log = [
        {"role": "user", "content": "hi"},
        {"role": "user", "content": [part]},  # a user's parts, Anthropic's way: each text opens a message
        {"role": "assistant", "content": [part]},
        {"role": "assistant", "content": [part], "tool_calls": [function]},
        {"role": "tool", "tool_call_id": "c", "content": [part]},
    ]
    at = "2025-01-01T00:00:00Z"
    codex = [
        {"timestamp": at, "type": "response_item", "payload": {"type": "message", "role": "user", "content": "hi"}},
        {
            "timestamp": at,
            "type": "response_item",
            "payload": {"type": "message", "role": "assistant", "content": [part]},
        },
    ]
    files = [*claude, codex]
    return ["".join(json.dumps(e) + "\n" for e in entries) for entries in files] + [json.dumps({"messages": log})]


@given(flag=reasoning_names, value=st.sampled_from([True, 1, "true"]))
def test_a_text_part_flagged_as_thought_stays_private(flag: str, value: Any) -> None:
    """``{"type": "text", "text": ..., "thought": true}`` is reasoning (R2): read as prose or a
    tool's text output, its flag was lost and the thought shown."""
    assume(names_reasoning(flag))
    for data in _flagged_sources({"type": "text", "text": THOUGHT, flag: value}):
        (result,) = read_bytes(data.encode(), "f.json", "f")
        assert result.session is not None, result.problems
        for render in (to_text, to_markdown, to_html, to_json):
            assert THOUGHT not in render(result.session)
        assert THOUGHT not in session_lines(result.session, ExportOptions())


@pytest.mark.parametrize("flavour", ["openai", "anthropic"])
def test_an_orphaned_result_reaches_the_provider(flavour: str, tmp_path: Path) -> None:
    """A Claude Code tool result whose call is not in the file is replayed as user text naming
    it, its output kept; the request still keeps the API's rules."""
    (session,) = sessions_read(write_lines(tmp_path / "s.jsonl", claude_session()))
    written = session_lines(session, ExportOptions(provider_format=flavour))
    messages = json.loads(written)["messages"]
    (orphan,) = [m for m in messages if "orphan output" in json.dumps(m)]
    assert orphan["role"] == "user"
    text = orphan["content"] if flavour == "openai" else "\n".join(p.get("text", "") for p in orphan["content"])
    assert "[Tool result from unknown; its call is not in this conversation]\norphan output" in text
    check(json.loads(written), flavour)


_FOREIGN_KEYS = st.one_of(
    st.sampled_from(["type", "kind", "Type", "data", "signature", "encrypted_content", "thinking", "Thinking", "a_b"]),
    st.sampled_from(["aB", "a_b_2", "command", "file_path", "oldString", "2fa", "", "ｔｈｉｎｋｉｎｇ"]),
    st.text(max_size=6),
)
_FOREIGN_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.sampled_from(["thinking", "text"])),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_FOREIGN_KEYS, inner, max_size=5)),
    max_leaves=16,
)


@given(st.lists(_FOREIGN_VALUES, min_size=1, max_size=4))
def test_a_foreign_map_of_plain_keys_copied_as_it_is_is_what_renaming_each_key_gives(values: list[Any]) -> None:
    """A map whose keys are all known to stay as they are is copied without judging
    each key: the same value and spellings as the key-by-key path, secrets and maps
    typed as reasoning included, whatever keys earlier maps made known."""
    from unittest import mock

    from vis_export.sources import foreign

    for value in values:
        fast: foreign.Spellings = []
        got = foreign.foreign_value(value, fast)
        slow: foreign.Spellings = []
        with mock.patch.object(foreign, "_PLAIN_KEYS", set()), mock.patch.object(foreign, "_PLAIN_KEYS_LIMIT", 0):
            expected = foreign.foreign_value(value, slow)
        assert json.dumps(got) == json.dumps(expected) and fast == slow


def test_a_tool_input_of_plain_keys_is_copied_without_judging_its_keys() -> None:
    from unittest import mock

    from corpus import claude_code_bytes
    from vis_export.sources import foreign

    data = claude_code_bytes(50_000)
    read_bytes(data, "f.jsonl", "f")  # the keys made known
    with mock.patch.object(foreign, "foreign_key", wraps=foreign.foreign_key) as judged:
        (result,) = read_bytes(data, "f.jsonl", "f")
    assert result.session is not None and judged.call_count == 0


def test_codex_arguments_are_read_by_the_compiled_parser_when_certain() -> None:
    """A call's ``arguments`` (JSON text in a string) are read as every line is: by the
    compiled parser when it certainly gives ``parse``'s value, else by ``parse``, whose
    duplicate keys and refusals (kept as the text) stay as they were."""
    from unittest import mock

    from corpus import codex_bytes
    from vis_export.sources import jsontext

    data = codex_bytes(50_000)
    with mock.patch.object(jsontext, "parse", wraps=jsontext.parse) as exact:
        (quick,) = read_bytes(data, "f.jsonl", "f")
    assert exact.call_count == 0
    with mock.patch.object(jsontext, "_quick", return_value=jsontext.UNSURE):
        (slow,) = read_bytes(data, "f.jsonl", "f")
    assert quick == slow
    texts = ['{"a": 1, "a": 2}', '{"a": NaN}', '{"a": 1e400}', '"\\ud800"', "[" * 900 + "]" * 900, "{", " 1 "]
    for arguments in [*texts, '{"a\\u003a": [1, {"b": "c:d"}]}', '{"a": "\\u00e9"}', "[1.5, -0, 1e5]"]:
        outcomes = []
        for reader in (jsontext.parse_quickly, jsontext.parse):
            try:
                outcomes.append(json.dumps(reader(arguments)))
            except ValueError as error:
                outcomes.append(type(error).__name__)
        assert outcomes[0] == outcomes[1], arguments


def test_a_transcripts_messages_are_built_in_one_call() -> None:
    """All of a transcript's messages go through the one-pass building together, not a call each."""
    from unittest import mock

    from corpus import claude_code_bytes
    from vis_export.sources import foreign
    from vis_export.sources.trusted import trusted_messages

    with mock.patch.object(foreign, "trusted_messages", wraps=trusted_messages) as built:
        (result,) = read_bytes(claude_code_bytes(50_000), "f.jsonl", "f")
    assert result.session is not None and len(result.session.messages) > 10 and built.call_count == 1


# What JSON can spell but the reading refuses, so the text stays as it was written.
_REFUSED = ["NaN", "1e400", '"\\ud800"', "-Infinity", "[" * 3000 + "]" * 3000]


@settings(max_examples=examples(60), deadline=None)
@given(name=reasoning_names, refused=st.sampled_from(_REFUSED), before=st.booleans(), as_type=st.booleans())
def test_codex_arguments_the_reading_refuses_show_no_reasoning_they_name(
    name: str, refused: str, before: bool, as_type: bool
) -> None:
    """A call's arguments (Codex, OpenAI logs) that are not JSON are kept as their text; one that
    JSON would read but the reading refuses (NaN, a number too large, a lone
    surrogate, nesting too deep) showed a reasoning key's value as text."""
    hidden = json.dumps({"type": name, "text": THOUGHT} if as_type else {name: THOUGHT})[1:-1]
    arguments = "{" + (f'{hidden}, "x": {refused}' if before else f'"x": {refused}, {hidden}') + "}"
    call = {"type": "function_call", "name": "shell", "arguments": arguments, "call_id": "k1"}
    rollout = [
        e if e["payload"].get("call_id") != "k1" or "name" not in e["payload"] else {**e, "payload": call}
        for e in codex_rollout()
    ]
    data = "\n".join(json.dumps(e) for e in rollout).encode() + b"\n"
    function = {"name": "calc", "arguments": arguments}
    calls = [{"id": "c1", "type": "function", "function": function}]
    log = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "content": "4"},
    ]
    logged = "\n".join(json.dumps(e) for e in log).encode() + b"\n"
    with cpu_limit(20):
        for read in (data, logged):  # a Codex rollout, an OpenAI chat log
            (result,) = read_bytes(read, "r.jsonl", "r")
            assert result.session is not None
            for out in _outputs(result.session):
                assert THOUGHT not in out
            assert THOUGHT in to_text(result.session, reasoning="all")


@settings(max_examples=examples(200))
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["cwd", "version", "gitBranch", "type"]),
            st.one_of(st.none(), st.integers(), st.sampled_from(["", "a", "b", "/work"])),
        ),
        max_size=8,
    )
)
def test_a_sessions_facts_found_in_one_pass_are_each_keys_first_string(found: list[dict[str, Any]]) -> None:
    """The one pass that finds a Claude Code session's facts gives, for each key, the first
    entry's value that is a non-empty string, as looking for each key on its own does."""
    from vis_export.sources.claude_code import _first

    keys = ("cwd", "version", "gitBranch")
    entries = list(enumerate(found, 1))
    alone = {key: next((e[key] for e in found if isinstance(e.get(key), str) and e[key]), None) for key in keys}
    assert _first(entries, keys) == alone


@pytest.mark.parametrize(("odd", "said"), [(1, "1 entry"), (4, "4 entries")])
def test_skipped_entries_are_counted_in_the_plural(odd: int, said: str) -> None:
    """The importer's own noun for a skipped entry agrees with its count ("1 entry",
    "4 entries", Codex's "item <type>"); a file's own name for its entries is a name,
    written as it is (``1 file-history-snapshot`` elsewhere). An item whose type names
    reasoning is not skipped: it is private reasoning."""
    at = "2025-01-01T00:00:00Z"
    records = [
        {"timestamp": at, "type": "response_item", "payload": {"type": "message", "role": "user", "content": "hi"}}
    ]
    records += [{"timestamp": at, "type": "response_item", "payload": {"type": "\x00odd"}}] * odd
    records += [{"timestamp": at, "type": "response_item", "payload": {"type": "reasoning_trace"}}]
    records += [{"timestamp": at, "type": "response_item", "payload": {"type": "ghost"}}] * 2
    (result,) = read_bytes("".join(json.dumps(r) + "\n" for r in records).encode(), "f.jsonl", "f")
    assert [problem.message for problem in result.problems] == [
        f"skipped entries this version does not show: {said} of an unreadable type, 2 items ghost"
    ]


def test_tool_calls_sharing_an_id_are_all_shown_and_counted() -> None:
    """A second call with the id of the first is shown, pending (a result pairs with the
    first): the file's one warning line says so, beside what was skipped."""
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    entries = [
        _entry("user", "u1", "List the files"),
        _entry("assistant", "a1", [call]),
        _entry("assistant", "a2", [{**call, "input": {"command": "ls -a"}}]),
        _entry("user", "r1", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}]),
        {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}},
    ]
    (result,) = read_bytes("".join(json.dumps(e) + "\n" for e in entries).encode(), "sess-1.jsonl", "sess-1")
    assert result.session is not None
    tools = [b for _, b in result.session.blocks() if isinstance(b, ToolBlock)]
    assert [(b.status, b.input) for b in tools] == [("completed", {"command": "ls"}), ("pending", {"command": "ls -a"})]
    assert [problem.message for problem in result.problems] == [
        "skipped entries this version does not show: 1 file-history-snapshot; "
        "2 tool calls sharing an id (their results pair with the first)"
    ]
