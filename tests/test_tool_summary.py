"""A folded tool block's heading says what the call did (``tool_inputs.tool_summary``):
in HTML and Markdown, whose tool blocks are folded; from the view, redacted."""

from __future__ import annotations

import html
import re
from typing import Any

from htmldom import classes, elements, parse, text_content
from sessions import one_message

from vis_export.formats.html import to_html
from vis_export.formats.markdown import to_markdown
from vis_export.formats.pdf import PrintProjector
from vis_export.formats.text import to_text
from vis_export.model import ToolBlock

HOME = "/Users/alice/projects/vis-export"
SOURCE = "vis_export/formats/tool_inputs.py"
LONG = "cd " + HOME + " && .venv/bin/python -m pytest -n 0 tests/test_foreign.py -q -k 'tool and not slow' | tail -40"
CODEX_PATCH = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-a\n+++ b\n*** Add File: 新/b.py\n+x\n*** End Patch\n"
GIT_DIFF = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\t2026-01-01\n@@ -1 +1,2 @@\n-a\n+b\n+++ c\n"
TODOS = [{"content": "a", "status": "completed"}, {"content": "b", "status": "in_progress"}, {"content": "c"}]

# Each kind of call, and what its heading says of it (None: nothing, as before).
CALLS: list[tuple[str, Any, str | None]] = [
    ("Bash", {"command": "git status --short", "description": "Show changes"}, "git status --short"),
    ("Bash", {"command": "cat <<'EOF' > notes.txt\nline\nEOF"}, "cat <<'EOF' > notes.txt …"),
    ("Bash", {"command": LONG}, LONG[:119].rstrip() + "…"),
    ("exec_command", {"cmd": ["bash", "-lc", "rg -n 'x' src"]}, "rg -n 'x' src"),
    ("local_shell_call", {"action": {"command": ["ls", "-la", "a b"]}}, "ls -la 'a b'"),
    ("Edit", {"file_path": "src/日本語.py", "old_string": "a", "new_string": "b"}, "src/日本語.py"),
    ("Read", {"file_path": f"{HOME}/{SOURCE}"}, f"…/projects/vis-export/{SOURCE}"),  # the end names the file
    ("Write", {"file_path": "notes.md", "content": "x"}, "notes.md"),
    ("apply_patch", CODEX_PATCH, "src/a.py, 新/b.py"),
    ("apply_patch", {"patch": GIT_DIFF}, "a.py"),
    ("shell", {"command": ["apply_patch", CODEX_PATCH]}, "src/a.py, 新/b.py"),  # Codex's patch through its shell
    ("exec_command", {"cmd": f"apply_patch <<'EOF'\n{CODEX_PATCH}EOF"}, "src/a.py, 新/b.py"),
    ("shell", {"command": ["apply_patch", CODEX_PATCH.replace("src/a", "it's")]}, "it's.py, 新/b.py"),  # not quoted
    ("Grep", {"pattern": "def \\w+\\(", "path": "src"}, "def \\w+\\("),
    ("TodoWrite", {"todos": TODOS}, "3 items, 1 done"),
    ("update_plan", {"plan": [{"step": "a", "status": "completed"}]}, "1 item, 1 done"),
    (
        "WebFetch",
        {"url": "https://docs.python.org/3/library/difflib.html", "prompt": "how"},
        "https://docs.python.org/3/library/difflib.html",
    ),
    ("WebSearch", {"query": "unified diff format"}, "unified diff format"),
    ("Task", {"description": "x", "prompt": "y"}, None),
    ("Bash", {"command": "  \n "}, None),
]


def calls_session() -> Any:
    blocks = [{"type": "tool", "tool": tool, "status": "completed", "input": value} for tool, value, _ in CALLS]
    return one_message(*blocks)


def html_summaries(page: str) -> list[str | None]:
    """The one line each tool block's heading says beside its name (None: none)."""
    found: list[str | None] = []
    for details in elements(parse(page), "details"):
        if "tool" not in classes(details):
            continue
        (summary,) = elements(details, "summary")
        lines = [e for e in elements(summary) if "tool-summary" in classes(e)]
        assert len(lines) <= 1
        if lines:
            assert lines[0].tag.endswith("}bdi") and lines[0].get("title") == text_content(lines[0])
        found.append(text_content(lines[0]) if lines else None)
        assert text_content(summary).split()[-1] == "completed"  # the status stays in the heading
    return found


def test_a_folded_tool_blocks_heading_says_what_the_call_did() -> None:
    assert html_summaries(to_html(calls_session())) == [said for _, _, said in CALLS]


def test_markdown_headings_say_the_same_and_text_shows_the_call_open() -> None:
    session = calls_session()
    headings = re.findall(r"^<summary>Tool (.*)</summary>$", to_markdown(session), re.MULTILINE)
    expected = [
        f"<code>{html.escape(tool)}</code>" + (f" <code>{html.escape(said)}</code>" if said else "") + " · completed"
        for tool, _, said in CALLS
    ]
    assert headings == expected
    # Text and paper show every call open, its input right below its heading: the line would repeat it.
    assert re.findall(r"^Tool (.*)$", to_text(session), re.MULTILINE) == [f"{tool} (completed)" for tool, _, _ in CALLS]
    printed = PrintProjector()
    assert {printed.block(block)["summary"] for _, block in session.blocks() if isinstance(block, ToolBlock)} == {None}


def test_the_heading_is_told_from_the_redacted_view() -> None:
    token = "ghp_abcdefghijklmnopqrstuvwxyzABCDEF0123"
    session = one_message(
        {"type": "tool", "tool": "Bash", "status": "completed", "input": {"command": f"gh auth login --token {token}"}},
        {"type": "tool", "tool": "Read", "status": "completed", "input": {"file_path": "/home/alice/notes.txt"}},
    )
    assert html_summaries(to_html(session, redact=True)) == [
        "gh auth login --token [redacted: github-token 1]",
        "/home/[redacted: home-user 1]/notes.txt",
    ]
    for document in (to_html(session, redact=True), to_markdown(session, redact=True)):
        assert token not in document and "alice" not in document


def test_a_control_in_the_command_cannot_reorder_the_heading() -> None:
    """A right-to-left override reorders what follows it on the line (the status), and
    an isolate's end (U+2069) first closes HTML's <bdi> (Chromium then shows the status
    reversed, "detelpmoc"); Markdown's <code> isolates nothing. So controls are
    written as escapes, as on a terminal: the reader sees that the command holds one."""
    session = one_message(
        {"type": "tool", "tool": "Bash", "status": "completed", "input": {"command": "\u2069\u202eevil\x00 \x1b[2J"}}
    )
    escaped = "\\u2069\\u202eevil\\u0000 \\u001b[2J"
    assert html_summaries(to_html(session)) == [escaped]
    headings = re.findall(r"^<summary>Tool (.*)</summary>$", to_markdown(session), re.MULTILINE)
    assert headings == [f"<code>Bash</code> <code>{escaped}</code> · completed"]
