"""``index`` over source files and folders: one job, given a runner.

The sources are walked once into batches (a file each, ``jobs.index_job``),
stamped, and the index's placement checked against what that walk found; their
problems are reported in source order, and the index job (``jobs.index_job``:
hashes, the manifest, pruning) has its changed files read, and their
documents made, by the work of ``jobs.index_work`` on the runner it is given
(``jobs.runners``: this process, or the workers of a cluster), taking the
results in source order, one way for both: the same counts and lines. In
this process a file is a unit, and a session's documents are made as the
job adds them, so memory holds one file's sessions at a time.

A folder index (tantivy, Whoosh) has one writer, this process, which adds the
documents the work made; a database is written by the work itself, each
session in its own transaction as a job in one process writes it, and this
process records what the job knows of each file. A session id two sources
hold is indexed from the first, as in one process: the work cannot know that
the copy it reads is not the first, so this process writes the first copy
again once every unit is done. A file the index already has as it is (same
size and time) is not sent out; nor is what only this process can read
(standard input), which it reads itself.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from vis_export.choices import IndexReasoning
from vis_export.jobs.index_job import Batch, IndexCounts, IndexJob, IndexSettings, index_sessions, planned_batches
from vis_export.reporting import Report, redacting, report_reading

if TYPE_CHECKING:
    from vis_export.exporting import Reading
    from vis_export.jobs.index_work import Documents, Made
    from vis_export.model import Session
    from vis_export.redaction import Redaction
    from vis_export.running import Runner
    from vis_export.searchindex.database import Database
    from vis_export.sources.parts import Part


def index_sources(
    sources: Iterable[str | os.PathLike[str]],
    location: str | os.PathLike[str],
    engine: str | None = None,
    reasoning: IndexReasoning = "none",
    prune: bool = False,
    wait: float = 0.0,
    threads: int = 0,
    lenient: bool = False,
    origin: str | None = None,
    dask: str | None = None,
    report: Report | None = None,
    progress: Callable[[int], Callable[[], None]] | None = None,
    redact: Redaction | bool | None = None,
) -> IndexCounts:
    """``vis-export index``: the sessions of ``sources`` (files, folders) into the
    index at ``location``, each source file skipped when the index has it as it
    is; problems and warnings go to ``report`` (by default kept in a ``Lines``).
    ``dask`` (a scheduler's address or ``local[:N]``) has the workers of a Dask
    cluster read the sources and make the documents, with the same outcome.
    ``progress(total)`` returns what is called as each file is done.
    ``redact``: index only the redacted view (``True`` for the built-in
    rules, or a ``Redaction``; R8), as ``--redact`` does."""
    settings = IndexSettings.given(locals())
    report = redacting(report, settings.redaction)
    names = [os.fspath(source) for source in sources]

    def reported(results: list[Any]) -> list[Session]:
        for result in results:
            report_reading(report, result.source, result.session is not None, result.problems)
        return [result.session for result in results if result.session is not None]

    batches, placement = planned_batches(names, lenient, reported)
    on_runner = _OnRunner(dask, lenient, report, progress or (lambda total: lambda: None))
    return index_sessions(batches, location, settings, warn=report.warning, elsewhere=on_runner, placement=placement)


def index(
    sessions: Iterable[Session],
    location: str | os.PathLike[str],
    engine: str | None = None,
    reasoning: IndexReasoning = "none",
    prune: bool = False,
    wait: float = 0.0,
    threads: int = 0,
    progress: Callable[[Session], None] | None = None,
    warn: Callable[[str], None] | None = None,
    origin: str | None = None,
    redact: Redaction | bool | None = None,
) -> IndexCounts:
    """Index ``sessions`` into ``location`` (a folder, or a ``postgresql://``
    URI) with ``engine`` (by default the one the index there was built with,
    else tantivy); returns how many were added, updated, unchanged and (with
    ``prune``) removed. In a database, ``origin`` (by default the host name)
    records where sessions come from: ``prune`` removes only its own. ``redact``
    (``True`` or a ``Redaction``): secrets are replaced by markers before
    anything is indexed (R8). The job runs them itself (``IndexJob.run``): a
    caller's sessions are read already, there is nothing to hand out."""
    from vis_export.searchindex.target import is_database

    settings = IndexSettings.given(locals())
    batches = [Batch(None, None, lambda: sessions)]
    where = location if is_database(location) else Path(location)
    return index_sessions(batches, where, settings, progress, warn)


class _OnRunner(NamedTuple):
    """The index job's ``BatchRunner``: the batches' units on the runner
    ``jobs.runners`` gives for ``dask`` (this process without it), the job
    taking their results in source order, one way whoever ran the work. (A
    named tuple: a dataclass is made by compiling its methods, near a
    millisecond of every run of the command, a no-op rerun's too.)"""

    dask: str | None
    lenient: bool
    report: Report
    progress: Callable[[int], Callable[[], None]]

    @property
    def remote(self) -> bool:
        return self.dask is not None

    def run(self, job: IndexJob, batches: list[Batch], database: Database | None) -> None:
        """The job takes the results in source order: its counts and lines are those of one process."""
        # What the manifest has as it is first: a no-op rerun asks no more of the disk.
        sent = [b for b in batches if b.path is not None and not job.unchanged(b) and b.path.is_file()]
        advance = self.progress(len(batches))
        if not sent:  # nothing to read but what only this process can: no runner, no reader imported
            self._taken(job, batches, {}, iter(()), advance)
            return
        # Imported once there is work: a no-op rerun imports no reader (``jobs.index_job``).
        from vis_export.jobs.index_work import close_writers, index_unit
        from vis_export.jobs.runners import runner_for

        writing = ("psycopg", "vis_export.searchindex.engines.postgresql_engine") if database else ()
        if database is not None:
            job.firsts = {}  # see ``restore``
        imports = (index_unit.__module__, "vis_export.searchindex.documents", *writing)
        try:
            with runner_for(self.dask, imports) as runner:
                self._run(job, batches, sent, database, runner, advance)
        finally:
            close_writers()  # those of the units run here

    def _run(
        self,
        job: IndexJob,
        batches: list[Batch],
        sent: list[Batch],
        database: Database | None,
        runner: Runner,
        advance: Callable[[], None],
    ) -> None:
        from vis_export.jobs.index_work import index_unit
        from vis_export.running import Task
        from vis_export.sources.parts import unit_size, units

        # In this process a file is a unit: its documents are added before the next file is read.
        plan = units([(b.name or str(b.path), b.path) for b in sent], runner.workers(), batched=self.remote)
        parts = [part for unit in plan for part in unit]
        firsts = [i for i, part in enumerate(parts) if _first_of_file(part)]
        count = {id(b): end - begin for b, begin, end in zip(sent, firsts, [*firsts[1:], len(parts)], strict=True)}
        task: Task[tuple[Part, ...], list[list[tuple[Reading, Made | None]]]] = Task(
            index_unit,
            arguments={
                "lenient": self.lenient,
                "reasoning": job.reasoning,
                "database": database,
                "redaction": job.redaction,
            },
            shared={"known": dict(job.known)},
            size=unit_size,
        )
        results = runner.map(task, plan)
        found = (pair for unit, made in zip(plan, results, strict=True) for pair in zip(unit, made, strict=True))
        self._taken(job, batches, count, found, advance)

    def _taken(
        self,
        job: IndexJob,
        batches: list[Batch],
        count: dict[int, int],
        found: Iterator[tuple[Part, list[tuple[Reading, Made | None]]]],
        advance: Callable[[], None],
    ) -> None:
        """Each batch in source order: the results of its parts (``count`` of
        them, from ``found``), or, for one not sent out, run by the job itself."""
        overwritten: dict[str, None] = {}  # sessions whose first copy a worker may have written over
        for batch in batches:
            if id(batch) not in count:
                job.run(batch)
            else:
                mine = [next(found) for _ in range(count[id(batch)])]  # taken even if skipped: they come in order
                if not job.skip(batch):
                    _take(job, batch, mine, self.report, overwritten)
            advance()
        for session_id in overwritten:  # every unit is done: the first copy is written last
            job.restore(session_id, self.lenient)


def _take(
    job: IndexJob,
    batch: Batch,
    found: list[tuple[Part, list[tuple[Reading, Made | None]]]],
    report: Report,
    overwritten: dict[str, None],
) -> None:
    """What the work found of the batch's file (its parts, in order) into the index."""
    from vis_export.exporting import echoed
    from vis_export.problems import NOTE

    hashes: dict[str, str] = {}
    complete = True
    before = None
    for part, entries in found:
        for k, (reading, made) in enumerate(entries):
            if echoed(reading, before, part, k):
                continue
            before = reading
            complete &= all(p.kind == NOTE for p in reading.problems)  # notes: read in full
            report_reading(report, reading.source, made is not None, reading.problems)
            if made is None or reading.session_id is None:
                continue
            if job.repeated(reading.session_id, reading.source):
                if made[2]:  # a database: a worker wrote this copy, which the job skips
                    overwritten[reading.session_id] = None
                continue
            digest, docs, written = made
            hashes[reading.session_id] = job.made(reading.session_id, digest, None if written else _given(docs))
    job.file_done(batch, hashes, complete)


def _given(docs: Documents) -> Callable[[], list[dict[str, Any]]]:
    """Documents the work made, or makes when asked (``None``: it found the session's hash in the index)."""
    return docs if callable(docs) else lambda: docs or []


def _first_of_file(part: Part) -> bool:
    """Whether ``part`` starts a file (a store's sessions come in several parts)."""
    return part.sessions is None or part.sessions[0] == 0
