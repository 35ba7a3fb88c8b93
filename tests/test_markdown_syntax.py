"""The Markdown rules with one home each: fence sizing, info strings, escaping,
and prose that cannot run into what follows it."""

from __future__ import annotations

import pytest
from hypothesis import given
from markdown_it import MarkdownIt

from strategies import text
from vis_export.formats.markdown_syntax import escape, escape_one_line, fence_for, info_string
from vis_export.formats.prose import contained

PARSER = MarkdownIt("gfm-like")


@pytest.mark.parametrize(("code", "fence"), [("", "```"), ("a ` b", "```"), ("```", "````"),
                                             ("x ````` y ``` z", "``````")])
def test_fence_is_longer_than_any_backtick_run(code: str, fence: str) -> None:
    assert fence_for(code) == fence


@pytest.mark.parametrize(("language", "info"), [(None, ""), ("python", "python"), ("c ++", "c++"),
                                                ("x`y", "xy"), (" \t", ""), ("a&amp;\\b\x00", "a\\&amp;\\\\b")])
def test_info_string(language: str | None, info: str) -> None:
    assert info_string(language) == info


def rendered_text(markdown: str) -> str:
    """The text a reader sees: inline content of the one paragraph, breaks as newlines."""
    tokens = PARSER.parse(markdown)
    assert [t.type for t in tokens] in ([], ["paragraph_open", "inline", "paragraph_close"])
    if not tokens:
        return ""
    out = []
    for child in tokens[1].children:
        assert child.type in ("text", "hardbreak", "softbreak", "text_special"), child.type
        out.append("\n" if child.type.endswith("break") else child.content)
    return "".join(out)


@given(text)
def test_escaped_text_renders_as_itself(value: str) -> None:
    expected = "\n".join(line.strip() for line in value.replace("\r\n", "\n").replace("\r", "\n").split("\n")
                         if line.strip()).replace("\x00", "\ufffd")
    assert rendered_text(escape(value)) == expected
    assert rendered_text(escape_one_line(value)) == " ".join(value.split()).replace("\x00", "\ufffd")


@pytest.mark.parametrize("prose", [
    "```python\nprint('open')",
    "~~~~\nopen tilde",
    "<!-- open comment",
    "<pre>\nopen pre",
    "<script>\nopen",
    "<?php open",
    "<![CDATA[ open",
    "<!DOCTYPE open",
    "- item\n\n  ```\n  open inside a list",
    "> ```\n> open inside a quote",
    "```\nclosed\n```",
])
def test_prose_cannot_swallow_what_follows(prose: str) -> None:
    document = contained(prose) + "\n## Next\n"
    tokens = PARSER.parse(document)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.level == 0]
    assert headings[-1:] == ["Next"]
    assert prose.split("\n")[0] in document  # written as it was


@given(text)
def test_any_prose_is_contained(prose: str) -> None:
    tokens = PARSER.parse(contained(prose) + "\n## Next\n")
    assert tokens[-3].type == "heading_open" and tokens[-3].level == 0 and tokens[-2].content == "Next"
