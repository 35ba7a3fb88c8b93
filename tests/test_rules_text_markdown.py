"""R1-R7 on the text and Markdown projections, over generated sessions.

The Markdown is read back with markdown-it-py (a CommonMark reference parser,
with GFM's linkify on) so the tests check what a reader sees, not the bytes.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import yaml
from hypothesis import given, strategies as st
from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll
from sessions import one_message, session_of
from strategies import (
    PRIVATE_CANARY,
    attachment_blocks,
    code_blocks,
    error_blocks,
    notice_blocks,
    session_documents,
    speech_blocks,
    text,
    tool_blocks,
    unknown_blocks,
)

from vis_export.formats.markdown import to_markdown
from vis_export.formats.markdown_syntax import fenced
from vis_export.formats.options import ExportOptions
from vis_export.formats.projector import shown_parts
from vis_export.formats.text import REASONING_END, TextProjector, to_text
from vis_export.model import CodeBlock, ReasoningBlock, ToolBlock, UnknownBlock
from vis_export.policy import is_private

PARSER = MarkdownIt("gfm-like")  # tables, strikethrough and linkify, as GitHub renders
FORMATS = {"text": to_text, "markdown": to_markdown}


def as_parsed(code: str) -> str:
    """What a CommonMark parser reads back from a fenced ``code``: line endings and
    NUL are normalised by the parser itself, and the block ends with a newline."""
    normal = re.sub(r"\r\n?", "\n", code).replace("\x00", "\ufffd")
    return normal if not normal or normal.endswith("\n") else normal + "\n"


def codes(session) -> list[CodeBlock]:
    return [b for _, b in session.blocks() if isinstance(b, CodeBlock)]


# --- R1 code stays literal ---------------------------------------------------------------


@given(session_documents())
def test_r1_markdown_code_blocks_read_back_exactly_in_order(document: dict[str, Any]) -> None:
    session = session_of(document)
    output = to_markdown(session, reasoning="all")
    fences = [t for t in PARSER.parse(output) if t.type == "fence" and t.level == 0]
    position = 0
    for block in codes(session):
        language = "".join(c for c in block.language or "" if c != "`" and not c.isspace() and c.isprintable())
        expected = (as_parsed(block.text), language)
        # Info strings are unescaped when rendered (backslash escapes, entities), as here.
        while position < len(fences) and (fences[position].content, unescapeAll(fences[position].info)) != expected:
            position += 1
        assert position < len(fences), f"code block {block.id!r} not found as written"
        position += 1
        assert block.text in output  # the bytes themselves are untouched, CR and all


@given(session_documents())
def test_r1_text_code_lines_contiguous_and_in_order(document: dict[str, Any]) -> None:
    session = session_of(document)
    output = to_text(session, reasoning="all")
    position = 0
    for block in codes(session):
        found = output.find(block.text, position)
        assert found >= 0, f"code block {block.id!r} not contiguous in text output"
        position = found + len(block.text)


@given(code_blocks)
def test_r1_copied_code_block_is_exactly_its_code(data: dict[str, Any]) -> None:
    from vis_export.copying import clipboard
    from vis_export.model import block_from_json

    block = block_from_json(data)
    flavours = clipboard(block)
    assert flavours["text/plain"] == data["text"]
    (fence,) = [t for t in PARSER.parse(flavours["text/markdown"]) if t.type == "fence"]
    assert fence.content == as_parsed(data["text"])


@given(session_documents())
def test_r6_no_data_draws_a_turn_header_in_text(document: dict[str, Any]) -> None:
    """Outside code fences, the only header lines are the messages' own, in order."""
    session = session_of(document)
    projector = TextProjector(ExportOptions(reasoning="all"))
    output = projector.render(session)
    for _, block in session.blocks():
        if isinstance(block, CodeBlock):
            output = output.replace(fenced(block.text, block.language), "", 1)
    # split as the most eager reader does: at VT, FF, NEL, U+2028 ... too
    headers = [line for line in output.splitlines() if line.startswith("== ")]
    assert headers == [projector.header(message) for message in session.messages]
    reasoning = sum(isinstance(b, ReasoningBlock) for _, b in session.blocks())
    assert output.split("\n").count(REASONING_END) == reasoning


# --- R2 private reasoning stays hidden ------------------------------------------------------


@given(session_documents(), st.sampled_from(["none", "visible"]), st.booleans(), st.booleans())
def test_r2_private_reasoning_never_rendered(
    document: dict[str, Any], reasoning: str, timestamps: bool, no_tools: bool
) -> None:
    session = session_of(document)
    for render in FORMATS.values():
        assert PRIVATE_CANARY not in render(session, reasoning=reasoning, timestamps=timestamps, no_tools=no_tools)
        for message in session.messages:
            assert PRIVATE_CANARY not in render(message, reasoning=reasoning)
            for block in message.blocks:
                assert PRIVATE_CANARY not in render(block, reasoning=reasoning)
    # Authorised, real private reasoning is shown; a disguise may be shown as inert data.
    has_private = any(is_private(b) for _, b in session.blocks())
    has_reasoning = any(isinstance(b, ReasoningBlock) and b.is_private for _, b in session.blocks())
    for render in FORMATS.values():
        shown = PRIVATE_CANARY in render(session, reasoning="all")
        assert has_reasoning <= shown <= has_private


# --- R3 nothing writes back; R7 deterministic ------------------------------------------------


@given(session_documents())
def test_r3_r7_pure_and_deterministic(document: dict[str, Any]) -> None:
    original = copy.deepcopy(document)
    session = session_of(document)
    before = json.dumps(session.to_json())
    again = session_of(copy.deepcopy(original))
    for render in FORMATS.values():
        for options in ({}, {"reasoning": "all", "timestamps": True, "tool_output_limit": 5}):
            first = render(session, **options)
            assert render(session, **options) == first
            assert render(again, **options) == first
    assert json.dumps(session.to_json()) == before
    assert document == original


# --- R5 order and roles -------------------------------------------------------------------------


@st.composite
def marked_sessions(draw: st.DrawFn) -> dict[str, Any]:
    """Sessions whose prose, code and speech each carry a unique marker word."""
    document = draw(session_documents())
    for i, message in enumerate(document["messages"]):
        for j, block in enumerate(message["content"]):
            field = {"prose": "markdown", "code": "text", "speech": "text"}.get(block["type"])
            if field:
                block[field] = f"mark{i}x{j}z\n{block[field]}"
    return document


@given(marked_sessions())
def test_r5_blocks_and_messages_keep_their_order(document: dict[str, Any]) -> None:
    session = session_of(document)
    expected = re.findall(r"mark\d+x\d+z", json.dumps([m.to_json() for m in session.messages]))
    for name, render in FORMATS.items():
        output = render(session, reasoning="all")
        found = [m for m in re.findall(r"mark\d+x\d+z", output) if m in expected]
        assert _ordered_subsequence(expected, found), name
        if name == "markdown":
            headings = [
                PARSER.parse(output)[i + 1].content
                for i, t in enumerate(PARSER.parse(output))
                if t.type == "heading_open" and t.tag == "h2" and t.level == 0
            ]
            roles = [
                h.split(" ")[0]
                for h in headings
                if h.split(" ")[0] in ("User", "Assistant", "System", "Developer", "Tool")
            ]
            assert _ordered_subsequence([m.role.capitalize() for m in session.messages], roles)


def _ordered_subsequence(expected: list[str], found: list[str]) -> bool:
    iterator = iter(found)
    return all(any(item == f for f in iterator) for item in expected)


# --- R4 strings from a message cannot become structure ---------------------------------------

non_prose_blocks = st.one_of(
    code_blocks, tool_blocks, error_blocks, attachment_blocks, notice_blocks, speech_blocks, unknown_blocks
)


models = text.filter(lambda s: not s.startswith(":"))  # the contract refuses a keyword-looking model (":gpt")


@given(session_documents(non_prose_blocks), text, models, text)
def test_r4_no_heading_fence_link_or_html_from_data(
    document: dict[str, Any], title: str, model: str, author: str
) -> None:
    document["title"] = title
    for message in document["messages"]:
        message["model"] = model
        message["author"] = {"display_name": author}
    session = session_of(document)
    output = to_markdown(session, reasoning="all", timestamps=True)
    tokens = PARSER.parse(output)
    everything = [t for t in tokens] + [c for t in tokens for c in (t.children or [])]
    headings = [t for t in tokens if t.type == "heading_open"]
    assert [t.tag for t in headings] == ["h1"] + ["h2"] * len(session.messages)
    assert not [t for t in everything if t.type in ("link_open", "image", "html_inline")]
    html_blocks = {t.content.strip() for t in tokens if t.type == "html_block"}
    assert all(re.fullmatch(r"(<details>\n<summary>.*</summary>|</details>)", h, re.S) for h in html_blocks)
    expected_fences = sum(
        1
        if isinstance(b, (CodeBlock, UnknownBlock))
        else sum(len(shown_parts("", b.fields[key])) for key in ("input", "output", "error") if key in b.fields)
        if isinstance(b, ToolBlock)
        else 0
        for _, b in session.blocks()
    )
    assert len([t for t in tokens if t.type == "fence"]) == expected_fences
    assert not [
        t for t in tokens if t.type in ("code_block", "table_open", "hr", "bullet_list_open", "ordered_list_open")
    ]


@given(session_documents(non_prose_blocks))
def test_text_has_lf_and_no_trailing_spaces_outside_code(document: dict[str, Any]) -> None:
    for message in document["messages"]:
        message["content"] = [b for b in message["content"] if b["type"] != "code"]
    output = to_text(session_of(document), reasoning="all", timestamps=True)
    assert "\r" not in output
    assert not re.search(r"[ \t]+$", output, re.MULTILINE)


@given(session_documents(), text)
def test_front_matter_is_valid_yaml_for_any_title(document: dict[str, Any], title: str) -> None:
    document["title"] = title
    session = session_of(document)
    output = to_markdown(session, front_matter=True)
    assert output.startswith("---\n")
    header = output[4 : output.index("\n---\n", 4)]
    data = yaml.safe_load(header)
    assert data["title"] == title and data["session_id"] == session.id


def test_tool_output_limit_marks_what_it_cut() -> None:
    session = one_message(
        {"id": "t", "type": "tool", "tool": "cat", "status": "completed", "output": {"log": "x" * 500}}
    )
    for render in FORMATS.values():
        out = render(session, tool_output_limit=20)
        assert "x" * 30 not in out and "more characters of tool output not shown" in out
        assert "x" * 400 in render(session)
        assert "cat" not in render(session, no_tools=True)


# --- prose in Markdown: raw HTML shown as text, headings below the turn ---------------------

PROSE_PIECES = [
    "# Plan",
    "## Sub *plan*",
    "###### Six",
    "####### seven is text",
    "Setext\n======",
    "Two line\nsetext \\\n---",
    "Ends in hash #\n===",
    "text <b>bold</b> and <img src=x onerror=alert(1)>",
    "<script>alert('x')</script>",
    "<script>\n\nalert(1)\n\n</script>",
    "<div>\n*still html*\n</div>",
    "<!-- comment -->",
    "> <div>quoted</div>\n> more",
    "> # quoted heading\n> text <i>x</i>",
    "- item <i>x</i>\n- # heading in a list\n  <span>y</span>",
    "1. <pre>\n   in a list\n   </pre>",
    "`<code>` stays and <https://example.com/a> too",
    '[link <b>](<u v> "<title>")',
    "    indented <x>",
    "```html\n<p>fenced</p>\n```",
    "| a | <b> |\n|---|---:|\n| <i>x | `<c>` |",
    "\\<not html> &lt;",
    "line\\\nbreak <u>",
    "text\n---",
    "plain words",
]
prose_texts = st.one_of(
    st.lists(st.sampled_from(PROSE_PIECES), min_size=1, max_size=6).flatmap(
        lambda pieces: st.sampled_from(["\n", "\n\n"]).map(lambda sep: sep.join(pieces))
    ),
    st.text(st.sampled_from(list("<>#=-*`/ab \n\t[]()!|:\\&")), max_size=80),
)


def _prose_session(markdown: str):
    return one_message({"id": "p", "type": "prose", "markdown": markdown})


def _everything(tokens: list[Any]) -> list[Any]:
    return [*tokens, *(c for t in tokens for c in (t.children or []))]


@given(prose_texts)
def test_r4_raw_html_in_prose_is_text_once_the_markdown_is_rendered(markdown: str) -> None:
    """Rendered by a CommonMark renderer, the Markdown holds no raw HTML from prose:
    no script, no element at all but the Markdown's own (and its <details>)."""
    from htmldom import elements, fragment

    output = to_markdown(_prose_session(markdown), reasoning="all")
    assert not [t for t in _everything(PARSER.parse(output)) if t.type in ("html_inline", "html_block")]
    rendered = fragment(PARSER.render(output))
    assert not [e for e in elements(rendered) if e.tag.split("}")[-1] in ("script", "img", "div", "b", "i", "span")]
    # What was written is still there to read: every '<' of the prose is shown.
    assert PARSER.render(output).count("&lt;") >= markdown.count("<") - output.count("<")


@given(prose_texts)
def test_headings_in_prose_sit_below_the_turn_heading(markdown: str) -> None:
    tokens = PARSER.parse(to_markdown(_prose_session(markdown)))
    headings = [(t.tag, tokens[i + 1].content) for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings[0][0] == "h1" and headings[1] == ("h2", "Assistant")
    prose_tokens = PARSER.parse(markdown)
    expected = [
        (f"h{min(6, int(t.tag[1]) + 2)}", " ".join(prose_tokens[i + 1].content.split()))
        for i, t in enumerate(prose_tokens)
        if t.type == "heading_open"
    ]
    shown = [(tag, " ".join(content.split())) for tag, content in headings[2:]]
    assert [tag for tag, _ in shown] == [tag for tag, _ in expected]
    assert [_unbroken(c) for _, c in shown] == [_unbroken(c) for _, c in expected]


def _unbroken(content: str) -> str:
    """A heading's text as read: a hard break (a setext heading's) as a space, a '<' as written."""
    return content.replace("\\ ", " ").replace("&lt;", "<")


@given(st.text(st.sampled_from(list("ab *_`[]()!\n-+1.>")), max_size=80))
def test_prose_without_html_or_headings_is_written_as_it_was(markdown: str) -> None:
    from vis_export.formats.prose_markdown import prose_in_markdown

    tokens = _everything(PARSER.parse(markdown))
    if not any(t.type in ("html_inline", "html_block", "heading_open") for t in tokens):
        assert prose_in_markdown(markdown) == markdown


@given(prose_texts)
def test_r1_code_in_prose_is_untouched_by_what_markdown_output_changes(markdown: str) -> None:
    """Escaping raw HTML and shifting headings never reach code: every fenced or
    indented block and every code span of the prose reads back the same, in order."""
    from vis_export.formats.prose_markdown import prose_in_markdown

    def code(text: str) -> list[tuple[str, str]]:
        tokens = _everything(PARSER.parse(text))
        return [(t.type, t.content) for t in tokens if t.type in ("fence", "code_block", "code_inline")]

    before = code(markdown)
    after = iter(code(prose_in_markdown(markdown)))
    assert all(any(piece == found for found in after) for piece in before)  # in order; HTML blocks add fences
