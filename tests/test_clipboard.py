"""What a copy button gets, for each kind of object."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import INPUT

from vis_export import clipboard, load
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
