"""The index directory: where it may be, what it may hold, who writes to it.

Every check that can refuse a directory runs before anything is created in
it, so a refused job leaves the disk as it found it.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple, cast

from vis_export.index_marker import (
    MANIFEST as MANIFEST,  # re-exported: where the index code looks for it
    SCHEMA_VERSION,
)
from vis_export.output import write_atomic
from vis_export.searchindex.engines import Engine, is_engine
from vis_export.searchindex.engines.opening import open_engine
from vis_export.searchindex.guard import DamagedIndex, GuardedEngine, IndexFailure, found_damaged

LOCK = ".vis-export-index.lock"
ENGINE_DATA = "engine"


class PlacementRefused(IndexFailure):
    """The index would be where sessions are read from."""


class Placement(NamedTuple):
    """What the placement check looks at: ``sources``, files and folders that
    are read; ``walks``, the real folders the walk of each source folder went
    through, when the job has walked them already (``sources.plan_sources``:
    they are not walked again); ``files``, the real paths of the files read.
    (A named tuple: a dataclass is made by compiling its methods, near a
    millisecond of every job, a no-op rerun's too.)"""

    sources: Sequence[str]
    walks: Mapping[str, Sequence[Path]] = MappingProxyType({})
    files: Sequence[str] = ()


def check_placement(directory: Path, sources: Iterable[str] | Placement) -> None:
    """A job never writes where sessions are read from (R3): the index is never
    inside a folder being read (a later run would read its files back as
    sessions), linked folders the walk follows included, and it never is, or
    holds, a source (a file or a folder read, through a link too). ``sources``
    are files and folders that are read; beside a file the user named is fine,
    as that file's folder is not read."""
    from vis_export.sources import source_folders

    placement = sources if isinstance(sources, Placement) else Placement(list(sources))
    target = directory.resolve()
    around = {target, *target.parents}
    walked: set[str] = set()  # every folder a walk here went through, and so all of its subfolders
    real_paths = RealPaths()
    holds = cache(lambda folder: target in (Path(folder), *Path(folder).parents))  # its files are in the index
    for source in dict.fromkeys(placement.sources):  # a job names each file's folder: as often as it has files
        known = placement.walks.get(source)
        if known is not None:
            is_folder: bool | None = True
        elif source in ("-", "<stdin>") or (is_folder := _is_folder(source)) is None:
            continue
        real = real_paths.real(source)
        folders: Sequence[Path] = ()
        if is_folder and real not in walked:  # walked already: its folders were found outside ``around``
            folders = known if known is not None else list(source_folders([source]))
            walked.update(map(str, folders))
        read = next((folder for folder in folders if folder in around), None)
        if read is not None:
            through = "" if str(read) == real else f" (through a link, {read})"
            raise PlacementRefused(
                f"{directory}: the index would be inside {source}{through}, a folder sessions are read "
                "from; choose a directory outside it"
            )
        if real == str(target) or holds(os.path.dirname(real)) or any(holds(str(f)) for f in folders):
            raise PlacementRefused(
                f"{directory}: the index directory would hold the source {source}; choose another directory"
            )
    held = next((file for file in placement.files if holds(os.path.dirname(file))), None)
    if held is not None:
        raise PlacementRefused(
            f"{directory}: the index directory would hold the source {held}; choose another directory"
        )


def _is_folder(source: str) -> bool | None:
    """Whether ``source`` is a folder (``None``: it is not there), as ``Path.exists``
    and ``Path.is_dir`` say, in one ``stat``: a job checks every file it reads."""
    try:
        return stat.S_ISDIR(os.stat(source).st_mode)
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP):
            return None
        raise
    except ValueError:  # a name no file can have (a NUL)
        return None


class RealPaths:
    """``os.path.realpath`` of many files in few folders: each folder is
    resolved once, and a file in it is that folder and its name unless the
    file is a link (or a name such as ``..``), which is resolved itself.
    (``realpath``, not ``Path.resolve``: that raises on a loop of links in
    Python 3.11, a source that is one line when read.)"""

    def __init__(self) -> None:
        self.folders: dict[str, str] = {}

    def real(self, path: str | os.PathLike[str], link: bool = True) -> str:
        """``link``: whether ``path`` may be a link (``False``: the caller's
        ``lstat`` said it is none, and no second one is made)."""
        name = os.fspath(path)
        folder_name, base = os.path.split(name)
        if base in ("", ".", "..") or (link and os.path.islink(name)):
            return os.path.realpath(name)
        folder = self.folders.get(folder_name)
        if folder is None:
            folder = self.folders[folder_name] = os.path.realpath(folder_name or ".")
        return os.path.join(folder, base)


def check_ours(directory: Path) -> None:
    """An index directory holds an index, or nothing but what a job killed
    before its first commit left: never someone else's files, nor a file, a
    device or a FIFO in place of the directory (nothing is made over them)."""
    if directory.exists() and not directory.is_dir():
        raise IndexFailure(f"{directory}: not a directory; an index is a directory of its own")
    if not directory.is_dir() or (directory / MANIFEST).exists():
        return
    if any(p.name not in (LOCK, ENGINE_DATA) for p in directory.iterdir()):
        raise IndexFailure(f"{directory}: not a vis-export index and not empty; choose another directory")


def first_missing(directory: Path) -> Path | None:
    """The outermost directory that creating ``directory`` would create."""
    missing = None
    for path in (directory, *directory.parents):
        if path.exists():
            return missing
        missing = path
    return missing


def remove_created(directory: Path, top: Path) -> None:
    """Undoes a job that created ``top`` (``directory`` or one of its parents):
    its own files go, then each directory up to ``top`` that is left empty."""
    import shutil  # on first use: only a refused job undoes a directory

    shutil.rmtree(directory / ENGINE_DATA, ignore_errors=True)
    for name in (LOCK, MANIFEST):
        (directory / name).unlink(missing_ok=True)
    for path in (directory, *directory.parents):
        try:
            path.rmdir()
        except OSError:
            return
        if path == top:
            return


@contextmanager
def writer_lock(directory: Path, wait: float) -> Iterator[None]:
    """One writer at a time; the lock goes with the process, even on kill -9.
    A folder that cannot be made or written to (``/proc/x``, no permission) is
    one line naming it."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        opened = open(directory / LOCK, "a+")  # noqa: SIM115 - closed by the with below
    except OSError as error:
        raise IndexFailure(f"{directory}: cannot make an index here ({error.strerror or error})") from None
    with opened as handle:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise IndexFailure(
                        f"{directory}: another index job is writing to it (waited {wait:g} s; see --wait)"
                    ) from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_manifest(directory: Path, engine: str | None) -> dict[str, Any]:
    """The manifest, checked against the engine asked for (``None``: any; a new
    index's manifest then names none)."""
    path = directory / MANIFEST
    if not path.exists():
        check_ours(directory)  # new, or killed before its first commit
        return {"engine": engine, "schema_version": SCHEMA_VERSION, "sessions": {}, "files": {}}
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise IndexFailure(f"{path}: unreadable index manifest ({error})") from None
    if not _well_formed(manifest):
        raise IndexFailure(
            f"{path}: not a vis-export index manifest; remove the index and rebuild it with vis-export index"
        )
    if engine is not None and manifest["engine"] != engine:
        raise IndexFailure(
            f"{directory}: this index was built with {manifest['engine']}, not {engine}; "
            "leave the engine out to use its own, or choose another directory"
        )
    if manifest.get("schema_version") != SCHEMA_VERSION:
        raise IndexFailure(
            f"{directory}: index schema version {manifest.get('schema_version')} is not "
            f"{SCHEMA_VERSION}; rebuild it in a new directory"
        )
    manifest.setdefault("files", {})
    return cast(dict[str, Any], manifest)


def _well_formed(manifest: Any) -> bool:
    """The shape a job relies on: an engine, session hashes, and per source
    file a stamp (or none) and the hashes of its sessions."""

    def hashes(value: Any) -> bool:
        return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())

    def file_entry(value: Any) -> bool:
        return (
            isinstance(value, dict)
            and hashes(value.get("sessions"))
            and (value.get("stamp") is None or isinstance(value["stamp"], list))
        )

    return (
        isinstance(manifest, dict)
        and is_engine(manifest.get("engine"))
        and hashes(manifest.get("sessions"))
        and isinstance(manifest.get("files", {}), dict)
        and all(map(file_entry, manifest.get("files", {}).values()))
    )


def write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    write_atomic(directory / MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=1, sort_keys=True) + "\n")


def open_index(directory: Path, engine: str, writable: bool, threads: int = 0) -> Engine:
    """The engine over the index in ``directory``; a damaged index fails in one line."""
    return GuardedEngine(directory, lambda: open_engine(engine, directory / ENGINE_DATA, writable, threads))


def check_index(directory: Path, engine: str) -> None:
    """A job that wrote nothing (a no-op rerun) still refuses a damaged index:
    tantivy's files are checked without importing tantivy (its import and
    opening were a fifth of the rerun); any other engine is opened to read."""
    if engine != "tantivy":
        open_index(directory, engine, writable=False).close()
        return
    from vis_export.searchindex.engines.tantivy_files import check_files

    try:
        check_files(directory / ENGINE_DATA)
    except (DamagedIndex, OSError) as error:
        raise found_damaged(directory, error) from None
