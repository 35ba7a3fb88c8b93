"""R6 on a terminal: no control character from data reaches it, in any command.

The commands run in a real pseudo-terminal (``pty``), as a person runs them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, strategies as st
from onterminal import on_terminal

from vis_export.searchindex.hit_text import MATCH_END, MATCH_START
from vis_export.terminal import escaped

HOSTILE = ["\x1b[2J\x1b[H", "\x1b]52;c;cHduZWQ=\x07", "\x9b31m", "\r\x1b[K", "\u202e", "\x1b]8;;http://x\x1b\\"]


def _session(path: Path) -> None:
    evil = "".join(HOSTILE)
    path.write_text(
        json.dumps(
            {
                "id": f"id{evil}",
                "title": f"title {evil}",
                "messages": [
                    {
                        "id": "m1",
                        "role": "user",
                        "status": "completed",
                        "created_at": 1,
                        "model": f"m{evil}",
                        "author": {"display_name": f"name{evil}"},
                        "content": [
                            {"id": "p", "type": "prose", "markdown": f"findme {evil}"},
                            {"id": "c", "type": "code", "language": "python", "text": f"findme = '{evil}'"},
                            {"id": "e", "type": "error", "code": "x", "message": f"boom {evil}"},
                        ],
                    }
                ],
            }
        )
    )


@pytest.mark.parametrize(
    "command",
    [
        ["sessions", "{src}"],
        ["sessions", "--json", "{src}"],
        ["convert", "{src}", "--to", "text"],
        ["convert", "{src}", "--to", "markdown"],
        ["convert", "{src}", "--to", "json"],
        ["validate", "{bad}"],
        ["validate", "--json", "{bad}"],
        ["search", "findme", "--index", "{idx}"],
        ["search", "findme", "--index", "{idx}", "--json"],
        ["convert", "{src}", "--to", "text", "--session", "nothing\x1b[2J"],
        ["show", "{src}", "--session", "id" + "".join(HOSTILE)],
        ["show", "{src}", "--session", "nothing\x1b[2J"],
    ],
)
def test_no_control_characters_reach_the_terminal(tmp_path: Path, command: list[str]) -> None:
    source = tmp_path / "src" / "chat.json"
    source.parent.mkdir()
    _session(source)
    bad = tmp_path / "bad\x1b[2J.json"
    bad.write_text(
        json.dumps(
            {
                "id": "m",
                "role": "user",
                "status": "completed",
                "created_at": 1,
                "content": [],
                "bad\x1b]52;c;eA==\x07Key": 1,
            }
        )
    )
    index = tmp_path / "idx"
    subprocess.run(
        [sys.executable, "-m", "vis_export", "index", str(source), "--index", str(index)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    shown = on_terminal(*[part.format(src=source, idx=index, bad=bad) for part in command]).decode("utf-8", "replace")
    shown = shown.replace(MATCH_START, "").replace(MATCH_END, "")  # search's own highlights, around escaped data
    if command[0] == "show":  # show's own styles (the data's sequences here are none of them)
        shown = re.sub("\x1b\\[[0-9;]*m", "", shown)
    # The terminal driver itself turns LF into CRLF: any other CR came from data.
    assert not set(shown.replace("\r\n", "\n")) & set("\x1b\x9b\x07\r\u202e"), repr(shown)
    assert "Traceback" not in shown
    assert "\\u001b" in shown or "\\x1b" in shown  # the data is there, written as escapes


def test_files_and_pipes_keep_the_bytes(tmp_path: Path) -> None:
    source = tmp_path / "chat.json"
    _session(source)
    piped = subprocess.run(
        [sys.executable, "-m", "vis_export", "convert", str(source), "--to", "text"],
        capture_output=True,
        timeout=60,
        check=True,
    ).stdout.decode()
    assert f"findme = '{''.join(HOSTILE)}'" in piped  # code stays byte-exact off the terminal


def test_escapes_are_json_escapes() -> None:
    evil = "".join(HOSTILE)
    assert json.loads(escaped(json.dumps(evil, ensure_ascii=False))) == evil
    assert escaped("tab\tand\nnewline é 日本") == "tab\tand\nnewline é 日本"


@given(st.text())
def test_nothing_escaped_can_steer_a_terminal(text: str) -> None:
    shown = escaped(text)
    assert not [c for c in shown if c not in "\t\n" and unicodedata.category(c) == "Cc"]
    assert not set(shown) & set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    assert json.loads(escaped(json.dumps(text, ensure_ascii=False))) == text  # JSON stays JSON
