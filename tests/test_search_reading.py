"""Search as a new user meets it: what is found (tool calls, attachments), what
a hit shows (the session's title, prose as a reader sees it, code in its lines,
matches highlighted on a real terminal), and the command's answers to a bad
type, a long query, a query that starts with -, and an index built earlier."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import INPUT
from onterminal import on_terminal
from sessions import message_of, session_of
from strategies import PRIVATE_CANARY

from vis_export.jobs.indexing import index
from vis_export.searchindex import search
from vis_export.searchindex.directory import MANIFEST
from vis_export.searchindex.documents import INDEXED_TYPES
from vis_export.searchindex.hit_text import MATCH_END, MATCH_START

ENGINES = ["tantivy", "whoosh"]
CODE = "def load(path):\n    cfg = read_cfg(path)\n    return cfg\n"
SESSION = {
    "id": "s1",
    "title": "Fix the config loader",
    "messages": [
        {
            "id": "m1",
            "role": "user",
            "status": "completed",
            "created_at": 1740000000000,
            "content": [
                {
                    "id": "p1",
                    "type": "prose",
                    "markdown": "Why does `read_cfg` fail? "
                    "See [the docs](https://example.com/read-cfg-manual) and _read_cfg_.",
                },
                {
                    "id": "a1",
                    "type": "attachment",
                    "attachment_id": "att1",
                    "name": "loader-trace.txt",
                    "media_type": "text/plain",
                },
            ],
        },
        {
            "id": "m2",
            "role": "assistant",
            "status": "completed",
            "created_at": 1740000001000,
            "content": [
                {"id": "c1", "type": "code", "language": "python", "text": CODE},
                {
                    "id": "t1",
                    "type": "tool",
                    "tool": "bash",
                    "status": "completed",
                    "input": {"command": "pytest -q tests/test_loader.py", "env": {"ci_mode": True}},
                    "output": {"stdout": "F.\nFAILED test_loader.py::test_missing - KeyError\n", "exit_code": 1},
                    "error": "exit status 1",
                },
                {"id": "r1", "type": "reasoning", "text": f"{PRIVATE_CANARY} pytest plans"},
            ],
        },
    ],
}


def _session() -> Any:
    return session_of(SESSION, "")


@pytest.fixture(params=ENGINES)
def built(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    directory = tmp_path / "index"
    index([_session()], directory, engine=request.param)
    return directory


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vis_export", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def blocks(query: str, directory: Path, **filters: Any) -> set[str]:
    return {hit.block_id for hit in search(query, directory, limit=100, **filters)}


# --- what is found -------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("pytest", {"t1"}),
        ('"pytest -q tests/test_loader.py"', {"t1"}),
        ("bash", {"t1"}),
        ("ci_mode", {"t1"}),
        ('"FAILED test_loader.py::test_missing"', {"t1"}),
        ('"exit status 1"', {"t1"}),
        ("KeyError", {"t1"}),
        ("loader-trace.txt", {"a1"}),
        ('"text/plain"', {"a1"}),
        ("trace", {"a1"}),
    ],
)
def test_tool_calls_and_attachments_are_found(built: Path, query: str, expected: set[str]) -> None:
    assert blocks(query, built) == expected


def test_a_tool_hit_reads_as_its_call(built: Path) -> None:
    (hit,) = search("pytest", built, type="tool")
    assert hit.snippet.split("\n")[:3] == ["bash", "command: **pytest** -q tests/test_loader.py", "env:"]
    (hit,) = search("loader-trace", built, type="attachment")
    assert hit.snippet == "**loader**-**trace**.txt\ntext/plain"


def test_private_reasoning_stays_out_of_tool_searches(built: Path) -> None:
    assert blocks("plans", built) == set()
    assert PRIVATE_CANARY not in json.dumps([h.to_json() for h in search("", built, limit=100)])


# --- what a hit shows ------------------------------------------------------------


def test_prose_snippets_show_what_a_reader_sees(built: Path) -> None:
    (hit,) = search("read_cfg", built, type="prose")
    assert hit.snippet == "Why does **read_cfg** fail? See the docs and **read_cfg**."
    assert "example.com" not in hit.snippet and "<mark>read_cfg</mark>" in hit.snippet_html


def test_a_phrase_found_only_in_the_markdown_shows_the_markdown(built: Path) -> None:
    (hit,) = search('"_read_cfg_"', built)
    assert "**_read_cfg_**" in hit.snippet


def test_code_snippets_keep_their_lines(built: Path) -> None:
    (hit,) = search("read_cfg", built, type="code")
    assert hit.snippet == CODE.replace("read_cfg", "**read_cfg**").rstrip("\n")
    assert hit.snippet_html == CODE.replace("read_cfg", "<mark>read_cfg</mark>").rstrip("\n")


def test_the_command_shows_the_title_and_indents_each_line(built: Path) -> None:
    result = cli("search", "read_cfg", "--index", str(built), "--type", "code")
    assert result.returncode == 0, result.stderr
    heading, *lines = result.stdout.splitlines()
    assert heading.startswith("s1 m2 c1  assistant code (python)  ") and heading.endswith("  Fix the config loader")
    assert lines == ["    def load(path):", "        cfg = **read_cfg**(path)", "        return cfg"]
    listed = json.loads(cli("search", "read_cfg", "--index", str(built), "--json").stdout)
    assert {hit["session_title"] for hit in listed} == {"Fix the config loader"}


def _on_terminal(*args: str) -> str:
    """What ``vis-export ARGS`` writes to a real terminal (a pty), as text."""
    return on_terminal(*args).decode("utf-8").replace("\r\n", "\n")


def test_a_terminal_shows_matches_in_colour_and_data_stays_escaped(tmp_path: Path) -> None:
    hostile = {
        "id": "h",
        "title": "evil \x1b[2J title",
        "messages": [
            message_of(
                {"id": "c", "type": "code", "text": "x = a ** b  # findme \x1b]52;c;eA==\x07\nfindme(**kwargs)\n"},
                created_at=1,
            )
        ],
    }
    directory = tmp_path / "index"
    index([session_of(hostile, "")], directory)
    shown = _on_terminal("search", "findme", "--index", str(directory))
    mark = f"{MATCH_START}findme{MATCH_END}"
    assert shown.count(mark) == 2 and "**findme**" not in shown
    assert "x = a ** b  # " in shown and "(**kwargs)" in shown  # code's own ** is just code
    assert "\\u001b]52;c;eA==\\u0007" in shown and "evil \\u001b[2J title" in shown
    assert "\x1b" not in shown.replace(MATCH_START, "").replace(MATCH_END, "")  # the only escapes are ours
    piped = cli("search", "findme", "--index", str(directory)).stdout
    assert "**findme**" in piped and MATCH_START not in piped


# --- the command's answers ---------------------------------------------------------


def test_an_unknown_type_is_a_usage_error_that_lists_the_types(built: Path) -> None:
    result = cli("search", "pytest", "--index", str(built), "--type", "bogus")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert all(name in result.stderr for name in INDEXED_TYPES)
    assert cli("search", "pytest", "--index", str(built), "--type", "tool").returncode == 0


def test_a_query_too_long_fails_in_one_clean_line(built: Path) -> None:
    result = cli("search", " ".join(f"w{n}" for n in range(65)), "--index", str(built))
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == "vis-export: the query holds 65 words and phrases; at most 64 are searched\n"


def test_a_query_that_starts_with_a_dash_goes_after_double_dash(built: Path) -> None:
    assert " -- '" in cli("search", "--help").stdout.split("Examples:")[1]
    result = cli("search", "--index", str(built), "--json", "--", "-q tests/")
    assert result.returncode == 0, result.stderr
    assert [hit["block_id"] for hit in json.loads(result.stdout)] == ["t1"]


# --- an index built earlier ----------------------------------------------------------


def test_an_existing_index_keeps_its_engine_without_being_told(tmp_path: Path) -> None:
    (tmp_path / "chat.json").write_text((INPUT / "session.json").read_text())
    first = cli("index", "chat.json", "--index", "idx", "--engine", "whoosh", cwd=tmp_path)
    assert (first.returncode, first.stderr) == (0, "1 added, 0 updated, 0 unchanged\n")
    again = cli("index", "chat.json", "--index", "idx", cwd=tmp_path)
    assert (again.returncode, again.stderr) == (0, "0 added, 0 updated, 1 unchanged\n")
    assert json.loads((tmp_path / "idx" / MANIFEST).read_text())["engine"] == "whoosh"
    other = cli("index", "chat.json", "--index", "idx", "--engine", "tantivy", cwd=tmp_path)
    assert other.returncode == 1 and "built with whoosh, not tantivy" in other.stderr
    fresh = cli("index", "chat.json", "--index", "new", cwd=tmp_path)
    assert fresh.returncode == 0 and json.loads((tmp_path / "new" / MANIFEST).read_text())["engine"] == "tantivy"
