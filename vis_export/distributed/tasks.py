"""What Dask workers run: each reads its parts of the sources itself (see
``sources.parts``) and does the expensive work there.

A task checks first that its worker sees what the job needs at the job's
paths (a source; the output folder, by a marker file the job put in it): a
worker on another machine without the shared file system would otherwise
report sources as missing, or write files where nobody looks for them.
"""

from __future__ import annotations

import os
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_export.distributed.cluster import result
from vis_export.distributed.failures import DaskFailure
from vis_export.exporting import Reading, export, rendered
from vis_export.formats.options import ExportOptions
from vis_export.model import Session
from vis_export.searchindex.documents import IndexReasoning
from vis_export.searchindex.target import Database
from vis_export.sources.parts import Part, read_part
from vis_export.sources.result import LoadResult
from vis_export.sources.stamp import source_stamp

if TYPE_CHECKING:
    from vis_export.redaction import Redaction

SHARED = "sources and the output must be at the same path on every worker"
_KEPT = 4  # files whose sessions a worker keeps for its next task (the same file's next sessions)
_read: OrderedDict[tuple[Part, bool], tuple[list[int], list[LoadResult]]] = OrderedDict()


class NotShared(DaskFailure):
    """A worker cannot see a path the job needs (``path``: a source)."""

    def __init__(self, message: str, path: str | None = None):
        super().__init__(message, path)  # both in ``args``: the worker sends it pickled
        self.path = path

    def __str__(self) -> str:
        return str(self.args[0])


def worker_name() -> str:
    from distributed import get_worker

    try:
        return str(get_worker().address)
    except ValueError:  # not on a worker
        return "in this process"


def check_visible(part: Part) -> None:
    if part.path is not None and not os.access(part.path, os.R_OK):
        raise NotShared(f"the Dask worker {worker_name()} cannot read {part.name} ({part.path}): {SHARED}", part.path)


def task_result(client: Any, future: Any, address: str, task: tuple[Any, ...]) -> Any:
    """The result of ``future``, which runs ``task`` (a function and its
    arguments); a source that its worker did not find and this process does
    not find either is gone since the job was planned, not hidden from the
    worker: the task is run here, where that is one line, as in one process."""
    try:
        return result(client, future, address)
    except NotShared as failure:
        if failure.path is None or os.path.exists(failure.path):
            raise
        function, *arguments = task
        return function(*arguments, checked=False)


def echoed(reading: Reading, before: Reading | None, part: Part, k: int) -> bool:
    """Whether ``reading``, the first of a store's later part, only repeats the
    failure the part before it ended with: a store split into parts for the
    workers, gone since the job was planned (or unreadable), fails in each
    part, where read whole, as in one process, it fails once."""
    later = k == 0 and part.sessions is not None and part.sessions[0] > 0
    return later and reading.session_id is None and reading == before


def check_output(folder: Path, shown: Path) -> None:
    """``folder`` is the job's own, made by the job in the output folder ``shown``."""
    if not folder.is_dir():
        raise NotShared(f"the Dask worker {worker_name()} cannot see the output folder {shown}: {SHARED}")


def results_of(part: Part, lenient: bool) -> list[LoadResult]:
    """``read_part``, kept for the next few tasks: a file holding many sessions is
    rendered a session per task, and each would otherwise read it again."""
    assert part.path is not None
    stamp = source_stamp(Path(part.path))  # a worker outlives jobs: the next may follow a rewrite
    if stamp is None:  # gone since the job was planned: ``read_part`` says so
        return read_part(part, lenient)
    key = (part, lenient)
    kept = _read.get(key)
    if kept is not None and kept[0] == stamp:
        _read.move_to_end(key)
        return kept[1]
    results = read_part(part, lenient)
    _read[key] = (stamp, results)
    while len(_read) > _KEPT:
        _read.popitem(last=False)
    return results


# A session rendered ahead: (True, the file it is in, within the job's folder),
# (False, the line saying why it could not be), or (rendered in the job's own
# process, ``keep``) the file's bytes; ``None``: not rendered.
Rendered = tuple[bool, str] | bytes | None


def convert_unit(
    unit: tuple[Part, ...],
    lenient: bool,
    to: str,
    options: ExportOptions,
    folder: Path | None,
    shown: Path,
    only: int | None = None,
    checked: bool = True,
    keep: bool = False,
) -> list[list[tuple[Reading, Rendered]]]:
    """Reads each part of ``unit`` and renders every session that loaded into
    ``folder`` (the job's, from where the job renames each file to its name
    once all names are known). With ``only``, just that session of the file
    is rendered (a file of many sessions in a format that takes seconds a
    session is rendered a session per task); with ``folder`` ``None`` (the
    output folder could not be made), nothing is. ``checked`` false: a source
    not found is read as gone (a line), not as one the worker cannot see.
    ``keep``: each file's bytes are kept, not written (the job's own process
    writes them straight to their names, once known)."""
    found = []
    for part in unit:
        if checked:
            check_visible(part)
        if folder is not None:
            check_output(folder, shown)
        entries: list[tuple[Reading, Rendered]] = []
        for k, loaded in enumerate(results_of(part, lenient)):
            rendered: Rendered = None
            if loaded.session is not None and folder is not None and only in (None, k):
                rendered = _rendered(loaded.session, to, options, folder, keep)
            entries.append((Reading.of(loaded, to, options), rendered))
        found.append(entries)
    return found


def _rendered(session: Session, to: str, options: ExportOptions, folder: Path, keep: bool) -> Rendered:
    if keep:
        made = rendered(session, to, options)
        return made if isinstance(made, bytes) else (False, made)
    name = f"{uuid.uuid4().hex}.out"
    line = export(session, folder / name, to, options, make_folder=False)  # gone: the job is
    return (True, name) if line is None else (False, line)


# (digest, documents or None, written): a session's hash and, when the index
# lacks that hash, its documents; ``written`` when the worker wrote it itself.
Made = tuple[str, list[dict[str, Any]] | None, bool]
_databases: dict[str, Any] = {}  # a writer per database, kept by the worker process for its next tasks


def index_unit(
    unit: tuple[Part, ...],
    lenient: bool,
    reasoning: IndexReasoning,
    known: dict[str, str],
    database: Database | None,
    redaction: Redaction | None = None,
    checked: bool = True,
) -> list[list[tuple[Reading, Made | None]]]:
    """Each session of each part with what indexing it takes (``Made``), its
    documents made only when ``known`` lacks its hash. With ``database`` the
    worker writes such a session itself, in its own transaction as a job in
    one process does, and returns no documents."""
    from vis_export.searchindex.documents import indexed_view, view_digest, view_documents

    found = []
    with _forgotten_if_failed(database):
        for part in unit:
            if checked:  # see ``convert_unit``
                check_visible(part)
            entries: list[tuple[Reading, Made | None]] = []
            for loaded in read_part(part, lenient):
                session, made = loaded.session, None
                if session is not None:
                    view = indexed_view(session, reasoning, redaction)
                    digest = view_digest(view, reasoning)
                    docs = list(view_documents(view)) if known.get(session.id) != digest else None
                    if docs is not None and database is not None:
                        _write(database, session.id, digest, docs)
                    made = (digest, None if database else docs, docs is not None and database is not None)
                entries.append((Reading.of(loaded), made))
            found.append(entries)
        if database is not None:
            _writer(database).finish()  # the task is done once its sessions are committed
        return found


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
    store = _writer(database)
    store.delete_session(session_id)
    store.add(docs)
    store.record({session_id: digest}, database.origin, {}, set())
    store.commit()
