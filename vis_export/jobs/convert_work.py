"""The work of ``convert`` (``jobs.conversion``), wherever a runner runs it:
a unit of the sources read, and its sessions rendered ahead of their names.

A worker of a cluster checks first that it sees the job's paths
(``distributed.tasks``); the job's own process keeps what it renders in
memory, within a budget, rather than in the job's folder.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vis_export.exporting import Reading, export, rendered
from vis_export.formats.options import ExportOptions
from vis_export.model import Session
from vis_export.sources.parts import Part, read_part, read_part_kept, unit_size
from vis_export.sources.result import LoadResult

# A session rendered ahead: (True, the file it is in, within the job's folder),
# (False, the line saying why it could not be), or (rendered in the job's own
# process, kept within its ``Keeping``) the file's bytes; ``None``: not rendered.
Rendered = tuple[bool, str] | bytes | None

KEPT_HERE = 64 << 20  # bytes of files rendered here that wait in memory for their names, not in the job's folder
OUTPUT_PER_BYTE = 4  # a file's size per byte of its source, about, at most (HTML): a large session's file is streamed


class Keeping:
    """The job's own process keeps the files it renders in memory until they
    have names, up to ``KEPT_HERE`` bytes; past that, and for a unit whose
    file may be large, they go to the job's folder (streamed there)."""

    def __init__(self) -> None:
        self.kept = 0

    def allows(self, unit: tuple[Part, ...]) -> bool:
        return self.kept + OUTPUT_PER_BYTE * unit_size(unit) < KEPT_HERE


@dataclass(frozen=True, slots=True)
class ToConvert:
    """A unit of a conversion: the ``parts`` at ``position`` in the job's plan;
    ``only``: just that session of the file is rendered (0: the first, and the
    result asks for the others, a task each: formats that take seconds a
    session)."""

    position: int
    parts: tuple[Part, ...]
    only: int | None = None
    share: int = 1  # of the file's sessions: what the unit weighs of its parts
    session_id: str | None = None  # a follow-up's: the session the file's first reading found at ``only``


@dataclass(frozen=True, slots=True)
class Converted:
    """What a task found of its unit: per part, each session's reading and its
    file rendered ahead (a follow-up, ``only`` > 0: just that session's, ``one``)."""

    unit: ToConvert
    entries: list[list[tuple[Reading, Rendered]]]
    one: Rendered = None


def convert_unit(
    unit: ToConvert,
    lenient: bool,
    to: str,
    options: ExportOptions,
    output_folder: Path,
    folder: Path | None = None,
    on_worker: bool = False,
    make_folder: Callable[[], Path | None] | None = None,
    keeping: Keeping | None = None,
    announce: Callable[[Session], None] | None = None,
) -> Converted:
    """Reads each part of ``unit`` and renders each session that loaded (or the
    ``only`` one) ahead of its name: on a worker, into ``folder`` (the job's,
    from where the job renames each file to its name once all names are
    known; ``None``, it could not be made: nothing is rendered). In the job's
    own process, a file is kept in memory while ``keeping`` allows, else it
    goes to the folder ``make_folder`` makes (``None``: not rendered, the job
    exports it once named); ``announce`` is told of each session rendered.
    ``on_worker``: a source the worker cannot see is ``NotShared``, not read
    as gone (a line)."""
    keep = not on_worker and keeping is not None and keeping.allows(unit.parts)
    if not on_worker and not keep:
        folder = make_folder() if make_folder is not None else None
    found = []
    for part in unit.parts:
        if on_worker:  # imported here only: the job's own process loads no Dask module
            from vis_export.distributed.tasks import check_output, check_visible

            check_visible(part)
            if folder is not None:
                check_output(folder, output_folder)
        results = read_part_kept(part, lenient)
        if unit.only is not None and unit.only > 0:  # a follow-up: one session of a file read already
            session = read_again(part, results, unit.only, unit.session_id)
            if isinstance(session, str):
                return Converted(unit, [], (False, session))
            return Converted(unit, [], _ahead(session, to, options, folder, keep, keeping, announce))
        entries: list[tuple[Reading, Rendered]] = []
        for k, loaded in enumerate(results):
            made: Rendered = None
            if loaded.session is not None and unit.only in (None, k):
                made = _ahead(loaded.session, to, options, folder, keep, keeping, announce)
            entries.append((Reading.of(loaded, to, options), made))
        found.append(entries)
    return Converted(unit, found)


def read_again(part: Part, results: list[LoadResult], k: int, session_id: str | None) -> Session | str:
    """Session ``k`` of ``part`` as read again, when it is still the one its
    first reading found there (the one the job named and reported), else the
    line saying why not: a file that changed in between (a log an agent is
    still writing) may hold fewer sessions, others there, or none valid."""
    session = results[k].session if k < len(results) else None
    if session is not None and session.id == session_id:
        return session
    return f"{part.name}: session {session_id!r}: not exported: the file changed while it was read; export it again"


def _ahead(
    session: Session,
    to: str,
    options: ExportOptions,
    folder: Path | None,
    keep: bool,
    keeping: Keeping | None,
    announce: Callable[[Session], None] | None,
) -> Rendered:
    if not keep and folder is None:
        return None
    if announce is not None:
        announce(session)
    if keep:
        assert keeping is not None
        made = rendered(session, to, options)
        if isinstance(made, str):
            return (False, made)
        keeping.kept += len(made)
        return made
    assert folder is not None
    name = f"{uuid.uuid4().hex}.out"
    line = export(session, folder / name, to, options, make_folder=False)  # gone: the job is
    return (True, name) if line is None else (False, line)


def read_unit(unit: tuple[Part, ...], lenient: bool) -> list[LoadResult]:
    """A unit's sessions, read (what a job whose sink needs them runs: ``convert`` to a stream)."""
    return [loaded for part in unit for loaded in read_part(part, lenient)]
