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
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from vis_export.distributed.cluster import Connecting, Pace, local_workers, worker_count
from vis_export.distributed.tasks import echoed, index_unit, task_result
from vis_export.problems import NOTE
from vis_export.reporting import Report
from vis_export.sources.parts import Part, file_size, units
from vis_export.sources.result import report_lines

if TYPE_CHECKING:
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
    """While a local cluster starts, this process indexes the first files itself
    (see ``Pace``); the workers make the documents of the rest."""
    writing = ("psycopg", "vis_export.searchindex.engines.postgresql_engine") if database else ()
    if database is not None:
        job.firsts = {}  # see ``_on_workers``
    cluster = Connecting(dask.address, (index_unit.__module__, "vis_export.searchindex.documents", *writing))
    try:
        advance = _Progress(dask.progress, len(batches))
        sizes = [file_size(batch.path) for batch in batches]
        first, left, pace = 0, sum(sizes), Pace()
        local = local_workers(dask.address) is not None  # only a local cluster takes a while to start
        while local and first < len(batches) and not cluster.handing_over(pace, left):
            with pace.timing(sizes[first]):
                job.run(batches[first])
            advance()
            left -= sizes[first]
            first += 1
        if first < len(batches):
            _on_workers(job, batches[first:], dask, database, cluster.client(), advance)
    finally:
        cluster.close()


def _on_workers(
    job: IndexJob[B], batches: list[B], dask: Dask, database: Database | None, client: Any, advance: _Progress
) -> None:
    sent = [b for b in batches if b.path is not None and b.path.is_file() and not job.unchanged(b)]
    plan = units([(b.name or str(b.path), b.path) for b in sent], worker_count(client))
    advance.start()
    (known,) = client.scatter([dict(job.known)], broadcast=True)  # once to each worker, not once a task
    futures = client.map(
        index_unit,
        plan,
        lenient=dask.lenient,
        reasoning=job.reasoning,
        known=known,
        database=database,
        redaction=job.redaction,
        pure=False,
    )
    here = (dask.lenient, job.reasoning, dict(job.known), database, job.redaction)  # a task run here (``task_result``)
    task = {future.key: (index_unit, unit, *here) for future, unit in zip(futures, plan, strict=True)}
    parts = [(future, j, part) for future, unit in zip(futures, plan, strict=True) for j, part in enumerate(unit)]
    of_batch: dict[int, list[tuple[Any, int, Part]]] = {}
    place = -1
    for future, j, part in parts:
        if _first_of_file(part):
            place += 1
        of_batch.setdefault(id(sent[place]), []).append((future, j, part))
    taken: dict[str, Any] = {}
    overwritten: dict[str, None] = {}  # sessions whose first copy a worker may have written over
    for batch in batches:
        mine = of_batch.get(id(batch))
        if mine is None:
            job.run(batch)
            advance()
            continue
        if job.skip(batch):
            advance()
            continue
        hashes: dict[str, str] = {}
        complete = True
        before = None
        for future, j, part in mine:
            if future.key not in taken:
                taken[future.key] = task_result(client, future, dask.address, task[future.key])
            for k, (reading, made) in enumerate(taken[future.key][j]):
                if echoed(reading, before, part, k):
                    continue
                before = reading
                complete &= all(p.kind == NOTE for p in reading.problems)  # notes: read in full
                for fails, line in report_lines(reading.source, made is not None, reading.problems):
                    (dask.report.problem if fails else dask.report.warning)(line)
                if made is None or reading.session_id is None:
                    continue
                if job.repeated(reading.session_id, reading.source):
                    if made[2]:  # a database: a worker wrote this copy, which the job skips
                        overwritten[reading.session_id] = None
                    continue
                digest, docs, written = made
                hashes[reading.session_id] = job.made(reading.session_id, digest, None if written else _given(docs))
            if j == len(taken[future.key]) - 1:
                del taken[future.key]  # its documents are in the index: let them go
        job.file_done(batch, hashes, complete)
        advance()
    for session_id in overwritten:  # every worker is done: the first copy is written last
        job.restore(session_id, dask.lenient)


class _Progress:
    """The job's progress, a file at a time, started when first needed: at the
    first file done here, or once the workers' share is planned."""

    def __init__(self, progress: Callable[[int], Callable[[], None]], total: int):
        self.progress, self.total = progress, total
        self.advance: Callable[[], None] | None = None

    def start(self) -> None:
        if self.advance is None:
            self.advance = self.progress(self.total)

    def __call__(self) -> None:
        self.start()
        assert self.advance is not None
        self.advance()


def _given(docs: list[dict[str, Any]] | None) -> Callable[[], list[dict[str, Any]]]:
    """Documents a worker made (``None``: it found the session's hash in the index)."""
    return lambda: docs or []


def _first_of_file(part: Part) -> bool:
    """Whether ``part`` starts a file (a store's sessions come in several parts)."""
    return part.sessions is None or part.sessions[0] == 0
