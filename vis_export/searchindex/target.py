"""Where an index job writes: a folder (tantivy, Whoosh) or a PostgreSQL database.

The job (``job``) decides what to add, update and prune; a target decides how
that is kept. A folder has one writer at a time (a lock file) and a manifest
of session hashes written after each engine commit. A database has many
writers at once and keeps the hashes in the same transaction as the blocks,
one session per transaction.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vis_export.searchindex.directory import (
    MANIFEST,
    Placement,
    PlacementRefused,
    check_index,
    check_ours,
    check_placement,
    first_missing,
    open_index,
    read_manifest,
    remove_created,
    write_manifest,
    writer_lock,
)
from vis_export.searchindex.engines import DEFAULT_ENGINE, Engine, engine_names, is_engine
from vis_export.searchindex.guard import IndexFailure

if TYPE_CHECKING:
    from vis_export.searchindex.database import Database

DATABASE_SCHEMES = ("postgresql://", "postgres://")
DATABASE_ENGINE = "postgresql"


def is_database(location: str | os.PathLike[str]) -> bool:
    """A PostgreSQL connection URI rather than a folder."""
    return isinstance(location, str) and location.startswith(DATABASE_SCHEMES)


class Target(Protocol):
    commit_every: int  # documents per commit

    def check(self, placement: Placement) -> None:
        """Refuses sources the index may not be written beside (R3)."""

    def writing(self, engine: str | None, wait: float, threads: int) -> Any:
        """A context: the engine open for writing, and the manifest (``sessions``: hashes, ``files``)."""

    def prunable(self, known: dict[str, str]) -> set[str]:
        """The known sessions this job may prune."""

    def unchanged(self, engine: str | None, files: list[tuple[str, Any]], prune: bool) -> int | None:
        """The sessions of ``files`` (keys and stamps as the manifest has them)
        when the index certainly holds every one as it is, and the job has
        nothing to do; else ``None`` (the job finds out)."""

    def commit(
        self,
        writer: Engine,
        manifest: dict[str, Any],
        done: dict[str, str],
        files: dict[str, Any],
        files_gone: set[str],
    ) -> None:
        """Makes what the job wrote since the last commit, and ``manifest`` (already holding it), last."""


class FolderTarget:
    # A commit stalls the job while the engine catches up, merges and starts
    # a new writer: 96k blocks took 10.0-13.0 s in five commits and 7.7-9.9 s
    # in one (tantivy, interleaved runs). A killed job redoes at most this
    # many blocks, about ten seconds of work.
    commit_every = 100_000

    def __init__(self, directory: Path):
        self.directory = directory
        self.on_disk: dict[str, Any] | None = None  # the manifest as last read or written (None: no file yet)

    def check(self, placement: Placement) -> None:
        check_placement(self.directory, placement)

    @contextmanager
    def writing(self, engine: str | None, wait: float, threads: int) -> Iterator[tuple[Engine, dict[str, Any]]]:
        """Whatever can refuse the directory is checked before anything is
        created in it; a session handed over by a caller that turns out to come
        from a folder holding the index undoes a directory this job created."""
        check_ours(self.directory)
        created = first_missing(self.directory)
        try:
            with writer_lock(self.directory, wait):
                manifest = read_manifest(self.directory, engine)
                self.on_disk = _snapshot(manifest) if (self.directory / MANIFEST).exists() else None
                manifest["engine"] = manifest["engine"] or DEFAULT_ENGINE
                name = manifest["engine"]
                writer = _OpenedToWrite(name, lambda: open_index(self.directory, name, writable=True, threads=threads))
                if self.on_disk is None:  # a new index: its engine's files are made now, even if nothing is added
                    writer.opened()
                try:
                    yield writer, manifest
                    if writer.engine is None:  # nothing written: the index is whole, or the job says why
                        check_index(self.directory, name)
                finally:
                    writer.close()
        except PlacementRefused:
            if created is not None:
                remove_created(self.directory, created)
            raise

    def prunable(self, known: dict[str, str]) -> set[str]:
        return set(known)

    def unchanged(self, engine: str | None, files: list[tuple[str, Any]], prune: bool) -> int | None:
        """The job finds out: the manifest is a file beside the index, read in a moment."""
        return None

    def commit(
        self,
        writer: Engine,
        manifest: dict[str, Any],
        done: dict[str, str],
        files: dict[str, Any],
        files_gone: set[str],
    ) -> None:
        """Engine first, manifest after: the manifest is never ahead of the index.
        A manifest the same as on disk (a rerun that changed nothing) is not
        written again: for thousands of files, that was most of a no-op rerun.
        Sessions new to the index are named first, with a hash no session has
        (``_named_first``): a job stopped between the two (Ctrl-C lands as the
        engine's commit returns) leaves none the next job cannot redo or prune."""
        self._named_first(manifest, done)
        writer.commit()
        if manifest != self.on_disk:
            write_manifest(self.directory, manifest)
            self.on_disk = _snapshot(manifest)

    def _named_first(self, manifest: dict[str, Any], done: dict[str, str]) -> None:
        """The manifest on disk, with the sessions of ``done`` it lacks under a
        hash no session has: the next job redoes them if a source still holds
        them, and prunes them if not (an unnamed session's blocks stayed for
        good: no job knew of them). Nothing written when there are none."""
        on_disk = self.on_disk or {**manifest, "sessions": {}, "files": {}}
        new = done.keys() - on_disk["sessions"].keys()
        if not new:
            return
        named = {**on_disk, "sessions": {**on_disk["sessions"], **dict.fromkeys(sorted(new), NOT_YET_COMMITTED)}}
        write_manifest(self.directory, named)
        self.on_disk = named


# What the manifest says of a session whose blocks an engine commit may or may not have made (no digest is empty).
NOT_YET_COMMITTED = ""


class _OpenedToWrite:
    """An index's engine opened for writing when the job first writes: a job
    that finds every file unchanged (a no-op rerun) decides that from the
    manifest alone, and neither takes the engine's writer nor commits (the
    index is only opened for reading, so a damaged one is still refused)."""

    def __init__(self, name: str, opener: Callable[[], Engine]):
        self.name, self.opener = name, opener
        self.engine: Engine | None = None

    def opened(self) -> Engine:
        if self.engine is None:
            self.engine = self.opener()
        return self.engine

    def add(self, documents: list[dict[str, Any]]) -> None:
        self.opened().add(documents)

    def delete_session(self, session_id: str) -> None:
        self.opened().delete_session(session_id)

    def commit(self) -> None:
        """Nothing written, nothing to commit."""
        if self.engine is not None:
            self.engine.commit()

    def count(self) -> int:
        return self.opened().count()

    def search(
        self, words: list[str], filters: dict[str, str], since: int | None, until: int | None, limit: int, offset: int
    ) -> list[tuple[float, dict[str, Any]]]:
        return self.opened().search(words, filters, since, until, limit, offset)

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()


def _snapshot(manifest: dict[str, Any]) -> dict[str, Any]:
    """What the job may change of a manifest, copied: it adds, replaces and
    removes hashes and file entries, and never changes an entry in place."""
    return {key: dict(value) if isinstance(value, dict) else value for key, value in manifest.items()}


class DatabaseTarget:
    commit_every = 1  # each session in a transaction of its own

    def __init__(self, uri: str, origin: str | None):
        self.uri, self.origin = uri, origin or _host_name()
        self.own: set[str] = set()
        self.job = uuid.uuid4().hex

    def for_workers(self, wait: float) -> Database:
        from vis_export.searchindex.database import Database

        return Database(self.uri, wait, self.origin, self.job)

    def check(self, placement: Placement) -> None:
        """Nothing is read back from a database."""

    @contextmanager
    def writing(self, engine: str | None, wait: float, threads: int) -> Iterator[tuple[Engine, dict[str, Any]]]:
        from vis_export.extras import require

        _check_engine(engine)
        require("psycopg", "the postgresql search engine")
        from vis_export.searchindex.engines.postgresql_engine import PostgresEngine

        writer = PostgresEngine(self.uri, writable=True, wait=wait, job=self.job)
        try:
            sessions, self.own, files = writer.known(self.origin)
            yield writer, {"engine": DATABASE_ENGINE, "sessions": sessions, "files": files}
            writer.finish()  # the job is done once its last session is committed
            writer.refresh_statistics()
        finally:
            writer.close()

    def prunable(self, known: dict[str, str]) -> set[str]:
        """Only this origin's: another machine's sessions are not in our sources."""
        return self.own & set(known)

    def unchanged(self, engine: str | None, files: list[tuple[str, Any]], prune: bool) -> int | None:
        """Asked of the server in one round trip, without psycopg (``postgresql_quick``)."""
        from vis_export.searchindex.engines.postgresql_quick import unchanged_sessions
        from vis_export.searchindex.engines.postgresql_text import each_string, storable

        _check_engine(engine)
        stored = [(storable(key), each_string(stamp, storable)) for key, stamp in files]
        return unchanged_sessions(self.uri, storable(self.origin), stored, prune)

    def commit(
        self,
        writer: Engine,
        manifest: dict[str, Any],
        done: dict[str, str],
        files: dict[str, Any],
        files_gone: set[str],
    ) -> None:
        from vis_export.searchindex.engines.postgresql_engine import PostgresEngine

        assert isinstance(writer, PostgresEngine)
        writer.record(done, self.origin, files, files_gone)
        writer.commit()
        self.own |= set(done)


def _host_name() -> str:
    """``socket.gethostname()``, which on POSIX is the node name: without importing socket (a no-op rerun's 5 ms)."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    return socket.gethostname()


def _check_engine(engine: str | None) -> None:
    if engine not in (None, DATABASE_ENGINE):
        raise IndexFailure(f"index: a PostgreSQL index is searched by the postgresql engine, not {engine}")


def target_for(location: str | os.PathLike[str], engine: str | None, origin: str | None) -> Target:
    if is_database(location):
        return DatabaseTarget(str(location), origin)
    if engine is not None and not is_engine(engine):
        raise IndexFailure(f"unknown engine {engine!r}; choose one of {', '.join(engine_names())}")
    return FolderTarget(Path(location))
