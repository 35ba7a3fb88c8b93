"""The HTML page as a person sees it, in a real Chromium: what is on the first
screen of a phone, what the table of contents shows, how quotes look."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser import browser, console, viewport  # noqa: F401 - the fixture
from conftest import INPUT
from sessions import session_of

from vis_export import load
from vis_export.formats.html import to_html

pytestmark = pytest.mark.slow  # a real browser or renderer

TURNS = 27


def _design_discussion() -> Any:
    messages = []
    for n in range(TURNS):
        role = "user" if n % 2 == 0 else "assistant"
        prose = (
            f"## Step {n}\n\nWe fixed the **500** error in `read_cfg` "
            f"([details](https://example.com/{n})).\n\n> quoted reply {n}\n"
        )
        messages.append(
            {
                "id": f"m{n}",
                "role": role,
                "status": "completed",
                "created_at": 1_740_000_000_000 + n,
                "content": [{"id": "p", "type": "prose", "markdown": prose}],
            }
        )
    return session_of({"id": "design", "title": "Design discussion", "messages": messages})


def _open(driver: Any, tmp_path: Path, width: int, height: int) -> None:
    page = tmp_path / "page.html"
    page.write_text(to_html(_design_discussion()), encoding="utf-8")
    viewport(driver, width, height)
    driver.get(page.as_uri())


def test_on_a_phone_the_conversation_starts_on_the_first_screen(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    _open(browser, tmp_path, 390, 844)
    first_turn = browser.find_element("css selector", "main .message")
    assert first_turn.rect["y"] < 844 / 2, first_turn.rect
    toc = browser.find_element("css selector", "nav.toc")
    assert toc.rect["height"] < 80 and "27 turns" in toc.text


def test_contents_preview_the_words_not_the_markdown(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    _open(browser, tmp_path, 1280, 900)
    browser.find_element("css selector", "nav.toc summary").click()
    previews = [e.text for e in browser.find_elements("css selector", ".toc-summary")]
    assert len(previews) == TURNS
    assert previews[0].startswith("Step 0 We fixed the 500 error in read_cfg (details).")
    assert not any(mark in "".join(previews) for mark in ("**", "`", "##", "](", "> "))


def test_blockquotes_are_set_off(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    _open(browser, tmp_path, 1280, 900)
    quote = browser.find_element("css selector", ".prose blockquote")
    quoted = browser.find_element("css selector", ".prose blockquote p")
    paragraph = browser.find_element("css selector", ".prose > p")
    assert float(quote.value_of_css_property("border-left-width").removesuffix("px")) >= 3
    assert quoted.location["x"] >= paragraph.location["x"] + 10  # its words indented past the border


def test_an_exported_page_logs_nothing_to_the_console(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """No CSP violation and no directive a <meta> ignores (frame-ancestors)."""
    page = tmp_path / "golden.html"
    page.write_text(to_html(next(load(INPUT / "session.json"))), encoding="utf-8")
    console(browser)  # what earlier tests left
    browser.get(page.as_uri())
    for closed in browser.find_elements("css selector", "details > summary"):
        closed.click()
    assert browser.find_elements("css selector", "pre code .k")  # it rendered, highlighting and all
    assert console(browser) == []
