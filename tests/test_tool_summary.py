"""A folded tool block's heading says what the call did (``tool_inputs.tool_summary``):
in HTML and Markdown, whose tool blocks are folded; from the view, redacted."""

from __future__ import annotations

import html
import re
import time
from typing import Any

from htmldom import classes, elements, parse, text_content
from hypothesis import given, strategies as st
from markdown_it import MarkdownIt
from sessions import one_message

from vis_export.formats.html import to_html
from vis_export.formats.markdown import to_markdown
from vis_export.formats.pdf import PrintProjector
from vis_export.formats.text import to_text
from vis_export.formats.tool_inputs import SHELL_TOOLS, SUMMARY_LENGTH, TODO_TOOLS, tool_summary
from vis_export.model import ToolBlock

HOME = "/Users/alice/projects/vis-export"
SOURCE = "vis_export/formats/tool_inputs.py"
WINDOWS = "C:\\Users\\alice\\projects\\vis-export\\" + SOURCE.replace("/", "\\")
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
    ("Read", {"file_path": WINDOWS}, "…\\projects\\vis-export\\vis_export\\formats\\tool_inputs.py"),  # its separator
    ("Read", {"file_path": "n" * 70}, "n" * 70),  # no folder: nothing left out, no "…/"
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


# What a hostile input puts in a heading: the tags that close it, Markdown's marks,
# line breaks of every kind, controls, a lone surrogate, a patch's and a shell's words.
_PIECES = ["</summary>", "</details>", "<script>", "`", "|", "\n", "\r", "\u2028", "\x00", "\ud800", "\u202e", "\u2069"]
_PIECES += ["\u200b", "bash", "*** Begin Patch\n", "*** Update File: ", "--- a\n+++ b/", "apply_patch ", "-lc", "/"]
_TEXTS = st.lists(st.sampled_from(_PIECES) | st.text(max_size=4), max_size=10).map("".join)
_KEYS = ["command", "cmd", "action", "todos", "plan", "patch", "input", "pattern", "url", "file_path", "status"]
_INPUTS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _TEXTS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4),
    max_leaves=16,
)
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@given(st.sampled_from([*sorted(SHELL_TOOLS | TODO_TOOLS), "Read", "Grep", "apply_patch", "BASH"]), _INPUTS)
def test_any_input_gives_one_line_that_stays_in_its_heading(tool: str, value: Any) -> None:
    """Whatever the input's shape and text, the line is short, one line, without a
    control, and Markdown's <summary> keeps it inside its <details> (markdown-it
    reads the heading, status last, as one HTML block); its CPU is bounded."""
    start = time.process_time()
    said = tool_summary(tool, value)
    if said is not None:
        assert said.strip() and len(said) <= SUMMARY_LENGTH + 2 and not _CONTROLS.search(said), repr(said)
    page = to_markdown(one_message({"type": "tool", "tool": tool, "status": "completed", "input": value}))
    blocks = [t.content for t in MarkdownIt("commonmark").parse(page) if t.type == "html_block"]
    assert blocks[0].startswith("<details>\n<summary>Tool ") and blocks[0].endswith(" · completed</summary>\n")
    assert time.process_time() - start < 1  # CPU, not wall time: a few ms an example
