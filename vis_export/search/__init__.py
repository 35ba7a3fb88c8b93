"""Search: index the prose and code of many sessions, and query them.

``index`` runs an incremental job (see ``job``); ``search`` parses a query
(free words and quoted phrases, see ``query``), asks the engine, keeps only the
blocks that contain each phrase exactly, and makes a snippet per hit.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from vis_export.model import Session
from vis_export.search.documents import IndexReasoning, check_index_reasoning
from vis_export.search.engines import FILTERS, open_engine
from vis_export.search.job import (
    ENGINE_DATA, IndexCounts, IndexFailure, check_placement, index_sessions, read_manifest,
)
from vis_export.search.query import SnippetMaker, parse, phrase_terms

__all__ = ["Hit", "IndexCounts", "IndexFailure", "index", "search", "check_placement"]


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
    snippet: str
    snippet_html: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def index(
    sessions: Iterable[Session], directory: str | os.PathLike[str], engine: str = "tantivy",
    reasoning: IndexReasoning = "none", prune: bool = False, wait: float = 0.0, threads: int = 0,
    progress: Callable[[Session], None] | None = None, warn: Callable[[str], None] | None = None,
) -> IndexCounts:
    """Index ``sessions`` into ``directory``; returns how many were added, updated,
    unchanged and (with ``prune``) removed."""
    check_index_reasoning(reasoning)
    return index_sessions(sessions, Path(directory), engine, reasoning, prune, wait, threads, progress, warn)


def search(
    query: str, directory: str | os.PathLike[str], limit: int = 10, role: str | None = None,
    type: str | None = None, language: str | None = None, session: str | None = None,  # noqa: A002
    since: int | None = None, until: int | None = None,
) -> list[Hit]:
    """Ranked hits for ``query`` (words must all match; ``"quoted phrases"`` must
    occur exactly); ``since``/``until`` are times in ms."""
    path = Path(directory)
    if not (path / ENGINE_DATA).exists():
        raise IndexFailure(f"{path}: no index here (run vis-export index first)")
    manifest = read_manifest(path, None)
    parsed = parse(query)
    filters = {name: value for name, value in zip(FILTERS, (session, role, type, language.lower() if language
                                                            else None)) if value}
    engine = open_engine(manifest["engine"], path / ENGINE_DATA, writable=False)
    try:
        terms = [t for phrase in parsed.phrases for t in phrase_terms(phrase)]
        # With a phrase, every candidate is checked, so none may be cut first.
        found = engine.search(list(parsed.words), terms, filters, since, until,
                              None if parsed.phrases else limit)
    finally:
        engine.close()
    if parsed.phrases:
        found = [(score, doc) for score, doc in found if all(p in doc["text"] for p in parsed.phrases)]
    found.sort(key=lambda hit: (-hit[0], hit[1]["key"]))
    snippet = SnippetMaker(parsed.words, parsed.phrases)
    hits = []
    for score, doc in found[:limit]:
        made = snippet(doc["text"] if parsed.phrases or doc["block_type"] == "code" else doc["plain"])
        hits.append(Hit(doc["session_id"], doc["session_title"], doc["message_id"], doc["block_id"], doc["role"],
                        doc["block_type"], doc["language"], int(doc["created_at"]), round(score, 4),
                        made.text, made.html))
    return hits
