"""A conversion's own hidden folder beside its output, and the sweep of those whose job died.

A conversion renders into such a folder what waits for its name (on Dask
workers; in its own process, past what it keeps in memory) and removes it
at the end, whatever happens in the job; a job killed outright
(``kill -9``, a machine that went down) cannot, and its folder would stay in
the output folder for good. So each job holds a lock on a file in its folder
for as long as it runs (an ``flock``, which the system releases when the
process dies, however it dies), and every later job writing to that output
folder removes the folders whose lock no one holds. The lock file also says which machine made
it: a folder made from another machine on a shared file system, whose lock
this machine may not see held (file systems that keep locks per machine),
is removed only once it is a day old.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import time
import uuid
from pathlib import Path

PREFIX = ".vis-export-job-"  # hidden: never read back as a source
OWNER = ".owner"  # the lock file in the folder; what workers render is named ``<hex>.out``
UNOWNED_GRACE = 3600.0  # seconds a folder without its lock file is left (being made, or made by a version before)
ELSEWHERE_STALE = 86400.0  # seconds after which another machine's folder whose lock is free is removed
_HELD: set[tuple[int, int]] = set()  # the folders of this process's jobs (device and inode: however named)


class JobFolder:
    """A folder of this job's own in ``base``, locked for as long as the job holds it."""

    def __init__(self, path: Path, lock: int | None):
        self.path, self._lock = path, lock
        self.identity = _identity(path)

    @classmethod
    def make(cls, base: Path) -> JobFolder | None:
        """The folder, made in ``base`` (and ``base`` with it) after a sweep of
        those dead jobs left there; ``None`` when it cannot be made."""
        sweep(base)
        path = base / f"{PREFIX}{uuid.uuid4().hex}"
        try:
            path.mkdir(parents=True)
        except OSError:
            return None
        made = cls(path, _owned(path))
        _HELD.add(made.identity)
        return made

    def remove(self, attempts: int = 50) -> None:
        """Removes the folder, which workers of a job that failed may still be
        writing in: a file they began as it was removed keeps it, but once it
        is gone, nothing they write makes it again. The lock goes last."""
        for _ in range(attempts):
            shutil.rmtree(self.path, ignore_errors=True)
            if not self.path.exists():
                break
            time.sleep(0.02)
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None
        _HELD.discard(self.identity)


def _owned(path: Path) -> int | None:
    """The lock on ``path``'s owner file, taken before the file has its name
    (a sweep never finds it unlocked); ``None`` where the file system has no
    locks (a sweep then goes by the process id)."""
    record = json.dumps({"host": socket.gethostname(), "pid": os.getpid()}).encode()
    draft = path / f"{OWNER}.new"  # in a folder just made: no other has this name
    try:
        handle = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        locked = True
    except OSError:
        locked = False
    try:
        os.write(handle, record)
        os.replace(draft, path / OWNER)
    except OSError:
        pass  # a sweep takes it for a folder being made, and leaves it the grace
    if locked:
        return handle
    os.close(handle)
    return None


def sweep(base: Path) -> list[Path]:
    """Removes the job folders in ``base`` that a job which died left; the ones removed."""
    try:
        found = [Path(entry.path) for entry in os.scandir(base) if entry.name.startswith(PREFIX) and entry.is_dir()]
    except OSError:  # no such folder yet, or not one
        return []
    swept = []
    for path in found:
        # Not this process's own: where locks are per process (NFS), opening and closing its lock file would free it.
        if _identity(path) not in _HELD and _remove_if_dead(path):
            swept.append(path)
    return swept


def _remove_if_dead(path: Path) -> bool:
    try:
        handle = os.open(path / OWNER, os.O_RDWR)  # NFS locks a file open for writing only
    except FileNotFoundError:
        if _age(path) > UNOWNED_GRACE:
            shutil.rmtree(path, ignore_errors=True)
            return True
        return False
    except OSError:
        return False
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            taken = True  # no process holds it
        except BlockingIOError:
            return False  # its job is running
        except OSError:
            taken = False  # no locks on this file system
        try:
            record = json.loads(os.read(handle, 4096))
            host, pid = str(record["host"]), int(record["pid"])
        except (ValueError, KeyError, TypeError, OSError):
            host, pid = "", 0
        if host != socket.gethostname():
            dead = _age(path / OWNER) > ELSEWHERE_STALE
        else:
            dead = taken or not _alive(pid)
        if dead:
            shutil.rmtree(path, ignore_errors=True)
        return dead
    finally:
        os.close(handle)


def _identity(path: Path) -> tuple[int, int]:
    try:
        info = path.stat()
    except OSError:
        return (-1, -1)
    return (info.st_dev, info.st_ino)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True


def _age(path: Path) -> float:
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return 0.0
