"""A real PostgreSQL server for the tests, started from the Debian package.

The server refuses to run as root, so as root it runs as an unprivileged user
(``vistest``, created when missing) through ``runuser``. It listens on a free
port of 127.0.0.1 only, keeps its data in a temporary directory, and stops
when the test session ends. Password authentication is on (scram), so tests
can check what a wrong password does. Locally a machine without PostgreSQL
skips these tests, saying so; in CI (``CI=true``) they fail instead.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

USER = "vistest"
PASSWORD = "vis-test-secret-9c1f"  # a test checks that no message ever shows it


@dataclass(frozen=True)
class Server:
    bin: Path
    port: int
    user: str = USER
    password: str = PASSWORD

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


def _missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI runs these tests: .ci/run installs postgresql)")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _as_server_user() -> list[str]:
    """The command prefix that runs a program as an unprivileged user."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "-m", USER], check=True, capture_output=True, timeout=60)
    return ["runuser", "-u", USER, "--"]


@pytest.fixture(scope="session", name="postgres_server")
def postgres_server_fixture() -> Iterator[Server]:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        _missing("PostgreSQL is not installed (apt-get install postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _missing("psycopg is not installed (pip install 'vis-export[postgresql]')")
    binaries = Path(found[-1]).parent
    prefix = _as_server_user()
    home = Path(tempfile.mkdtemp(prefix="vis-pg-"))
    data, password_file = home / "data", home / "password"
    password_file.write_text(PASSWORD + "\n")
    if prefix:
        shutil.chown(home, USER)
        shutil.chown(password_file, USER)
    port = _free_port()
    run = dict(check=True, capture_output=True, timeout=120)
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
        **run,
    )  # type: ignore[call-overload]
    options = f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={home} -c fsync=off"
    subprocess.run(
        [*prefix, str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(home / "log"), "-w", "start"],
        **run,
    )  # type: ignore[call-overload]
    try:
        yield Server(binaries, port)
    finally:
        subprocess.run(
            [*prefix, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            timeout=120,
        )
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(name="database")
def database_fixture(postgres_server: Server) -> Iterator[str]:
    """A new, empty database for one test; its URI (with the password)."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    postgres_server.sql(f"CREATE DATABASE {name}")
    try:
        yield postgres_server.uri(name)
    finally:
        postgres_server.sql(f"DROP DATABASE {name} WITH (FORCE)")
