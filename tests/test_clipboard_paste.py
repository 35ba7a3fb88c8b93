"""The clipboard's text/html as it looks once pasted: a document or a chat keeps
the fragment but not our stylesheet, so the highlighting must travel inline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser import browser, viewport  # noqa: F401 - the fixture
from htmldom import code_elements, fragment, text_content

from vis_export.copying import clipboard
from vis_export.formats.highlight import TOKEN_COLOURS
from vis_export.model import block_from_json

CODE = "def parse_config(path):\n\treturn open(path).read()  # text\r\n"
BLOCK = block_from_json({"id": "c", "type": "code", "language": "python", "text": CODE})


def _rgba(hex_colour: str) -> str:
    """How a browser reports a colour: ``#cf222e`` is ``rgba(207, 34, 46, 1)``."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r}, {g}, {b}, 1)"


@pytest.mark.slow
def test_pasted_code_keeps_its_colours_without_a_stylesheet(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    page = tmp_path / "pasted.html"
    # A bare page, as a rich-text editor holds what was pasted: no <style>, no classes defined.
    page.write_text(
        f"<!DOCTYPE html><meta charset=utf-8><body>{clipboard(BLOCK)['text/html']}</body>", encoding="utf-8"
    )
    viewport(browser, 900, 600)
    browser.get(page.as_uri())
    keyword = browser.find_element("xpath", "//code//span[text()='def']")
    assert keyword.value_of_css_property("color") == _rgba(TOKEN_COLOURS["k"])
    pre = browser.find_element("css selector", "pre")
    assert pre.value_of_css_property("background-color") == _rgba("#f6f8fa")
    assert "monospace" in pre.value_of_css_property("font-family")


def test_pasted_code_is_still_exactly_the_code() -> None:
    (code,) = code_elements(fragment(clipboard(BLOCK)["text/html"]))
    assert text_content(code) == CODE
    assert 'class="k"' not in clipboard(BLOCK)["text/html"]
