"""Text for a terminal: data may show, never steer it (rule R6).

A title or a tool output can hold ESC sequences (screen clears, OSC 52
clipboard writes, hyperlinks), a CR that overwrites what was printed, or
bidirectional overrides that reorder what a reader sees. On a terminal each
such character is written as a ``\\uXXXX`` escape instead: readable, and still
valid inside a JSON string, so ``--json`` output stays JSON. Files and pipes
get the bytes unchanged (code stays byte-exact there).
"""

from __future__ import annotations

import re
from typing import IO

# C0 controls but tab and newline, DEL, C1 controls, bidi embeddings, overrides and isolates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def escaped(text: str) -> str:
    """``text`` with every character that could control a terminal written as ``\\uXXXX``."""
    return _UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def for_stream(text: str, stream: IO[str] | IO[bytes]) -> str:
    """``text`` as it may be written to ``stream``: escaped on a terminal, unchanged elsewhere."""
    isatty = getattr(stream, "isatty", None)
    return escaped(text) if isatty is not None and isatty() else text
