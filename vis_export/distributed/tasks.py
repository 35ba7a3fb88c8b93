"""What a job's work needs on a Dask worker (the work itself is the job's:
``jobs.convert_work``, ``jobs.index_work``): each worker reads its parts of
the sources itself (see ``sources.parts``), keeping the last few files read.

A task checks first that its worker sees what the job needs at the job's
paths (a source; the output folder, by a marker file the job put in it): a
worker on another machine without the shared file system would otherwise
report sources as missing, or write files where nobody looks for them.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from vis_export.distributed.cluster import result
from vis_export.distributed.failures import DaskFailure
from vis_export.sources.parts import Part, read_part
from vis_export.sources.result import LoadResult
from vis_export.sources.stamp import source_stamp

R = TypeVar("R")
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


def task_result(client: Any, future: Any, address: str, here: Callable[[], R]) -> R:
    """The result of ``future``; a source that its worker did not find and this
    process does not find either is gone since the job was planned, not hidden
    from the worker: the task is run ``here``, where that is one line, as in
    one process."""
    try:
        return result(client, future, address)  # type: ignore[no-any-return]
    except NotShared as failure:
        if failure.path is None or os.path.exists(failure.path):
            raise
        return here()


def check_output(folder: Path, output_folder: Path) -> None:
    """``folder`` is the job's own, made by the job in the output folder ``output_folder``."""
    if not folder.is_dir():
        raise NotShared(f"the Dask worker {worker_name()} cannot see the output folder {output_folder}: {SHARED}")


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
