"""Readers: every input in ``docs/sources.md`` becomes sessions of one model.

Nothing here opens a source for writing. ``read`` yields a ``LoadResult`` per
session (or per source that could not be read), so a batch can report one bad
input and go on; ``load`` is the strict form the API offers.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Union

from vis_export.index_marker import is_index
from vis_export.sources.stamp import linked_stamp

if TYPE_CHECKING:  # a job that only walks and stamps (a no-op rerun) loads no model, nor makes their classes
    from vis_export.model import Session
    from vis_export.sources.result import LoadResult

Source = Union[str, "os.PathLike[str]"]
STDIN = "-"
SESSION_SUFFIXES = (".json", ".jsonl", ".ndjson")
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def read(sources: Source | Iterable[Source], lenient: bool = False) -> Iterator[LoadResult]:
    """Every session in ``sources`` (files, directories, or ``-`` for stdin), in order.

    ``lenient`` keeps what can be shown safely from invalid input (see ``salvage``).
    """
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    for source in sources:
        yield from _read_one(source, lenient)


def load(sources: Source | Iterable[Source]) -> Iterator[Session]:
    """Every session in ``sources``; raises ``InvalidInput`` at the first bad one."""
    from vis_export.problems import InvalidInput

    for result in read(sources):
        if result.session is None:
            raise InvalidInput(result.source, result.problems)
        yield result.session


def source_files(sources: Iterable[Source]) -> Iterator[tuple[str, Path | None]]:
    """Every file ``read`` would read, as (name, path); stdin has no path, and a
    directory with no session file or a missing source comes as its own name."""
    for source in sources:
        for name, path, _, _ in _source_files(os.fspath(source), []):
            yield name, path


class PlannedFile(NamedTuple):
    """A file a job reads: ``name`` as the sources name it (``path``: ``None``
    for stdin), the ``source`` it was found in (``walked``: by walking that
    folder), and its ``stamp`` (``None``: not a file now).

    Named tuples, these two, not dataclasses: a no-op index rerun imports this
    module, and a dataclass is made by compiling its methods (a frozen one,
    near a millisecond: as long as stamping a hundred files)."""

    name: str
    path: Path | None
    source: str
    walked: bool
    stamp: list[int] | None
    link: bool = True  # whether it may be a link (False: the stamp's lstat said it is none)


class SourcePlan(NamedTuple):
    """One walk of a job's sources: the files it reads with their stamps, and
    the real folders each source folder's walk went through (what the guards
    that keep outputs and indexes out of read folders need), so nothing walks
    the sources a second time."""

    files: list[PlannedFile]
    walks: dict[str, list[Path]]


def plan_sources(sources: Iterable[Source]) -> SourcePlan:
    """The files ``read`` would read in ``sources`` (as ``source_files`` gives
    them), stamped, and the folders walked to find them (as ``source_folders``)."""
    plan = SourcePlan([], {})
    for source in sources:
        name = os.fspath(source)
        folders: list[Path] = []
        for found, path, walked, wal in _source_files(name, folders):
            stamp, link = linked_stamp(path, wal) if path is not None else (None, True)
            plan.files.append(PlannedFile(found, path, name, walked, stamp, link))
        if folders:
            plan.walks[name] = [folder.resolve() for folder in folders]
    return plan


def _source_files(name: str, folders: list[Path]) -> Iterator[tuple[str, Path | None, bool, bool | None]]:
    """The files of one source as (name, path, found by a walk, whether a
    ``-wal`` is beside it: ``None``, not known); the folders walked are added
    to ``folders``."""
    path = Path(name)
    if name == STDIN or not path.is_dir():
        yield name, (None if name == STDIN else path), False, None
        return
    found = False
    for file, wal in _session_files(path, folders):
        found = True
        yield str(file), file, True, wal
    if not found:
        yield name, path, True, None


def _read_one(source: Source, lenient: bool) -> Iterator[LoadResult]:
    # The readers are imported when a file is read: a job that finds every file
    # unchanged (a no-op rerun) only walks and stamps, and pays nothing for them.
    from vis_export.problems import Problem
    from vis_export.sources.files import NOT_FOUND, read_file, read_stream
    from vis_export.sources.result import failed

    name = os.fspath(source)
    if name == STDIN:
        yield from read_stream(sys.stdin.buffer, "<stdin>", "stdin", lenient)
        return
    path = Path(name)
    if path.is_dir():
        yield from _read_directory(path, lenient)
    elif path.exists():
        yield from read_file(path, name, lenient)
    else:
        yield failed(name, Problem("", NOT_FOUND))


def _read_directory(root: Path, lenient: bool) -> Iterator[LoadResult]:
    from vis_export.problems import Problem
    from vis_export.sources.files import read_file
    from vis_export.sources.result import failed

    found = False
    for path, _ in _session_files(root):
        found = True
        yield from read_file(path, str(path), lenient)
    if not found:
        yield failed(str(root), Problem("", "no sessions found (looked for .json, .jsonl, .ndjson and SQLite files)"))


def source_folders(sources: Iterable[Source]) -> Iterator[Path]:
    """The real folder (links resolved) behind every folder ``read`` walks in
    ``sources``, linked folders included, for the guards that keep outputs and
    indexes out of them: what is written in any of them is read back next time."""
    for source in sources:
        name = os.fspath(source)
        if name != STDIN and Path(name).is_dir():
            for folder, _, _ in _walk(Path(name)):
                yield folder.resolve()


def _session_files(root: Path, folders: list[Path] | None = None) -> Iterator[tuple[Path, bool | None]]:
    """Session files under ``root``, in name order, hidden names skipped, each
    with whether its folder has a ``-wal`` of it; a folder that cannot be
    listed is yielded itself, so reading it reports why. Each folder the walk
    goes through is added to ``folders``."""
    for folder, names, listed in _walk(root):
        if folders is not None:
            folders.append(folder)
        if names is None:
            yield folder, None
            continue
        for name in names:
            if name.startswith(".") or name.endswith(SQLITE_SIDE_FILES):
                continue
            path = folder / name
            if name.endswith(SESSION_SUFFIXES) or _starts_like_store(path):
                yield path, f"{name}-wal" in listed


def _starts_like_store(path: Path) -> bool:
    from vis_export.sources.files import starts_like_store

    return starts_like_store(path)


def _walk(root: Path) -> Iterator[tuple[Path, list[str] | None, frozenset[str]]]:
    """Each folder the walk of ``root`` visits, with its file names in order
    (``None``: it cannot be listed) and every name it holds.

    Symlinked subfolders are followed: a link is how people gather sessions
    kept elsewhere, and skipping it would lose them silently. Each real folder
    is walked once, so a link back up the tree (a loop) or a second link to the
    same folder ends the walk there instead of reading anything twice. Hidden
    folders are skipped, and so, silently, is a subfolder that is a vis-export
    index: its JSON files are the index's own, not sessions. ``root`` itself is
    walked whatever it holds, since it was named.
    """
    walked: set[tuple[int, int]] = set()
    _first_visit(root, walked)
    errors: list[OSError] = []
    for folder, dirs, files in os.walk(root, onerror=errors.append, followlinks=True):
        yield from _unlisted(errors)
        listed = frozenset((*dirs, *files))
        dirs[:] = [d for d in sorted(dirs) if _walked_into(Path(folder) / d, walked)]
        yield Path(folder), sorted(files), listed
    yield from _unlisted(errors)


def _walked_into(folder: Path, walked: set[tuple[int, int]]) -> bool:
    """Whether the walk goes into subfolder ``folder`` (see ``_walk``)."""
    return not folder.name.startswith(".") and not is_index(folder) and _first_visit(folder, walked)


def _first_visit(folder: Path, walked: set[tuple[int, int]]) -> bool:
    """Whether the real folder behind ``folder`` is walked for the first time (and now is)."""
    try:
        info = folder.stat()
    except OSError:
        return True  # os.walk fails to list it and reports it
    identity = (info.st_dev, info.st_ino)
    if identity in walked:
        return False
    walked.add(identity)
    return True


def _unlisted(errors: list[OSError]) -> Iterator[tuple[Path, None, frozenset[str]]]:
    while errors:
        error = errors.pop(0)
        if error.filename is not None:
            yield Path(error.filename), None, frozenset()


def __getattr__(name: str) -> Any:
    """``LoadResult``, made when first asked for (see ``PlannedFile``)."""
    if name != "LoadResult":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from vis_export.sources.result import LoadResult

    return LoadResult


__all__ = [
    "LoadResult",
    "PlannedFile",
    "Source",
    "SourcePlan",
    "load",
    "plan_sources",
    "read",
    "source_files",
    "source_folders",
]
