"""The PostgreSQL engine's connection and tables: made on first use, versioned.

A connection URI may hold a password (or libpq finds one in ``PGPASSWORD``,
``~/.pgpass`` or a service file); it never appears in a message: failures
name the server as ``HOST:PORT`` and the index as the URI without it.

The tables live in the connection's current schema (the first of its
``search_path``), so the engine needs ordinary privileges on one schema only.
``vis_meta`` records the schema version: an older one is migrated, a newer one
(a later vis-export wrote it) refused. Two jobs creating the tables at once
take turns on an advisory lock.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from vis_export.searchindex.guard import IndexFailure

SCHEMA = 5
_CREATE_LOCK = 0x76697365  # advisory lock key while tables are made or migrated
# Stop words kept, as tantivy keeps them: a Snowball dictionary with no stop
# word list, mapped for every kind of word the parser finds (the input is
# already split into words by ``documents.analysed_words``).
_WORD_TOKENS = "asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart"
# A block's tsvector from its words (``postgresql_engine.words_of``), and
# whether it keeps their positions: kind 1 keeps them, 2 keeps them where the
# server finds none capped (see ``words_of``), 0 none. A phrase's words side
# by side are asked only of blocks with positions: PostgreSQL finds no phrase
# in a tsvector without them. A block of more words than a tsvector holds
# (1 MB) has all its words' lexemes in ``more_words`` too (given in parts that
# each fit), so every word of it is found.
_WORDS_FUNCTION = """
CREATE OR REPLACE FUNCTION vis_words(text, smallint, text[],
    OUT vector tsvector, OUT positional boolean, OUT more text[])
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE WHEN kept THEN v ELSE strip(v) END, kept, coalesce((
    SELECT array_agg(DISTINCT lexeme ORDER BY lexeme)
    FROM unnest($3) AS part, unnest(tsvector_to_array(to_tsvector('vis_english', part))) AS lexeme), '{}')
FROM to_tsvector('vis_english', $1) AS t(v), LATERAL (SELECT $2 = 1 OR $2 = 2 AND coalesce((
    SELECT bool_and(cardinality(w.positions) < 255 AND w.positions[cardinality(w.positions)] < 16383)
    FROM unnest(v) AS w), true)) AS k(kept)
$$;
"""
_TABLES = f"""
CREATE TEXT SEARCH DICTIONARY vis_english_stem (TEMPLATE = snowball, LANGUAGE = english);
CREATE TEXT SEARCH CONFIGURATION vis_english (COPY = english);
ALTER TEXT SEARCH CONFIGURATION vis_english ALTER MAPPING FOR {_WORD_TOKENS} WITH vis_english_stem;
CREATE TABLE vis_meta (name text PRIMARY KEY, value text NOT NULL);
CREATE TABLE vis_sessions (session_id text PRIMARY KEY, digest text NOT NULL, origin text NOT NULL,
    indexed_at timestamptz NOT NULL DEFAULT now());
CREATE INDEX vis_sessions_origin ON vis_sessions (origin);
CREATE TABLE vis_files (origin text NOT NULL, key text NOT NULL, entry jsonb NOT NULL, PRIMARY KEY (origin, key));
CREATE TABLE vis_blocks (key text PRIMARY KEY, session_id text NOT NULL, session_title text NOT NULL,
    message_id text NOT NULL, block_id text NOT NULL, role text NOT NULL, block_type text NOT NULL,
    language text NOT NULL, created_at bigint NOT NULL, text text NOT NULL, terms text[] NOT NULL,
    words tsvector NOT NULL, positional boolean NOT NULL, more_words text[] NOT NULL DEFAULT '{{}}');
CREATE INDEX vis_blocks_session ON vis_blocks (session_id);
CREATE INDEX vis_blocks_words ON vis_blocks USING gin (words);
CREATE INDEX vis_blocks_terms ON vis_blocks USING gin (terms);
CREATE INDEX vis_blocks_more_words ON vis_blocks USING gin (more_words);
CREATE INDEX vis_blocks_created ON vis_blocks (created_at);
{_WORDS_FUNCTION}"""
# From each version, the statements that make it the next one. Version 2 drops
# the trigram index of version 1: no query read it (a phrase's candidates are
# the blocks holding its words, found by the word and term indexes, then checked
# against the stored text), and keeping it was most of the server's work on
# every insert (bulk inserts of 29k blocks: 2.6 s with it, 0.4 s without).
# Version 3 indexes Chinese, Japanese and Korean as bigrams among the terms
# (``searchindex.cjk``): the file stamps go, so each origin's next job reads its
# files again and writes every session anew (the content hash of a session
# holds the schema version, so none counts as unchanged). Version 4 keeps the
# words' positions (``vis_words``), for phrases: every session is written anew
# by the next job of its origin (its files read again, its hash forgotten);
# until then its words match a phrase's as before, wherever they stand.
# Version 5 keeps every word of a block too large for one tsvector
# (``more_words``): the sessions holding a block without positions (the only
# ones that may have lost words) are written anew by the next job.
_MIGRATIONS = {
    1: "DROP INDEX IF EXISTS vis_blocks_trigrams",
    2: "DELETE FROM vis_files",
    3: "ALTER TABLE vis_blocks ADD COLUMN IF NOT EXISTS positional boolean NOT NULL DEFAULT false;"
    f"{_WORDS_FUNCTION} DELETE FROM vis_files; UPDATE vis_sessions SET digest = ''",
    4: "ALTER TABLE vis_blocks ADD COLUMN IF NOT EXISTS more_words text[] NOT NULL DEFAULT '{}';"
    "CREATE INDEX IF NOT EXISTS vis_blocks_more_words ON vis_blocks USING gin (more_words);"
    f"DROP FUNCTION IF EXISTS vis_words(text, smallint); {_WORDS_FUNCTION} DELETE FROM vis_files; "
    "UPDATE vis_sessions SET digest = '' WHERE session_id IN (SELECT session_id FROM vis_blocks WHERE NOT positional)",
}


def server(conninfo: dict[str, Any]) -> str:
    """``HOST:PORT`` as libpq would reach them (its defaults where not given)."""
    host = conninfo.get("host") or conninfo.get("hostaddr") or os.environ.get("PGHOST") or "localhost"
    port = conninfo.get("port") or os.environ.get("PGPORT") or "5432"
    return f"{host}:{port}"


def display(uri: str) -> str:
    """The URI as messages show it: everything but the password."""
    from psycopg.conninfo import conninfo_to_dict

    info = conninfo_to_dict(uri)
    user = f"{info['user']}@" if info.get("user") else ""
    return hidden(f"postgresql://{user}{server(info)}/{info.get('dbname', '')}", uri)


def hidden(line: str, uri: str) -> str:
    """``line`` without any spelling of a password that ``uri`` (or ``PGPASSWORD``)
    may hold, nor, when libpq reads the URI otherwise, any part it read out of
    one (``me:pa/ss@host``: a ``/`` ends the authority, so libpq takes ``me`` for
    the host and ``pa`` for the port)."""
    from psycopg.conninfo import conninfo_to_dict

    secrets = _secrets(uri)
    try:
        info = conninfo_to_dict(uri)
    except Exception:  # noqa: BLE001 - a URI libpq cannot parse has no parts to hide
        info = {}
    pieces = secrets | {os.environ.get("PGPASSWORD", "")}
    if secrets and info.get("password") not in secrets:
        pieces |= {str(value) for value in info.values() if value and any(str(value) in s for s in secrets)}
    for piece in sorted(filter(None, pieces), key=len, reverse=True):
        line = line.replace(piece, "***")
    return line


def _secrets(uri: str) -> set[str]:
    """Every spelling of a password that ``uri`` may hold, found without libpq
    (which refuses some URIs outright): after the user and before an ``@``,
    wherever the authority is taken to end (a ``/``, ``?`` or ``#`` left
    unencoded in the password ends it for libpq), and in a ``password``
    parameter (its name percent-decoded too, as libpq reads ``pass%77ord``); as
    written and percent-decoded."""
    from urllib.parse import unquote

    rest = uri.split("://", 1)[-1]
    found = {value for key, value in re.findall(r"[?&]([^=&#]*)=([^&#]*)", rest) if unquote(key) == "password"}
    for authority in (re.split(r"[/?#]", rest, maxsplit=1)[0], rest.split("?", 1)[0], rest):
        userinfo, at, _ = authority.rpartition("@")
        if at and ":" in userinfo:
            found.add(userinfo.split(":", 1)[1])
    found |= {unquote(secret) for secret in found}
    return {secret for secret in found if secret}


def _detail(error: BaseException) -> str:
    """libpq's reason, on one line, without the parts that repeat the server."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text.rsplit(" failed: ", 1)[-1].removeprefix("FATAL: ").strip()


_QUOTED = re.compile(r'"([^"]*)"')
_PUNCTUATION = re.compile(r"[\[\]:/=@?&]*")


def _parse_problem(error: BaseException) -> str:
    """Why libpq cannot parse a URI, without what it quotes of it: the whole URI,
    or a piece such as a bad ``%zz`` escape, may be or hold the password."""
    text = _QUOTED.sub(
        lambda quoted: quoted.group() if _PUNCTUATION.fullmatch(quoted.group(1)) else '"…"', _detail(error)
    )
    return text.removesuffix(': "…"')


def _failure(line: str, uri: str) -> IndexFailure:
    return IndexFailure(hidden(line, uri))


def connect(uri: str, autocommit: bool, command: str) -> Any:
    """A connection, or one ``IndexFailure`` line naming the server, never the password."""
    from vis_export.extras import require

    psycopg = require("psycopg", "the postgresql search engine")
    try:
        info = psycopg.conninfo.conninfo_to_dict(uri)
    except (psycopg.ProgrammingError, UnicodeDecodeError) as error:  # an escape of bytes that are not UTF-8
        raise _failure(f"{command}: not a PostgreSQL connection URI ({_parse_problem(error)})", uri) from None
    try:
        return psycopg.connect(uri, autocommit=autocommit, connect_timeout=10)
    except (psycopg.Error, ValueError) as error:  # ValueError: a host name IDNA cannot encode ("a..b")
        raise _failure(f"{command}: cannot connect to {server(info)}: {_detail(error)}", uri) from None


@contextmanager
def failures(uri: str, command: str) -> Iterator[None]:
    """Whatever the database says, as one line naming the index without its password."""
    import psycopg

    try:
        yield
    except psycopg.errors.InsufficientPrivilege as error:
        verb = "write to" if command == "index" else "read"
        raise _failure(
            f"{command}: {display(uri)}: this role may not {verb} the index ({_detail(error)})", uri
        ) from None
    except psycopg.errors.LockNotAvailable:
        raise _failure(
            f"{command}: {display(uri)}: another index job is writing the same session (see --wait)", uri
        ) from None
    except psycopg.OperationalError as error:
        if _lost(error):
            raise _failure(f"{command}: {display(uri)}: the connection failed: {_detail(error)}", uri) from None
        raise _failure(f"{command}: {display(uri)}: {_detail(error)}", uri) from None
    except psycopg.Error as error:
        raise _failure(f"{command}: {display(uri)}: {_detail(error)}", uri) from None


def _lost(error: Any) -> bool:
    """A connection lost or ended by the server; not the other errors psycopg
    counts as operational (a value beyond a limit: "string is too long for tsvector")."""
    state = getattr(error, "sqlstate", None)
    return state is None or state.startswith(("08", "57P"))


def _version(connection: Any) -> int | None:
    if connection.execute("SELECT to_regclass('vis_meta')").fetchone()[0] is None:
        return None
    row = connection.execute("SELECT value FROM vis_meta WHERE name = 'schema_version'").fetchone()
    return int(row[0]) if row else None


def _refuse_newer(uri: str, version: int) -> None:
    if version > SCHEMA:
        raise IndexFailure(
            f"{display(uri)}: this index has schema version {version}, written by a newer "
            f"vis-export (this one knows {SCHEMA}); upgrade vis-export"
        )


def prepare(connection: Any, uri: str, writable: bool) -> int:
    """Tables made (or migrated) for a writer; for a searcher, an index that is
    there (of an older version until its next job, which the search allows for).
    Returns the version of the tables."""

    if not writable:
        version = _version(connection)
        if version is None:
            raise IndexFailure(f"{display(uri)}: no index here (run vis-export index first)")
        _refuse_newer(uri, version)
        return version
    with connection.transaction():
        if _version(connection) == SCHEMA:
            return SCHEMA
    # A lock held across transactions, so the look after it starts a transaction
    # of its own: a transaction that waited on a lock may still see the catalog
    # (tables, configurations) as it was before another job made them.
    connection.execute("SELECT pg_advisory_lock(%s)", (_CREATE_LOCK,))
    connection.commit()
    try:
        with connection.transaction():
            _create(connection, uri)
    finally:
        connection.execute("SELECT pg_advisory_unlock(%s)", (_CREATE_LOCK,))
        connection.commit()
    return SCHEMA


def _create(connection: Any, uri: str) -> None:
    version = _version(connection)
    if version is not None:
        _refuse_newer(uri, version)
        for older in range(version, SCHEMA):
            connection.execute(_MIGRATIONS[older])
        connection.execute("UPDATE vis_meta SET value = %s WHERE name = 'schema_version'", (str(SCHEMA),))
        return
    connection.execute(_TABLES)
    connection.execute("INSERT INTO vis_meta VALUES ('schema_version', %s)", (str(SCHEMA),))
