"""Readers: every input in ``spec/sources.md`` becomes sessions of one model.

Nothing here opens a source for writing. ``read`` yields a ``LoadResult`` per
session (or per source that could not be read), so a batch can report one bad
input and go on; ``load`` is the strict form the API offers.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterable, Iterator, Union

from vis_export.model import Session
from vis_export.problems import InvalidInput, Problem
from vis_export.sources.files import read_bytes, read_file
from vis_export.sources.result import LoadResult, failed
from vis_export.sources.store import SQLITE_HEADER

Source = Union[str, "os.PathLike[str]"]
STDIN = "-"
SESSION_SUFFIXES = (".json", ".jsonl", ".ndjson")
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def read(sources: Source | Iterable[Source], lenient: bool = False) -> Iterator[LoadResult]:
    """Every session in ``sources`` (files, directories, or ``-`` for stdin), in order.

    ``lenient`` keeps what can be shown safely from invalid input (see ``salvage``).
    """
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    for source in sources:
        yield from _read_one(source, lenient)


def load(sources: Source | Iterable[Source]) -> Iterator[Session]:
    """Every session in ``sources``; raises ``InvalidInput`` at the first bad one."""
    for result in read(sources):
        if result.session is None:
            raise InvalidInput(result.source, result.problems)
        yield result.session


def source_files(sources: Iterable[Source]) -> Iterator[tuple[str, Path | None]]:
    """Every file ``read`` would read, as (name, path); stdin has no path, and a
    directory with no session file or a missing source comes as its own name."""
    for source in sources:
        name = os.fspath(source)
        path = Path(name)
        if name == STDIN or not path.is_dir():
            yield name, (None if name == STDIN else path)
            continue
        found = False
        for file in _session_files(path):
            found = True
            yield str(file), file
        if not found:
            yield name, path


def _read_one(source: Source, lenient: bool) -> Iterator[LoadResult]:
    name = os.fspath(source)
    if name == STDIN:
        yield from read_bytes(sys.stdin.buffer.read(), "<stdin>", "stdin", lenient)
        return
    path = Path(name)
    if path.is_dir():
        yield from _read_directory(path, lenient)
    elif path.exists():
        yield from read_file(path, name, lenient)
    else:
        yield failed(name, Problem("", "no such file or directory"))


def _read_directory(root: Path, lenient: bool) -> Iterator[LoadResult]:
    found = False
    for path in _session_files(root):
        found = True
        yield from read_file(path, str(path), lenient)
    if not found:
        yield failed(str(root), Problem("", "no sessions found (looked for .json, .jsonl, .ndjson and SQLite files)"))


def _session_files(root: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root, onerror=None):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(folder) / name
            if name.startswith(".") or name.endswith(SQLITE_SIDE_FILES):
                continue
            if name.endswith(SESSION_SUFFIXES) or _starts_like_sqlite(path):
                yield path


def _starts_like_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(16) == SQLITE_HEADER
    except OSError:
        return False


__all__ = ["LoadResult", "Source", "load", "read", "source_files"]
