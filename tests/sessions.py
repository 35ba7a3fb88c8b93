"""Sessions written in a test's own words and read by the real reader.

A test builds its session as a Vis document and reads it with the strict reader, so that what it exports is a session
a source could hand over (a helper that built model objects itself could make sessions no reader makes). A document the
reader refuses fails the test here, with the reader's problems, not later as a ``None`` somewhere inside an export.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vis_export.model import Session
from vis_export.sources import read
from vis_export.sources.messages import session_document


def session_of(document: dict[str, Any], source: str = "s.json") -> Session:
    """The session the strict reader makes of a Vis ``document`` read from ``source`` (default id ``s``)."""
    result = session_document(document, source, "s")
    assert result.session is not None, [problem.line(source) for problem in result.problems]
    return result.session


def message_of(*blocks: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A completed assistant message at time 0 holding ``blocks`` (ids ``b0``, ``b1``… where a block has none);
    ``fields`` replace any of those (``role="user"``, ``id="m2"``…)."""
    content = [{"id": f"b{i}", **block} for i, block in enumerate(blocks)]
    return {"id": "m", "role": "assistant", "status": "completed", "created_at": 0, "content": content, **fields}


def one_message(*blocks: dict[str, Any], **session: Any) -> Session:
    """A session of one ``message_of`` of ``blocks``; ``session`` sets the document's fields (``title``, ``id``…)."""
    return session_of({"id": "s", "messages": [message_of(*blocks)], **session})


def sessions_read(path: Path, lenient: bool = False) -> list[Session]:
    """Every session read from the file or folder ``path``; each result must hold one (problems are allowed)."""
    results = list(read(path, lenient=lenient))
    assert all(r.session is not None for r in results), [r.problems for r in results]
    return [r.session for r in results if r.session is not None]
