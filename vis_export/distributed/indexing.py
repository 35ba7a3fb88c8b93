"""``index`` on a Dask cluster: workers read the sources and make the documents.

The job (``searchindex.job``, started by ``jobs.indexing``) is the same as in one process and takes the
workers' results in source order, so the counts, warnings and problem lines
are too. A folder index (tantivy, Whoosh) has one writer, this process, which
adds the documents the workers made; a database is written by the workers
themselves, each session in its own transaction as a job in one process
writes it, and this process records what the job knows of each file. A
session id two sources hold is indexed from the first, as in one process:
a worker cannot know that the copy it reads is not the first, so this
process writes the first copy again once the workers are done.

A file the index already has as it is (same size and time) is not sent out;
nor is what only this process can read (standard input), which it reads itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from vis_export.distributed.running import DaskRunner
from vis_export.distributed.tasks import Made, close_writers, echoed, index_unit
from vis_export.problems import NOTE
from vis_export.reporting import Report
from vis_export.sources.parts import Part, unit_size, units
from vis_export.sources.result import report_lines

if TYPE_CHECKING:
    from vis_export.exporting import Reading
    from vis_export.model import Session
    from vis_export.redaction import Redaction
    from vis_export.searchindex.documents import IndexReasoning
    from vis_export.searchindex.target import Database


class Batch(Protocol):
    """What this side needs of a batch of the job's: the file its workers read
    (``path``; ``None``: standard input, read here), as the sources name it."""

    name: str | None
    path: Path | None


B = TypeVar("B", bound=Batch)
B_contra = TypeVar("B_contra", bound=Batch, contravariant=True)


class IndexJob(Protocol[B_contra]):
    """What an index job (``searchindex.job``) lets the Dask side do: this side
    takes the workers' results in source order, as the job takes its own, and
    imports no job."""

    known: dict[str, str]  # session id -> hash, as the index has them
    reasoning: IndexReasoning
    redaction: Redaction | None
    # Where each session's first copy is, kept (not ``None``) when workers
    # write a database: see ``restore``.
    firsts: dict[str, str | Session] | None

    def run(self, batch: B_contra) -> None:
        """Indexes a batch here, as a job in one process does."""

    def unchanged(self, batch: B_contra) -> bool:
        """Whether the index has the batch's file as it is."""

    def skip(self, batch: B_contra) -> bool:
        """Counts an unchanged batch's sessions without reading it (``False``: it changed)."""

    def repeated(self, session_id: str, source: str) -> bool:
        """A session indexed from another source already: skipped, with a warning."""

    def made(self, session_id: str, digest: str, docs: Callable[[], list[dict[str, Any]]] | None) -> str:
        """Indexes a session whose documents a worker made (``None``: it wrote them itself)."""

    def file_done(self, batch: B_contra, hashes: dict[str, str], complete: bool) -> None:
        """Records what the batch's file held once read."""

    def restore(self, session_id: str, lenient: bool) -> None:
        """Writes a session's first copy again, over a later one a worker wrote."""


@dataclass(frozen=True)
class Dask:
    """Where and how: the cluster's ``address``, reading ``lenient``ly, where
    the lines go, and the progress (given the number of files, it returns what
    to call as each is done)."""

    address: str
    lenient: bool
    report: Report
    progress: Callable[[int], Callable[[], None]] = lambda total: lambda: None

    def run(self, job: IndexJob[B], batches: list[B], database: Database | None) -> None:
        """The job's batches on the cluster (the index job's ``BatchRunner``)."""
        run_on_dask(job, batches, self, database)


def run_on_dask(job: IndexJob[B], batches: list[B], dask: Dask, database: Database | None) -> None:
    """The batches whose files the workers can read, and the index lacks as they
    are, go to a ``DaskRunner`` (which runs the first here while a local
    cluster starts); the job takes their results in source order, and runs
    the other batches (standard input, unchanged files) here among them."""
    writing = ("psycopg", "vis_export.searchindex.engines.postgresql_engine") if database else ()
    if database is not None:
        job.firsts = {}  # see ``restore``
    imports = (index_unit.__module__, "vis_export.searchindex.documents", *writing)
    try:
        with DaskRunner(dask.address, imports, unit_size) as runner:
            _run(job, batches, dask, database, runner)
    finally:
        close_writers()  # those of the tasks run here


def _run(job: IndexJob[B], batches: list[B], dask: Dask, database: Database | None, runner: DaskRunner) -> None:
    """The job takes the results in source order: its counts and lines are those of one process."""
    sent = [b for b in batches if b.path is not None and b.path.is_file() and not job.unchanged(b)]
    plan = units([(b.name or str(b.path), b.path) for b in sent], runner.workers())
    parts = [part for unit in plan for part in unit]
    firsts = [i for i, part in enumerate(parts) if _first_of_file(part)]
    count = {id(b): end - begin for b, begin, end in zip(sent, firsts, [*firsts[1:], len(parts)], strict=True)}
    advance = dask.progress(len(batches))
    work = partial(
        index_unit, lenient=dask.lenient, reasoning=job.reasoning, database=database, redaction=job.redaction
    )
    results = runner.map(work, plan, shared={"known": dict(job.known)})
    found = (pair for unit, made in zip(plan, results, strict=True) for pair in zip(unit, made, strict=True))
    overwritten: dict[str, None] = {}  # sessions whose first copy a worker may have written over
    for batch in batches:
        if id(batch) not in count:
            job.run(batch)
        else:
            mine = [next(found) for _ in range(count[id(batch)])]  # taken even if skipped: they come in order
            if not job.skip(batch):
                _take(job, batch, mine, dask.report, overwritten)
        advance()
    for session_id in overwritten:  # every worker is done: the first copy is written last
        job.restore(session_id, dask.lenient)


def _take(
    job: IndexJob[B],
    batch: B,
    found: list[tuple[Part, list[tuple[Reading, Made | None]]]],
    report: Report,
    overwritten: dict[str, None],
) -> None:
    """What the work found of the batch's file (its parts, in order) into the index."""
    hashes: dict[str, str] = {}
    complete = True
    before = None
    for part, entries in found:
        for k, (reading, made) in enumerate(entries):
            if echoed(reading, before, part, k):
                continue
            before = reading
            complete &= all(p.kind == NOTE for p in reading.problems)  # notes: read in full
            for fails, line in report_lines(reading.source, made is not None, reading.problems):
                (report.problem if fails else report.warning)(line)
            if made is None or reading.session_id is None:
                continue
            if job.repeated(reading.session_id, reading.source):
                if made[2]:  # a database: a worker wrote this copy, which the job skips
                    overwritten[reading.session_id] = None
                continue
            digest, docs, written = made
            hashes[reading.session_id] = job.made(reading.session_id, digest, None if written else _given(docs))
    job.file_done(batch, hashes, complete)


def _given(docs: list[dict[str, Any]] | None) -> Callable[[], list[dict[str, Any]]]:
    """Documents a worker made (``None``: it found the session's hash in the index)."""
    return lambda: docs or []


def _first_of_file(part: Part) -> bool:
    """Whether ``part`` starts a file (a store's sessions come in several parts)."""
    return part.sessions is None or part.sessions[0] == 0
