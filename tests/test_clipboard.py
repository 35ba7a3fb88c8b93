"""What a copy button gets, for each kind of object."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from conftest import INPUT
from htmldom import elements, parse
from hypothesis import example, given
from sessions import message_of, session_of
from strategies import session_documents, small_blocks

from vis_export import clipboard, load
from vis_export.formats import get_format
from vis_export.formats.html import pasted_styles
from vis_export.model import block_from_json

SESSION = next(load(INPUT / "session.json"))


def test_flavours_of_a_session_message_list_and_block() -> None:
    for obj in (SESSION, SESSION.messages[1], list(SESSION.messages[:2]), SESSION.messages[1].blocks[4]):
        flavours = clipboard(obj)
        assert set(flavours) == {"text/plain", "text/markdown", "text/html"}
        assert all(isinstance(v, str) and v for v in flavours.values())
        assert "PRIVATE-CANARY" not in json.dumps(flavours)


def test_one_block_flavours() -> None:
    prose = block_from_json({"id": "p", "type": "prose", "markdown": "**Six** tests pass.\r\n"})
    assert clipboard(prose, flavours=("text/plain", "text/markdown")) == {
        "text/plain": "**Six** tests pass.\n",
        "text/markdown": "**Six** tests pass.\n",
    }
    assert (
        clipboard(prose)["text/html"].strip()
        == '<div class="block prose"><p><strong>Six</strong> tests pass.</p>\n</div>'
    )

    error = block_from_json({"id": "e", "type": "error", "code": "boom", "message": "It *broke*", "retryable": True})
    assert clipboard(error, flavours=("text/plain", "text/markdown")) == {
        "text/plain": "Error [boom]: It *broke* (retryable)\n",
        "text/markdown": "> **Error** (boom): It \\*broke\\* *(retryable)*\n",
    }


def test_private_reasoning_block_copies_nothing_unless_authorised() -> None:
    secret = block_from_json({"id": "r", "type": "reasoning", "text": "PRIVATE-CANARY plan"})
    assert clipboard(secret) == {"text/plain": "", "text/markdown": "", "text/html": ""}
    assert "PRIVATE-CANARY plan" in clipboard(secret, reasoning="all")["text/plain"]


def test_each_flavour_is_named_by_the_media_type_of_the_format_it_is_made_as() -> None:
    """A pasted flavour and a served download of the same format say the same media type (the format's own)."""
    flavours = clipboard(SESSION.messages[0])
    assert list(flavours) == [get_format(name).media_type for name in ("text", "markdown", "html")]


def test_copying_one_block_imports_nothing_heavy() -> None:
    code = (
        "import sys, vis_export\n"
        "from vis_export.model import block_from_json\n"
        "block = block_from_json({'id': 'c', 'type': 'code', 'text': 'x = 1'})\n"
        "vis_export.clipboard(block, flavours=('text/plain', 'text/markdown'))\n"
        "heavy = [m for m in ('weasyprint', 'pygments', 'tantivy', 'whoosh', 'markdown_it', 'jinja2', 'click')"
        " if m in sys.modules]\n"
        "print(heavy)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


# Every colour class, both callouts and a code block's caption and frame.
STYLED = {
    "id": "styled",
    "messages": [
        message_of(
            {"id": "p", "type": "code", "language": "python", "text": "@d\ndef f(x=1):  # c\n  return len('s')\n"},
            {"id": "d", "type": "code", "language": "diff", "text": "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n"},
            {"id": "h", "type": "code", "language": "html", "text": '<a href="x">y</a>\n'},
            {"id": "e", "type": "error", "code": "boom", "message": "broke"},
            {"id": "n", "type": "notice", "code": "note", "message": "noted"},
            {"id": "t", "type": "tool", "tool": "run", "status": "completed", "input": {"a": 1}, "output": "ok"},
        )
    ],
}


def _styles(html: str) -> set[str]:
    return {element.get("style") for element in elements(parse(html)) if element.get("style") is not None}


@given(session_documents(small_blocks))
@example(STYLED)
def test_a_pasted_fragment_has_only_the_styles_a_served_page_allows(document: Any) -> None:
    """A served page's policy allows by hash exactly ``pasted_styles`` in style
    attributes (Chromium checks those of what its script copies): a fragment
    with another would be a CSP violation in the console at every copy."""
    session = session_of(document)
    assert _styles(clipboard(session.messages, flavours=("text/html",))["text/html"]) <= set(pasted_styles())


def test_the_allowed_styles_are_those_pasted() -> None:
    """No style allowed in vain: the sample's fragment has every one."""
    styled = session_of(STYLED)
    assert _styles(clipboard(styled.messages, flavours=("text/html",))["text/html"]) == set(pasted_styles())
