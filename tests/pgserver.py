"""A real PostgreSQL server from the Debian package, for the tests and the benchmarks.

Plain Python (no pytest), so that ``tests/postgres.py`` (the fixtures) and
``benchmarks/search_postgres.py`` start the server the same way. The server refuses
to run as root, so as root it runs as an unprivileged user (``vistest``,
created when missing) through ``runuser``. It listens on a free port of
127.0.0.1 only, keeps its data in a temporary directory, and is stopped (and
its directory removed) when the ``running`` context ends. Password
authentication is on (scram), so tests can check what a wrong password does;
``fsync`` is off, as nothing here must survive a crash of the machine.
"""

from __future__ import annotations

import fcntl
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

USER = "vistest"
PASSWORD = "vis-test-secret-9c1f"  # a test checks that no message ever shows it


@dataclass(frozen=True)
class Server:
    bin: Path
    port: int
    user: str = USER
    password: str = PASSWORD
    data: Path | None = None  # the cluster's folder

    def cpu(self) -> float:
        """CPU-seconds the server has used since it started: the postmaster's,
        its ended processes' (each connection's backend) and its live ones'
        (background workers, connections still open), from ``/proc``."""
        assert self.data is not None
        postmaster = (self.data / "postmaster.pid").read_text().split()[0]
        # /proc/PID/stat after the name: state, parent, ..., then user, system, ended children's user, system
        ticks = sum(map(int, _stat(Path("/proc", postmaster, "stat"))[11:15]))
        for stat in Path("/proc").glob("[0-9]*/stat"):
            fields = _stat(stat)
            if fields[1:2] == [postmaster]:
                ticks += int(fields[11]) + int(fields[12])
        return ticks / os.sysconf("SC_CLK_TCK")

    def uri(self, database: str = "postgres", user: str | None = None, password: str | None = None) -> str:
        return f"postgresql://{user or self.user}:{password or self.password}@127.0.0.1:{self.port}/{database}"

    def environment(self) -> dict[str, str]:
        return {
            **os.environ,
            "PGPASSWORD": self.password,
            "PGHOST": "127.0.0.1",
            "PGPORT": str(self.port),
            "PGUSER": self.user,
        }

    def sql(self, statement: str, database: str = "postgres") -> str:
        """Runs ``statement`` with psql as the superuser; returns its output."""
        done = subprocess.run(
            [str(self.bin / "psql"), "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-d", database, "-c", statement],
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def dump(self, database: str) -> bytes:
        """The whole database as ``pg_dump`` writes it."""
        done = subprocess.run(
            [str(self.bin / "pg_dump"), "-d", database], env=self.environment(), capture_output=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done.stdout


def unavailable() -> str | None:
    """Why no server can be started here (the package or the driver missing), or None."""
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        return "PostgreSQL is not installed (apt-get install postgresql)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'vis-export[postgresql]')"
    return None


def _stat(path: Path) -> list[str]:
    """A process's ``stat`` fields after its name (none when it has ended)."""
    try:
        return path.read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _as_server_user() -> list[str]:
    """The command prefix that runs a program as an unprivileged user. The user is made
    under a lock: the test processes of ``pytest -n`` would each find it missing, and
    the second ``useradd`` would fail."""
    if os.geteuid() != 0:
        return []
    with open(Path(tempfile.gettempdir()) / f"vis-{USER}-useradd.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            pwd.getpwnam(USER)
        except KeyError:
            subprocess.run(["useradd", "-m", USER], check=True, capture_output=True, timeout=60)
    return ["runuser", "-u", USER, "--"]


@contextmanager
def running(kept: Path | None = None) -> Iterator[Server]:
    """A new server of the newest installed version, for as long as the context
    lasts; with ``kept`` (a folder), its data stays there for the next run (a
    benchmark's index that takes minutes to build), made on the first."""
    binaries = Path(sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))[-1]).parent
    prefix = _as_server_user()
    home = kept or Path(tempfile.mkdtemp(prefix="vis-pg-"))
    home.mkdir(parents=True, exist_ok=True)
    data, password_file = home / "data", home / "password"
    password_file.write_text(PASSWORD + "\n")
    if prefix:
        shutil.chown(home, USER)
        shutil.chown(password_file, USER)
    port = _free_port()
    try:
        if not (data / "PG_VERSION").exists():
            _initdb(binaries, prefix, data, password_file)
        options = f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={home} -c fsync=off"
        subprocess.run(
            [*prefix, str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(home / "log"), "-w", "start"],
            check=True,
            capture_output=True,
            timeout=120,
        )
        yield Server(binaries, port, data=data)
    finally:
        subprocess.run(
            [*prefix, str(binaries / "pg_ctl"), "-D", str(data), "-m", "fast" if kept else "immediate", "-w", "stop"],
            capture_output=True,
            timeout=120,
        )
        if kept is None:
            shutil.rmtree(home, ignore_errors=True)


def _initdb(binaries: Path, prefix: list[str], data: Path, password_file: Path) -> None:
    subprocess.run(
        [
            *prefix,
            str(binaries / "initdb"),
            "-D",
            str(data),
            "-U",
            USER,
            "-A",
            "scram-sha-256",
            f"--pwfile={password_file}",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
