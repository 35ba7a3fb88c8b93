"""The clipboard's text/html as it looks once pasted: a document or a chat keeps
the fragment but not our stylesheet, so the highlighting must travel inline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser import assert_framed_and_coloured, browser, open_pasted  # noqa: F401 - the fixture
from htmldom import code_elements, fragment, text_content

from vis_export.copying import clipboard
from vis_export.model import block_from_json

CODE = "def parse_config(path):\n\treturn open(path).read()  # text\r\n"
BLOCK = block_from_json({"id": "c", "type": "code", "language": "python", "text": CODE})


@pytest.mark.slow
def test_pasted_code_keeps_its_colours_without_a_stylesheet(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    open_pasted(browser, tmp_path, clipboard(BLOCK)["text/html"])
    assert_framed_and_coloured(browser, "def")


def test_pasted_code_is_still_exactly_the_code() -> None:
    (code,) = code_elements(fragment(clipboard(BLOCK)["text/html"]))
    assert text_content(code) == CODE
    assert 'class="k"' not in clipboard(BLOCK)["text/html"]
