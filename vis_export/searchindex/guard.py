"""An index's own files are input too: when an engine cannot read them, the
caller gets one ``IndexFailure`` line, not whatever the engine raised.

Anything can damage the files of an index (a full disk, a copy cut short, a
hand edit). Whoosh then raises whatever its unpickling hits; tantivy raises
``ValueError`` or panics. pyo3 turns a Rust panic into ``PanicException``, a
``BaseException`` that ``except Exception`` lets through, and Rust's panic hook
has already written its report (a backtrace too, under ``RUST_BACKTRACE``) to
file descriptor 2 before Python sees the exception. No Python API silences
that hook, so every engine call runs with descriptor 2 pointed at a scratch
file: replayed when the call succeeds, dropped when it fails (the failure
line says it all). A lock keeps two threads from swapping descriptor 2 under
each other.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from vis_export.searchindex.engines import STORED, Engine

_DETAIL_WIDTH = 200
_STDERR_LOCK = threading.RLock()


class IndexFailure(Exception):
    """An index job or search that cannot start or go on: one line that says why."""


def _damaged(directory: Path, error: BaseException) -> IndexFailure:
    detail = "".join(c if c.isprintable() else "?" for c in " ".join(str(error).split())) or type(error).__name__
    if len(detail) > _DETAIL_WIDTH:
        detail = detail[: _DETAIL_WIDTH - 1] + "…"
    return IndexFailure(f"index {directory} is damaged: {detail}; remove it and rebuild it with vis-export index")


def _engine_failure(error: BaseException) -> bool:
    """Exceptions, and Rust panics (pyo3's ``PanicException`` has no importable
    home); but a missing engine package is no damage to the index."""
    if isinstance(error, ImportError):
        return False
    return isinstance(error, Exception) or type(error).__name__ == "PanicException"


def _flush_stderr() -> None:
    if sys.stderr is not None:
        sys.stderr.flush()


@contextmanager
def _stderr_held() -> Iterator[list[bool]]:
    """Descriptor 2 goes to a scratch file; it is replayed unless the caller
    clears the flag it is handed."""
    replay = [True]
    with _STDERR_LOCK:
        try:
            saved = os.dup(2)
        except OSError:  # no descriptor 2: nothing to keep clean
            yield replay
            return
        _flush_stderr()
        with tempfile.TemporaryFile() as scratch:
            os.dup2(scratch.fileno(), 2)
            try:
                yield replay
            finally:
                _flush_stderr()
                os.dup2(saved, 2)
                os.close(saved)
                if replay[0]:
                    scratch.seek(0)
                    with open(2, "wb", closefd=False) as stderr:
                        shutil.copyfileobj(scratch, stderr)


@contextmanager
def engine_call(directory: Path) -> Iterator[None]:
    """Runs one call into an engine over the index at ``directory``."""
    with _stderr_held() as replay:
        try:
            yield
        except BaseException as error:
            if not _engine_failure(error):
                raise
            replay[0] = False
            raise _damaged(directory, error) from None


def _check_stored(document: dict[str, Any]) -> None:
    """A hit holds every stored field as written (strings, and the time as an
    integer), so what a search returns is plain data whatever the files say."""
    if not (
        all(isinstance(document.get(name), str) for name in STORED if name != "created_at")
        and type(document.get("created_at")) is int
    ):
        raise ValueError(f"stored document {document.get('key')!r} lacks fields or holds other values")


class GuardedEngine:
    """An engine whose every call goes through ``engine_call``."""

    def __init__(self, directory: Path, open_engine: Callable[[], Engine]):
        self.directory = directory
        with engine_call(directory):
            self.engine = open_engine()
        self.name = self.engine.name

    def add(self, documents: list[dict[str, Any]]) -> None:
        with engine_call(self.directory):
            self.engine.add(documents)

    def delete_session(self, session_id: str) -> None:
        with engine_call(self.directory):
            self.engine.delete_session(session_id)

    def commit(self) -> None:
        with engine_call(self.directory):
            self.engine.commit()

    def count(self) -> int:
        with engine_call(self.directory):
            return self.engine.count()

    def search(
        self, words: list[str], filters: dict[str, str], since: int | None, until: int | None, limit: int, offset: int
    ) -> list[tuple[float, dict[str, Any]]]:
        with engine_call(self.directory):
            found = self.engine.search(words, filters, since, until, limit, offset)
            for _, document in found:
                _check_stored(document)
            return found

    def close(self) -> None:
        with engine_call(self.directory):
            self.engine.close()

    def __getattr__(self, name: str) -> Any:
        """The engine's ``phrase_search``, where it has one, guarded as ``search`` is."""
        method = getattr(self.__dict__.get("engine"), name, None) if name == "phrase_search" else None
        if method is None:
            raise AttributeError(name)

        def guarded(*args: Any) -> list[tuple[float, dict[str, Any]]]:
            with engine_call(self.directory):
                found: list[tuple[float, dict[str, Any]]] = method(*args)
                for _, document in found:
                    _check_stored(document)
                return found

        return guarded
