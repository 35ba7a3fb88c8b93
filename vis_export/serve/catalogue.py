"""The sessions a reading room serves: a summary of each, and where it is.

Built once at start-up from the sources (through the index job when serve
keeps its own index, so every file is read once) and brought up to date when
a source file's size or modification time changes. Pages look a session up
by id here and read it from the file recorded for it: nothing a request says
is ever used as a path. Only summaries are kept for every session; whole
sessions are read back on demand, the last few files' kept in memory.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_export.jobs.index_job import Batch, planned_batches, source_batches
from vis_export.listing import SessionSummary
from vis_export.model import Session
from vis_export.serve.keeper import IndexKeeper
from vis_export.sources.stamp import regular_stamp

if TYPE_CHECKING:
    from vis_export.redaction import Redaction

Report = Callable[[list[Any]], list[Session]]  # load results in, sessions out (problems told on the way)
SORTS = ("newest", "oldest", "title", "messages")
KEPT_FILES = 4  # files whose sessions stay in memory for the next page
SLOW_WALK = 0.2  # seconds: a look at the sources that takes longer runs in the background


@dataclass(frozen=True, slots=True)
class Entry:
    """A session's summary and its place: its file (a resolved path from the
    walk of the sources) and its position among that file's sessions."""

    summary: SessionSummary
    key: str
    position: int
    words: str  # title and id in one case, for the filter


def _entry(session: Session, key: str, position: int, redaction: Redaction | None = None) -> Entry:
    """With ``redaction``, the summary (title, models, path) is of the redacted session, and so is the filter's text."""
    if redaction is not None:
        from vis_export.redaction.redact import Redactor

        redactor = Redactor(redaction)  # one numbering: the session's, then its file's path (a home folder)
        session = redactor.session(session)
        session = replace(session, source=redactor.path(session.source, ("source",)))
    summary = SessionSummary.of(session)
    return Entry(summary, key, position, f"{summary.heading}\n{summary.id}".casefold())


def _recorded(batch: Batch, read: dict[str, tuple[list[int] | None, list[Session]]]) -> Batch:
    """The batch, its sessions kept in ``read`` when it is loaded (by the index job or not)."""

    def load() -> list[Session]:
        sessions = list(batch.load())
        read[str(batch.key)] = (batch.stamp, sessions)
        return sessions

    return replace(batch, load=load)


def _sessions(results: list[Any]) -> list[Session]:
    """A file read again for a page: its problems were told when it was first read."""
    return [r.session for r in results if r.session is not None]


@dataclass(frozen=True)
class Listing:
    """One state of the catalogue; replaced whole on a change, so a request
    reads a consistent one without a lock."""

    files: dict[str, tuple[list[int] | None, list[Entry]]] = field(default_factory=dict)
    by_id: dict[str, Entry] = field(default_factory=dict)
    sorted: dict[str, list[Entry]] = field(default_factory=dict)  # by sort name, built on first use


def _by_time(entry: Entry) -> tuple[bool, int]:
    last = entry.summary.last_at
    return (last is None, -(last or 0))


_SORT_KEYS: dict[str, Callable[[Entry], Any]] = {
    "newest": _by_time,
    "oldest": lambda e: (e.summary.first_at is None, e.summary.first_at or 0),
    "title": lambda e: e.summary.heading.casefold(),
    "messages": lambda e: -e.summary.messages,
}


class Catalogue:
    def __init__(
        self,
        sources: Sequence[str],
        report: Report,
        keeper: IndexKeeper | None = None,
        check_every: float = 1.0,
        redaction: Redaction | None = None,
    ):
        """``check_every``: at most how often (seconds) a list or a search looks
        for changed sources (0: at every one); a session's own page always
        checks its file."""
        self.sources, self.report, self.keeper, self.check_every = list(sources), report, keeper, check_every
        self.redaction = redaction
        self.listing = Listing()
        self.lock = threading.Lock()
        self.checked = 0.0
        self.walk = 0.0  # how long the last look at the sources took (seconds)
        self.looking: threading.Thread | None = None  # a slow look, in the background
        self.closed = False
        self.kept: OrderedDict[tuple[str, Any], list[Session]] = OrderedDict()

    # --- keeping current ---------------------------------------------------------------

    def refresh(self, progress: Callable[[int], Callable[[], None]] | None = None) -> None:
        """Read every source file that is new or changed (through the index
        job when there is a keeper), and forget those that are gone: one walk
        of the sources (``planned_batches``) finds the files, their stamps and
        what the index's placement check needs. ``progress(total)``: what to
        call as each file is read, given how many there are."""
        with self.lock:
            if self.closed:
                return
            started = time.monotonic()
            tick = [lambda: None]
            batches, placement = planned_batches(self.sources, False, self.report, lambda: tick[0]())
            if progress is not None:
                tick[0] = progress(len(batches))
            self.checked = time.monotonic()
            self.walk = self.checked - started
            files = self.listing.files
            changed = {b.key for b in batches if b.key not in files or files[b.key][0] != b.stamp}
            if not changed and files.keys() == {b.key for b in batches}:
                return
            read: dict[str, tuple[list[int] | None, list[Session]]] = {}
            batches = [_recorded(b, read) for b in batches]
            if self.keeper is not None:
                self.keeper.update(batches, placement=placement)
            for batch in batches:
                if batch.key in changed and batch.key not in read:
                    batch.load()
            self.listing = self._rebuilt([str(b.key) for b in batches], read)

    def close(self) -> None:
        """Removes the index kept of the sources (if any), once a look in the
        background has ended: one still writing it would fail the removal, or
        make the folder again. No look starts after this."""
        with self.lock:
            self.closed = True
        if self.looking is not None:
            self.looking.join()
        if self.keeper is not None:
            self.keeper.close()

    def refresh_file(self, key: str) -> None:
        """Read one changed source file again (a session page's own), without
        walking the sources; when sessions left it, a full refresh, which
        also takes them out of the index."""
        with self.lock:
            if self.closed:
                return
            (batch,), placement = planned_batches([key], False, self.report)
            before = {e.summary.id for e in self.listing.files.get(key, (None, []))[1]}
            read: dict[str, tuple[list[int] | None, list[Session]]] = {}
            batch = _recorded(batch, read)
            sessions = batch.load()
            if before <= {s.id for s in sessions}:
                if self.keeper is not None:
                    self.keeper.update([replace(batch, load=lambda: sessions)], prune=False, placement=placement)
                self.listing = self._rebuilt(list(self.listing.files), read)
                return
        self.refresh()

    def _rebuilt(self, keys: list[str], read: dict[str, tuple[list[int] | None, list[Session]]]) -> Listing:
        """The listing of the files ``keys``, in order: those in ``read`` from
        their sessions, the others as they were."""
        files: dict[str, tuple[list[int] | None, list[Entry]]] = {}
        by_id: dict[str, Entry] = {}
        for key in keys:
            if key in read:
                stamp, sessions = read[key]
                entries = [_entry(s, key, i, self.redaction) for i, s in enumerate(sessions)]
            else:
                stamp, entries = self.listing.files[key]
            files[key] = (stamp, entries)
            for entry in entries:
                by_id.setdefault(entry.summary.id, entry)  # the first of a repeated id, as the index job keeps
        return Listing(files, by_id)

    def current(self) -> Listing:
        """The listing, the sources looked at again first when the last look is
        older than ``check_every`` (0: at every call). A look that takes long
        (a folder of many thousands of files) runs in the background instead,
        at most a tenth of the time, and the request gets the listing as it is."""
        if time.monotonic() - self.checked < (max(self.check_every, 10 * self.walk) if self.check_every else 0):
            return self.listing
        if self.walk < SLOW_WALK:
            self.refresh()
        elif self.looking is None or not self.looking.is_alive():
            self.looking = threading.Thread(target=self.refresh, name="vis-export-serve-refresh", daemon=True)
            self.looking.start()
        return self.listing

    # --- reading ---------------------------------------------------------------------------

    def entry(self, session_id: str) -> tuple[Entry, Any] | None:
        """The entry of a session and the stamp of its file, the file checked for changes first."""
        listing = self.current()
        entry = listing.by_id.get(session_id)
        if entry is not None and self._stamp(entry.key) != listing.files[entry.key][0]:
            self.refresh_file(entry.key)
            listing = self.listing
            entry = listing.by_id.get(session_id)
        return None if entry is None else (entry, listing.files[entry.key][0])

    def session(self, session_id: str) -> tuple[Session, Any] | None:
        """A session and the stamp of its file (what a cached page of it is valid for)."""
        found = self.entry(session_id)
        if found is None:
            return None
        entry, stamp = found
        cache_key = (entry.key, repr(stamp))
        with self.lock:
            sessions = self.kept.get(cache_key)
        if sessions is None:
            (batch,) = source_batches([entry.key], False, _sessions)
            sessions = list(batch.load())
        with self.lock:
            self.kept[cache_key] = sessions
            self.kept.move_to_end(cache_key)
            while len(self.kept) > KEPT_FILES:
                self.kept.popitem(last=False)
        if entry.position >= len(sessions) or sessions[entry.position].id != session_id:
            return None  # changed between the check and the read: the next request sees it
        return sessions[entry.position], stamp

    def _stamp(self, key: str) -> list[int] | None:
        """The stamp the listing keeps for ``key``'s file (``None``: no file there now)."""
        path = Path(key)
        return regular_stamp(path)

    def page(
        self, query: str, since: int | None, until: int | None, sort: str, offset: int, limit: int
    ) -> tuple[list[SessionSummary], int]:
        """One page of the sessions whose title or id holds ``query`` (any case)
        and whose time span meets [since, until]; and how many match in all."""
        listing = self.current()
        ordered = listing.sorted.get(sort)
        if ordered is None:
            ordered = listing.sorted[sort] = sorted(listing.by_id.values(), key=_SORT_KEYS[sort])
        if not query and since is None and until is None:
            return [e.summary for e in ordered[offset : offset + limit]], len(ordered)
        needle = query.casefold()
        matching = [
            e.summary
            for e in ordered
            if needle in e.words
            and (since is None or (e.summary.last_at is not None and e.summary.last_at >= since))
            and (until is None or (e.summary.first_at is not None and e.summary.first_at <= until))
        ]
        return matching[offset : offset + limit], len(matching)

    def __len__(self) -> int:
        return len(self.listing.by_id)
