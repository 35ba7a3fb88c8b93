"""When a source file has not changed: its size and modification time, with
a guard for a change within one tick of the file system's clock.

The index job's manifest, ``serve``'s listing and page caches, and a Dask
worker's cache of the files it has read all take an equal stamp to mean
"unchanged"; this is the one place that says what a stamp is, and all of
them take a source's stamp from ``source_stamp``, its SQLite ``-wal`` part
included.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

RACY_NS = 2_000_000_000  # the coarsest file time we expect (FAT and some network file systems: 2 s)


def _file_stamp(path: str | os.PathLike[str]) -> list[int] | None:
    """A file's size and modification time (``None``: no file). A file rewritten at the same size
    within one tick of its file system's clock keeps both; so a stamp taken
    that soon after a change also holds the moment it was taken, which no
    later stamp repeats, and the file is read again until its last change is
    older than that (git's "racily clean" files). A time further ahead of the
    clock than that is a skewed clock (a copy from a machine whose clock runs
    ahead, an archive unpacked as dated), not a change a moment ago: such a
    file would otherwise be read again at every look until the clock caught
    up (hours, or years)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return _stamp_of(info)


def _stamp_of(info: os.stat_result) -> list[int]:
    now = time.time_ns()
    if -RACY_NS < now - info.st_mtime_ns < RACY_NS:
        return [info.st_size, info.st_mtime_ns, now]
    return [info.st_size, info.st_mtime_ns]


def source_stamp(path: Path) -> list[int] | None:
    """A source file's stamp (``None``: no file), with its SQLite write-ahead
    log's when it has one: a Vis store's recent turns may live only in its
    ``-wal``, and the main file does not change while they are written there
    (a stamp of the main file alone kept a worker's copy of a store whose
    ``-wal`` had grown: the old sessions, missing the new turns)."""
    found = _stat(path)
    return None if found is None else _with_log(found[1], _stamp_of(found[0]))


def regular_stamp(path: str | os.PathLike[str], wal: bool | None = None) -> list[int] | None:
    """``source_stamp`` of a regular file (``None``: no file, or not a regular
    one) in one ``stat``, where a check that it is a file and its stamp took
    two: a job stamps every file it walks. ``wal``: whether the folder's
    listing has a ``-wal`` beside it (``None``: not known, so a ``stat`` says);
    the walk has the names, and only a store has one. A link's listing says
    nothing of its target's folder, where the ``-wal`` is."""
    return linked_stamp(path, wal)[0]


def linked_stamp(path: str | os.PathLike[str], wal: bool | None = None) -> tuple[list[int] | None, bool]:
    """``regular_stamp``, and whether the file may be a link (``False``: its
    ``lstat`` said it is none), which a job asks of every file for its real
    path: the same ``lstat`` answers both."""
    found = _stat(path)
    if found is None or not stat.S_ISREG(found[0].st_mode):
        return None, True
    info, beside = found
    stamp = _stamp_of(info)
    if beside is path:
        return (stamp if wal is False else _with_log(beside, stamp)), False
    return _with_log(beside, stamp), True


def _stat(path: str | os.PathLike[str]) -> tuple[os.stat_result, str | os.PathLike[str]] | None:
    """The file's ``stat`` and the path SQLite keeps its ``-wal`` beside: a
    link's target's, resolved, which the reader reads (a stamp that looked
    beside the link said a linked store unchanged while its ``-wal`` grew).
    One ``lstat`` for a file that is no link, which is also its ``stat``."""
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            return os.stat(path), os.path.realpath(path)
    except OSError:
        return None
    return info, path


def _with_log(path: str | os.PathLike[str], stamp: list[int]) -> list[int]:
    """A file's ``stamp`` with its ``-wal``'s when it has one."""
    log = _file_stamp(f"{os.fspath(path)}-wal")
    return stamp + log if log is not None else stamp
