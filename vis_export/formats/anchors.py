"""Element ids for messages and blocks (``#m-<message_id>``, ``#b-<block_id>``).

The ids come from the data, so they are written with a reversible escape: an
anchor holds only letters, digits and ``_ . -`` (nothing a URL fragment must
encode, nothing an attribute or a CSS selector trips on), and every other
character becomes ``~<hex>~``. The escape is injective; a document holding
the same id twice (the contract does not forbid it) gives the later ones a
``~n<k>`` suffix, which no escaped id can end with, so every anchor is unique.
"""

from __future__ import annotations

import re

_OUTSIDE = re.compile(r"[^A-Za-z0-9_.-]")


def anchor(prefix: str, data_id: str) -> str:
    """The anchor of the first element with this id: what a link to it names."""
    return f"{prefix}-" + _OUTSIDE.sub(lambda match: f"~{ord(match.group()):x}~", data_id)


class Anchors:
    """The anchors of one document, each handed out once."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def take(self, prefix: str, data_id: str) -> str:
        base = made = anchor(prefix, data_id)
        count = 1
        while made in self.used:
            count += 1
            made = f"{base}~n{count}"
        self.used.add(made)
        return made
