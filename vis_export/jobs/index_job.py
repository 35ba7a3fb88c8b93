"""Incremental index jobs: a content hash per session, kept never ahead of
the blocks it describes.

In a folder (one writer at a time), the manifest (``vis-export-index.json``)
records the engine, the schema version and each session's hash. It is written
(atomically) after each engine commit (and names sessions new to the index,
with no hash, before it: see ``target``), so a job killed at any moment leaves an
index that opens and searches, and the next run redoes exactly the sessions
whose hash it does not find: a session's documents are always deleted before
they are added again. In a database the hash is written in the session's own
transaction (see ``target``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

# What a no-op rerun (every file unchanged) runs, and no more: the model, the
# policy and the documents are imported once a session is read.
from vis_export.choices import IndexReasoning, check_index_reasoning
from vis_export.searchindex.directory import Placement, RealPaths
from vis_export.searchindex.engines import MAX_THREADS, Engine
from vis_export.searchindex.target import DatabaseTarget, Target, target_for

if TYPE_CHECKING:
    from vis_export.model import Session
    from vis_export.redaction import Redaction
    from vis_export.searchindex.database import Database


# How a job says a source it could not read stopped its pruning (serve, which said so already, leaves it out).
NOT_PRUNED = "so nothing is pruned"


@dataclass
class IndexCounts:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0

    def __str__(self) -> str:
        text = f"{self.added} added, {self.updated} updated, {self.unchanged} unchanged"
        return text + (f", {self.removed} removed" if self.removed else "")


@dataclass(frozen=True)
class IndexSettings:
    """How an index job runs, one value whichever way it is started (the API's
    ``index`` and ``index_sources``, the command line, ``serve``'s own index).
    ``engine``: by default the one the index was built with, else tantivy;
    ``prune``: remove sessions no source holds any more; ``wait``: seconds to
    wait for another job writing the same index; ``threads``: the engine's
    (0: its choice); ``origin``: where a database's sessions come from (by
    default the host name); ``redaction``: index the redacted view (R8)."""

    engine: str | None = None
    reasoning: IndexReasoning = "none"
    prune: bool = False
    wait: float = 0.0
    threads: int = 0
    origin: str | None = None
    redaction: Redaction | None = None

    def __post_init__(self) -> None:
        check_index_reasoning(self.reasoning)
        if not 0 <= self.threads <= MAX_THREADS:
            raise ValueError(f"threads must be 0 to {MAX_THREADS}, not {self.threads}")

    @staticmethod
    def given(parameters: Mapping[str, Any]) -> IndexSettings:
        """The settings among a public function's ``parameters`` (its ``locals()``),
        with ``redact`` as the API takes it (``True``, or a ``Redaction``)."""
        named = {f.name: parameters[f.name] for f in fields(IndexSettings) if f.name in parameters}
        redact = parameters.get("redact")
        if redact is None or redact is False:  # nothing redacted: the formats, which check the rest, not imported
            return IndexSettings(**named)
        from vis_export.formats.options import ExportOptions

        return IndexSettings(**named, redaction=ExportOptions(redact=redact).redaction)


@dataclass
class Batch:
    """Sessions read together: from one source file (``key``, with its size and
    modification time as ``stamp``) or handed over by a caller (no key). A file
    whose stamp and sessions the manifest already has is not read again.
    ``folder`` is the folder a file was found in by walking a source folder:
    a folder that is read, where the index may not go."""

    key: str | None
    stamp: list[int] | None
    load: Callable[[], Iterable[Session]]
    complete: Callable[[], bool] = lambda: True  # read without problems (known after load)
    folder: str | None = None
    name: str | None = None  # the file as the sources name it
    path: Path | None = None
    named: bool = False  # a source as given, not a file found in a folder given


def source_batches(
    sources: Iterable[str],
    lenient: bool,
    report: Callable[[list[Any]], list[Session]],
    advance: Callable[[], None] = lambda: None,
) -> list[Batch]:
    """One batch per source file (stdin: one without a key). ``report`` receives
    each file's load results, says what is wrong, and returns the sessions."""
    return planned_batches(sources, lenient, report, advance)[0]


def planned_batches(
    sources: Iterable[str],
    lenient: bool,
    report: Callable[[list[Any]], list[Session]],
    advance: Callable[[], None] = lambda: None,
) -> tuple[list[Batch], Placement]:
    """``source_batches`` from one walk of the sources, with what that walk
    found for the placement check (``index_sessions``), which then walks nothing."""
    from vis_export.sources import plan_sources, read

    sources = list(sources)
    plan = plan_sources(sources)
    real_paths = RealPaths()

    def batch(name: str, path: Path | None, source: str, walked: bool, stamp: list[int] | None, link: bool) -> Batch:
        problems: list[bool] = []

        def load() -> list[Session]:
            from vis_export.problems import NOTE

            results = list(read([name], lenient=lenient))
            problems.extend(any(p.kind != NOTE for p in r.problems) for r in results)  # notes: read in full
            advance()
            return report(results)

        folder = (os.path.dirname(name) or ".") if walked and stamp is not None else None  # a walk names it as its path
        key = real_paths.real(path, link) if path is not None else None
        return Batch(key, stamp, load, lambda: not any(problems), folder, name, path, name == source)

    batches = [batch(f.name, f.path, f.source, f.walked, f.stamp, f.link) for f in plan.files]
    files = [b.key for b in batches if b.key is not None and b.stamp is not None]
    return batches, Placement(sources, plan.walks, files)


class BatchRunner(Protocol):
    """What runs a job's batches as units of work on a ``Runner``
    (``jobs.indexing``), handing the results back to the job in source order.
    ``database``: where the work writes itself (``None``: a folder index,
    which only this process writes, or work that runs here, which the job
    writes as it takes it). ``remote``: the work runs on the workers of a
    cluster, which have the cores."""

    @property
    def remote(self) -> bool: ...

    def run(self, job: IndexJob, batches: list[Batch], database: Database | None) -> None: ...


def index_sessions(
    batches: Iterable[Batch],
    location: str | os.PathLike[str],
    settings: IndexSettings = IndexSettings(),
    progress: Callable[[Session], None] | None = None,
    warn: Callable[[str], None] | None = None,
    elsewhere: BatchRunner | None = None,
    placement: Placement | None = None,
) -> IndexCounts:
    """Add or update every session's documents in the index at ``location`` (a
    folder, or a PostgreSQL URI: see ``target``); with ``settings.prune``, remove
    sessions that are no longer among them (but not those of a source that
    failed to load, nor, in a database, another ``origin``'s). ``elsewhere``
    has the batches' files read, and their documents made, by units of work
    on a runner (``jobs.indexing``: here, or the workers of a cluster). ``placement``:
    what the walk that made the batches found (``planned_batches``), checked
    without walking again; by default the batches' own folders and files are."""
    engine, wait, threads = settings.engine, settings.wait, settings.threads
    target = target_for(location, engine, settings.origin)
    batches = list(batches)
    if placement is None:
        placement = Placement([place for batch in batches for place in (batch.folder, batch.key) if place])
    target.check(placement)
    files = _recorded(batches, settings.reasoning, settings.redaction)
    if files is not None:
        unchanged = target.unchanged(engine, files, settings.prune)
        if unchanged is not None:  # nothing to do: the index has every file as it is
            return IndexCounts(unchanged=unchanged)
    if elsewhere is not None and elsewhere.remote and not threads:
        threads = 1  # the workers have the cores: one thread writes as fast here, with less merging
    with target.writing(engine, wait, threads) as (writer, manifest):
        job = IndexJob(writer, target, manifest, settings.reasoning, progress, warn, settings.redaction)
        if elsewhere is None:
            from vis_export.running import InProcessRunner, plain

            for _ in InProcessRunner().map(plain(job.run), batches):
                pass  # the job is its own sink: each batch is indexed as it is run
        else:
            # Workers write a database themselves; work run here is written by the job, as it takes it.
            database = target.for_workers(wait) if elsewhere.remote and isinstance(target, DatabaseTarget) else None
            elsewhere.run(job, batches, database)
        if settings.prune:
            job.prune()
        job.commit()
        return job.counts


def _recorded(
    batches: list[Batch], reasoning: IndexReasoning, redaction: Redaction | None
) -> list[tuple[str, Any]] | None:
    """Each batch's file as the manifest records it (key, stamp), or ``None``
    when some batch is not a file with a stamp (and so is read in any case)."""
    files = [
        (_key(b.key, redaction), _stamp(b.stamp, reasoning, redaction))
        for b in batches
        if b.key is not None and b.stamp is not None
    ]
    return files if len(files) == len(batches) else None


def _stamp(stamp: list[int] | None, reasoning: IndexReasoning, redaction: Redaction | None) -> Any:
    """A file's stamp as the manifest keeps it: beside the policy that made its
    documents (visible reasoning indexed, redaction rules), so a file indexed
    under another policy is read again; its sessions' hashes hold the policy
    too, yet an unchanged stamp skips them unread. The default policy adds
    nothing, so an index made before keeps its stamps."""
    policy: list[Any] = ([] if reasoning == "none" else [reasoning]) + (
        [] if redaction is None else [redaction.describe()]
    )
    if not policy or stamp is None:
        return stamp
    return [stamp, *policy]


def _key(key: str, redaction: Redaction | None) -> str:
    """A file as the manifest names it: the index is an output (R8)."""
    if redaction is None:
        return key
    from vis_export.redaction.redact import manifest_path

    return manifest_path(key, redaction)


class IndexJob:
    """One index job's state: what the index holds (``known``), what this job
    did, and its counts. It runs a batch itself (``run``), or takes what
    units of work found of one (``jobs.indexing``: ``skip``, ``repeated``,
    ``made``, ``file_done``, ``restore``), in source order either way."""

    def __init__(
        self,
        writer: Engine,
        target: Target,
        manifest: dict[str, Any],
        reasoning: IndexReasoning,
        progress: Callable[[Session], None] | None,
        warn: Callable[[str], None] | None,
        redaction: Redaction | None = None,
    ):
        self.writer, self.target, self.manifest, self.reasoning = writer, target, manifest, reasoning
        self.redaction = redaction
        self.progress, self.warn = progress, warn
        self.known: dict[str, str] = manifest["sessions"]
        self.counts = IndexCounts()
        self.seen: set[str] = set()
        self.unread: dict[str | None, set[str]] = {}  # source (None: stdin) -> the sessions it held
        self.unreadable: list[str] = []  # sources where no file could be read: what they hold is not known
        self.placed: set[str] = set()  # folders of handed-over sessions whose placement is checked
        self.done: dict[str, str] = {}
        self.files_done: dict[str, Any] = {}
        self.files_gone: set[str] = set()
        self.files_read: set[str] = set()  # the keys of the files this job read (or found unchanged)
        self.pending = 0
        # Where each session's first copy is (a source to read, or the session
        # itself when it cannot be read again), kept by a job whose Dask
        # workers write a database (see ``restore``).
        self.firsts: dict[str, str | Session] | None = None

    def unchanged(self, batch: Batch) -> bool:
        """Whether the manifest has the batch's file as it is, and every session of it."""
        entry = self.entry(batch)
        return (
            entry is not None
            and batch.stamp is not None
            and entry["stamp"] == self.stamp(batch)
            and all(self.known.get(i) == h for i, h in entry["sessions"].items())
            and not self.seen.intersection(entry["sessions"])
        )

    def stamp(self, batch: Batch) -> Any:
        return _stamp(batch.stamp, self.reasoning, self.redaction)

    def key(self, key: str) -> str:
        return _key(key, self.redaction)

    def entry(self, batch: Batch) -> dict[str, Any] | None:
        entry: dict[str, Any] | None = self.manifest["files"].get(self.key(batch.key)) if batch.key else None
        return entry

    def run(self, batch: Batch) -> None:
        if self.skip(batch):
            return
        hashes = {}
        for session in batch.load():
            digest = self.session(session, handed_over=batch.key is None)
            if digest is not None:
                hashes[session.id] = digest
        self.file_done(batch, hashes, batch.complete())

    def skip(self, batch: Batch) -> bool:
        """Counts an unchanged batch's sessions (see ``unchanged``) without reading it."""
        if not self.unchanged(batch):
            return False
        entry = self.entry(batch)
        assert entry is not None and batch.key is not None  # unchanged: the manifest has the file
        sessions = entry["sessions"]
        self.counts.unchanged += len(sessions)
        self.seen.update(sessions)
        self.files_read.add(batch.key)
        self._forget_plain(batch.key)
        if self.firsts is not None and batch.name is not None:
            self.firsts.update(dict.fromkeys(sessions, batch.name))
        return True

    def file_done(self, batch: Batch, hashes: dict[str, str], complete: bool) -> None:
        """What the manifest is to say of the batch's file once committed. A
        file read again under another name (a link beside it, a folder and a
        file in it both named: one real path, one entry) says nothing more:
        every session of it is a repeat, and its entry is its first reading's."""
        if batch.key is not None:
            if batch.key in self.files_read:
                return
            self.files_read.add(batch.key)
            self._forget_plain(batch.key)
        entry = self.entry(batch)
        if complete:
            if batch.key is not None and batch.stamp is not None:
                self.files_done[self.key(batch.key)] = {"stamp": self.stamp(batch), "sessions": hashes}
            return
        if batch.key is None or batch.stamp is not None:  # not read, yet not gone
            held = {i: h for i, h in (entry["sessions"] if entry else {}).items() if i not in hashes}
            self.unread[batch.key] = set(held)
            if batch.key is not None:  # no stamp: read again next time
                self.files_done[self.key(batch.key)] = {"stamp": None, "sessions": {**held, **hashes}}
        if batch.key is not None and ((batch.named and not hashes) or (batch.path is not None and batch.path.is_dir())):
            # A source named of which nothing was read (a folder gone, empty or
            # a file now: an unmounted share, a typo), or a folder that cannot
            # be listed. (A file found in a folder and gone since is gone.)
            self.unreadable.append(batch.name or batch.key)

    def _forget_plain(self, key: str) -> None:
        """Under --redact the manifest names a file redacted (``_key``): its plain name, left by a job
        without it, goes, else the index kept the home folder's user the redacted name hides (R8)."""
        if self.key(key) != key and self.manifest["files"].pop(key, None) is not None:
            self.files_gone.add(key)

    def session(self, session: Session, handed_over: bool) -> str | None:
        if self.progress is not None:
            self.progress(session)
        if handed_over and session.source and Path(session.source).is_file():
            # A caller's sessions may come from walking their file's folder
            # (load(folder)): that folder counts as read; it is walked once a job.
            folder = str(Path(session.source).absolute().parent)
            self.target.check(Placement([session.source] if folder in self.placed else [folder, session.source]))
            self.placed.add(folder)
        if self.repeated(session.id, session.source, session):
            return None
        from vis_export.searchindex.documents import indexed_view, view_digest, view_documents

        view = indexed_view(session, self.reasoning, self.redaction)
        return self.made(session.id, view_digest(view, self.reasoning), lambda: list(view_documents(view)))

    def repeated(self, session_id: str, source: str, session: Session | None = None) -> bool:
        """A session already indexed in this job from another source: skipped, with a warning."""
        if session_id in self.seen:
            self._warn(
                f"{source}: session {session_id!r} was already indexed from another source in this job; "
                "this one is skipped"
            )
            return True
        self.seen.add(session_id)
        if self.firsts is not None:
            self.firsts[session_id] = session if session is not None and not Path(source).is_file() else source
        return False

    def restore(self, session_id: str, lenient: bool) -> None:
        """Writes a session's first copy again: a Dask worker wrote a later copy
        over it, not knowing that another source held the session before. (The
        job skips that copy, as a job in one process does; the worker could not
        know, as the job learns it only from the results, in source order.)
        The first copy is read again: changed since, it is written as it is
        now; gone, the later copy stays. Either way the index holds what the
        next job would leave, never a copy that no source holds."""
        from vis_export.sources import read

        assert self.firsts is not None
        where = self.firsts[session_id]
        if isinstance(where, str):
            found = (r.session for r in read([where], lenient) if r.session is not None and r.session.id == session_id)
            first = next(found, None)
            if first is None:  # gone since: the later copy stays, as the next job would leave it
                return
        else:
            first = where
        from vis_export.searchindex.documents import indexed_view, view_digest, view_documents

        view = indexed_view(first, self.reasoning, self.redaction)
        self._write(session_id, view_digest(view, self.reasoning), list(view_documents(view)))

    def made(self, session_id: str, digest: str, docs: Callable[[], list[dict[str, Any]]] | None) -> str:
        """Indexes a session whose hash changed: ``docs`` gives its documents,
        or is ``None`` when its own transaction has already written it (a
        worker writing a database)."""
        if self.known.get(session_id) == digest:
            self.counts.unchanged += 1
            return digest
        if session_id in self.known:
            self.counts.updated += 1
        else:
            self.counts.added += 1
        if docs is None:
            self.known[session_id] = digest
            return digest
        self._write(session_id, digest, docs())
        return digest

    def _write(self, session_id: str, digest: str, docs: list[dict[str, Any]]) -> None:
        self.writer.delete_session(session_id)
        self.writer.add(docs)
        self.done[session_id] = digest
        self.pending += len(docs) + 1
        if self.pending >= self.target.commit_every:
            self.commit()

    def prune(self) -> None:
        """Removes the sessions no source holds any more. A source that failed
        to load says nothing about what it holds: its sessions stay, and a
        failed standard input or a source where no file could be read (whose
        sessions are not known: the files of a folder that is not there now
        are not even named) stops pruning."""
        if None in self.unread:
            self._warn(f"<stdin>: not read in full, {NOT_PRUNED}")
            return
        if self.unreadable:
            for name in self.unreadable:
                self._warn(f"{name}: could not be read, {NOT_PRUNED}")
            return
        for source, held in self.unread.items():
            if held:
                self._warn(f"{source}: not read in full, so its sessions stay in the index ({len(held)} not pruned)")
        alive = self.seen.union(*self.unread.values())
        for session_id in sorted(self.target.prunable(self.known) - alive):
            self.writer.delete_session(session_id)
            del self.known[session_id]
            self.counts.removed += 1
        files = self.manifest["files"]
        self.files_gone |= {key for key, entry in files.items() if not set(entry["sessions"]) <= alive}
        self.manifest["files"] = {key: entry for key, entry in files.items() if key not in self.files_gone}

    def _warn(self, line: str) -> None:
        if self.warn is not None:
            self.warn(line)

    def commit(self) -> None:
        self.known.update(self.done)
        self.manifest["files"].update(self.files_done)
        self.target.commit(self.writer, self.manifest, self.done, self.files_done, self.files_gone)
        self.done, self.files_done, self.files_gone = {}, {}, set()
        self.pending = 0
