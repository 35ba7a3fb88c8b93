"""Search: the index of the blocks of many sessions, and its queries.

The index job that fills it is batch work (``jobs.index_job``); ``search`` parses a query
(free words and quoted phrases, see ``query``), asks the engine, keeps only the
blocks that contain each phrase exactly, and makes a snippet per hit.

The command line imports this package to know the block types it can filter
on, before any command runs: the engines and the query parser are
imported only when a function needs them.
"""

from __future__ import annotations

import atexit
import os
from functools import lru_cache
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_export.timefmt import Moment

if TYPE_CHECKING:
    from vis_export.searchindex.directory import check_placement
    from vis_export.searchindex.engines import Engine
    from vis_export.searchindex.engines.postgresql_engine import PostgresEngine
    from vis_export.searchindex.guard import IndexFailure
    from vis_export.searchindex.hit import Hit
    from vis_export.searchindex.query import ParsedQuery

__all__ = ["Hit", "IndexFailure", "search", "check_placement"]

# Made when asked for: a hit is a frozen dataclass, made by compiling its
# methods (7 M instructions), and every command imports this package, a no-op
# index rerun too.
_LAZY = {
    "Hit": "vis_export.searchindex.hit",
    "IndexFailure": "vis_export.searchindex.guard",
    "check_placement": "vis_export.searchindex.directory",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module), name)


def search(
    query: str,
    location: str | os.PathLike[str],
    limit: int = 10,
    role: str | None = None,
    type: str | None = None,
    language: str | None = None,
    session: str | None = None,  # noqa: A002
    since: Moment | None = None,
    until: Moment | None = None,
) -> list[Hit]:
    """Ranked hits for ``query`` in the index at ``location`` (a folder, or a
    ``postgresql://`` URI; words must all match; ``"quoted phrases"`` and
    words of punctuation or symbols only must occur exactly); at most ``limit``
    (1 or more, however large). The filters are the command's: ``role``,
    ``type``, ``language``, ``session``, and ``since``/``until`` as the command
    takes them (``"2025-12-03"``, ``"2025-12-03T10:00:00+01:00"``, UTC unless
    they say otherwise, or ms), or a ``datetime`` or ``date``; bounds included.

    A query of more words and phrases than ``query.MAX_TERMS`` raises ``ValueError``."""
    from vis_export.searchindex.engines import FILTERS
    from vis_export.searchindex.hit import Hit
    from vis_export.searchindex.query import SnippetMaker, engine_words, parse
    from vis_export.timefmt import as_millis

    if limit < 1:
        raise ValueError(f"limit must be 1 or more, not {limit}")
    engine = _reader(location)
    parsed = parse(query)
    filters = {
        name: value
        for name, value in zip(FILTERS, (session, role, type, language.lower() if language else None), strict=True)
        if value
    }
    first, last = (None if t is None else _bound(as_millis(t)) for t in (since, until))
    found = _matching(engine, parsed, engine_words(parsed), filters, first, last, limit)
    found.sort(key=lambda hit: (-hit[0], hit[1]["key"]))
    snippet = SnippetMaker(parsed.words, parsed.phrases)
    hits = []
    for score, doc in found[:limit]:
        made = snippet.of_prose(doc["text"]) if doc["block_type"] == "prose" else snippet(doc["text"])
        hits.append(
            Hit(
                doc["session_id"],
                doc["session_title"],
                doc["message_id"],
                doc["block_id"],
                doc["role"],
                doc["block_type"],
                doc["language"],
                doc["created_at"],
                round(score, 4),
                made.text,
                made.html,
                made,
            )
        )
    return hits


def _bound(ms: int) -> int:
    """A time bound within a step of the times a session may hold: one further
    out excludes nothing more, and the engines fail on (tantivy) or misread
    (whoosh) bounds near the ends of 64 bits."""
    from vis_export.contract import MAX_TIME

    return max(-1, min(ms, MAX_TIME + 1))


def _reader(location: str | os.PathLike[str]) -> Engine:
    """The engine of the index at ``location``: a folder's kept open while its
    manifest is unchanged, a database's connection kept open."""
    from vis_export.searchindex.directory import ENGINE_DATA, MANIFEST
    from vis_export.searchindex.guard import IndexFailure
    from vis_export.searchindex.target import is_database

    if is_database(location):
        return _open_database(str(location))
    # os.path rather than pathlib: a third of the time, paid by every search.
    folder = os.path.realpath(location)
    try:
        version = os.stat(os.path.join(folder, MANIFEST)).st_mtime_ns
    except (FileNotFoundError, NotADirectoryError):  # not a folder it cannot read: that is no missing index
        version = None
    if version is None or not os.path.exists(os.path.join(folder, ENGINE_DATA)):
        raise IndexFailure(f"{Path(location)}: no index here (run vis-export index first)")
    return _open_reader(Path(folder), version)


@lru_cache(maxsize=8)
def _open_reader(path: Path, version: int) -> Engine:
    from vis_export.searchindex.directory import open_index, read_manifest

    return open_index(path, read_manifest(path, None)["engine"], writable=False)


_DATABASES: dict[str, PostgresEngine] = {}  # open connections, oldest first


def _open_database(uri: str) -> Engine:
    """A connection per database, kept for the next search (a connection costs
    more than most queries); the oldest of more than a few is closed."""
    from vis_export.extras import require

    if uri in _DATABASES and not _DATABASES[uri].connection.closed:  # closed: the server went away
        return _DATABASES[uri]
    require("psycopg", "the postgresql search engine")
    from vis_export.searchindex.engines.postgresql_engine import PostgresEngine

    engine = _DATABASES[uri] = PostgresEngine(uri, writable=False)
    if len(_DATABASES) > 8:
        _DATABASES.pop(next(iter(_DATABASES))).close()
    if len(_DATABASES) == 1:
        atexit.register(_close_databases)
    return engine


def _close_databases() -> None:
    while _DATABASES:
        _DATABASES.popitem()[1].close()


def _matching(
    engine: Engine,
    parsed: ParsedQuery,
    words: list[str],
    filters: dict[str, str],
    since: int | None,
    until: int | None,
    limit: int,
) -> list[tuple[float, dict[str, Any]]]:
    """The best ``limit`` matches. Candidates for a phrase come in ever longer
    lists, best first, and each is checked to contain the phrase exactly, until
    enough pass. Each list starts from the top rather than at an offset: an
    engine may rank a longer list differently (PostgreSQL ranks a bounded set of
    candidates), and pages of different rankings could repeat or skip a hit.
    An engine that narrows phrases itself (``phrase_search``: PostgreSQL checks
    them, tantivy asks for their inner words side by side) is asked for
    ``limit`` first: its candidates all but always pass."""
    if not parsed.phrases:
        return engine.search(words, filters, since, until, limit, 0)
    itself = getattr(engine, "phrase_search", None)
    kept: list[tuple[float, dict[str, Any]]] = []
    checked: set[str] = set()
    asked = limit if itself else max(100, limit * 10)
    while True:
        found = (
            itself(words, parsed.phrases, filters, since, until, asked)
            if itself
            else engine.search(words, filters, since, until, asked, 0)
        )
        for score, doc in found:
            if doc["key"] not in checked:
                checked.add(doc["key"])
                if all(p in doc["text"] for p in parsed.phrases):
                    kept.append((score, doc))
        if len(kept) >= limit or len(found) < asked:
            return sorted(kept, key=lambda hit: -hit[0])
        asked *= 4
