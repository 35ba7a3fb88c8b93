"""Canonical JSON, JSON Lines, directories and stdin: what is read, and how bad
input is reported (one problem per line, with its place)."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import INPUT
from hypothesis import given, settings, strategies as st
from timelimit import cpu_limit, time_limit

from vis_export import to_html, to_json, to_markdown, to_text
from vis_export.contract import MAX_TIME
from vis_export.problems import InvalidInput
from vis_export.sources import load, read

MESSAGE = {
    "id": "m1",
    "role": "user",
    "status": "completed",
    "content": [{"id": "b1", "type": "prose", "markdown": "hi"}],
    "created_at": 1740000000000,
}
REPLY = {
    "id": "m2",
    "role": "assistant",
    "status": "completed",
    "content": [{"id": "b2", "type": "code", "text": "x\r\n\ty", "language": "python"}],
    "created_at": 1740000000100,
}


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def problems_of(path: Path | str) -> list[str]:
    return [p.line(r.source) for r in read(path) for p in r.problems]


@pytest.mark.parametrize(
    ("name", "content", "session_id"),
    [
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
    ],
)
def test_each_json_shape_loads(tmp_path: Path, name: str, content: str, session_id: str) -> None:
    (session,) = load(write(tmp_path, name, content))
    assert session.id == session_id
    assert session.messages[0].id == "m1"
    assert session.messages[0].to_json() == MESSAGE


def test_array_of_session_objects_as_written_by_convert(tmp_path: Path) -> None:
    path = write(
        tmp_path, "many.json", json.dumps([{"id": "a", "messages": [MESSAGE]}, {"id": "b", "messages": [REPLY]}])
    )
    assert [s.id for s in load(path)] == ["a", "b"]


def test_session_metadata_is_kept_in_order(tmp_path: Path) -> None:
    document = {"id": "s", "title": None, "workspace": "w", "created_at": 5, "tags": ["a"], "messages": [MESSAGE]}
    (session,) = load(write(tmp_path, "s.json", json.dumps(document)))
    assert list(session.metadata) == ["workspace", "tags"] and session.title is None
    assert session.to_json()["tags"] == ["a"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
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
        (
            json.dumps({**MESSAGE, "content": [{"type": "prose", "markdown": ""}]}),
            'content[0]: missing required field "id"',
        ),
        (
            json.dumps({**MESSAGE, "content": [{"id": " ", "type": "prose", "markdown": ""}]}),
            "content[0].id: must not be blank",
        ),
        (
            json.dumps(
                {
                    "messages": [
                        MESSAGE,
                        {
                            **REPLY,
                            "content": [
                                {
                                    "id": "t",
                                    "type": "tool",
                                    "tool": "x",
                                    "status": "completed",
                                    "input": {"a": [{"bB": 1}]},
                                }
                            ],
                        },
                    ]
                }
            ),
            "messages[1].content[0].input.a[0].bB: key is not snake_case",
        ),
        (json.dumps(MESSAGE) + "\n" + json.dumps({**REPLY, "role": "Robot"}), "line 2, role:"),
        (b"\xff\xfe{}", "not UTF-8 text"),
    ],
)
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
    assert problems_of(tmp_path) == [
        f"{tmp_path}: no sessions found (looked for .json, .jsonl, .ndjson and SQLite files)"
    ]


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


# --- values Python's json takes but no output can carry -----------------------------------

HOSTILE = [
    ("NaN", "NaN is not a JSON number"),
    ("Infinity", "Infinity is not a JSON number"),
    ("-Infinity", "-Infinity is not a JSON number"),
    ("1e400", "1e400 is too large for a number"),
    ("-1E999", "-1E999 is too large for a number"),
    ("1" * 5000, "a number of more than 4300 digits"),
    ('"\\ud800"', "lone surrogate \\ud800 is not Unicode text"),
    ('"ok \\\\ud800 \\udfff"', "lone surrogate \\udfff is not Unicode text"),
    ("[" * 3000 + "]" * 3000, "nested deeper than 100 levels"),
]
TOOL = '{"id": "t", "type": "tool", "tool": "x", "status": "completed", "input": %s}'
MESSAGE_WITH = '{"id": "m1", "role": "user", "status": "completed", "created_at": 0, "content": [' + TOOL + "]}"
LONIS_WITH = (
    '{"schema_version": "lonis.block/v1", "attribution": {"identity": "lonis:test:golden", '
    '"provenance": {"when": "2026-08-10T00:00:00Z", "producer": "lonis:test:golden"}}, "payload": '
    '{"kind": "action", "data": {"verb": "invoke", "target": "lonis:builtin:echo", "parameters": '
    '{"input": %s}, "status": "pending"}}}'
)
# Each reader's document with the hostile value in it, and the start of the located problem.
READERS = {
    "message.json": (MESSAGE_WITH, "line 1 column "),
    "array.json": ("[" + json.dumps(MESSAGE) + ",\n" + MESSAGE_WITH + "]", "line 2 column "),
    "session.json": ('{"messages": [\n' + MESSAGE_WITH + "]}", "line 2 column "),
    "lines.jsonl": (json.dumps(MESSAGE) + "\n" + MESSAGE_WITH, "line 2: "),
    "events.jsonl": ('{"type": "content.block.started", "turn_id": "t", "seq": 1, "block": ' + TOOL + "}", "line 1"),
    "lonis.json": (LONIS_WITH, "line 1 column "),
    "lonis.jsonl": (LONIS_WITH.replace("%s", "{}") + "\n" + LONIS_WITH, "line 2: "),
}


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize(("value", "expected"), HOSTILE)
def test_values_json_cannot_carry_are_refused_where_they_are(
    tmp_path: Path, reader: str, value: str, expected: str
) -> None:
    template, location = READERS[reader]
    path = write(tmp_path, reader, template.replace("%s", value))
    for lenient in (False, True):
        results = list(read(path, lenient=lenient))
        lines = [p.line(r.source) for r in results for p in r.problems]
        assert any(line.startswith(f"{path}: {location}") and expected in line for line in lines), lines
        assert all(r.session is None or expected not in str(r.session.to_json()) for r in results)


def test_the_column_of_a_refused_value(tmp_path: Path) -> None:
    path = write(tmp_path, "m.json", '{"id": "m1",\n  "x": [1, 2.5, -Infinity]}')
    assert problems_of(path) == [f"{path}: line 2 column 17: not JSON: -Infinity is not a JSON number"]


def test_a_refused_number_is_named_by_its_start_not_written_whole(tmp_path: Path) -> None:
    """A problem is a line to read: a number of a million digits too large for a float was written whole (1 MB)."""
    path = write(tmp_path, "m.json", MESSAGE_WITH % ("1" + "0" * 1_000_000 + ".5"))
    (line,) = problems_of(path)
    assert line.endswith(": not JSON: 1000000000000000… (1,000,003 characters) is too large for a number"), line[:200]


def test_deep_input_is_a_problem_not_a_recursion_error(tmp_path: Path) -> None:
    for levels in (150, 990, 5000, 200_000):
        path = write(tmp_path, f"deep{levels}.json", MESSAGE_WITH % ("[" * levels + "]" * levels))
        (line,) = problems_of(path)
        assert line.endswith("nested deeper than 100 levels"), line


# --- only regular files, of a bounded size ----------------------------------------------------


def test_a_fifo_named_directly_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with time_limit(10):
        assert problems_of(fifo) == [f"{fifo}: not a regular file (a FIFO); only regular files are read"]


def test_a_link_to_a_device_is_refused_before_reading(tmp_path: Path) -> None:
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    with time_limit(10):
        assert problems_of(link) == [f"{link}: not a regular file (a character device); only regular files are read"]


def test_files_and_stdin_larger_than_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from vis_export.sources import files

    document = json.dumps([MESSAGE, REPLY])
    monkeypatch.setattr(files, "MAX_FILE_BYTES", len(document))
    assert [s.id for s in load(write(tmp_path, "fits.json", document))] == ["fits"]
    big = write(tmp_path, "big.json", document + " ")
    limit = f"larger than the {len(document)} byte limit of a file read whole (it keeps memory under 1 GB)"
    assert problems_of(big) == [f"{big}: {limit}"]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(document.encode() + b" ")))
    assert problems_of("-") == [f"<stdin>: {limit}"]


def test_a_store_may_be_larger_than_the_limit(golden_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite reads a store page by page; only files read whole are bounded."""
    from vis_export.sources import files

    monkeypatch.setattr(files, "MAX_FILE_BYTES", 1024)
    assert all(r.ok for r in read(golden_store))


def test_symlinked_subfolders_are_followed_once(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write(elsewhere, "kept.json", json.dumps([MESSAGE]))
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    write(root, "a.json", json.dumps([MESSAGE]))
    (root / "linked").symlink_to(elsewhere)
    (root / "sub" / "again").symlink_to(elsewhere)  # a second way to the same folder
    (root / "sub" / "loop").symlink_to(root)  # a loop back up the tree
    with time_limit(10):
        assert [s.id for s in load(root)] == ["a", "kept"]


def test_a_broken_link_is_the_same_line_found_in_a_folder_or_named(tmp_path: Path) -> None:
    """A job on Dask reads each file by name: the line must not depend on how the file was reached."""
    write(tmp_path, "a.json", json.dumps([MESSAGE]))
    (tmp_path / "b.json").symlink_to(tmp_path / "gone.json")
    walked = [r.problems[0].line(r.source) for r in read(tmp_path) if r.problems]
    named = [r.problems[0].line(r.source) for r in read(tmp_path / "b.json")]
    assert walked == named == [f"{tmp_path / 'b.json'}: no such file or directory"]


def test_a_link_loop_is_the_same_line_found_in_a_folder_or_named(tmp_path: Path) -> None:
    """A loop of links leads to no file, as a broken link does (``Path.exists``
    says so for both): named, it was 'no such file or directory'; found by
    walking, 'cannot read: Too many levels of symbolic links'."""
    write(tmp_path, "a.json", json.dumps([MESSAGE]))
    (tmp_path / "b.json").symlink_to(tmp_path / "c.json")
    (tmp_path / "c.json").symlink_to(tmp_path / "b.json")
    walked = [r.problems[0].line(r.source) for r in read(tmp_path) if r.problems]
    named = [r.problems[0].line(r.source) for r in read([tmp_path / "b.json", tmp_path / "c.json"])]
    assert walked == named == [f"{tmp_path / name}: no such file or directory" for name in ("b.json", "c.json")]


@pytest.mark.skipif(os.geteuid() == 0, reason="root lists any folder")
def test_a_folder_that_cannot_be_listed_is_reported(tmp_path: Path) -> None:
    write(tmp_path, "a.json", json.dumps([MESSAGE]))
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        results = list(read(tmp_path))
    finally:
        locked.chmod(0o700)
    assert (
        results[0].ok and results[1].problems[0].line(results[1].source) == f"{locked}: cannot read: Permission denied"
    )


# --- Lonis: wrong shapes are located, times are clamped -------------------------------------

LONIS_BLOCKS = [json.loads(line) for line in (INPUT / "lonis.jsonl").read_text().splitlines()]


def list_paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, list):
        yield path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield from list_paths(item, (*path, key))


@pytest.mark.parametrize(("index", "path"), [(n, p) for n, block in enumerate(LONIS_BLOCKS) for p in list_paths(block)])
def test_a_lonis_number_where_a_list_belongs_is_located_or_rendered(
    tmp_path: Path, index: int, path: tuple[Any, ...]
) -> None:
    block = copy.deepcopy(LONIS_BLOCKS[index])
    parent = block
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = 5
    (result,) = read(write(tmp_path, "lonis.json", json.dumps(block)))
    if result.session is not None:  # where the schema takes any JSON (an extension's data, an overlay)
        to_text(result.session), to_markdown(result.session), to_html(result.session)
    else:
        assert any(p.location.startswith(path[0]) for p in result.problems), result.problems


def test_a_lonis_time_past_the_year_9999_in_utc_is_shown_as_the_last_one(tmp_path: Path) -> None:
    block = copy.deepcopy(LONIS_BLOCKS[0])
    block["attribution"]["provenance"]["when"] = "9999-12-31T23:59:59-14:00"
    (session,) = load(write(tmp_path, "late.json", json.dumps(block)))
    assert session.messages[0].created_at == MAX_TIME
    assert "9999-12-31" in to_markdown(session) and "9999-12-31" in to_html(session)


# --- lenient: what has a limit problem is left out, the rest exported -----------------------


def test_lenient_reading_leaves_out_what_no_format_could_show(tmp_path: Path) -> None:
    deep = json.loads("[" * 150 + "]" * 150)
    document = {
        "messages": [
            {**MESSAGE, "created_at": 10**30},
            {
                **REPLY,
                "content": [
                    {"id": "deep", "type": "tool", "tool": "x", "status": "completed", "input": deep},
                    *REPLY["content"],
                ],
            },
            {**REPLY, "id": "m3", "meta": deep},
        ]
    }
    (result,) = read(write(tmp_path, "s.json", json.dumps(document)), lenient=True)
    assert [p.location.split(".")[0] for p in result.problems] == ["messages[0]", "messages[1]", "messages[2]"]
    first, second = result.session.messages
    assert first.created_at == 0 and [b.id for b in second.blocks] == ["b2"]
    assert all("x\r\n\ty" in render(result.session) for render in (to_text, to_markdown))
    assert '"b2"' in to_json(result.session) and "m3" not in to_html(result.session)


def test_every_bad_line_of_json_lines_is_reported(tmp_path: Path) -> None:
    good = '{"id": "m%d", "role": "%s", "status": "completed", "created_at": 1, "content": []%s}'
    path = tmp_path / "chat.jsonl"
    path.write_text(
        "\n".join(
            [good % (1, "user", ""), "not json", good % (2, "User", ""), "{bad", good % (3, "user", ', "badKey": 1')]
        )
        + "\n"
    )
    (result,) = list(read(path))
    assert result.session is None
    assert [p.location.split(",")[0] for p in result.problems] == ["line 2", "line 3", "line 4", "line 5"]


# --- R6: one line for an odd file, however it is reached ----------------------------

ODD_FILES = ["session", "broken link", "link loop", "link into a gone folder", "not JSON", "path through a file"]


@settings(deadline=None)
@given(st.lists(st.sampled_from(ODD_FILES), min_size=1, max_size=6))
def test_r6_an_odd_file_is_one_clear_line_walked_named_or_read_as_a_part(kinds: list[str]) -> None:
    """R6: each odd file of a folder says what is wrong in one line that names
    it, the same line whether the folder is walked, the file is named, or a
    Dask worker reads it as a part of the job (``read_part``); the good
    sessions are all read."""
    from tempfile import TemporaryDirectory

    from vis_export.sources.parts import read_part, units

    with TemporaryDirectory() as folder, cpu_limit(20):
        root = Path(folder)
        (root / "plain").write_text("not a folder")
        for n, kind in enumerate(kinds):
            path = root / f"f{n}.json"
            if kind == "session":
                path.write_text(json.dumps([{**MESSAGE, "id": f"m{n}"}]))
            elif kind == "broken link":
                path.symlink_to(root / "gone.json")
            elif kind == "link loop":
                path.symlink_to(root / f"f{n}.json")
            elif kind == "link into a gone folder":
                path.symlink_to(root / "gone" / "x.json")
            elif kind == "not JSON":
                path.write_text('{"messages": [')
            else:
                path.symlink_to(root / "plain" / "x.json")

        def lines(results: list[Any]) -> list[str]:
            return [r.problems[0].line(r.source) for r in results if r.problems]

        walked = list(read(root))
        named = [r for n in range(len(kinds)) for r in read(root / f"f{n}.json")]
        plan = units([(str(p), p) for p in sorted(root.glob("f*.json"))], 2)
        parts = [r for unit in plan for part in unit for r in read_part(part)]
        assert lines(walked) == lines(named) == lines(parts)
        assert len(lines(walked)) == len(kinds) - kinds.count("session")
        assert all(line.count("\n") == 0 and f"{root}/f" in line for line in lines(walked))
        assert sum(1 for r in walked if r.session is not None) == kinds.count("session")


def test_a_loaded_session_goes_straight_to_the_collectors_oldest_generation() -> None:
    """The young generations' next collection does not walk it all (a sixth of
    load time); an application's frozen objects stay frozen."""
    import gc

    from corpus import session_bytes
    from vis_export.sources.files import read_bytes

    data = session_bytes(100_000)
    (result,) = read_bytes(data, "f.json", "f")
    assert any(found is result.session for found in gc.get_objects(generation=2))
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        read_bytes(data, "f.json", "f")
        assert gc.get_freeze_count() > frozen // 2  # (a few die meanwhile)
    finally:
        gc.unfreeze()
