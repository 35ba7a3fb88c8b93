"""The work of ``index`` (``jobs.indexing``) on units of the sources,
wherever a runner runs it: each session's hash, and its documents when the
index lacks that hash (or, for a database, the session written there).

A worker of a cluster checks first that it sees the sources
(``distributed.tasks``), and keeps its database writer for its next tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

from vis_export.exporting import Reading
from vis_export.searchindex.database import Database
from vis_export.searchindex.documents import IndexReasoning
from vis_export.sources.parts import Part, read_part

if TYPE_CHECKING:
    from vis_export.policy import SessionView
    from vis_export.redaction import Redaction


# A session's documents: made (on a worker: they are sent back), or made when
# asked (in this process: one session's at a time, as the job adds them).
Documents = list[dict[str, Any]] | Callable[[], list[dict[str, Any]]] | None
# (digest, documents or None, written): a session's hash and, when the index
# lacks that hash, its documents; ``written`` when the worker wrote it itself.
Made = tuple[str, Documents, bool]
_databases: dict[str, Any] = {}  # a writer per database, kept by the worker process for its next tasks


def index_unit(
    unit: tuple[Part, ...],
    lenient: bool,
    reasoning: IndexReasoning,
    known: dict[str, str],
    database: Database | None,
    redaction: Redaction | None = None,
    on_worker: bool = False,
) -> list[list[tuple[Reading, Made | None]]]:
    """Each session of each part with what indexing it takes (``Made``), its
    documents made only when ``known`` lacks its hash (and, in the job's own
    process, only once the job asks for them). With ``database`` the
    worker writes such a session itself, in its own transaction as a job in
    one process does, and returns no documents."""
    from vis_export.searchindex.documents import indexed_view, view_digest

    found = []
    with _forgotten_if_failed(database):
        for part in unit:
            if on_worker:  # see ``convert_unit``; imported there only: the job's own process loads no Dask module
                from vis_export.distributed.tasks import check_visible

                check_visible(part)
            entries: list[tuple[Reading, Made | None]] = []
            for loaded in read_part(part, lenient):
                session, made = loaded.session, None
                if session is not None:
                    view = indexed_view(session, reasoning, redaction)
                    digest = view_digest(view, reasoning)
                    changed = known.get(session.id) != digest
                    docs: Documents = None
                    if changed and database is not None:
                        _write(database, session.id, digest, _documents(view))
                    elif changed:
                        docs = _documents(view) if on_worker else partial(_documents, view)
                    made = (digest, docs, changed and database is not None)
                entries.append((Reading.of(loaded), made))
            found.append(entries)
        if database is not None:
            _writer(database).finish()  # the task is done once its sessions are committed
        return found


def _documents(view: SessionView) -> list[dict[str, Any]]:
    from vis_export.searchindex.documents import view_documents

    return list(view_documents(view))


def close_writers() -> None:
    """Closes the database writers this process kept: the job's own process
    runs tasks too (while a local cluster starts), and outlives its job."""
    while _databases:
        _databases.popitem()[1].close()


@contextmanager
def _forgotten_if_failed(database: Database | None) -> Iterator[None]:
    """A worker keeps its database writer for the next task, but not one that failed."""
    try:
        yield
    except BaseException:
        if database is not None and database.uri in _databases:
            _databases.pop(database.uri).close()
        raise


def _writer(database: Database) -> Any:
    from vis_export.searchindex.engines.postgresql_engine import PostgresEngine

    engine = _databases.get(database.uri)
    if engine is None or engine.connection.closed or (engine.wait, engine.job) != (database.wait, database.job):
        if engine is not None:
            engine.close()
        engine = _databases[database.uri] = PostgresEngine(
            database.uri, writable=True, wait=database.wait, job=database.job
        )
    return engine


def _write(database: Database, session_id: str, digest: str, docs: list[dict[str, Any]]) -> None:
    writer = _writer(database)
    writer.delete_session(session_id)
    writer.add(docs)
    writer.record({session_id: digest}, database.origin, {}, set())
    writer.commit()
