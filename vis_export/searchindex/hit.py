"""A search's hit (``vis_export.searchindex.Hit``), in a module of its own:
the package is imported by every command, and a hit's class is made only
when a search makes one."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vis_export.searchindex.query import Snippet


@dataclass(frozen=True)
class Hit:
    session_id: str
    session_title: str
    message_id: str
    block_id: str
    role: str
    block_type: str
    language: str
    created_at: int
    score: float
    snippet: str  # matches marked **so**
    snippet_html: str  # matches marked <mark>so</mark>
    marks: Snippet = field(repr=False, compare=False)  # the same in pieces, for other marks (a terminal's colour)

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "marks"}
