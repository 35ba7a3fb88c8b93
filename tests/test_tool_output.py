"""Tool output that is terminal text reads as its lines in every format, not as
one JSON-escaped string; structures stay JSON."""

from __future__ import annotations

import json

from htmldom import elements, parse, text_content
from markdown_it import MarkdownIt
from sessions import message_of, session_of

from vis_export.formats.html import to_html
from vis_export.formats.markdown import to_markdown
from vis_export.formats.text import to_text

PYTEST = "F.\n=== FAILURES ===\n___ test_parse ___\n    assert parse('x') == 1\nE   KeyError: 'x'\n"
SESSION = session_of(
    {
        "id": "s",
        "messages": [
            message_of(
                {
                    "id": "t1",
                    "type": "tool",
                    "tool": "shell",
                    "status": "completed",
                    "input": {"command": "pytest -x"},
                    "output": PYTEST,
                },
                {
                    "id": "t2",
                    "type": "tool",
                    "tool": "shell",
                    "status": "failed",
                    "input": {"command": "make"},
                    "output": {"exit_code": 2, "stdout": "cc -c a.c\ncc -o a a.o\n", "stderr": "a.c:1: error\n"},
                },
                {
                    "id": "t3",
                    "type": "tool",
                    "tool": "read",
                    "status": "completed",
                    "output": {"lines": 3, "meta": {"path": "a\nb"}},
                },
                created_at=1,
            )
        ],
    }
)


def test_text_shows_output_lines() -> None:
    text = to_text(SESSION)
    assert f"Output:\n{PYTEST}" in text
    assert "Output · stdout:\ncc -c a.c\ncc -o a a.o\n" in text and "Output · stderr:\na.c:1: error\n" in text
    assert json.dumps({"exit_code": 2}, indent=2)[:-2] in text  # the rest of the map stays JSON
    assert "\\n" not in text.replace('"a\\nb"', "")  # no escaped newlines but inside JSON strings of a structure


def test_markdown_fences_terminal_text_without_json() -> None:
    tokens = [t for t in MarkdownIt("commonmark").parse(to_markdown(SESSION)) if t.type == "fence"]
    by_content = {t.content: t.info for t in tokens}
    assert by_content[PYTEST] == "" and by_content["a.c:1: error\n"] == ""
    assert by_content[json.dumps({"lines": 3, "meta": {"path": "a\nb"}}, indent=2) + "\n"] == "json"
    assert by_content["pytest -x\n"] == "bash"  # a shell call's input reads as its command line


def test_html_pre_holds_the_lines() -> None:
    dom = parse(to_html(SESSION))
    texts = {text_content(code): code.get("class") for code in elements(dom, "code")}
    assert texts[PYTEST] == "language-text" and texts["cc -c a.c\ncc -o a a.o\n"] == "language-text"
    assert texts[json.dumps({"lines": 3, "meta": {"path": "a\nb"}}, indent=2)] == "language-json"
