"""``vis-export show``: one session, message or block in the terminal.

The rules over generated sessions, drawn plain (a pipe) and coloured (a
terminal): code appears exactly (R1; only a control character is written as its
escape), private reasoning never without ``--reasoning all`` (R2), no control
character from data reaches the output and rich markup in data stays text
(R4, R6), the same input draws the same text (R7). Then the command itself,
through a pipe and on a real terminal (a pty), paging included.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import INPUT
from hypothesis import given, strategies as st
from onterminal import on_terminal
from strategies import PRIVATE_CANARY, session_documents, small_blocks
from timelimit import cpu_limit, time_limit

from vis_export.cli import main
from vis_export.formats.markdown_syntax import fence_for, info_string
from vis_export.formats.terminal_projector import ALL_REASONING_NOTE, HEADER, to_terminal
from vis_export.model import CodeBlock, Session, session_from_json
from vis_export.sources import read
from vis_export.terminal import escaped

SESSION = INPUT / "session.json"
# What a terminal must never receive from data: C0 controls but tab and LF, DEL, C1, bidi controls.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
SGR = re.compile("\x1b\\[[0-9;]*m")  # rich's own styles, the only escape sequences it may write
HOSTILE = ["\x1b[2J\x1b[H", "\x1b]52;c;cHduZWQ=\x07", "\x9b31m", "\r\x1b[K", "\u202e", "\x1b]8;;http://x\x1b\\"]
MARKUP = ["\n── User ──\n", "[bold]", "[/bold]", "[link=http://x]", ":smile:", "&#27;[2J", "&#x9b;", "<b>", "\\["]


def _loaded(document: dict[str, Any]) -> Session:
    return session_from_json(json.loads(json.dumps(document)), "s")


def _unstyled(drawn: str) -> str:
    """What a reader sees of coloured output: the text without rich's styles."""
    return SGR.sub("", drawn)


def _fenced(block: CodeBlock) -> str:
    """A code block as the terminal format draws it: between fences, every
    character as written but control characters, which show as escapes."""
    text = block.text
    end = "\n" if text and not text.endswith("\n") else ""
    fence = fence_for(text)
    return f"{fence}{escaped(info_string(block.language))}\n{escaped(text)}{end}{fence}\n"


hostile_text = st.lists(st.sampled_from([*HOSTILE, *MARKUP, "a b", "\n", "\t", "  ", "`"]), max_size=8).map("".join)
hostile_sessions = st.builds(
    lambda title, prose, code, output, message: {
        "id": "h",
        "title": title,
        "messages": [
            {
                "id": "m",
                "role": "assistant",
                "status": "completed",
                "created_at": 1,
                "model": title,
                "author": {"display_name": title},
                "content": [
                    {"id": "p", "type": "prose", "markdown": prose},
                    {"id": "c", "type": "code", "language": "python", "text": code},
                    {"id": "t", "type": "tool", "tool": message or "t", "status": "completed", "output": output},
                    {"id": "e", "type": "error", "code": "x", "message": message or "m"},
                    {"id": "u", "type": "diagram", "source": message},
                ],
            }
        ],
    },
    hostile_text,
    hostile_text,
    hostile_text,
    hostile_text,
    hostile_text.filter(lambda text: text.strip()),
)


def _piped(document: dict[str, Any], reasoning: str) -> str:
    """What ``vis-export show`` writes to a pipe (the command run in this process, its output captured)."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "chat.json"
        source.write_text(json.dumps(document))
        result = CliRunner().invoke(main, ["show", str(source), "--session", document["id"], "--reasoning", reasoning])
    assert result.exit_code == 0, result.output
    return result.stdout_bytes.decode("utf-8")


@given(session_documents(small_blocks), st.sampled_from(["none", "visible", "all"]), st.sampled_from([None, "256"]))
def test_code_is_literal_and_private_reasoning_stays_hidden(
    document: dict[str, Any], reasoning: str, colours: str | None
) -> None:
    """Through a pipe (the command itself), and drawn for a terminal."""
    session = _loaded(document)
    with time_limit(30):
        drawn = (
            _piped(document, reasoning) if colours is None else to_terminal(session, 72, colours, reasoning=reasoning)
        )
    seen = _unstyled(drawn) if colours else drawn
    if colours is None:
        assert "\x1b" not in drawn  # plain: not one escape sequence
    outside_code = seen
    for _, block in session.blocks():
        if isinstance(block, CodeBlock):
            assert _fenced(block) in seen  # R1: contiguous, tabs and trailing spaces kept
            outside_code = outside_code.replace(_fenced(block), "")
    assert (PRIVATE_CANARY in seen) <= (reasoning == "all")  # R2
    headers = [line for line in outside_code.split("\n") if line.startswith(HEADER)]
    assert len(headers) == len(session.messages)  # no string from data draws a header
    assert (ALL_REASONING_NOTE in seen) == (reasoning == "all")
    assert not UNSAFE.search(seen)  # R6: nothing from data steers the terminal
    again = [to_terminal(session, 72, colours, reasoning=reasoning) for _ in range(2)]
    assert again[0] == again[1]  # R7


@given(hostile_sessions, st.sampled_from([None, "standard", "truecolor"]), st.integers(min_value=20, max_value=120))
def test_data_never_steers_the_terminal_nor_becomes_markup(
    document: dict[str, Any], colours: str | None, width: int
) -> None:
    session = _loaded(document)
    with cpu_limit(30):
        drawn = to_terminal(session, width=width, colours=colours)
    seen = _unstyled(drawn)
    assert "\x1b" not in seen and not UNSAFE.search(seen), repr(seen)
    code = session.messages[0].blocks[1]
    assert isinstance(code, CodeBlock) and _fenced(code) in seen
    outside_code = seen.replace(_fenced(code), "")  # code is literal: between its fences, a reader sees it is code
    (header,) = [line for line in outside_code.split("\n") if line.startswith(HEADER)]  # no forged one
    assert header.startswith(f"{HEADER}Assistant")
    error = escaped(document["messages"][0]["content"][3]["message"].strip())
    if not set(error) & set("\n\t") and len(error) < width - 20:  # one line (no wrap) with no tab (expanded)
        assert error in seen  # rich markup, emoji codes and entities print as written


def test_a_huge_code_block_is_literal_and_quick() -> None:
    text = "".join(f"line {n} of code ``` \t\r\n" for n in range(20_000)) + "x = 1   "
    block = {"id": "c", "type": "code", "language": "python", "text": text}
    message = {"id": "m", "role": "user", "status": "completed", "created_at": 1, "content": [block]}
    with cpu_limit(30):
        drawn = to_terminal(_loaded({"id": "s", "messages": [message]}), colours="256")
    assert _fenced(CodeBlock(block)) in _unstyled(drawn)


def test_private_reasoning_shows_only_when_authorised() -> None:
    (session,) = [result.session for result in read(SESSION)]
    assert session is not None
    private = "PRIVATE-CANARY-7f3a the user seems to want a parser."  # the golden session's private reasoning
    assert "PRIVATE-CANARY" not in to_terminal(session)
    assert "Reasoning" in to_terminal(session) and "I will write parse_config first." in to_terminal(session)
    assert "I will write parse_config first." not in to_terminal(session, reasoning="none")
    shown = to_terminal(session, reasoning="all")
    assert private in shown.replace("\n", " ") and "Private reasoning" in shown and ALL_REASONING_NOTE in shown


@pytest.mark.parametrize(
    "markdown",
    [
        ">" * 19 + " deep words here",  # nested deeper than the parser goes
        "- " * 9 + "nested list",  # deeper than 20 columns hold
        "|"
        + "|".join(f"h{i}" for i in range(40))
        + "|\n|"
        + "-|" * 40
        + "\n|"
        + "|".join(f"cell{i}" for i in range(40)),
        "> - " * 5 + "quoted list",
    ],
)
def test_prose_rich_cannot_lay_out_is_shown_as_written(markdown: str) -> None:
    block = {"id": "p", "type": "prose", "markdown": markdown}
    message = {"id": "m", "role": "user", "status": "completed", "created_at": 1, "content": [block]}
    drawn = to_terminal(_loaded({"id": "s", "messages": [message]}), width=20)
    assert markdown in drawn  # nothing dropped: rich would print blank lines here


def test_prose_is_rendered_and_stays_text() -> None:
    block = {
        "id": "p",
        "type": "prose",
        "markdown": "## Plan\n\n- **one** [site](http://example.com)\n- ![chart](x.png) <script>x</script>\n\n"
        "```scala\nval x = 1\n```",
    }
    message = {"id": "m", "role": "user", "status": "completed", "created_at": 1, "content": [block]}
    drawn = to_terminal(_loaded({"id": "s", "messages": [message]}))
    assert "## Plan" in drawn and "• one site (http://example.com)" in drawn
    assert "[image: chart] <script>x</script>" in drawn and "val x = 1" in drawn
    assert "**" not in drawn and not any(line.endswith(" ") for line in drawn.splitlines())


def test_footnotes_are_numbered_and_columns_aligned_on_a_terminal() -> None:
    markdown = (
        "Fast[^speed], cheap[^cost].\n\n| Engine | Speed |\n|---|---:|\n| Typst | 3.2 |\n| WeasyPrint | 11.75 |\n\n"
        "[^cost]: Free *software*.\n[^speed]: On two cores.\n"
    )
    block = {"id": "p", "type": "prose", "markdown": markdown}
    message = {"id": "m", "role": "user", "status": "completed", "created_at": 1, "content": [block]}
    drawn = to_terminal(_loaded({"id": "s", "messages": [message]}))
    lines = [line.strip() for line in drawn.splitlines()]
    assert "Fast[1], cheap[2]." in lines and "[^" not in drawn
    notes = [line for line in lines if line.endswith(("cores.", "software."))]
    assert notes == ["1 On two cores.", "2 Free software."]
    speeds = [line for line in drawn.splitlines() if line.rstrip().endswith(("3.2", "11.75"))]
    assert len({len(line.rstrip()) for line in speeds}) == 1  # right-aligned: both end in one column


# --- the command -----------------------------------------------------------------------


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vis_export", *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_a_pipe_gets_the_session_plain() -> None:
    result = cli("show", str(SESSION), "--session", "golden_session")
    assert result.returncode == 0 and result.stderr == ""
    out = result.stdout
    assert "\x1b" not in out
    roles = [line.split(" ")[1] for line in out.splitlines() if line.startswith(HEADER)]
    assert roles == ["User", "Assistant", "User", "Assistant", "System", "Developer", "Tool"]
    assert "PRIVATE-CANARY" not in out
    code = json.loads(SESSION.read_text())["messages"][1]["content"][4]
    assert _fenced(CodeBlock(code)) in out


def test_a_message_or_a_block_is_shown_under_its_header() -> None:
    message = cli("show", str(SESSION), "--session", "golden_session", "--message", "msg_asst_2").stdout
    assert message.startswith(f"{HEADER}Assistant · failed · gpt-5.6")
    assert "Deploying…" in message and "Parse the" not in message
    block = cli("show", str(SESSION), "--session", "golden_session", "--block", "a1b5").stdout
    assert block.startswith(f"{HEADER}Assistant · gpt-5.6") and "def parse_config(path):" in block
    assert "Here is the parser" not in block and "run_tests" not in block


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--session", "nope"], "vis-export: no session with id 'nope' in {src}"),
        (
            ["--session", "golden_session", "--message", "nope"],
            "{src}: session 'golden_session': no message with id 'nope'",
        ),
        (
            ["--session", "golden_session", "--block", "nope"],
            "{src}: session 'golden_session': no block with id 'nope'",
        ),
        (
            ["--session", "golden_session", "--message", "msg_user_1", "--block", "a1b5"],
            "{src}: message 'msg_user_1': no block with id 'a1b5'",
        ),
        (
            ["--session", "golden_session", "--block", "a1b2"],
            "{src}: session 'golden_session': block 'a1b2' is reasoning that --reasoning visible hides",
        ),
        (
            ["--session", "golden_session", "--block", "a1b1", "--reasoning", "none"],
            "{src}: session 'golden_session': block 'a1b1' is reasoning that --reasoning none hides",
        ),
    ],
)
def test_an_id_not_there_is_one_line(args: list[str], line: str) -> None:
    result = cli("show", str(SESSION), *args)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == line.format(src=SESSION) + "\n"


def test_authorised_private_reasoning_opens() -> None:
    result = cli("show", str(SESSION), "--session", "golden_session", "--block", "a1b2", "--reasoning", "all")
    assert result.returncode == 0 and ALL_REASONING_NOTE in result.stdout
    assert "Private reasoning" in result.stdout and "Plan: read the file, then parse it." in result.stdout


def test_a_search_hit_opens_in_context(tmp_path: Path) -> None:
    import vis_export

    directory = tmp_path / "idx"
    vis_export.index(vis_export.load(str(SESSION)), directory)
    (hit,) = vis_export.search('"return f.read()"', directory)
    shown = cli("show", str(SESSION), "--session", hit.session_id, "--block", hit.block_id).stdout
    assert "return f.read()  # trailing spaces   \n" in shown and shown.startswith(f"{HEADER}Assistant")


def test_an_invalid_source_is_reported_and_lenient_shows_it(tmp_path: Path) -> None:
    document = json.loads(SESSION.read_text())
    document["messages"][0]["role"] = "User"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    strict = cli("show", str(bad), "--session", "golden_session")
    assert strict.returncode == 1 and strict.stdout == "" and "Traceback" not in strict.stderr
    first, *rest = strict.stderr.splitlines()
    assert first.startswith(f"{bad}: messages[0].role") and "--lenient" in rest[0]
    lenient = cli("show", str(bad), "--session", "golden_session", "--lenient")
    assert lenient.returncode == 0 and "warning" in lenient.stderr and lenient.stdout.startswith("Parse the")


# --- on a real terminal -------------------------------------------------------------------

PAGER = {"PAGER": "sed s/^/PAGED:/"}  # a harmless pager that marks every line it shows


def _terminal(*args: str, rows: int, env: dict[str, str] | None = None) -> str:
    shown = on_terminal("show", str(SESSION), *args, env={**PAGER, **(env or {})}, size=(rows, 80), typing=True)
    return shown.decode("utf-8").replace("\r\n", "\n")


def test_a_terminal_gets_colours_and_a_long_text_the_pager() -> None:
    short = _terminal("--session", "golden_session", "--block", "a1b5", rows=40)
    assert "PAGED:" not in short and "\x1b[" in short  # fits the screen: written at once, in colour
    assert "\\u000d" in short  # the code's CR, escaped
    long = _terminal("--session", "golden_session", rows=10)
    lines = [line for line in long.split("\n") if line]
    assert lines and all(line.startswith("PAGED:") for line in lines)  # every line went through the pager
    assert f"PAGED:{HEADER}Assistant · gpt-5.6" in _unstyled(long)
    unpaged = _terminal("--session", "golden_session", "--no-pager", rows=10)
    assert "PAGED:" not in unpaged and "def parse_config" in _unstyled(unpaged)


def test_no_color_keeps_styles_but_drops_colours() -> None:
    coloured = _terminal("--session", "golden_session", "--block", "a1b5", rows=40)
    plain = _terminal("--session", "golden_session", "--block", "a1b5", rows=40, env={"NO_COLOR": "1"})
    codes = {int(code) for sgr in SGR.findall(coloured) for code in re.findall(r"\d+", sgr)}
    assert codes & set(range(30, 38))
    no_color = {int(code) for sgr in SGR.findall(plain) for code in re.findall(r"\d+", sgr)}
    assert no_color and not no_color & {*range(30, 50), *range(90, 108)}
    assert _unstyled(coloured) == _unstyled(plain)


def test_a_repeated_block_id_shows_only_the_blocks_the_policy_shows(tmp_path: Path) -> None:
    """A private block and a prose block under one id: only the prose, under one
    header (the hidden one gave a header with nothing below it)."""
    blocks = [
        {"id": "b", "type": "reasoning", "text": f"{PRIVATE_CANARY} plan"},
        {"id": "b", "type": "prose", "markdown": "the answer"},
    ]
    message = {"id": "m", "role": "assistant", "status": "completed", "created_at": 1, "content": blocks}
    (tmp_path / "s.json").write_text(json.dumps({"id": "s", "messages": [message]}))
    shown = cli("show", str(tmp_path / "s.json"), "--session", "s", "--block", "b").stdout
    assert shown.count(HEADER) == 1 and "the answer" in shown and PRIVATE_CANARY not in shown
