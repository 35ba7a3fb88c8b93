"""``convert`` on a Dask cluster: the ``Strategy`` of ``jobs.conversion`` whose
workers read and render.

Reading is one task per unit of the sources (``sources.parts.units``); what
comes back is each session's id and problems, never the session, so the job
names every file before anything is rendered, as in one process. Rendering
is then a task per session for formats that make one document each (HTML,
PDF), a few sessions per task for the others; each task reads its sessions
again (a worker keeps the last few files it read). Results are taken in
session order, so the lines are the same as without Dask.
"""

from __future__ import annotations

import math
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from vis_export.distributed.cluster import completed, dask_client, result, worker_count
from vis_export.distributed.tasks import read_unit, write_sessions
from vis_export.formats.options import ExportOptions
from vis_export.jobs.conversion import Reading, export
from vis_export.model import Session
from vis_export.sources import source_files
from vis_export.sources.parts import MOST_PER_BATCH, SHARES_PER_WORKER, Part, read_part, units

MARKER = ".vis-export-job-"  # hidden: never read back as a source


class OnDask:
    def __init__(self, client: Any, address: str):
        self.client, self.address = client, address
        self.workers = worker_count(client)
        self.lenient = False
        self.places: list[tuple[int, Part, int]] = []  # per reading: its unit, part and position in the part
        self.here: dict[int, Session] = {}  # sessions only this process can read (standard input)
        self.readings: list[Reading] = []

    @classmethod
    @contextmanager
    def connected(cls, address: str) -> Iterator[OnDask]:
        with dask_client(address) as client:
            yield cls(client, address)

    def read(self, sources: Sequence[str], lenient: bool) -> list[Reading]:
        self.lenient = lenient
        plan = units(source_files(sources), self.workers)
        remote = [i for i, unit in enumerate(plan) if unit[0].path is not None]
        futures = self.client.map(read_unit, [plan[i] for i in remote], lenient=lenient, pure=False)
        unit_of = {future.key: i for future, i in zip(futures, remote, strict=True)}
        found: dict[int, list[list[Reading]]] = {}
        for future in completed(self.client, futures, self.address):
            found[unit_of[future.key]] = result(future, self.address)
        readings: list[Reading] = []
        for i, unit in enumerate(plan):
            if i not in found:  # read here: standard input, a missing source
                loaded = read_part(unit[0], lenient)
                for k, loaded_result in enumerate(loaded):
                    if loaded_result.session is not None:
                        self.here[len(readings)] = loaded_result.session
                    self.places.append((i, unit[0], k))
                    readings.append(Reading.of(loaded_result))
                continue
            for part, part_readings in zip(unit, found[i], strict=True):
                for k, reading in enumerate(part_readings):
                    self.places.append((i, part, k))
                    readings.append(reading)
        self.readings = readings
        return readings

    def write(
        self, jobs: list[tuple[int, Path]], to: str, options: ExportOptions, advance: Callable[[], None]
    ) -> Iterator[str | None]:
        from vis_export.formats import get_format

        lines: dict[int, str | None] = {}
        remote = [(i, target) for i, target in jobs if i not in self.here]
        one_each = get_format(to).render_many is None  # HTML, PDF: seconds a session
        size = 1 if one_each else max(1, min(MOST_PER_BATCH, math.ceil(len(remote) / (self.workers * SHARES_PER_WORKER))))
        chunks: list[list[tuple[int, Path]]] = []
        for i, target in remote:
            if chunks and len(chunks[-1]) < size and self.places[chunks[-1][-1][0]][0] == self.places[i][0]:
                chunks[-1].append((i, target))
            else:
                chunks.append([(i, target)])
        folder = jobs[0][1].parent if jobs else None
        marker = _mark(folder) if folder is not None and remote else None
        try:
            items = [[(*self.places[i][1:], self._id(i), target) for i, target in chunk] for chunk in chunks]
            futures = self.client.map(
                write_sessions, items, to=to, options=options, lenient=self.lenient, marker=marker, pure=False
            )
            chunk_of = {future.key: chunk for future, chunk in zip(futures, chunks, strict=True)}
            for i, target in jobs:
                if i in self.here:
                    lines[i] = export(self.here[i], target, to, options)
                    advance()
            for future in completed(self.client, futures, self.address):
                chunk = chunk_of[future.key]
                for (i, _), line in zip(chunk, result(future, self.address), strict=True):
                    lines[i] = line
                    advance()
        finally:
            if marker is not None and folder is not None:
                _unmark(folder, marker, {target.name for _, target in remote})
        for i, _ in jobs:
            yield lines[i]

    def _id(self, i: int) -> str:
        session_id = self.readings[i].session_id
        assert session_id is not None
        return session_id


def _mark(folder: Path) -> str | None:
    """A marker file in the output folder, by which a worker knows it sees the
    folder the job writes to; ``None`` when the folder cannot be made here
    (each session then says why it was not written, as without Dask)."""
    name = f"{MARKER}{uuid.uuid4().hex}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).touch()
    except OSError:
        return None
    return name


def _unmark(folder: Path, marker: str, targets: set[str]) -> None:
    """Removes the marker, and the temporary file of any of the job's targets
    that a worker killed mid-write left behind (``write_atomic``'s
    ``.<name>.<random>.part``): the target itself was written again elsewhere."""
    try:
        (folder / marker).unlink(missing_ok=True)
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if name.startswith(".") and name.endswith(".part") and name[1:-5].rpartition(".")[0] in targets:
                    os.unlink(entry.path)
    except OSError:
        pass
