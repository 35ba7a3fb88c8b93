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

import errno
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from vis_export.errors import VisExportError
from vis_export.searchindex.engines import STORED, Engine

_DETAIL_WIDTH = 200
_STDERR_LOCK = threading.RLock()


class IndexFailure(VisExportError):
    """An index job or search that cannot start or go on: one line that says why."""


class DamagedIndex(Exception):
    """What vis-export itself finds wrong in an index's data (a stored document
    that is not as written)."""


class ForeignIndex(Exception):
    """An index's files hold what no index that vis-export writes holds, and
    reading it would run code (see ``whoosh_pickle``): it is not opened."""


# "Is damaged; remove it and rebuild it" is said only of damage: following that
# advice deletes the index, so an error of ours (an argument an engine refuses,
# a bug) or of the machine (a full disk, a permission) never says it. Damage is
# what tantivy calls corruption, what vis-export finds wrong in stored data, and
# what fails in a Python engine's own code (Whoosh's unpickling) or in a Rust
# panic while the index's files are read; an exception raised in vis-export's
# code (tantivy's errors are too: Rust has no frames of its own) is ours, and a
# call that writes fails on the engine or the machine.
_DAMAGE = ("Data corrupted", "Failed to open file for read", "Failed to open the directory", "An IO error occurred")
_MACHINE = frozenset(
    {
        errno.EACCES,
        errno.EPERM,
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EROFS,
        errno.EMFILE,
        errno.ENFILE,
        errno.ENOMEM,
        errno.EBUSY,
        errno.EAGAIN,
        errno.EIO,
    }
)
_OS_ERROR = re.compile(r"\(os error (\d+)\)")
_PACKAGE = str(Path(__file__).resolve().parents[1])


def _detail(error: BaseException) -> str:
    detail = "".join(c if c.isprintable() else "?" for c in " ".join(str(error).split())) or type(error).__name__
    if len(detail) > _DETAIL_WIDTH:
        detail = detail[: _DETAIL_WIDTH - 1] + "…"
    return detail


def _failure(directory: Path, error: BaseException, reading: bool) -> IndexFailure:
    """The line for an engine call that failed; ``reading``: a call that reads
    the index's files (opening it, counting, searching)."""
    detail = _detail(error)
    verdict = _verdict(error, reading)
    if verdict == "foreign":
        return IndexFailure(f"index {directory} cannot be opened: {detail}; it was not written by vis-export")
    if verdict == "machine":
        return IndexFailure(f"index {directory}: cannot {'read' if reading else 'write to'} it: {detail}")
    if verdict == "damage":
        return IndexFailure(f"index {directory} is damaged: {detail}; remove it and rebuild it with vis-export index")
    return IndexFailure(f"index {directory}: the search engine failed, not the index (left as it was): {detail}")


def found_damaged(directory: Path, error: DamagedIndex | OSError) -> IndexFailure:
    """The line for what a check of vis-export's own finds reading an index's
    files outside an engine call (no engine runs: descriptor 2 is not held)."""
    return _failure(directory, error, reading=True)


def _verdict(error: BaseException, reading: bool) -> str:
    if isinstance(error, ForeignIndex):
        return "foreign"
    if _machine(error):  # first: tantivy's "An IO error occurred" is damage unless the machine's
        return "machine"
    if isinstance(error, DamagedIndex) or str(error).startswith(_DAMAGE):
        return "damage"
    if _raised_by_us(error) and not _panic(error):
        return "ours"
    return "damage" if reading else "engine"


def _machine(error: BaseException) -> bool:
    """A full disk, a permission, too many open files: the machine, not the index."""
    if isinstance(error, MemoryError):
        return True
    if isinstance(error, OSError) and error.errno in _MACHINE:
        return True
    found = _OS_ERROR.search(str(error))  # Rust's io::Error, as tantivy reports it
    return found is not None and int(found.group(1)) in _MACHINE


def _raised_by_us(error: BaseException) -> bool:
    """Raised in vis-export's own code (a bug of ours), not in the engine's; a
    module of ours that stands in for the engine's code (``whoosh_pickle``, whose
    loaders read the index's data for Whoosh) says ``ENGINE_CODE = True``."""
    trace = error.__traceback__
    if trace is None:
        return False
    while trace.tb_next is not None:
        trace = trace.tb_next
    frame = trace.tb_frame
    ours = str(Path(frame.f_code.co_filename).resolve()).startswith(_PACKAGE + os.sep)
    return ours and not frame.f_globals.get("ENGINE_CODE", False)


def _panic(error: BaseException) -> bool:
    return type(error).__name__ == "PanicException"  # pyo3's has no importable home


def _engine_failure(error: BaseException) -> bool:
    """Exceptions, and Rust panics; but a missing engine package is no damage to
    the index, and an engine's own ``IndexFailure`` line says what is."""
    if isinstance(error, (ImportError, IndexFailure)):
        return False
    return isinstance(error, Exception) or _panic(error)


def _flush_stderr() -> None:
    if sys.stderr is not None:
        sys.stderr.flush()


# One scratch file, kept for the next call (a new one per call was a tenth of
# a quick search's time): the process's own (a forked child makes its own, as
# both would share one offset), and a call inside another gets a new one.
_SCRATCH: list[tuple[int, Any]] = []  # the free scratch file, and the process it was made in


def _scratch() -> Any:
    if _SCRATCH and _SCRATCH[0][0] == os.getpid():
        return _SCRATCH.pop()[1]
    _SCRATCH.clear()
    import tempfile  # on first use: a no-op rerun calls no engine

    return tempfile.TemporaryFile(buffering=0)


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
        scratch = _scratch()
        os.dup2(scratch.fileno(), 2)
        try:
            yield replay
        finally:
            _flush_stderr()
            os.dup2(saved, 2)
            os.close(saved)
            written = os.fstat(scratch.fileno()).st_size
            if written:
                if replay[0]:
                    os.lseek(scratch.fileno(), 0, os.SEEK_SET)
                    _replay(scratch.fileno(), written)
                os.ftruncate(scratch.fileno(), 0)
                os.lseek(scratch.fileno(), 0, os.SEEK_SET)
            if _SCRATCH:  # a call inside this one left its own
                _SCRATCH.pop()[1].close()
            _SCRATCH.append((os.getpid(), scratch))


def _replay(scratch: int, size: int) -> None:
    """What an engine wrote to descriptor 2, written there now."""
    while size > 0:
        chunk = os.read(scratch, min(size, 1 << 16))
        if not chunk:
            return
        size -= len(chunk)
        while chunk:
            chunk = chunk[os.write(2, chunk) :]


@contextmanager
def engine_call(directory: Path, reading: bool = True) -> Iterator[None]:
    """Runs one call into an engine over the index at ``directory``; ``reading``:
    one that reads the index's files rather than writes them."""
    with _stderr_held() as replay:
        try:
            yield
        except BaseException as error:
            if not _engine_failure(error):
                raise
            replay[0] = False
            raise _failure(directory, error, reading) from None


def _check_stored(document: dict[str, Any]) -> None:
    """A hit holds every stored field as written (strings, and the time as an
    integer), so what a search returns is plain data whatever the files say."""
    if not (
        all(isinstance(document.get(name), str) for name in STORED if name != "created_at")
        and type(document.get("created_at")) is int
    ):
        raise DamagedIndex(f"stored document {document.get('key')!r} lacks fields or holds other values")


class GuardedEngine:
    """An engine whose every call goes through ``engine_call``."""

    def __init__(self, directory: Path, open_engine: Callable[[], Engine]):
        self.directory = directory
        with engine_call(directory):
            self.engine = open_engine()
        self.name = self.engine.name

    def add(self, documents: list[dict[str, Any]]) -> None:
        with engine_call(self.directory, reading=False):
            self.engine.add(documents)

    def delete_session(self, session_id: str) -> None:
        with engine_call(self.directory, reading=False):
            self.engine.delete_session(session_id)

    def commit(self) -> None:
        with engine_call(self.directory, reading=False):
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
        with engine_call(self.directory, reading=False):
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
