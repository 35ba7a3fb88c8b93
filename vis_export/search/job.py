"""Incremental index jobs: one writer at a time, a content hash per session,
and a manifest that is only ever behind the engine, never ahead of it.

The manifest (``vis-export-index.json``) records the engine, the schema version
and each session's hash. It is written (atomically) after each engine commit,
so a job killed at any moment leaves an index that opens and searches, and the
next run redoes exactly the sessions whose hash it does not find: a session's
documents are always deleted before they are added again.
"""

from __future__ import annotations

import fcntl
import json
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from vis_export.model import Session
from vis_export.output import write_atomic
from vis_export.search.documents import SCHEMA_VERSION, IndexReasoning, content_hash, documents
from vis_export.search.engines import ENGINES, Engine, open_engine

MANIFEST = "vis-export-index.json"
LOCK = ".vis-export-index.lock"
ENGINE_DATA = "engine"
COMMIT_EVERY = 20_000  # documents


class IndexFailure(Exception):
    """An index job that cannot start or go on: one line that says why."""


@dataclass
class IndexCounts:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0

    def __str__(self) -> str:
        text = f"{self.added} added, {self.updated} updated, {self.unchanged} unchanged"
        return text + (f", {self.removed} removed" if self.removed else "")


@contextmanager
def writer_lock(directory: Path, wait: float) -> Iterator[None]:
    """One writer at a time; the lock goes with the process, even on kill -9."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / LOCK, "a+") as handle:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise IndexFailure(
                        f"{directory}: another index job is writing to it (waited {wait:g} s; see --wait)") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_manifest(directory: Path, engine: str | None) -> dict[str, Any]:
    """The manifest, checked against the engine asked for (``None``: any)."""
    path = directory / MANIFEST
    if not path.exists():
        # New, or killed before its first commit: nothing to keep but our own files.
        strangers = [p.name for p in directory.iterdir() if p.name not in (LOCK, ENGINE_DATA)] \
            if directory.is_dir() else []
        if strangers:
            raise IndexFailure(f"{directory}: not a vis-export index and not empty; choose another directory")
        return {"engine": engine, "schema_version": SCHEMA_VERSION, "sessions": {}}
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise IndexFailure(f"{path}: unreadable index manifest ({error})") from None
    if engine is not None and manifest.get("engine") != engine:
        raise IndexFailure(f"{directory}: this index was built with {manifest.get('engine')}, not {engine}; "
                           f"use --engine {manifest.get('engine')} or another directory")
    if manifest.get("schema_version") != SCHEMA_VERSION:
        raise IndexFailure(f"{directory}: index schema version {manifest.get('schema_version')} is not "
                           f"{SCHEMA_VERSION}; rebuild it in a new directory")
    return manifest


def check_placement(directory: Path, sources: Iterable[str]) -> None:
    """The index never goes inside a source directory or beside a source file:
    a job must not write where sessions are read from (R3)."""
    target = directory.resolve()
    for source in sources:
        path = Path(source)
        if source in ("-", "<stdin>") or not path.exists():
            continue
        home = path.resolve() if path.is_dir() else path.resolve().parent
        if target == home or home in target.parents:
            kind = "inside the source directory" if path.is_dir() else "beside the source file"
            raise IndexFailure(f"{directory}: the index would be {kind} {source}; choose a directory elsewhere")


def _write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    write_atomic(directory / MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=1, sort_keys=True) + "\n")


@dataclass
class Batch:
    """Sessions read together: from one source file (``key``, with its size and
    modification time as ``stamp``) or handed over by a caller (no key). A file
    whose stamp and sessions the manifest already has is not read again."""

    key: str | None
    stamp: list[int] | None
    load: Callable[[], Iterable[Session]]
    complete: Callable[[], bool] = lambda: True  # read without problems (known after load)


def source_batches(
    sources: Iterable[str], lenient: bool, report: Callable[[list[Any]], list[Session]],
    advance: Callable[[], None] = lambda: None,
) -> list[Batch]:
    """One batch per source file (stdin: one without a key). ``report`` receives
    each file's load results, says what is wrong, and returns the sessions."""
    from vis_export.sources import read, source_files

    def batch(name: str, path: Path | None) -> Batch:
        problems: list[bool] = []

        def load() -> list[Session]:
            results = list(read([name], lenient=lenient))
            problems.extend(bool(r.problems) for r in results)
            advance()
            return report(results)

        stamp = None
        if path is not None and path.is_file():
            stamp = file_stamp(path)
            wal = file_stamp(Path(f"{path}-wal"))  # a store's recent turns may live only there
            stamp = stamp + wal if stamp is not None and wal is not None else stamp
        key = str(path.resolve()) if path is not None else None
        return Batch(key, stamp, load, lambda: not any(problems))

    return [batch(name, path) for name, path in source_files(sources)]


def file_stamp(path: Path) -> list[int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns]


def index_sessions(
    batches: Iterable[Batch],
    directory: Path,
    engine: str = "tantivy",
    reasoning: IndexReasoning = "none",
    prune: bool = False,
    wait: float = 0.0,
    threads: int = 0,
    progress: Callable[[Session], None] | None = None,
    warn: Callable[[str], None] | None = None,
) -> IndexCounts:
    """Add or update every session's documents; with ``prune``, remove sessions
    that are no longer among them."""
    if engine not in ENGINES:
        raise IndexFailure(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    with writer_lock(directory, wait):
        manifest = read_manifest(directory, engine)
        manifest["engine"] = engine
        manifest.setdefault("files", {})
        store = open_engine(engine, directory / ENGINE_DATA, writable=True, threads=threads)
        try:
            job = _Job(store, directory, manifest, reasoning, progress, warn)
            for batch in batches:
                job.run(batch)
            if prune:
                job.prune()
            job.commit()
            return job.counts
        finally:
            store.close()


class _Job:
    def __init__(self, store: Engine, directory: Path, manifest: dict[str, Any], reasoning: IndexReasoning,
                 progress: Callable[[Session], None] | None, warn: Callable[[str], None] | None):
        self.store, self.directory, self.manifest, self.reasoning = store, directory, manifest, reasoning
        self.progress, self.warn = progress, warn
        self.known: dict[str, str] = manifest["sessions"]
        self.counts = IndexCounts()
        self.seen: set[str] = set()
        self.done: dict[str, str] = {}
        self.files_done: dict[str, Any] = {}
        self.pending = 0

    def run(self, batch: Batch) -> None:
        entry = self.manifest["files"].get(batch.key) if batch.key else None
        if (entry is not None and entry["stamp"] == batch.stamp
                and all(self.known.get(i) == h for i, h in entry["sessions"].items())
                and not self.seen.intersection(entry["sessions"])):
            self.counts.unchanged += len(entry["sessions"])
            self.seen.update(entry["sessions"])
            return
        hashes = {}
        for session in batch.load():
            digest = self.session(session)
            if digest is not None:
                hashes[session.id] = digest
        if batch.key is not None and batch.stamp is not None and batch.complete():
            self.files_done[batch.key] = {"stamp": batch.stamp, "sessions": hashes}

    def session(self, session: Session) -> str | None:
        if self.progress is not None:
            self.progress(session)
        if session.source:
            check_placement(self.directory, [session.source])
        if session.id in self.seen:
            if self.warn is not None:
                self.warn(f"{session.source}: session {session.id!r} was already indexed from another "
                          "source in this job; this one is skipped")
            return None
        self.seen.add(session.id)
        digest = content_hash(session, self.reasoning)
        if self.known.get(session.id) == digest:
            self.counts.unchanged += 1
            return digest
        docs = list(documents(session, self.reasoning))
        self.store.delete_session(session.id)
        self.store.add(docs)
        if session.id in self.known:
            self.counts.updated += 1
        else:
            self.counts.added += 1
        self.done[session.id] = digest
        self.pending += len(docs) + 1
        if self.pending >= COMMIT_EVERY:
            self.commit()
        return digest

    def prune(self) -> None:
        for session_id in sorted(set(self.known) - self.seen):
            self.store.delete_session(session_id)
            del self.known[session_id]
            self.counts.removed += 1
        self.manifest["files"] = {key: entry for key, entry in self.manifest["files"].items()
                                  if set(entry["sessions"]) <= self.seen}

    def commit(self) -> None:
        """Engine first, manifest after: the manifest is never ahead of the index."""
        self.store.commit()
        self.known.update(self.done)
        self.done.clear()
        self.manifest["files"].update(self.files_done)
        self.files_done.clear()
        self.pending = 0
        _write_manifest(self.directory, self.manifest)
