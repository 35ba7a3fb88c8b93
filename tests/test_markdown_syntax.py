"""The Markdown rules with one home each: fence sizing, info strings, escaping,
and prose that cannot run into what follows it."""

from __future__ import annotations

import time

import pytest
from hypothesis import example, given, strategies as st
from markdown_it import MarkdownIt
from strategies import text
from timelimit import time_limit

from vis_export.formats.markdown_syntax import escape, escape_one_line, fence_for, info_string
from vis_export.formats.prose import contained
from vis_export.strings import data_label

# GFM as GitHub renders it: URLs with a scheme and www. are links, bare domains
# (example.com) are not, so they need no escape.
PARSER = MarkdownIt("gfm-like")
PARSER.linkify.set({"fuzzy_link": False})


@pytest.mark.parametrize(
    ("code", "fence"), [("", "```"), ("a ` b", "```"), ("```", "````"), ("x ````` y ``` z", "``````")]
)
def test_fence_is_longer_than_any_backtick_run(code: str, fence: str) -> None:
    assert fence_for(code) == fence


@pytest.mark.parametrize(
    ("language", "info"),
    [(None, ""), ("python", "python"), ("c ++", "c++"), ("x`y", "xy"), (" \t", ""), ("a&amp;\\b\x00", "a\\&amp;\\\\b")],
)
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
    expected = "\n".join(
        line.strip() for line in value.replace("\r\n", "\n").replace("\r", "\n").split("\n") if line.strip()
    ).replace("\x00", "\ufffd")
    assert rendered_text(escape(value)) == expected
    assert rendered_text(escape_one_line(value)) == data_label(value)  # a label: its controls as \uXXXX


fence_heavy_prose = st.lists(
    st.sampled_from(
        [
            "```",
            "~~~",
            "````",
            "  ```",
            "   ~~~~",
            "    ```",
            "- a",
            "1. b",
            "> c",
            "```py",
            "```a`b",
            "text",
            "",
            "<pre>",
            "</pre>",
            "<!--",
            "-->",
            "\t```",
        ]
    ),
    max_size=10,
).map("\n".join)


@pytest.mark.parametrize(
    "prose",
    [
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
    ],
)
def test_prose_cannot_swallow_what_follows(prose: str) -> None:
    document = contained(prose) + "\n## Next\n"
    tokens = PARSER.parse(document)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.level == 0]
    assert headings[-1:] == ["Next"]
    assert prose.split("\n")[0] in document  # written as it was


@given(st.one_of(text, fence_heavy_prose))
def test_any_prose_is_contained(prose: str) -> None:
    tokens = PARSER.parse(contained(prose) + "\n## Next\n")
    assert tokens[-3].type == "heading_open" and tokens[-3].level == 0 and tokens[-2].content == "Next"


@given(st.one_of(text, fence_heavy_prose))
def test_quick_proof_never_contradicts_the_parser(prose: str) -> None:
    from vis_export.formats.prose import _closed, _surely_closed
    from vis_export.strings import lf

    normal = lf(prose)
    normal = normal if normal.endswith("\n") or not normal else normal + "\n"
    if _surely_closed(normal):
        assert _closed(normal)


@pytest.mark.parametrize(
    "prose",
    [
        "- a\n  ```\nfoo\n```",  # the list item's fence ends with the item; the last line opens a new one
        "```a`b\n```",  # not an opener: the second line opens a fence
        "```\ncode\n> ```",  # a quoted line does not close a fence
    ],
)
def test_quick_proof_defers_to_the_parser_on_tricky_prose(prose: str) -> None:
    from vis_export.formats.prose import _surely_closed

    assert not _surely_closed(prose + "\n")
    test_prose_cannot_swallow_what_follows(prose)


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("Debugging a Flask KeyError on /profile", "Debugging a Flask KeyError on /profile"),
        ("gpt-5.6", "gpt-5.6"),
        ("settings.toml (v2): 3 + 4 = 7?", "settings.toml (v2): 3 + 4 = 7?"),
        ("C# and #1", "C# and \\#1"),
        ("**bold** `x` [a](b) <b> &amp;", "\\*\\*bold\\*\\* \\`x\\` \\[a\\](b) \\<b\\> \\&amp;"),
        ("see https://x.y or www.x.y", "see https\\://x.y or www\\.x.y"),
        ("- item", "\\- item"),
        ("1. one", "1\\. one"),
    ],
)
def test_only_what_could_become_structure_is_escaped(value: str, written: str) -> None:
    assert escape_one_line(value) == written


@given(st.one_of(text, st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=60)))
@example("\r-")  # a CR ends a line, so "-" opens a list item
@example("a\r# b")
def test_the_words_of_prose_are_the_parsers_with_or_without_a_parse(prose: str) -> None:
    from vis_export.formats.prose_words import _parser, prose_words

    parsed: list[str] = []
    for token in _parser().parse(prose):
        for child in token.children or ():
            if child.type in ("text", "code_inline", "html_inline", "image"):
                parsed.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                parsed.append(" ")
        if token.type in ("fence", "code_block", "html_block"):
            parsed.append(token.content)
        parsed.append(" ")
    assert prose_words(prose).split() == "".join(parsed).split()


# Prose as agents write it (words, punctuation, emphasis, code spans, backtick
# fences), and now and then what only a parse reads right.
_PROSE_PIECES = st.sampled_from(
    [
        *("a", "foo", "parse_config", "x1", "é", "日本", "Ω"),
        *(" ", " ", "  ", "\n", "\n\n", "\n  \n"),
        *("*", "**", "***", "_", "__", "___", "`", "``", "```"),
        *(".", ",", ";", ":", "!", "?", "(", ")", "'", '"', "-", "+", "=", "#", "~", "1.", "2)", "$", "/", "%"),
        *("\n```\nx  *y*\n```\n", "\n```py\n[a](b) <c>\n\n````\n", "\n````\n```\n````", "\n```\n", "\n ```\n"),
        *("\n* ", "\n- ", "\n> ", "\n# ", "\n1. ", "\n    ", "\n***\n", "\n___\n", "\n---\n", "\n===\n", "\n~~~\n"),
        *("[", "]", "<", "&", "&amp;", "\\", "|", "\t", "\u00a0", "\u2028", "\x1c", "\r", "\x00", "[^1]", "\n[^1]: n"),
    ]
)
prose_markdown = st.lists(st.one_of(_PROSE_PIECES, _PROSE_PIECES, st.text(max_size=3)), max_size=30).map("".join)


@given(st.one_of(prose_markdown, text))
@example("**a b** c `x()` d\n\n```rust\nfn f(x: &str) -> Vec<u8> {}\n```\n\n*e* _f_ g_h")
@example("*a **b* c**")  # the rule of three
@example("a ` b ` c ``d`e`` `f")  # a code span's one space each side; runs of other lengths inside
@example("\x1c*a*")  # white space that some rules trim
def test_the_words_of_simple_prose_are_the_parsers(prose: str) -> None:
    """The words read without a parse (``_simple_words``) are the parser's:
    emphasis paired by CommonMark's delimiter rules, code spans, fences."""
    from vis_export.formats.prose_words import prose_words, visible_words

    assert visible_words(prose) == " ".join(prose_words(prose).split())


def test_code_spans_without_a_closer_are_read_in_linear_time() -> None:
    """Runs of backticks of distinct lengths (none closes another) before many
    emphasis marks: each looked for its closer among all later marks, n^1.5
    (18 s for 750k characters of one paragraph, a snippet's hit in ``serve``)."""
    from vis_export.formats.prose_words import prose_words, visible_words

    def prose(size: int) -> str:
        head = "a".join("`" * length for length in range(1, int((size / 2) ** 0.5)))
        return f"{head} {'*a' * (size // 4)}"

    small = prose(2_000)
    assert visible_words(small) == " ".join(prose_words(small).split())
    large = prose(750_000)
    with time_limit(60):  # the bound is on CPU (0.6 s; a wall bound of 6 s failed at load average 13), this on a hang
        start = time.process_time()
        words = visible_words(large)
        assert time.process_time() - start < 6
    assert words.startswith(large[:1000])  # no closer: the backticks are text


def test_prose_of_paragraphs_emphasis_code_spans_and_fences_is_read_without_a_parse() -> None:
    """The corpus's prose (what the search benchmark finds) takes the simple reading."""
    from corpus import session
    from vis_export.formats.prose_words import _simple_words, prose_words

    prose = [
        block["markdown"]
        for message in session(60_000, seed=3)["messages"]
        for block in message["content"]
        if block["type"] == "prose"
    ]
    simple = [(markdown, _simple_words(markdown)) for markdown in prose]
    assert all(words is not None and words.split() == prose_words(markdown).split() for markdown, words in simple)
