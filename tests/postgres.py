"""Fixtures for a real PostgreSQL server (started by ``pgserver``): one per test
session, and a new empty database per test. Locally a machine without
PostgreSQL skips these tests, saying so; in CI (``CI=true``) they fail instead.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from pgserver import PASSWORD, USER, Server, running, unavailable

__all__ = ["PASSWORD", "USER", "Server", "database_fixture", "new_database", "postgres_server_fixture"]


@pytest.fixture(scope="session", name="postgres_server")
def postgres_server_fixture() -> Iterator[Server]:
    reason = unavailable()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI runs these tests: .ci/run installs postgresql)")
        pytest.skip(reason)
    with running() as server:
        yield server


@pytest.fixture(name="database")
def database_fixture(postgres_server: Server) -> Iterator[str]:
    """A new, empty database for one test; its URI (with the password)."""
    with new_database(postgres_server) as uri:
        yield uri


@contextmanager
def new_database(server: Server) -> Iterator[str]:
    """A new, empty database while the context lasts (one for each example of a property test); its URI."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    server.sql(f"CREATE DATABASE {name}")
    try:
        yield server.uri(name)
    finally:
        server.sql(f"DROP DATABASE {name} WITH (FORCE)")
