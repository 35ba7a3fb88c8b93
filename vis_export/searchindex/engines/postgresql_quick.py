"""Whether a database index already holds every file of a job as it is: one
question, asked before the job opens the index.

A rerun over unchanged sources did nothing but cost: importing psycopg (about
0.15 CPU-s, more than the rest of the rerun: it brings asyncio, ssl,
importlib.metadata and ctypes.util), connecting, and reading every session's
hash. The index's truth is the server's (another job may have changed any
session since), so no local copy can answer; instead the job sends the files
it found, each with its stamp, and the server answers in one round trip
whether its record of each is the same, every session each holds still has
the hash recorded with it, and the job could write (its schema, its
privileges), as the job itself would decide (``jobs.index_job``). The
question goes through libpq itself, loaded with ``ctypes`` (the system's, else
psycopg-binary's own): a few milliseconds. Any doubt (no libpq, no
connection, no tables, any error, any file changed) answers ``None`` and the
job runs as before, which reports whatever is wrong in its own words.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from vis_export.searchindex.engines.postgresql_schema import SCHEMA

_CONNECTION_OK, _TUPLES_OK = 0, 2
_CONNECT_TIMEOUT = "3"  # seconds: a server that slow is left to the job, which waits longer
_QUESTION = """
WITH plan AS (
    SELECT p->>0 AS key, p->1 AS stamp FROM jsonb_array_elements($2::jsonb) AS p
), entries AS (
    SELECT plan.key, plan.stamp, f.entry FROM plan LEFT JOIN vis_files AS f ON f.origin = $1 AND f.key = plan.key
), held AS (
    SELECT e.key, s.key AS session_id, s.value #>> '{}' AS digest
    FROM entries AS e, jsonb_each(e.entry->'sessions') AS s
)
SELECT (SELECT value FROM vis_meta WHERE name = 'schema_version') = $3
    AND has_table_privilege('vis_blocks', 'INSERT, DELETE')
    AND has_table_privilege('vis_sessions', 'INSERT, UPDATE, DELETE')
    AND NOT EXISTS (SELECT FROM entries WHERE entry IS NULL OR entry->'stamp' IS DISTINCT FROM stamp)
    AND NOT EXISTS (SELECT FROM held AS h LEFT JOIN vis_sessions AS v USING (session_id)
                    WHERE v.digest IS DISTINCT FROM h.digest)
    AND (SELECT count(*) = count(DISTINCT session_id) FROM held)
    AND (NOT $4::boolean OR NOT EXISTS (SELECT FROM vis_sessions AS v WHERE v.origin = $1
                                        AND v.session_id NOT IN (SELECT session_id FROM held))
                         AND NOT EXISTS (SELECT FROM vis_files AS f WHERE f.origin = $1
                                         AND f.key NOT IN (SELECT key FROM plan))),
    (SELECT count(*) FROM held)
"""


def unchanged_sessions(uri: str, origin: str, files: Sequence[tuple[str, Any]], prune: bool) -> int | None:
    """How many sessions ``files`` (each a key and stamp, as the index records
    them: ``storable``) hold, when the index at ``uri`` certainly has every one
    as it is for ``origin`` (with ``prune``: and nothing of that origin
    besides); else ``None``."""
    from importlib.util import find_spec

    if len({key for key, _ in files}) != len(files):  # a file given twice: the job says so
        return None
    if find_spec("psycopg") is None:  # the job says it needs it
        return None
    answer = _ask(uri, _QUESTION, [origin, json.dumps(files), str(SCHEMA), "true" if prune else "false"])
    if answer is None or answer[0] != "t" or answer[1] is None:
        return None
    return int(answer[1])


def _ask(uri: str, query: str, parameters: list[str]) -> list[str | None] | None:
    """The first row of ``query``'s answer, as text; ``None`` on any failure."""
    libpq = _libpq()
    try:  # a string from a command line may hold surrogates (bytes not UTF-8): the job says so
        address, given_texts = uri.encode(), [parameter.encode() for parameter in parameters]
    except UnicodeEncodeError:
        return None
    if libpq is None:
        return None
    keywords = (ctypes.c_char_p * 4)(b"dbname", b"connect_timeout", b"client_encoding", None)
    values = (ctypes.c_char_p * 4)(address, _CONNECT_TIMEOUT.encode(), b"UTF8", None)
    connection = libpq.PQconnectdbParams(keywords, values, 1)
    try:
        if not connection or libpq.PQstatus(connection) != _CONNECTION_OK:
            return None
        given = (ctypes.c_char_p * len(parameters))(*given_texts)
        result = libpq.PQexecParams(connection, query.encode(), len(parameters), None, given, None, None, 0)
        try:
            if libpq.PQresultStatus(result) != _TUPLES_OK or libpq.PQntuples(result) < 1:
                return None
            return [
                None if libpq.PQgetisnull(result, 0, column) else libpq.PQgetvalue(result, 0, column).decode()
                for column in range(libpq.PQnfields(result))
            ]
        finally:
            libpq.PQclear(result)
    finally:
        libpq.PQfinish(connection)


def _libpq() -> Any:
    """libpq with the functions used here typed, or ``None``."""
    for name in _candidates():
        try:
            libpq = ctypes.CDLL(name)
        except OSError:
            continue
        pointer, text, number = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
        for function, arguments, returns in (
            ("PQconnectdbParams", [ctypes.POINTER(text), ctypes.POINTER(text), number], pointer),
            ("PQstatus", [pointer], number),
            ("PQexecParams", [pointer, text, number, pointer, ctypes.POINTER(text), pointer, pointer, number], pointer),
            ("PQresultStatus", [pointer], number),
            ("PQntuples", [pointer], number),
            ("PQnfields", [pointer], number),
            ("PQgetisnull", [pointer, number, number], number),
            ("PQgetvalue", [pointer, number, number], text),
            ("PQclear", [pointer], None),
            ("PQfinish", [pointer], None),
        ):
            getattr(libpq, function).argtypes, getattr(libpq, function).restype = arguments, returns
        return libpq
    return None


def _candidates() -> Iterator[str]:
    """The system's libpq, then the one psycopg-binary brings (found without importing it)."""
    from importlib.util import find_spec

    yield from {"darwin": ["libpq.5.dylib"], "win32": ["libpq.dll"]}.get(sys.platform, ["libpq.so.5"])
    try:
        spec = find_spec("psycopg_binary")
    except (ImportError, ValueError):
        return
    for folder in spec.submodule_search_locations or [] if spec is not None else []:
        libs = Path(folder).parent / "psycopg_binary.libs"
        yield from sorted(os.fspath(path) for path in libs.glob("libpq*"))
