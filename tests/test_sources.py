"""Canonical JSON, JSON Lines, directories and stdin: what is read, and how bad
input is reported (one problem per line, with its place)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vis_export.problems import InvalidInput
from vis_export.sources import load, read

MESSAGE = {"id": "m1", "role": "user", "status": "completed", "content": [
    {"id": "b1", "type": "prose", "markdown": "hi"}], "created_at": 1740000000000}
REPLY = {"id": "m2", "role": "assistant", "status": "completed", "content": [
    {"id": "b2", "type": "code", "text": "x\r\n\ty", "language": "python"}], "created_at": 1740000000100}


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def problems_of(path: Path | str) -> list[str]:
    return [p.line(r.source) for r in read(path) for p in r.problems]


@pytest.mark.parametrize(("name", "content", "session_id"), [
    ("one.json", json.dumps(MESSAGE), "one"),
    ("array.json", json.dumps([MESSAGE, REPLY]), "array"),
    ("object.json", json.dumps({"id": "sess_1", "title": "T", "messages": [MESSAGE, REPLY]}), "sess_1"),
    ("lines.jsonl", json.dumps(MESSAGE) + "\n\n" + json.dumps(REPLY) + "\n", "lines"),
    ("lines.ndjson", json.dumps(MESSAGE) + "\r\n" + json.dumps(REPLY), "lines"),
    # Detection by content, not by extension:
    ("lines.json", json.dumps(MESSAGE) + "\n" + json.dumps(REPLY) + "\n", "lines"),
    ("pretty.jsonl", json.dumps({"messages": [MESSAGE]}, indent=2), "pretty"),
    ("noext", json.dumps([MESSAGE]), "noext"),
    ("bom.json", "\ufeff" + json.dumps([MESSAGE]), "bom"),
])
def test_each_json_shape_loads(tmp_path: Path, name: str, content: str, session_id: str) -> None:
    (session,) = load(write(tmp_path, name, content))
    assert session.id == session_id
    assert session.messages[0].id == "m1"
    assert session.messages[0].to_json() == MESSAGE


def test_array_of_session_objects_as_written_by_convert(tmp_path: Path) -> None:
    path = write(tmp_path, "many.json", json.dumps([{"id": "a", "messages": [MESSAGE]}, {"id": "b", "messages": [REPLY]}]))
    assert [s.id for s in load(path)] == ["a", "b"]


def test_session_metadata_is_kept_in_order(tmp_path: Path) -> None:
    document = {"id": "s", "title": None, "workspace": "w", "created_at": 5, "tags": ["a"], "messages": [MESSAGE]}
    (session,) = load(write(tmp_path, "s.json", json.dumps(document)))
    assert list(session.metadata) == ["workspace", "tags"] and session.title is None
    assert session.to_json()["tags"] == ["a"]


@pytest.mark.parametrize(("content", "expected"), [
    ("", "empty file"),
    ("  \n\t\n", "empty file"),
    ("not json at all", "line 1 column 1: not JSON"),
    ('{"id": "m1", "role": "user", "status"', "line 1 column 38: not JSON"),
    (json.dumps(MESSAGE) + "\n{broken\n" + json.dumps(REPLY), "line 2: not JSON"),
    ("42", "expected a message, an array of messages or a session object"),
    (json.dumps({k: v for k, v in MESSAGE.items() if k != "created_at"}), 'missing required field "created_at"'),
    (json.dumps({**MESSAGE, "role": "robot"}), 'role: "robot" is not one of'),
    (json.dumps({**MESSAGE, "status": "Completed"}), "must be lowercase"),
    (json.dumps({**MESSAGE, "status": ":completed"}), "keyword-looking"),
    (json.dumps({**MESSAGE, "created_at": "yesterday"}), "created_at: must be an integer"),
    (json.dumps({**MESSAGE, "completed_at": 1}), "completed_at: is before created_at"),
    (json.dumps({**MESSAGE, "llmActual": {"provider": "x"}}), "llmActual: key is not snake_case"),
    (json.dumps({**MESSAGE, "content": [{"type": "prose", "markdown": ""}]}), 'content[0]: missing required field "id"'),
    (json.dumps({**MESSAGE, "content": [{"id": " ", "type": "prose", "markdown": ""}]}), "content[0].id: must not be blank"),
    (json.dumps({"messages": [MESSAGE, {**REPLY, "content": [{"id": "t", "type": "tool", "tool": "x",
                                                            "status": "completed", "input": {"a": [{"bB": 1}]}}]}]}),
     "messages[1].content[0].input.a[0].bB: key is not snake_case"),
    (json.dumps(MESSAGE) + "\n" + json.dumps({**REPLY, "role": "Robot"}), "line 2, role:"),
    (b"\xff\xfe{}", "not UTF-8 text"),
])
def test_bad_input_is_one_clear_line(tmp_path: Path, content: str | bytes, expected: str) -> None:
    path = write(tmp_path, "bad.json", content)
    lines = problems_of(path)
    assert lines, "bad input was accepted"
    assert all(line.startswith(f"{path}: ") and "\n" not in line for line in lines)
    assert any(expected in line for line in lines), lines
    with pytest.raises(InvalidInput):
        list(load(path))


def test_directory_is_walked_recursively_in_order(tmp_path: Path) -> None:
    write(tmp_path, "b.json", json.dumps([MESSAGE]))
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    write(tmp_path / "sub" / "deeper", "a.jsonl", json.dumps(MESSAGE))
    write(tmp_path, "notes.txt", "not a session")
    (tmp_path / ".hidden").mkdir()
    write(tmp_path / ".hidden", "x.json", "broken")
    assert [s.id for s in load(tmp_path)] == ["b", "a"]


def test_directory_batch_keeps_going_after_a_bad_file(tmp_path: Path) -> None:
    write(tmp_path, "a.json", "{truncated")
    write(tmp_path, "b.json", json.dumps([MESSAGE]))
    results = list(read(tmp_path))
    assert [r.ok for r in results] == [False, True]


def test_directory_with_no_sessions(tmp_path: Path) -> None:
    write(tmp_path, "readme.txt", "nothing here")
    assert problems_of(tmp_path) == [f"{tmp_path}: no sessions found (looked for .json, .jsonl, .ndjson and SQLite files)"]


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    assert problems_of(tmp_path / "nope.json") == [f"{tmp_path / 'nope.json'}: no such file or directory"]
    directory_named_like_file = tmp_path / "d.json"
    directory_named_like_file.mkdir()
    assert "no sessions found" in problems_of(directory_named_like_file)[0]


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    data = (json.dumps(MESSAGE) + "\n" + json.dumps(REPLY) + "\n").encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    (session,) = load("-")
    assert session.id == "stdin" and len(session.messages) == 2
