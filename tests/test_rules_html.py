"""R1, R2, R4 and R7 on HTML, over generated sessions, read by an HTML5 parser."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from htmldom import classes, code_elements, elements, parse, text_content
from hypothesis import given, strategies as st
from sessions import one_message, session_of
from strategies import PRIVATE_CANARY, session_documents, small_blocks

from vis_export.formats.html import to_html
from vis_export.model import CodeBlock
from vis_export.policy import is_private


def in_dom(code: str) -> str:
    """What a DOM can hold of ``code``: NUL has no place in HTML text (the parser
    turns it into U+FFFD); everything else, CRs and tabs included, stays."""
    return code.replace("\x00", "\ufffd")


@given(session_documents(small_blocks), st.booleans())
def test_r1_dom_text_of_each_code_element_is_the_code(document: dict[str, Any], no_highlight: bool) -> None:
    session = session_of(document)
    dom = parse(to_html(session, reasoning="all", no_highlight=no_highlight))
    codes = [b.text for _, b in session.blocks() if isinstance(b, CodeBlock)]
    assert [text_content(c) for c in code_elements(dom)] == [in_dom(c) for c in codes]


@given(session_documents(small_blocks), st.sampled_from(["none", "visible"]))
def test_r2_no_private_reasoning_in_html(document: dict[str, Any], reasoning: str) -> None:
    session = session_of(document)
    assert PRIVATE_CANARY not in to_html(session, reasoning=reasoning)
    for message in session.messages:
        assert PRIVATE_CANARY not in to_html(message, reasoning=reasoning)
    has_private = any(is_private(b) for _, b in session.blocks())
    assert (PRIVATE_CANARY in to_html(session, reasoning="all")) == has_private


@given(session_documents(small_blocks), st.sampled_from([None, "light", "dark"]))
def test_r7_deterministic_and_r3_pure(document: dict[str, Any], theme: str | None) -> None:
    original = copy.deepcopy(document)
    session = session_of(document)
    first = to_html(session, theme=theme, timestamps=True)
    assert to_html(session, theme=theme, timestamps=True) == first
    assert to_html(session_of(copy.deepcopy(original)), theme=theme, timestamps=True) == first
    assert document == original


ACTIVE_TAGS = {
    "script",
    "iframe",
    "object",
    "embed",
    "svg",
    "math",
    "link",
    "base",
    "form",
    "frame",
    "frameset",
    "applet",
    "audio",
    "video",
    "source",
    "track",
    "portal",
    "noscript",
    "template",
    "button",
    "textarea",
    "select",
}


def assert_inert(html: str) -> None:
    """Nothing in the document can run, load or navigate by itself (R4)."""
    dom = parse(html)
    styles = list(elements(dom, "style"))
    assert len(styles) == 1  # ours; its text is allowed by hash in the CSP
    metas = [m for m in elements(dom, "meta") if m.get("http-equiv")]
    assert [m.get("http-equiv") for m in metas] == ["Content-Security-Policy"]
    for element in elements(dom):
        tag = element.tag.split("}")[-1]
        assert tag not in ACTIVE_TAGS, tag
        assert_inert_attributes(tag, element.attrib)
        if tag == "input":
            assert element.get("type") == "checkbox" and element.get("disabled") is not None


def assert_inert_attributes(tag: str, attributes: dict[str, str]) -> None:
    """No attribute of an element can run, load or navigate by itself."""
    for name, value in attributes.items():
        assert not name.lower().startswith("on"), (tag, name)
        assert name.lower() not in ("style", "srcdoc", "formaction", "action", "background", "ping"), name
        normal = re.sub(r"[\x00-\x20]", "", value).lower()
        if name in ("href", "src"):
            assert not normal.startswith(("javascript:", "vbscript:", "data:text", "file:")), value
        if name == "src":
            assert tag == "img" and normal.startswith("data:image/"), value


@given(session_documents(small_blocks))
def test_r4_generated_sessions_are_inert(document: dict[str, Any]) -> None:
    assert_inert(to_html(session_of(document), reasoning="all", timestamps=True))


def test_r1_huge_code_block_with_every_awkward_character() -> None:
    code = ("\ufeff\n\tdef f():\r\n    return '<&>'  \r" * 4000) + "```\x00"
    session = one_message({"id": "c", "type": "code", "text": code, "language": "python"})
    for no_highlight in (False, True):
        (element,) = code_elements(parse(to_html(session, no_highlight=no_highlight)))
        assert text_content(element) == in_dom(code)


def test_headings_in_prose_are_demoted_below_the_turns() -> None:
    session = one_message({"id": "p", "type": "prose", "markdown": "# A\n## B\n###### C"})
    dom = parse(to_html(session))
    article = next(e for e in elements(dom, "article"))
    assert [e.tag.split("}")[-1] for e in article.iter() if re.fullmatch(r".*}h\d", str(e.tag))] == [
        "h2",
        "h3",
        "h4",
        "h6",
    ]


def test_unknown_block_fields_are_inert_text() -> None:
    payload = "<img src=x onerror=alert(1)>{{ 7*7 }}"
    session = one_message({"id": "u", "type": "x<b>", "payload": payload})
    html = to_html(session)
    assert_inert(html)
    unknown = next(e for e in elements(parse(html), "div") if "unknown" in classes(e))
    assert json.dumps(payload) in text_content(unknown) and "x<b>" in text_content(unknown)
    assert "49" not in text_content(unknown)


@given(session_documents(small_blocks))
def test_r5_messages_and_blocks_keep_their_order_and_roles(document: dict[str, Any]) -> None:
    session = session_of(document)
    dom = parse(to_html(session, reasoning="all"))
    articles = list(elements(dom, "article"))
    assert [a.get("class").split()[1] for a in articles] == [f"role-{m.role}" for m in session.messages]
    for article, message in zip(articles, session.messages, strict=True):
        frames = [e for e in article if "block-frame" in classes(e)]  # each block in its anchored frame
        names = [e.get("class").split() for frame in frames for e in frame if "block" in classes(e)]
        kinds = [n[2] if n[1] == "callout" else n[1] for n in names]  # templates: "block <kind> ..."
        expected = [
            b.type
            if b.type in ("prose", "code", "tool", "reasoning", "error", "notice", "attachment", "speech")
            else "unknown"
            for b in message.blocks
        ]
        assert kinds == expected


FENCED_LANGUAGES = st.sampled_from(["python", "js", "rust", "c", "json", "html", "diff", "no-such-language", ""])
# Code as it is fenced in prose: a CR ends a line in Markdown, so there is none; anything else may be there.
fenced_code = st.text(st.characters(exclude_characters="\r", exclude_categories=("Cs",)), max_size=120).map(
    lambda text: text if text.endswith("\n") or not text else text + "\n"
)


@given(fenced_code, FENCED_LANGUAGES, st.booleans(), st.booleans())
def test_r1_code_fenced_in_prose_is_the_fenced_text_in_the_dom(
    code: str, language: str, no_highlight: bool, pasted: bool
) -> None:
    """Highlighted or not, in a page or a pasted fragment, the DOM text of code
    fenced in prose is the fenced text exactly, as a CommonMark parser reads it."""
    from markdown_it import MarkdownIt

    from vis_export.copying import clipboard
    from vis_export.formats.markdown_syntax import fence_for

    fence = fence_for(code)
    markdown = f"Before:\n\n{fence}{language}\n{code}{fence}\n\nAfter.\n"
    (fenced,) = [t.content for t in MarkdownIt("commonmark").parse(markdown) if t.type == "fence"]
    session = one_message({"id": "p", "type": "prose", "markdown": markdown})
    if pasted:
        dom = parse(clipboard(session.messages[0], no_highlight=no_highlight)["text/html"])
    else:
        dom = parse(to_html(session, no_highlight=no_highlight))
    (pre,) = [pre for pre in elements(dom, "pre")]
    assert text_content(pre) == in_dom(fenced)
