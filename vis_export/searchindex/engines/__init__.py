"""Search engines behind one interface; each is imported only when chosen
(``opening``, which imports them: they import this contract).

An engine stores the documents of ``search.documents`` and answers one kind of
question: documents that match every query word, the required terms, the
filter values, and a time in range. A query word matches as its identifier key
among the terms (``parseConfig`` -> ``parseconfig``), as its analysed words, or
as its identifier words among the terms (``http_server`` -> ``http``, ``server``).
Every engine analyses prose the same way (Unicode words, lowercase, Snowball
English stems; Chinese, Japanese and Korean left out) and takes the terms as
made in ``documents``: code-aware terms, and the characters and bigrams of
CJK runs (``cjk``), which a query's run finds as its bigrams, each a query word.
"""

from __future__ import annotations

from typing import Any, Protocol

from vis_export.plugins import ENGINES_GROUP, plugins

BUILTIN_ENGINES = ("tantivy", "whoosh")
DEFAULT_ENGINE = "tantivy"  # for a new index; an existing one keeps its own
STORED = (
    "key",
    "session_id",
    "session_title",
    "message_id",
    "block_id",
    "role",
    "block_type",
    "language",
    "created_at",
    "text",
)
FILTERS = ("session_id", "role", "block_type", "language")
# The most indexing threads (``--jobs``) a job asks of an engine: tantivy gives
# each its own memory (16 MiB), and more threads than cores do not write faster.
MAX_THREADS = 64


class Engine(Protocol):
    """What an engine does; a plugin engine (``vis_export.plugins``) is a class
    called as ``(directory, writable, threads)`` that passes
    ``vis_export.searchindex.conformance.check_engine``.

    ``add`` takes documents as ``documents.documents`` makes them (the ``STORED``
    fields plus ``terms``, the code-aware terms) and ``delete_session`` removes
    a session's; neither is visible to a search before ``commit``. ``count`` is
    the number of documents. ``search`` returns ``(score, stored fields)``,
    best first, of the documents where every query word matches (its analysed
    prose words, or its identifier key or identifier words among the terms),
    every filter (``FILTERS``) is equal, and ``created_at`` is within ``since``
    and ``until`` (ms, inclusive, either may be ``None``); ``limit`` is 1 or more,
    however large: the engine never asks its library for more hits than the
    index holds. ``close`` releases files and locks.

    An engine may also check quoted phrases itself: ``phrase_search(words,
    phrases, filters, since, until, limit)`` is ``search`` (from the top) where
    each phrase also occurs in the text, or at least narrowed towards them
    (tantivy: the phrase's inner words side by side); the search still checks
    each hit.
    """

    name: str

    def add(self, documents: list[dict[str, Any]]) -> None: ...
    def delete_session(self, session_id: str) -> None: ...
    def commit(self) -> None: ...
    def count(self) -> int: ...
    def search(
        self, words: list[str], filters: dict[str, str], since: int | None, until: int | None, limit: int, offset: int
    ) -> list[tuple[float, dict[str, Any]]]: ...
    def close(self) -> None: ...


def engine_names() -> tuple[str, ...]:
    """The built-in engines and those installed packages add."""
    return (*BUILTIN_ENGINES, *plugins(ENGINES_GROUP, BUILTIN_ENGINES))
