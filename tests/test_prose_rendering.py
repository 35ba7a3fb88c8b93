"""Prose as real answers write it, rendered as a reader meets it: code fenced in
prose coloured as a code block, aligned table columns, footnotes, headings below
their turn, raw HTML shown as text; in a real Chromium, in both PDF engines'
pages and outlines, and in the Markdown as a renderer reads it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser import assert_framed_and_coloured, browser, open_pasted, rgba, viewport  # noqa: F401 - the fixture
from htmldom import classes, elements, parse, text_content
from pdfpage import outline, page_images, words
from sessions import session_of

from vis_export.copying import clipboard
from vis_export.formats.highlight import TOKEN_COLOURS
from vis_export.formats.html import to_html
from vis_export.formats.pdf import to_pdf

ANSWER = """# Plan

Here is the code:

```js
const speed = (engine) => {
  // fast
  return engine.run(42, "x");
};
```

| Engine | Speed | Note |
|:---|---:|:---:|
| Typst | 3.2 | fast[^1] |
| WeasyPrint | 11.75 | slow |

## Details

```nolang
const plain = <b>1</b>;
```

[^1]: Measured on *two* cores.
"""


def _session(*answers: str) -> Any:
    messages = [{"id": "q", "role": "user", "status": "completed", "created_at": 0, "content": []}]
    messages[0]["content"] = [{"id": "pq", "type": "prose", "markdown": "How fast are they?"}]
    for n, answer in enumerate(answers):
        messages.append(
            {
                "id": f"a{n}",
                "role": "assistant",
                "status": "completed",
                "created_at": n + 1,
                "content": [{"id": f"p{n}", "type": "prose", "markdown": answer}],
            }
        )
    return session_of({"id": "s", "title": "Engines", "messages": messages})


# --- HTML, as parsed by a browser's parser ---------------------------------------------


def test_fenced_code_in_prose_is_highlighted_as_a_code_block_of_its_language() -> None:
    dom = parse(to_html(_session(ANSWER)))
    known, unknown = (code for pre in elements(dom, "pre") for code in elements(pre, "code"))
    assert text_content(known) == ANSWER.split("```js\n")[1].split("```")[0]  # R1: exactly the fenced text
    assert {span.text for span in elements(known, "span") if "k" in classes(span)} >= {"const", "return"}
    assert "language-js" in classes(known)
    assert not list(elements(unknown, "span")) and text_content(unknown) == "const plain = <b>1</b>;\n"
    plain = parse(to_html(_session(ANSWER), no_highlight=True))
    assert not [s for pre in elements(plain, "pre") for s in elements(pre, "span")]


def test_footnotes_are_links_to_their_notes_and_unique_in_the_page() -> None:
    dom = parse(to_html(_session(ANSWER, "Again[^1].\n\n[^1]: Another note.\n")))
    assert "[^1]" not in text_content(next(elements(dom, "main")))
    ids = [e.get("id") for e in elements(dom) if e.get("id")]
    assert len(ids) == len(set(ids))
    refs = [a for sup in elements(dom, "sup") for a in elements(sup, "a")]
    assert [a.text for a in refs] == ["1", "1"]
    notes = {e.get("id"): text_content(e) for e in elements(dom, "li") if (e.get("id") or "").startswith("fn-")}
    assert [notes[a.get("href")[1:]].split(" ↩")[0] for a in refs] == ["Measured on two cores.", "Another note."]


def test_the_contents_preview_a_table_and_footnotes_as_their_words() -> None:
    table = "| Engine | Speed |\n|---|---:|\n| Typst | 3.2 |\n\nTypst is faster.\n"
    dom = parse(to_html(_session(table, ANSWER, "Again[^1].\n\n[^1]: Another note.\n")))
    previews = [text_content(e) for e in elements(dom, "span") if "toc-summary" in classes(e)]
    assert previews[1] == "Engine Speed Typst 3.2 Typst is faster."
    assert previews[2].startswith("Plan Here is the code: const speed = (engine)")
    assert previews[3] == "Again. Another note."
    assert not any(mark in "".join(previews) for mark in ("|", "---", "```", "#", "[^"))


def test_footnote_ids_are_the_same_on_every_copy_r7() -> None:
    """A copy of one message or block gives the same bytes each time, however
    many were rendered before (the parser of copied prose is shared)."""
    session = _session(ANSWER, ANSWER)
    first = [clipboard(message)["text/html"] for message in session.messages]
    block = session.messages[1].blocks[0]
    assert [clipboard(message)["text/html"] for message in session.messages] == first
    assert to_html(block) == to_html(block) and clipboard(block) == clipboard(block)
    assert to_html(session) == to_html(session)
    dom = parse(to_html(session))
    ids = [e.get("id") for e in elements(dom) if e.get("id")]
    assert len(ids) == len(set(ids)) and sum(i.startswith("fn-") for i in ids) == 2


# --- Markdown, as a renderer shows it ------------------------------------------------------


def test_markdown_shows_raw_html_as_written_and_headings_below_their_turn() -> None:
    from htmldom import fragment
    from markdown_it import MarkdownIt

    from vis_export.formats.markdown import to_markdown

    prose = "# Plan\n\n<script>alert('x')</script>\n\nSee <img src=x onerror=alert(1)> and `<kept>`.\n\nEnd\n===\n"
    rendered = fragment(MarkdownIt("gfm-like").render(to_markdown(_session(prose))))
    assert not [e for e in elements(rendered) if e.tag.split("}")[-1] in ("script", "img")]
    text = text_content(rendered)
    assert "<script>alert('x')</script>" in text and "See <img src=x onerror=alert(1)> and <kept>." in text
    tags = [(e.tag.split("}")[-1], text_content(e)) for e in elements(rendered)]
    headings = [(tag, words) for tag, words in tags if tag in ("h1", "h2", "h3", "h4", "h5", "h6")]
    assert headings == [("h1", "Engines"), ("h2", "User"), ("h2", "Assistant"), ("h3", "Plan"), ("h3", "End")]


# --- HTML in a real browser ---------------------------------------------------------------


@pytest.mark.slow
def test_in_a_browser_fenced_code_is_coloured_and_columns_keep_their_alignment(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    page = tmp_path / "page.html"
    page.write_text(to_html(_session(ANSWER)), encoding="utf-8")
    viewport(browser, 1200, 900)
    browser.get(page.as_uri())
    keyword = browser.find_element("xpath", "//div[contains(@class,'prose')]//pre//span[text()='return']")
    assert keyword.value_of_css_property("color") == rgba(TOKEN_COLOURS["k"])
    number = browser.find_element("xpath", "//div[contains(@class,'prose')]//pre//span[text()='42']")
    assert number.value_of_css_property("color") == rgba(TOKEN_COLOURS["m"])
    cells = {c.text: c for c in browser.find_elements("css selector", ".prose td, .prose th")}
    assert cells["3.2"].value_of_css_property("text-align") == "right"
    assert cells["11.75"].value_of_css_property("text-align") == "right"
    assert cells["slow"].value_of_css_property("text-align") == "center"
    assert cells["Typst"].value_of_css_property("text-align") == "left"
    # The right-aligned numbers end where their column ends.
    right_edges = {round(c.rect["x"] + c.rect["width"]) for c in (cells["3.2"], cells["11.75"], cells["Speed"])}
    assert len(right_edges) == 1
    assert "[^1]" not in browser.find_element("tag name", "main").text


@pytest.mark.slow
def test_pasted_prose_keeps_the_colours_of_its_fenced_code(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    message = _session(ANSWER).messages[1]
    open_pasted(browser, tmp_path, clipboard(message)["text/html"])
    assert_framed_and_coloured(browser, "const")
    assert browser.find_element("xpath", "//td[text()='3.2']").value_of_css_property("text-align").endswith("right")


# --- PDF, both engines --------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_prose_headings_sit_below_their_turn_in_the_outline(engine: str) -> None:
    pdf = to_pdf(_session(ANSWER, "###### Deep\n\ntext\n"), engine=engine)
    entries = [(level, title.split(" 19")[0]) for level, title in outline(pdf)]
    # An outline is a tree: a heading deeper than the one before it is its child, whatever its level.
    assert entries == [(1, "User"), (1, "Assistant"), (2, "Plan"), (3, "Details"), (1, "Assistant"), (2, "Deep")]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["weasyprint", "typst"])
def test_pdf_fenced_code_is_coloured_tables_aligned_and_footnotes_numbered(engine: str, tmp_path: Path) -> None:
    pdf = to_pdf(_session(ANSWER), engine=engine)
    (page,) = words(pdf, tmp_path)
    text = " ".join(w.text for w in page)
    assert "[^1]" not in text and "Measured on two cores." in text
    found = {w.text: w for w in page}
    # Right-aligned: the numbers of the Speed column end at the same place, past its heading's start.
    assert abs(found["3.2"].right - found["11.75"].right) < 1.5
    assert found["3.2"].left > found["Speed"].left + 3
    # The keyword is drawn in the keyword colour, the code of no known language in none.
    (image,) = page_images(pdf, tmp_path, dpi=100)
    keyword, plain = found["return"], found["plain"]
    red = _pixels_near(image, keyword, TOKEN_COLOURS["k"])
    assert red > 5, red
    assert _pixels_near(image, plain, TOKEN_COLOURS["k"]) == 0


def _pixels_near(image: Any, word: Any, hex_colour: str) -> int:
    target = tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    box = image.pixels(word.left, word.top, word.right, word.bottom)
    return sum(1 for pixel in box if sum(abs(a - b) for a, b in zip(pixel, target, strict=True)) < 90)


HOSTILE_PROSE = {
    "tags": "<b>x</b> " * 30_000,
    "table": "| a | <b> |\n|---|---:|\n" + "| <i>x | y[^1] |\n" * 20_000,
    "setext": "a <b>\n=\n" * 30_000,
    "html in lists": "- <div>\n  x\n" * 30_000,
    "footnotes": "".join(f"x[^{i}] " for i in range(20_000)) + "\n\n" + "".join(f"[^{i}]: n\n" for i in range(20_000)),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", HOSTILE_PROSE)
def test_hostile_prose_in_markdown_and_html_stays_bounded(name: str) -> None:
    """A few hundred KB of raw HTML, headings, tables or footnotes: seconds, not minutes (R6)."""
    from timelimit import cpu_limit

    from vis_export.formats.markdown import to_markdown

    session = _session(HOSTILE_PROSE[name])
    with cpu_limit(20):  # 20 s of wall time ran out under load (four cases, one in a gc callback)
        markdown = to_markdown(session)
        to_html(session)
    assert "<b>x" not in markdown and "<i>x" not in markdown and "<div>\n  x" not in markdown.split("```html")[0]


@pytest.mark.parametrize("no_highlight", [False, True])
def test_typst_draws_fenced_code_as_coloured_runs_of_exactly_its_text(no_highlight: bool) -> None:
    """What the Typst template receives for code fenced in prose: the fenced text,
    in runs with the highlighter's classes, as a code block of that language."""
    from vis_export.formats.options import ExportOptions
    from vis_export.formats.pdf_typst import TypstProjector

    tree = TypstProjector(ExportOptions(no_highlight=no_highlight)).document(_session(ANSWER))
    prose = tree["messages"][1]["blocks"][0]["c"]
    known, unknown = (node for node in prose if node["t"] == "code")
    runs = [run for chunk in known["chunks"] for run in chunk]
    text = "\n".join("".join(run[1] for run in chunk) for chunk in known["chunks"])
    assert text == ANSWER.split("```js\n")[1].split("\n```")[0]
    if no_highlight:
        assert {run[0] for run in runs} == {""}
    else:
        classes_of = {run[1]: run[0] for run in runs}
        assert (classes_of["return"], classes_of["42"]) == ("k", "m")
    assert {run[0] for chunk in unknown["chunks"] for run in chunk} == {""}
