"""Sessions addressed so that another process can read them by itself.

A distributed job sends no sessions around: it sends *parts* (a file, or a
range of a Vis store's sessions, at a path every worker sees) and each worker
reads its parts itself. ``read_part`` gives exactly what ``read`` gives for the
same sessions, so a job split into parts reports the same problems and finds
the same sessions as one that reads its sources in one go; ``units`` splits the
sources so that every worker has a share: a store by session (each worker opens
it read-only and reads only its sessions), small files in batches. A process
that reads parts (a worker, or the job's own) keeps the last few files it read
(``read_part_kept``) for the units that follow: a file's next sessions.
"""

from __future__ import annotations

import math
import os
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from vis_export.problems import Problem
from vis_export.sources import STDIN, read
from vis_export.sources.files import NOT_FOUND, read_file, starts_like_store
from vis_export.sources.result import LoadResult, failed
from vis_export.sources.stamp import source_stamp
from vis_export.sources.store import copied_when_read, read_store, store_sessions

SMALL_FILE = 1 << 20  # bytes: smaller files go to workers in batches
MOST_PER_BATCH = 64  # files in one batch
SHARES_PER_WORKER = 2  # so a worker that finishes early finds more to do


@dataclass(frozen=True, slots=True)
class Part:
    """The sessions of one source file: all of them, or ``sessions`` (a range
    ``[start, stop)`` of a store's). ``path`` is absolute (workers have their
    own working directory); ``name`` is the file as the sources name it, which
    every problem line shows. ``path`` is ``None`` for what only this process
    can read (standard input, a missing file, a folder it cannot list)."""

    name: str
    path: str | None
    sessions: tuple[int, int] | None = None


def read_part(part: Part, lenient: bool = False) -> list[LoadResult]:
    """What ``read`` gives for the part's sessions, in the same order."""
    if part.path is None:
        return list(read([part.name], lenient))
    if part.sessions is not None:
        try:
            results = read_store(Path(part.path), part.name, lenient, slice(*part.sessions))
        except FileNotFoundError:  # a store with a WAL is copied to be read
            if os.path.exists(part.path):
                raise
            results = []
        if all(r.session is None for r in results) and not os.path.exists(part.path):
            # Gone since the job was planned: the line ``read_file`` gives, not
            # SQLite's (``unable to open database file``).
            return [failed(part.name, Problem("", NOT_FOUND))]
        return results
    return read_file(Path(part.path), part.name, lenient)


_KEPT = 4  # files whose sessions a process keeps for its next unit (the same file's next sessions)
_kept: OrderedDict[tuple[Part, bool], tuple[list[int], list[LoadResult]]] = OrderedDict()


def read_part_kept(part: Part, lenient: bool) -> list[LoadResult]:
    """``read_part``, kept for the next few units: a file holding many sessions is
    rendered a session per unit (``jobs.convert_work``), and each would otherwise
    read it again. A Dask worker outlives jobs, and so may a library caller's
    process: a file is read again once it changed."""
    assert part.path is not None
    stamp = source_stamp(Path(part.path))
    if stamp is None:  # gone since the job was planned: ``read_part`` says so
        return read_part(part, lenient)
    key = (part, lenient)
    kept = _kept.get(key)
    if kept is not None and kept[0] == stamp:
        _kept.move_to_end(key)
        return kept[1]
    results = read_part(part, lenient)
    _kept[key] = (stamp, results)
    while len(_kept) > _KEPT:
        _kept.popitem(last=False)
    return results


def units(files: Iterable[tuple[str, Path | None]], workers: int, batched: bool = True) -> list[tuple[Part, ...]]:
    """The source files (as ``sources.plan_sources`` gives them) as units of
    work, in order (``batched`` false: a file per unit, for work that takes
    seconds a session): with several workers, a store's sessions one per unit
    (a store with a WAL, which each reader copies, in a few ranges instead;
    with one, a store is read whole, once), a large file alone, and small
    files in batches of consecutive files, enough batches for every worker to
    have several."""
    parts: list[Part] = []
    for name, path in files:
        if path is None or name == STDIN or not path.is_file():
            parts.append(Part(name, None))
            continue
        absolute = os.path.abspath(path)
        count = store_sessions(path) if workers > 1 and starts_like_store(path) else None
        if count is None or count < 2:
            parts.append(Part(name, absolute))
            continue
        step = math.ceil(count / (workers * SHARES_PER_WORKER)) if copied_when_read(path) else 1
        parts.extend(Part(name, absolute, (start, min(start + step, count))) for start in range(0, count, step))
    if not batched:
        return [(part,) for part in parts]
    small = [_small(part) for part in parts]
    left = sum(small)
    found: list[tuple[Part, ...]] = []
    batch: list[Part] = []
    for part, is_small in zip(parts, small, strict=True):
        if is_small and batch and len(batch) < _batch_size(left + len(batch), workers):
            batch.append(part)
            left -= 1
            continue
        if batch:
            found.append(tuple(batch))
            batch = []
        if is_small:
            batch = [part]
            left -= 1
        else:
            found.append((part,))
    if batch:
        found.append(tuple(batch))
    return found


def _batch_size(left: int, workers: int) -> int:
    """Files in a batch that starts with ``left`` small files to go: a share of
    them, so batches get smaller towards the end of the job (no worker is
    left with a large last batch while the others wait, nor a job's only
    writer with a large last batch of documents to add)."""
    return max(1, min(MOST_PER_BATCH, math.ceil(left / (workers * SHARES_PER_WORKER))))


def unit_size(unit: tuple[Part, ...]) -> int:
    """The bytes of a unit's files (all of a store's for each of its parts)."""
    return sum(file_size(part.path) for part in unit)


def file_size(path: str | os.PathLike[str] | None) -> int:
    """0 for what is not a file that can be read (standard input, a file gone)."""
    try:
        return os.stat(path).st_size if path is not None else 0
    except OSError:
        return 0


def _small(part: Part) -> bool:
    if part.path is None or part.sessions is not None:
        return False
    try:
        return os.stat(part.path).st_size < SMALL_FILE
    except OSError:
        return True
