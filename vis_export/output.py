"""Writing exports: where each session goes, atomic files, and the sources an
output must keep clear of (rule R6)."""

from __future__ import annotations

import errno
import os
import re
import signal
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from vis_export.errors import VisExportError
from vis_export.strings import surrogates_replaced

if TYPE_CHECKING:
    from vis_export.sources import SourcePlan

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_NAME = 120


def encode(text: str) -> bytes:
    """UTF-8 of any text: a lone surrogate (JSON can carry one, UTF-8 cannot)
    becomes U+FFFD rather than failing the whole export."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return surrogates_replaced(text).encode("utf-8")


# The signals that stop a run: the command line makes each unwind like an
# exception (SIGINT does by itself), so temporary files are removed on the way.
STOPPING = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})


@contextmanager
def _signals_held() -> Iterator[None]:
    """Hold the ``STOPPING`` signals for a few steps: their handlers raise, and a
    raise between creating a temporary file and arming its removal would leave it
    behind. A held signal is delivered when the block ends, once the removal is armed."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _pieces(data: str | bytes | Iterable[str]) -> Iterable[bytes]:
    if isinstance(data, str):
        return [encode(data)]
    if isinstance(data, bytes):
        return [data]
    return (encode(piece) for piece in data)


def as_bytes(data: str | bytes | Iterable[str]) -> bytes:
    """What ``write_atomic`` would write."""
    return b"".join(_pieces(data))


def write_atomic(path: Path, data: str | bytes | Iterable[str], make_folder: bool = True) -> None:
    """Write ``data`` (or its pieces, as they come) to ``path`` so that readers see
    the old file or the new one, never a part: a temporary file beside it, then a
    rename. ``make_folder`` false: a folder that is not there is an error. An
    output that is a stream (see ``stream_kind``) is written into, once the whole
    of ``data`` is made, never replaced."""
    kind = stream_kind(path)
    if kind is not None:
        _write_into(path, kind, [as_bytes(data)])
        return
    pieces = _pieces(data)
    directory = path.parent
    if make_folder:
        directory.mkdir(parents=True, exist_ok=True)
    temporary = ""
    try:
        with _signals_held():
            import tempfile  # on first use: a no-op rerun writes nothing

            handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".part")
        with os.fdopen(handle, "wb") as stream:
            for piece in pieces:
                stream.write(piece)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        with _signals_held():  # a second Ctrl-C does not interrupt the removal
            try:
                os.unlink(temporary)
            except FileNotFoundError:
                pass
        raise


def place(made: Path, path: Path) -> None:
    """Puts a file made elsewhere (on the same file system) at ``path``: a rename,
    or, when ``path`` is a stream, its bytes written into it and the file removed."""
    kind = stream_kind(path)
    if kind is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.replace(made, path)
        return
    with open(made, "rb") as source:
        _write_into(path, kind, iter(lambda: source.read(1 << 20), b""))
    made.unlink()


# Whatever a path leads to (links followed), as ``stream_kind`` names it.
_STREAMS = {stat.S_IFCHR: "a character device", stat.S_IFIFO: "a FIFO"}
_STANDARD = {1: "standard output", 2: "standard error"}


def stream_kind(path: Path) -> str | None:
    """What ``path`` is when it is to be written into rather than replaced: a
    character device (``/dev/null``, a terminal), a FIFO, or this process's
    standard output or error under another name (``/dev/stdout``,
    ``/proc/self/fd/1``, even when that is a regular file: the shell's ``>>``
    keeps appending); ``None`` for a regular file or no file. Renaming over such
    a path would replace the device node, the pipe or the link, for every
    program after this one (``-o /dev/null`` run as root). Anything else that is
    not a regular file (a block device, a socket) is refused."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    for descriptor, name in _STANDARD.items():
        try:
            standard = os.fstat(descriptor)
        except OSError:
            continue
        if (standard.st_dev, standard.st_ino) == (info.st_dev, info.st_ino) and not stat.S_ISDIR(info.st_mode):
            return name
    kind = stat.S_IFMT(info.st_mode)
    if kind in _STREAMS:
        return _STREAMS[kind]
    if kind in (stat.S_IFBLK, stat.S_IFSOCK):
        what = "a block device" if kind == stat.S_IFBLK else "a socket"
        raise OSError(errno.EPERM, f"{path} is {what}: an output is a file, a character device or a FIFO")
    return None


def _write_into(path: Path, kind: str, pieces: Iterable[bytes]) -> None:
    """Writes into a stream (``kind``, from ``stream_kind``): standard output or
    error through the process's own descriptor (its position and append mode
    kept), anything else opened for writing, never created or truncated."""
    descriptor = next((d for d, name in _STANDARD.items() if kind == name), None)
    if descriptor is not None:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        with open(descriptor, "wb", closefd=False) as standard:
            for piece in pieces:
                standard.write(piece)
        return
    handle = os.open(path, os.O_WRONLY | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    with open(handle, "wb") as stream:
        if stat.S_ISREG(os.fstat(handle).st_mode):  # replaced by a file since it was looked at
            raise OSError(errno.EAGAIN, f"{path} became a file as it was opened: nothing written into it")
        for piece in pieces:
            stream.write(piece)


def file_names(session_ids: list[str], extension: str) -> list[str]:
    """One safe, distinct file name per session id, in order: ``<id>.<ext>``."""
    names: list[str] = []
    taken: set[str] = set()
    for session_id in session_ids:
        stem = _UNSAFE.sub("_", session_id).strip("._")[:MAX_NAME] or "session"
        name, n = f"{stem}.{extension}", 1
        while name.lower() in taken:
            n += 1
            name = f"{stem}-{n}.{extension}"
        taken.add(name.lower())
        names.append(name)
    return names


class OutputError(VisExportError):
    """An output that cannot be written as asked: one line for a person."""


def output_paths(output: str, session_ids: Sequence[str], extension: str) -> list[Path]:
    """The file each session goes to.

    ``output`` names a file when there is one session, unless it ends with a path
    separator or is an existing directory; with several sessions it is a
    directory (created if needed), one ``<id>.<ext>`` per session, unless it
    is a name with the format's extension that is not there: that names a
    file, which several sessions cannot share (a folder ``single.txt`` was made).
    """
    target = Path(output)
    as_directory = output.endswith(("/", os.sep)) or target.is_dir() or len(session_ids) > 1
    if not as_directory:
        return [target]
    if not target.exists() and not output.endswith(("/", os.sep)) and target.suffix.lower() == f".{extension}":
        raise OutputError(
            f"{output}: names one {extension} file, and the sources hold {len(session_ids)} sessions; "
            "name a directory (ending in /) or choose one with --session"
        )
    if target.exists() and not target.is_dir():
        raise OutputError(f"{output}: is a file; {len(session_ids)} sessions need a directory")
    return [target / name for name in file_names(list(session_ids), extension)]


def source_guard(plan: SourcePlan, read_suffixes: tuple[str, ...]) -> Callable[[Path], str | None]:
    """A check that says why ``target`` must not be written, or ``None``.

    An output never replaces a file being read (by name, link or hard link), and
    a file that the readers would pick up (``read_suffixes``) is never written
    inside a folder being read, where the next run would read it back as a source:
    every real folder the walk visits counts, those reached through a link too.
    ``plan``: the job's one walk of its sources (``sources.plan_sources``).
    """
    read: set[tuple[int, int]] = set()
    for planned in plan.files:
        try:
            info = planned.path.stat() if planned.path else None
        except OSError:
            continue
        if info is not None:
            read.add((info.st_dev, info.st_ino))
    folders = {folder for walk in plan.walks.values() for folder in walk}  # linked folders too: the walk follows them

    def refusal(target: Path) -> str | None:
        try:
            info = target.stat()
            if (info.st_dev, info.st_ino) in read:
                return "it is a source file being read"
        except OSError:
            pass
        if target.name.endswith(read_suffixes):
            real = target.resolve()
            for folder in real.parents:
                if folder in folders:
                    return f"it is inside the source folder {folder}, where it would be read back as a source"
        return None

    return refusal
