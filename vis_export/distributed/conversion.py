"""``convert`` on a Dask cluster: the ``Strategy`` of ``jobs.conversion`` whose
workers read and render.

One pass: a task per unit of the sources (``sources.parts.units``) reads its
sessions and renders each into a hidden folder of this job beside the output
(a worker that cannot see that folder is named), and gives back each
session's id and problems, never the session. With every id known, this
process names the files as a job in one process does and renames each
rendered file to its name: a rename, so no file is ever seen half-written,
and a task killed mid-way and run again elsewhere leaves nothing behind (the
job's folder goes at the end, whatever happens; one a killed job left, the
next job removes: ``jobfolder``). Formats that take seconds a
session (HTML, PDF) are rendered a session per task, a file holding many
sessions included. Results are taken in session order, so the lines are the
same as without Dask.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from vis_export.distributed.cluster import Connecting, Pace, completed, local_workers, worker_count
from vis_export.distributed.jobfolder import JobFolder
from vis_export.distributed.tasks import Rendered, convert_unit, echoed, task_result
from vis_export.exporting import Reading, export, not_exported
from vis_export.formats.options import ExportOptions
from vis_export.model import Session
from vis_export.output import place, write_atomic
from vis_export.sources import source_files
from vis_export.sources.parts import Part, read_part, unit_size, units

TASKS = convert_unit.__module__  # what a worker imports to run them


class OnDask:
    def __init__(self, cluster: Connecting, progress: Callable[[int], Callable[[], None]] | None):
        self.cluster, self.address, self.progress = cluster, cluster.address, progress
        self.lenient = False
        self.options = ExportOptions()
        self.job_folder: JobFolder | None = None  # the job's, for files rendered before they have a name
        self.made: list[Path] = []  # folders made for the job's folder, deepest first
        self.readings: list[Reading] = []
        self.places: list[tuple[Part, int]] = []  # per reading: its part and position in the part
        self.rendered: list[Rendered] = []
        self.here: dict[int, Session] = {}  # sessions only this process can read (standard input)

    @property
    def folder(self) -> Path | None:
        return None if self.job_folder is None else self.job_folder.path

    @classmethod
    @contextmanager
    def connected(
        cls, address: str, imports: Sequence[str], progress: Callable[[int], Callable[[], None]] | None
    ) -> Iterator[OnDask]:
        """``imports``: what rendering imports (``Format.imports``), for local workers to import once."""
        strategy = cls(Connecting(address, (TASKS, *imports)), progress)
        try:
            yield strategy
        finally:
            if strategy.job_folder is not None:
                strategy.job_folder.remove()
                _remove_if_empty(strategy.made)
            strategy.cluster.close()

    def read(
        self, sources: Sequence[str], lenient: bool, to: str, options: ExportOptions, output: str
    ) -> list[Reading]:
        """Units are sent out as the cluster can take them. While local worker
        processes start, this process works through the first units itself
        (the same task, run here): starting them takes longer than a small job."""
        from vis_export.formats import get_format

        one_each = get_format(to).render_many is None  # HTML, PDF: seconds a session
        local = local_workers(self.address)
        self.lenient = lenient
        plan = units(source_files(sources), local or worker_count(self.cluster.client()), batched=not one_each)
        base, assumed = _folders(output)
        self.options = replace(options, links_from=assumed)  # as the job will name them, most likely
        self.made = [folder for folder in (base, *base.parents) if not folder.exists()]
        self.job_folder = JobFolder.make(base)
        found: dict[int, list[list[tuple[Reading, Rendered]]]] = {}
        todo = deque(i for i, unit in enumerate(plan) if unit[0].path is not None)
        advance = self.progress(len(todo)) if self.progress is not None else (lambda: None)
        more: list[tuple[int, int]] = []  # sessions of a file read already, to render a task each

        def task(i: int, only: int | None) -> tuple[Any, ...]:
            return (convert_unit, plan[i], lenient, to, self.options, self.folder, base, only)

        def first(i: int) -> int | None:
            return 0 if one_each and plan[i][0].sessions is None else None

        def take(i: int, only: int | None, entries: list[list[tuple[Reading, Rendered]]]) -> None:
            kept[0] += sum(len(made) for file in entries for _, made in file if isinstance(made, bytes))
            if only is not None and only > 0:  # one more session of a file already read
                found[i][0][only] = (found[i][0][only][0], entries[0][only][1])
                return
            found[i] = entries
            advance()
            if only == 0 and self.folder is not None:
                more.extend((i, k) for k, (reading, _) in enumerate(entries[0]) if k > 0 and reading.session_id)

        kept = [0]  # bytes of files rendered here and kept for their names (see ``KEPT_HERE``)
        sizes = {i: unit_size(plan[i]) for i in todo}
        left, pace = sum(sizes.values()), Pace()
        while local is not None and (todo or more) and not self.cluster.handing_over(pace, math.inf if more else left):
            only: int | None
            if more:  # each a session of a file of many, HTML or PDF: seconds each, for the workers when they are up
                i, only = more.pop()
            else:
                i = todo.popleft()
                only = first(i)
                left -= sizes[i]
            function, *arguments = task(i, only)
            with pace.timing(sizes[i]) as share:  # not ``checked``: a source this process cannot read is a line
                keep = kept[0] + OUTPUT_PER_BYTE * sizes[i] < KEPT_HERE
                entries = function(*arguments, checked=False, keep=keep)
                take(i, only, entries)
                if only is not None:  # one session of the file's
                    share[0] = 1 / max(1, len(entries[0]))
        asked: dict[str, tuple[int, int | None]] = {}  # per task: its unit, and the one session it renders

        def submit(i: int, only: int | None) -> Any:
            future = client.submit(*task(i, only), pure=False)
            asked[future.key] = (i, only)
            return future

        client: Any = self.cluster.client() if todo or more else None  # none: done before the cluster was up
        pending = {submit(i, first(i)) for i in todo}
        while more or pending:
            pending.update(submit(i, k) for i, k in more)
            more.clear()
            for future in completed(client, pending, self.address):
                take(*asked[future.key], task_result(client, future, self.address, task(*asked[future.key])))
                pending.update(submit(i, k) for i, k in more)
                more.clear()
        for i, unit in enumerate(plan):
            if i not in found:  # read here: standard input, a missing source
                for k, loaded in enumerate(read_part(unit[0], lenient)):
                    if loaded.session is not None:
                        self.here[len(self.readings)] = loaded.session
                    self._add(Reading.of(loaded, to, options), unit[0], k, None)
                continue
            for part, entries in zip(unit, found[i], strict=True):
                for k, (reading, rendered) in enumerate(entries):
                    self._add(reading, part, k, rendered)
        return self.readings

    def _add(self, reading: Reading, part: Part, k: int, rendered: Rendered) -> None:
        if echoed(reading, self.readings[-1] if self.readings else None, part, k):
            return
        self.readings.append(reading)
        self.places.append((part, k))
        self.rendered.append(rendered)

    def write(
        self, jobs: list[tuple[int, Path]], to: str, options: ExportOptions, advance: Callable[[], None]
    ) -> Iterator[str | None]:

        for i, target in jobs:
            rendered = self.rendered[i]
            if i in self.here:
                yield export(self.here[i], target, to, options)
            elif rendered is None or options != self.options:  # rendered for another folder, or not at all
                part, k = self.places[i]
                session = read_part(part, self.lenient)[k].session
                assert session is not None
                yield export(session, target, to, options)
            elif isinstance(rendered, bytes):
                yield self._placed(partial(write_atomic, target, rendered), self.readings[i], to)
            elif not rendered[0]:
                yield rendered[1]
            else:
                assert self.folder is not None
                yield self._placed(partial(place, self.folder / rendered[1], target), self.readings[i], to)

    @staticmethod
    def _placed(place: Callable[[], None], reading: Reading, to: str) -> str | None:
        try:
            place()
        except OSError as error:
            return not_exported(reading.source, reading.session_id or "", to, error)
        return None


KEPT_HERE = 64 << 20  # bytes of files rendered here that wait in memory for their names, not in the job's folder
OUTPUT_PER_BYTE = 4  # a file's size per byte of its source, about, at most (HTML): a large session's file is streamed


def _folders(output: str) -> tuple[Path, Path]:
    """Where the job's folder goes (the output folder if it exists, else the one
    it is made in, so that renaming never crosses file systems), and the folder
    the files will most likely be in (a folder unless ``output`` is a file)."""
    path = Path(output)
    if output.endswith(("/", os.sep)) or path.is_dir():
        return (path if path.is_dir() else path.parent), path
    return path.parent, (path.parent if path.exists() else path)


def _remove_if_empty(folders: list[Path]) -> None:
    """Folders made only to hold the job's folder go when no file went into
    them (a job in one process makes the output folder only to write in it)."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:  # a file is in it: the job wrote there
            return
