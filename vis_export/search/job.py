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


def index_sessions(
    sessions: Iterable[Session],
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
    that are no longer among ``sessions``."""
    if engine not in ENGINES:
        raise IndexFailure(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    counts = IndexCounts()
    with writer_lock(directory, wait):
        manifest = read_manifest(directory, engine)
        manifest["engine"] = engine
        known: dict[str, str] = manifest["sessions"]
        store = open_engine(engine, directory / ENGINE_DATA, writable=True, threads=threads)
        try:
            pending = 0
            seen: set[str] = set()
            done: dict[str, str] = {}
            for session in sessions:
                if progress is not None:
                    progress(session)
                if session.source:
                    check_placement(directory, [session.source])
                if session.id in seen:
                    if warn is not None:
                        warn(f"{session.source}: session {session.id!r} was already indexed from another "
                             "source in this job; this one is skipped")
                    continue
                seen.add(session.id)
                digest = content_hash(session, reasoning)
                if known.get(session.id) == digest:
                    counts.unchanged += 1
                    continue
                docs = list(documents(session, reasoning))
                store.delete_session(session.id)
                store.add(docs)
                if session.id in known:
                    counts.updated += 1
                else:
                    counts.added += 1
                done[session.id] = digest
                pending += len(docs) + 1
                if pending >= COMMIT_EVERY:
                    _commit(store, directory, manifest, done)
                    pending = 0
            if prune:
                for session_id in sorted(set(known) - seen):
                    store.delete_session(session_id)
                    del known[session_id]
                    counts.removed += 1
            _commit(store, directory, manifest, done)
        finally:
            store.close()
    return counts


def _commit(store: Engine, directory: Path, manifest: dict[str, Any], done: dict[str, str]) -> None:
    store.commit()
    manifest["sessions"].update(done)
    done.clear()
    _write_manifest(directory, manifest)
