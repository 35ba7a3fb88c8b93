"""What a job's work needs on a Dask worker (the work itself is the job's:
``jobs.convert_work``, ``jobs.index_work``): each worker reads its parts of
the sources itself (see ``sources.parts``, which keeps the last few files read).

A task checks first that its worker sees what the job needs at the job's
paths (a source; the output folder, by a marker file the job put in it): a
worker on another machine without the shared file system would otherwise
report sources as missing, or write files where nobody looks for them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from vis_export.distributed.cluster import result
from vis_export.distributed.failures import DaskFailure
from vis_export.sources.parts import Part

R = TypeVar("R")
SHARED = "sources and the output must be at the same path on every worker"


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
