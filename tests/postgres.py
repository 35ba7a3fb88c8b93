"""Fixtures for a real PostgreSQL server (started by ``pgserver``): one per test
session, and a new empty database per test. Locally a machine without
PostgreSQL skips these tests, saying so; in CI (``CI=true``) they fail instead.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from pgserver import PASSWORD, USER, Server, running, unavailable

__all__ = ["PASSWORD", "USER", "Server", "database_fixture", "postgres_server_fixture"]


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
    name = f"t_{uuid.uuid4().hex[:12]}"
    postgres_server.sql(f"CREATE DATABASE {name}")
    try:
        yield postgres_server.uri(name)
    finally:
        postgres_server.sql(f"DROP DATABASE {name} WITH (FORCE)")
