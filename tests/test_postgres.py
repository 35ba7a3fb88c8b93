"""The PostgreSQL engine against a real server (``postgres.py``): the same
conformance suite as the folder engines, its own tables and schema version,
private reasoning nowhere in a dump, and failures as one line without the
password."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import INPUT, aged, examples
from hypothesis import HealthCheck, given, settings, strategies as st
from postgres import PASSWORD, Server, database_fixture, postgres_server_fixture  # noqa: F401 - fixtures
from sessions import session_of
from strategies import PRIVATE_CANARY, blocks, blocks_holding_reasoning, session_documents
from timelimit import time_limit

from vis_export import load
from vis_export.jobs.indexing import index, index_sources
from vis_export.searchindex import IndexFailure, _close_databases, search
from vis_export.searchindex.conformance import CANARY, CODE_SESSION, check_engine
from vis_export.searchindex.engines.postgresql_schema import SCHEMA
from vis_export.sources.messages import session_document


def test_conformance(database: str, postgres_server: Server) -> None:  # noqa: F811
    check_engine("postgresql", database)
    dump = postgres_server.dump(database.rsplit("/", 1)[1])
    assert b"vis_blocks" in dump and CANARY.encode() not in dump


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vis_export", *args], capture_output=True, text=True, timeout=300, env=env
    )


def test_conformance_of_a_role_that_may_not_make_temporary_tables(database: str, postgres_server: Server) -> None:
    """Rows are copied through a temporary table; where the database denies
    one, they are inserted one by one, with the same meaning."""
    name = database.rsplit("/", 1)[1]
    postgres_server.sql(
        "DROP ROLE IF EXISTS plain_writer; CREATE ROLE plain_writer LOGIN PASSWORD 'writer-pw'; "
        f"REVOKE TEMPORARY ON DATABASE {name} FROM PUBLIC"
    )
    postgres_server.sql("GRANT USAGE, CREATE ON SCHEMA public TO plain_writer", name)
    writer = postgres_server.uri(name, user="plain_writer", password="writer-pw")
    try:
        check_engine("postgresql", writer)
        refused = postgres_server.sql("SELECT has_database_privilege('plain_writer', current_database(), 'TEMP')", name)
        assert refused.strip() == "f"
    finally:
        _close_databases()
        postgres_server.sql("REASSIGN OWNED BY plain_writer TO CURRENT_USER; DROP OWNED BY plain_writer", name)
        postgres_server.sql("DROP ROLE plain_writer")


def test_index_and_search_on_the_command_line(database: str) -> None:
    first = cli("index", str(INPUT / "session.json"), "--index", database)
    assert first.returncode == 0 and first.stderr.strip() == "1 added, 0 updated, 0 unchanged", first.stderr
    found = cli("search", "parseConfig", "--index", database.replace("postgresql://", "postgres://"), "--json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout) == [h.to_json() for h in search("parseConfig", database)] != []
    again = cli("index", str(INPUT / "session.json"), "--index", database)
    assert again.stderr.strip() == "0 added, 0 updated, 1 unchanged"


def test_the_api_takes_a_uri_and_the_same_hits_as_tantivy(database: str, tmp_path: Path) -> None:
    import vis_export

    sessions = list(vis_export.load(INPUT))
    assert vis_export.index(sessions, database).added == len(sessions)
    vis_export.index(sessions, tmp_path / "i")
    for query in ("config", "parse_config", "the", '"def "', "error", ""):
        found = [
            {(h.session_id, h.message_id, h.block_id) for h in vis_export.search(query, where, limit=1000)}
            for where in (database, tmp_path / "i")
        ]
        assert found[0] == found[1], query


@pytest.mark.parametrize("problem", ["refused", "no database", "wrong password"])
def test_connection_failures_are_one_line_without_the_password(postgres_server: Server, problem: str) -> None:
    uri = {
        "refused": f"postgresql://vistest:{PASSWORD}@127.0.0.1:1/postgres",
        "no database": postgres_server.uri("no_such_database"),
        "wrong password": postgres_server.uri(password="wrong-" + PASSWORD),
    }[problem]
    port = "1" if problem == "refused" else str(postgres_server.port)
    for args in (["index", str(INPUT / "session.json")], ["search", "config"]):
        result = cli(*args, "--index", uri)
        assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert f"cannot connect to 127.0.0.1:{port}" in result.stderr and PASSWORD not in result.stderr
        assert "Traceback" not in result.stderr and result.stdout == ""


# A URI libpq cannot parse, or parses otherwise than meant: libpq's message
# repeats the URI (or the piece it choked on, a password's bad escape), and a
# "/" or "?" left in a password makes its first part a port.
BROKEN_URIS = [
    "postgresql://me:{pw}@[::1/db",  # "[::1" without its bracket
    "postgresql://me:{pw}%zz@localhost/db",  # a bad escape in the password
    "postgresql://me:{pw}@localhost/db?sslmode=%zz",  # a bad escape elsewhere
    "postgresql://me@localhost:1/db?password={pw}%zz",
    "postgresql://me:{pw}@[]/db",
    "postgresql://me:{pw}@localhost/db?application_name",
    "postgres://me:ab/{pw}@127.0.0.1:1/db",  # libpq: host "me", port "ab"
    "postgresql://me:{pw}@127.0.0.1:1/db",  # parsed: the connection is refused
]
_PASSWORD_CHARACTERS = st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789%/?#@:[]&=-._~!$")


@given(password=st.text(_PASSWORD_CHARACTERS, min_size=6, max_size=24), shape=st.sampled_from(BROKEN_URIS))
def test_a_uri_that_fails_never_shows_its_password(password: str, shape: str) -> None:
    """Whatever the password holds and however the URI fails, the line holds no
    spelling of it: as written, percent-decoded, or cut by libpq's reading."""
    from urllib.parse import unquote

    from vis_export.searchindex.engines.postgresql_schema import connect

    uri = shape.format(pw=password)
    with time_limit(30):
        with pytest.raises(IndexFailure) as failure:
            connect(uri, autocommit=True, command="search").close()
    line = str(failure.value)
    assert len(line.splitlines()) == 1
    for spelling in {password, unquote(password), *password.split("/"), *password.split("?")}:
        assert len(spelling) < 6 or spelling not in line, line


@pytest.mark.parametrize("keyword", ["password", "pass%77ord", "%70%61ssword"])
def test_a_password_parameter_is_hidden_however_its_name_is_spelled(keyword: str) -> None:
    """libpq percent-decodes a parameter's name as well as its value."""
    from psycopg.conninfo import conninfo_to_dict

    from vis_export.searchindex.engines.postgresql_schema import hidden

    uri = f"postgresql://me@localhost/db?{keyword}=s3cr3t-pw"
    assert conninfo_to_dict(uri)["password"] == "s3cr3t-pw"
    assert hidden(f"said s3cr3t-pw about {uri}", uri) == f"said *** about {uri.replace('s3cr3t-pw', '***')}"


@pytest.mark.parametrize("uri", ["postgresql://me:s3cr3t-pw@[::1/db", "postgresql://me:s3cr3t%zz-pw@localhost/db"])
def test_the_uris_of_the_issue_fail_in_one_line_without_the_password(uri: str) -> None:
    for args in (["index", str(INPUT / "session.json")], ["search", "config"]):
        result = cli(*args, "--index", uri)
        assert result.returncode == 1 and len(result.stderr.splitlines()) == 1, result.stderr
        assert "not a PostgreSQL connection URI" in result.stderr and "s3cr3t" not in result.stderr
        assert "Traceback" not in result.stderr and result.stdout == ""


def test_an_index_of_a_newer_schema_is_refused(database: str, postgres_server: Server) -> None:
    index([], database)
    postgres_server.sql("UPDATE vis_meta SET value = '99' WHERE name = 'schema_version'", database.rsplit("/", 1)[1])
    for call in (lambda: index([], database), lambda: search("x", database)):
        with pytest.raises(IndexFailure, match="schema version 99, written by a newer vis-export"):
            call()


def test_an_index_of_schema_version_1_is_migrated(database: str, postgres_server: Server) -> None:
    """Version 1 kept a trigram index no query read; version 2 drops it, and keeps
    every session (which version 4 writes anew, with the positions of its words)."""
    name = database.rsplit("/", 1)[1]
    index(list(load(INPUT / "session.json")), database)
    postgres_server.sql(
        "CREATE EXTENSION pg_trgm; CREATE INDEX vis_blocks_trigrams ON vis_blocks USING gin (text gin_trgm_ops); "
        "UPDATE vis_meta SET value = '1' WHERE name = 'schema_version'",
        name,
    )
    found = search("parseConfig", database)
    assert index(list(load(INPUT / "session.json")), database).updated == 1
    assert postgres_server.sql("SELECT value FROM vis_meta WHERE name = 'schema_version'", name).strip() == str(SCHEMA)
    assert postgres_server.sql("SELECT to_regclass('vis_blocks_trigrams')", name).strip() == ""
    assert search("parseConfig", database) == found != []


def test_an_index_of_schema_version_2_is_written_anew_by_the_next_job(
    database: str, postgres_server: Server, tmp_path: Path
) -> None:
    """Version 2 held Chinese, Japanese and Korean as whole runs, never found by
    a word of them: the next job reads every file again, even one unchanged, and
    writes its sessions anew."""
    name = database.rsplit("/", 1)[1]
    source = tmp_path / "ja.json"
    document = json.loads(json.dumps(CODE_SESSION))
    source.write_text(json.dumps(document, ensure_ascii=False))
    os.utime(source, (time.time() - 60, time.time() - 60))  # not a file just written: its stamp holds
    assert index_sources([source], database).added == 1
    postgres_server.sql(  # the rows of version 2: no bigrams among the terms, the hashes of version 2
        "UPDATE vis_blocks SET terms = '{}'; UPDATE vis_sessions SET digest = 'v2'; "
        "UPDATE vis_files SET entry = jsonb_set(entry, '{sessions,code}', '\"v2\"'); "
        "UPDATE vis_meta SET value = '2' WHERE name = 'schema_version'",
        name,
    )
    _close_databases()
    assert search("日本語", database) == []
    assert index_sources([source], database).updated == 1
    assert postgres_server.sql("SELECT value FROM vis_meta WHERE name = 'schema_version'", name).strip() == str(SCHEMA)
    assert [hit.block_id for hit in search("日本語", database)] == ["ja"]


def test_a_read_only_role_searches_but_cannot_index(database: str, postgres_server: Server) -> None:
    index(list(load(INPUT / "session.json")), database)
    postgres_server.sql(
        "DROP ROLE IF EXISTS reader; CREATE ROLE reader LOGIN PASSWORD 'reader-pw'; GRANT pg_read_all_data TO reader"
    )
    reader = postgres_server.uri(database.rsplit("/", 1)[1], user="reader", password="reader-pw")
    found = cli("search", "config", "--index", reader, "--json")
    assert found.returncode == 0 and json.loads(found.stdout), found.stderr
    refused = cli("index", str(INPUT / "session.json"), "--index", reader)
    assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "this role may only read the index" in refused.stderr and "reader-pw" not in refused.stderr


def test_prune_removes_only_sessions_of_its_own_origin(database: str) -> None:
    one, two = (session_of({**CODE_SESSION, "id": name}) for name in ("one", "two"))
    index([one], database, origin="laptop")
    index([two], database, origin="server")
    assert index([], database, origin="laptop", prune=True).removed == 1
    assert {h.session_id for h in search("config", database, limit=100)} == {"two"}
    assert index([], database, origin="server", prune=True).removed == 1
    assert search("config", database) == []


def _sources(folder: Path, names: range) -> Path:
    folder.mkdir(exist_ok=True)
    base = json.loads((INPUT / "session.json").read_text())
    for n in names:
        (folder / f"s{n:03}.json").write_text(json.dumps({**base, "id": f"s{n:03}"}))
    return folder


def test_a_named_source_folder_that_is_gone_prunes_nothing(database: str, tmp_path: Path) -> None:
    """An unmounted share: its sessions stay, and so do the other sources'."""
    share, other = _sources(tmp_path / "share", range(3)), _sources(tmp_path / "other", range(3, 4))
    command = ["index", str(share), str(other), "--index", database, "--prune"]
    assert cli(*command).returncode == 0
    share.rename(tmp_path / "unmounted")
    result = cli(*command)
    assert result.returncode == 1 and f"{share}: could not be read, so nothing is pruned" in result.stderr
    assert result.stderr.splitlines()[-1] == "0 added, 0 updated, 1 unchanged"
    assert sorted(_copies(database)) == ["s000", "s001", "s002", "s003"]


def _rerun_without_psycopg(*args: str) -> tuple[list[str], list[str]]:
    """``vis-export ARGS`` in a process of its own: its lines on standard error,
    and the psycopg modules it imported."""
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['vis-export', *{list(args)!r}]\n"
        "try:\n    runpy.run_module('vis_export', run_name='__main__')\n"
        "finally:\n    print(sorted(m for m in sys.modules if m.startswith('psycopg')), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    *lines, imported = done.stderr.splitlines()
    return lines, json.loads(imported.replace("'", '"'))


def test_an_unchanged_rerun_is_one_question_without_psycopg(database: str, tmp_path: Path) -> None:
    """Issue 23/26: importing psycopg was more than half of a no-op rerun's CPU."""
    sources = _sources(tmp_path / "sources", range(3))
    aged(sources)  # stamps older than a clock tick (``sources.stamp``), as a later rerun finds them
    assert cli("index", str(sources), "--index", database).returncode == 0
    lines, imported = _rerun_without_psycopg("index", str(sources), "--index", database)
    assert (lines, imported) == (["0 added, 0 updated, 3 unchanged"], [])
    lines, imported = _rerun_without_psycopg("index", str(sources), "--index", database, "--prune")
    assert (lines, imported) == (["0 added, 0 updated, 3 unchanged"], [])


def test_a_rerun_sees_a_session_another_job_changed(database: str, tmp_path: Path) -> None:
    """The index's truth is the server's: another origin's job wrote its own
    copy of one session; the rerun of the first origin writes its copy again."""
    sources = _sources(tmp_path / "sources", range(3))
    aged(sources)
    assert cli("index", str(sources), "--index", database, "--origin", "laptop").returncode == 0
    other = tmp_path / "other" / "s001.json"
    other.parent.mkdir()
    other.write_text((sources / "s001.json").read_text().replace("Parse the config", "Parse the zanzibar"))
    assert cli("index", str(other), "--index", database, "--origin", "server").returncode == 0
    assert [hit.session_id for hit in search("zanzibar", database)] != []
    again = cli("index", str(sources), "--index", database, "--origin", "laptop")
    assert again.stderr.strip() == "0 added, 1 updated, 2 unchanged", again.stderr
    assert search("zanzibar", database) == []


def test_a_rerun_prunes_the_session_of_a_file_gone(database: str, tmp_path: Path) -> None:
    sources = _sources(tmp_path / "sources", range(3))
    aged(sources)
    assert cli("index", str(sources), "--index", database, "--prune").returncode == 0
    (sources / "s002.json").unlink()
    again = cli("index", str(sources), "--index", database, "--prune")
    assert again.stderr.strip() == "0 added, 0 updated, 2 unchanged, 1 removed", again.stderr
    assert sorted(_copies(database)) == ["s000", "s001"]


def test_a_read_only_role_cannot_rerun_over_unchanged_files(
    database: str, postgres_server: Server, tmp_path: Path
) -> None:
    """The question before the job asks the job's privileges too: the answer is the job's."""
    sources = _sources(tmp_path / "sources", range(2))
    aged(sources)
    assert cli("index", str(sources), "--index", database, "--origin", "laptop").returncode == 0
    postgres_server.sql(
        "DROP ROLE IF EXISTS reader2; CREATE ROLE reader2 LOGIN PASSWORD 'reader-pw'; GRANT pg_read_all_data TO reader2"
    )
    reader = postgres_server.uri(database.rsplit("/", 1)[1], user="reader2", password="reader-pw")
    refused = cli("index", str(sources), "--index", reader, "--origin", "laptop")
    assert refused.returncode == 1 and "this role may only read the index" in refused.stderr, refused.stderr


def _copies(database: str) -> dict[str, int]:
    hits = search("", database, limit=100_000)
    counts: dict[str, int] = {}
    for hit in hits:
        counts[hit.session_id] = counts.get(hit.session_id, 0) + 1
    return counts


@pytest.mark.slow
def test_two_jobs_at_once_on_the_same_sessions_leave_one_copy(database: str, tmp_path: Path) -> None:
    same = _sources(tmp_path / "same", range(40))
    jobs = [
        subprocess.Popen(
            [sys.executable, "-m", "vis_export", "index", str(same), "--index", database, "--wait", "60"],
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    assert all(job.wait(timeout=300) == 0 for job in jobs), [job.stderr.read() for job in jobs if job.stderr]
    for job in jobs:
        assert job.stderr is not None
        job.stderr.close()
    alone = tmp_path / "alone"
    index(list(load(same / "s000.json")), alone)
    per_session = len(search("", alone, limit=100_000))
    assert _copies(database) == {f"s{n:03}": per_session for n in range(40)}
    rerun = cli("index", str(same), "--index", database)
    assert rerun.stderr.strip() == "0 added, 0 updated, 40 unchanged"


@pytest.mark.slow
def test_a_killed_job_leaves_whole_sessions_and_a_rerun_completes(database: str, tmp_path: Path) -> None:
    import signal
    import time

    sources = _sources(tmp_path / "sources", range(80))
    job = subprocess.Popen(
        [sys.executable, "-m", "vis_export", "index", str(sources), "--index", database], stderr=subprocess.DEVNULL
    )
    time.sleep(2.5)
    job.send_signal(signal.SIGKILL)
    job.wait()
    copies = _copies(database)
    assert len(set(copies.values())) <= 1  # every session written so far is whole
    rerun = cli("index", str(sources), "--index", database)
    assert rerun.returncode == 0, rerun.stderr
    assert len(_copies(database)) == 80 and len(set(_copies(database).values())) == 1


@pytest.mark.slow
def test_a_connection_dropped_mid_job_is_one_line_and_a_rerun_completes(database: str, tmp_path: Path) -> None:
    """The server ends the job's connection (``pg_terminate_backend``) while it
    writes: one line, exit 1, whatever statement it was in (a pipelined one too)."""
    import psycopg

    from corpus import session

    sources = tmp_path / "sources"
    sources.mkdir()
    for n in range(150):  # sessions the job takes a while to analyse: it is busy when the server hangs up
        (sources / f"s{n:03}.json").write_text(json.dumps({**session(40_000, seed=n), "id": f"s{n:03}"}))
    job = subprocess.Popen(
        [sys.executable, "-m", "vis_export", "index", str(sources), "--index", database],
        stderr=subprocess.PIPE,
        text=True,
    )
    with psycopg.connect(database, autocommit=True) as watcher:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # until the job has committed a session
            if watcher.execute("SELECT to_regclass('vis_sessions')").fetchone()[0] is not None:
                if watcher.execute("SELECT count(*) FROM vis_sessions").fetchone()[0]:
                    break
            time.sleep(0.02)
        watcher.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    _, stderr = job.communicate(timeout=300)
    assert job.returncode == 1 and len(stderr.strip().splitlines()) == 1, stderr
    assert "the connection failed" in stderr and "Traceback" not in stderr and PASSWORD not in stderr
    rerun = cli("index", str(sources), "--index", database)
    assert rerun.returncode == 0, rerun.stderr
    assert cli("index", str(sources), "--index", str(tmp_path / "alone")).returncode == 0
    assert _copies(database) == _copies(str(tmp_path / "alone")) and len(_copies(database)) == 150


def _jobs_at_once(*runs: tuple[Path, str]) -> list[subprocess.CompletedProcess[str]]:
    """``vis-export index SOURCE --index URI`` for each run, all started together."""
    started = [
        subprocess.Popen(
            [sys.executable, "-m", "vis_export", "index", str(sources), "--index", uri],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for sources, uri in runs
    ]
    return [subprocess.CompletedProcess(job.args, job.wait(timeout=300), *job.communicate()) for job in started]


def test_two_jobs_at_once_on_disjoint_sessions_both_complete(database: str, tmp_path: Path) -> None:
    """No ``--wait``: jobs on other sessions never wait for each other, even on
    the locks their writes share (a table growing, an index page)."""
    first, second = _sources(tmp_path / "first", range(60)), _sources(tmp_path / "second", range(60, 120))
    for result in _jobs_at_once((first, database), (second, database)):
        assert result.returncode == 0 and result.stderr.strip() == "60 added, 0 updated, 0 unchanged", result.stderr
    alone = tmp_path / "alone"
    index(list(load(first / "s000.json")), alone)
    per_session = len(search("", alone, limit=100_000))
    assert _copies(database) == {f"s{n:03}": per_session for n in range(120)}


def _holding(database: str, session_id: str) -> Any:
    """A connection holding the lock a job takes to write ``session_id`` (the
    engine's advisory lock), as another job in the middle of writing it would."""
    import psycopg

    holder = psycopg.connect(database)
    holder.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (session_id,))
    return holder


@pytest.mark.slow
def test_a_job_meeting_a_session_another_holds_says_so_in_one_line(database: str, tmp_path: Path) -> None:
    import threading

    sources = _sources(tmp_path / "sources", range(1))
    holder = _holding(database, "s000")
    try:
        for wait in ("0", "0.5"):
            refused = cli("index", str(sources), "--index", database, "--wait", wait)
            assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
            assert "another index job is writing session 's000'" in refused.stderr, refused.stderr
            assert f"waited {wait} s" in refused.stderr and PASSWORD not in refused.stderr
            assert "Traceback" not in refused.stderr
        threading.Timer(1.0, holder.rollback).start()  # the other job is done in a second
        waited = cli("index", str(sources), "--index", database, "--wait", "60")
    finally:
        holder.close()
    assert waited.returncode == 0 and waited.stderr.strip() == "1 added, 0 updated, 0 unchanged", waited.stderr


@pytest.mark.parametrize("wait", ["1e9", "inf"])
def test_a_wait_longer_than_postgresql_can_count_waits_as_long_as_it_takes(
    database: str, tmp_path: Path, wait: str
) -> None:
    """``lock_timeout`` is an int of milliseconds (24.8 days at most); 0 is no limit."""
    import threading

    sources = _sources(tmp_path / "sources", range(1))
    assert cli("index", str(sources), "--index", database, "--wait", wait).returncode == 0
    (sources / "s000.json").write_text((sources / "s000.json").read_text().replace("Parse", "Read"))
    holder = _holding(database, "s000")
    try:
        threading.Timer(1.0, holder.rollback).start()
        waited = cli("index", str(sources), "--index", database, "--wait", wait)
    finally:
        holder.close()
    assert waited.returncode == 0 and waited.stderr.strip() == "0 added, 1 updated, 0 unchanged", waited.stderr


def test_a_wait_that_is_not_a_number_is_refused_in_one_line(database: str) -> None:
    refused = cli("index", str(INPUT / "session.json"), "--index", database, "--wait", "nan")
    assert refused.returncode == 2 and "not a number of seconds" in refused.stderr and "Traceback" not in refused.stderr


@pytest.mark.slow
def test_a_block_of_more_distinct_words_than_a_tsvector_holds_is_indexed(database: str, tmp_path: Path) -> None:
    """A tool's output of 150,000 hashes: more than the 1 MB a tsvector holds.
    The session is indexed with the words that fit, the rest found as phrases,
    and the other sessions of the job are indexed too."""
    hashes = [f"h{n * 2654435761 % 2**32:08x}" for n in range(150_000)]
    base = json.loads((INPUT / "session.json").read_text())
    big = {**base, "id": "big"}
    big["messages"] = [
        {**base["messages"][0], "content": [{"id": "log", "type": "prose", "markdown": " ".join(hashes)}]}
    ]
    sources = _sources(tmp_path / "sources", range(2))
    (sources / "big.json").write_text(json.dumps(big))
    done = cli("index", str(sources), "--index", database)
    assert done.returncode == 0 and done.stderr.strip() == "3 added, 0 updated, 0 unchanged", done.stderr
    first, last = sorted(hashes)[0], sorted(hashes)[-1]
    assert [hit.block_id for hit in search(first, database)] == ["log"]
    assert [hit.block_id for hit in search(f'"{last}"', database)] == ["log"]
    assert {hit.session_id for hit in search("config", database, limit=100)} >= {"s000", "s001"}


def test_a_value_beyond_a_limit_of_the_database_is_not_called_a_lost_connection(database: str, tmp_path: Path) -> None:
    """An id too long for a B-tree entry (2,704 bytes): one line saying so."""
    import random

    identifier = "".join(random.Random(7).choices("abcdefghijklmnopqrstuvwxyz0123456789", k=4000))
    base = json.loads((INPUT / "session.json").read_text())
    (tmp_path / "long.json").write_text(json.dumps({**base, "id": identifier}))
    failed = cli("index", str(tmp_path / "long.json"), "--index", database)
    assert failed.returncode == 1 and len(failed.stderr.strip().splitlines()) == 1, failed.stderr
    assert "exceeds btree" in failed.stderr and "the connection failed" not in failed.stderr
    assert "Traceback" not in failed.stderr and PASSWORD not in failed.stderr


def test_more_matches_than_are_ranked_give_the_same_hits_each_time(database: str) -> None:
    """Past ``CANDIDATES`` matches, the ranked ones are those the plan meets
    first: the same each time, and a page beyond them ranks every match."""
    from vis_export.searchindex.engines.postgresql_engine import CANDIDATES

    blocks = [
        {"id": f"b{n}", "type": "prose", "markdown": f"alpha beta {'gamma ' * (n % 7)}number {n}"}
        for n in range(CANDIDATES + 300)
    ]
    base = json.loads((INPUT / "session.json").read_text())
    many = {**base, "id": "many", "messages": [{**base["messages"][0], "content": blocks}]}
    index([session_of(many)], database)
    for query in ("alpha", 'gamma "alpha beta"', '"beta gamma"'):
        first = search(query, database, limit=10)
        assert len(first) == 10 and all(search(query, database, limit=10) == first for _ in range(3)), query
    everything = search("alpha", database, limit=CANDIDATES + 300)
    assert len({hit.block_id for hit in everything}) == CANDIDATES + 300


def test_a_job_that_changed_sessions_leaves_fresh_statistics(database: str) -> None:
    """The planner knows the table as the job left it: a search right after a large
    job is planned for it, not for the empty table autovacuum last saw."""
    import psycopg

    def analysed() -> object:
        with psycopg.connect(database) as connection:
            row = connection.execute(
                "SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'vis_blocks'"
            ).fetchone()
            return row[0] if row else None

    assert cli("index", str(INPUT / "session.json"), "--index", database).returncode == 0
    first = analysed()
    assert first is not None
    assert cli("index", str(INPUT / "session.json"), "--index", database).returncode == 0  # unchanged: no work
    assert analysed() == first


def test_the_databases_owner_leaves_fresh_statistics_of_tables_another_role_made(
    database: str, postgres_server: Server, tmp_path: Path
) -> None:
    """The owner of the database may analyse the blocks but not merge the word
    indexes' lists (that takes the table's owner): the statistics stay."""
    name = database.rsplit("/", 1)[1]
    assert cli("index", str(INPUT / "session.json"), "--index", database).returncode == 0
    postgres_server.sql("DROP ROLE IF EXISTS db_owner; CREATE ROLE db_owner LOGIN PASSWORD 'owner-pw'")
    postgres_server.sql(f"ALTER DATABASE {name} OWNER TO db_owner")
    postgres_server.sql(
        "GRANT ALL ON ALL TABLES IN SCHEMA public TO db_owner; ALTER TABLE vis_blocks SET (autovacuum_enabled = off)",
        name,
    )
    owner = postgres_server.uri(name, user="db_owner", password="owner-pw")
    try:
        done = cli("index", str(_sources(tmp_path / "more", range(30))), "--index", owner)
        assert done.returncode == 0, done.stderr
        statistics = "SELECT n_distinct FROM pg_stats WHERE tablename = 'vis_blocks' AND attname = 'session_id'"
        left = postgres_server.sql(statistics, name)
        postgres_server.sql("ANALYZE vis_blocks", name)
        assert left == postgres_server.sql(statistics, name)  # as the table is now, not as one session made it
    finally:
        postgres_server.sql(f"ALTER DATABASE {name} OWNER TO CURRENT_USER; DROP OWNED BY db_owner", name)
        postgres_server.sql("DROP ROLE db_owner")


def test_a_job_leaves_no_pending_entries_in_the_word_indexes(database: str, tmp_path: Path) -> None:
    """Every search reads a GIN index's pending list whole, until autovacuum
    merges it: the job merges it itself (autovacuum is off here, so only the job can)."""
    import psycopg

    assert cli("index", str(INPUT / "session.json"), "--index", database).returncode == 0
    with psycopg.connect(database, autocommit=True) as connection:
        connection.execute("ALTER TABLE vis_blocks SET (autovacuum_enabled = off)")
        assert cli("index", str(_sources(tmp_path / "more", range(30))), "--index", database).returncode == 0
        merged = connection.execute(
            "SELECT gin_clean_pending_list('vis_blocks_words'), gin_clean_pending_list('vis_blocks_terms'), "
            "gin_clean_pending_list('vis_blocks_more_words')"
        ).fetchone()
    assert merged == (0, 0, 0)


def test_phrases_are_checked_by_the_server_with_a_trigram_index_when_there_is_one(
    database: str, postgres_server: Server
) -> None:
    """A phrase is a condition of the query (no candidate list comes back to be
    checked), written so that a trigram index the database has is used."""
    import psycopg

    def scans() -> int:
        with psycopg.connect(database) as connection:
            row = connection.execute(
                "SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'vis_blocks_text_trigrams'"
            ).fetchone()
            return int(row[0]) if row else 0

    index([session_of(CODE_SESSION)], database, reasoning="visible")
    postgres_server.sql(
        "CREATE EXTENSION pg_trgm; CREATE INDEX vis_blocks_text_trigrams ON vis_blocks USING gin (text gin_trgm_ops)",
        database.rsplit("/", 1)[1],
    )
    # A table this small is read whole, or in key order: the planner is told not to.
    no_seqscan = f"{database}?options=-c%20enable_seqscan%3Doff%20-c%20enable_indexscan%3Doff"
    before = scans()
    assert {h.block_id for h in search('"=>"', no_seqscan)} == {"odd"}
    assert {h.block_id for h in search('"100%_done\\x"', no_seqscan)} == {"odd"}
    _close_databases()  # a connection reports its statistics as it ends, soon after
    deadline = time.monotonic() + 10
    while scans() < before + 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert scans() >= before + 1  # the phrase with no word: only the trigrams find it


_STORED_ALPHABET = st.sampled_from("ab\x00\U0010fffe0122dcf\udcff\ud800é")


@given(st.text(alphabet=_STORED_ALPHABET), st.text(alphabet=_STORED_ALPHABET))
def test_strings_are_stored_one_to_one_and_keep_their_phrases(text: str, phrase: str) -> None:
    """NUL and lone surrogates (a file name not UTF-8) are what PostgreSQL's text cannot hold."""
    from vis_export.searchindex.engines.postgresql_text import restored, storable

    assert "\x00" not in storable(text) and restored(storable(text)) == text
    storable(text).encode("utf-8")  # no surrogate left
    assert phrase not in text or storable(phrase) in storable(text)


_LIKE_HOSTILE = st.text(alphabet=st.sampled_from("ab %_\\\x00\U0010fffe01'é\u0301"), max_size=12)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(_LIKE_HOSTILE, min_size=1, max_size=4), phrase=_LIKE_HOSTILE.filter(str.strip))
def test_a_phrase_is_found_by_the_server_exactly_where_it_occurs(database: str, texts: list[str], phrase: str) -> None:
    """LIKE's own characters (``%``, ``_``, ``\\``), NUL and the escape character
    in a phrase or a text: the server's check finds exactly the blocks that hold it."""
    blocks = [{"id": f"b{n}", "type": "code", "language": "text", "text": text} for n, text in enumerate(texts)]
    message = {"id": "m", "role": "user", "status": "completed", "created_at": 1, "content": blocks}
    document = {"id": "s", "messages": [message]}
    with time_limit(30):
        index([session_of(document)], database, prune=True)
        found = {hit.block_id for hit in search(f'"{phrase}"', database, limit=100)}
    assert found == {f"b{n}" for n, text in enumerate(texts) if phrase in text}


@given(
    st.lists(session_documents(st.one_of(blocks, blocks_holding_reasoning())), min_size=1, max_size=3),
    st.sampled_from(["none", "visible"]),
)
@settings(deadline=None, max_examples=examples(10), suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_no_private_reasoning_of_generated_sessions_is_anywhere_in_the_database(
    database: str, postgres_server: Server, documents: list[dict[str, Any]], reasoning: str
) -> None:
    """R2 over generated sessions, disguised reasoning and reasoning held in data
    (keys, flags, look-alike names, inside visible reasoning) included: ``pg_dump`` of the
    whole database after indexing them holds no byte of the private canary."""
    loaded = [session_document(document, "", "s", lenient=True).session for document in documents]
    sessions = {s.id: s for s in loaded if s is not None}  # one copy of a repeated id, as a job keeps
    index(list(sessions.values()), database, reasoning=reasoning)
    assert PRIVATE_CANARY.encode() not in postgres_server.dump(database.rsplit("/", 1)[1])


def test_the_question_before_a_job_has_no_answer_for_text_libpq_cannot_take() -> None:
    """A URI or origin from a command line may hold surrogates (bytes that are
    not UTF-8): no answer, and the job says what is wrong (the question raised
    UnicodeEncodeError instead, out of a step that answers ``None`` on any doubt)."""
    from vis_export.searchindex.engines.postgresql_quick import unchanged_sessions

    files = [("s.json", [1, 2])]
    assert unchanged_sessions("postgresql://127.0.0.1:1/db\udcff", "o", files, False) is None
    assert unchanged_sessions("postgresql://127.0.0.1:1/db", "o\udcff", files, True) is None


def test_a_file_name_that_is_not_utf8_is_indexed_and_its_rerun_is_unchanged(database: str, tmp_path: Path) -> None:
    """A name of bytes that are not UTF-8 (a surrogate as Python reads it, in the
    file's key and in the id of a session that takes its file's name) failed
    the whole job at its commit, on every rerun, with a line naming no file."""
    sources = _sources(tmp_path / "sources", range(2))
    odd = os.fsencode(sources) + b"/odd-\xff'\xe2\x80\xa8.json"
    os.rename(sources / "s000.json", odd)
    document = json.loads((INPUT / "session.json").read_text())
    del document["id"]  # its id is its file's name
    Path(os.fsdecode(os.fsencode(sources) + b"/nameless-\xfe.json")).write_text(json.dumps(document))
    aged(sources)
    first = cli("index", str(sources), "--index", database, "--prune")
    assert (first.returncode, first.stderr.strip()) == (0, "3 added, 0 updated, 0 unchanged"), first.stderr
    again = cli("index", str(sources), "--index", database, "--prune")
    assert again.stderr.strip() == "0 added, 0 updated, 3 unchanged", again.stderr
    assert "nameless-\\xfe" in _copies(database)


def test_the_question_before_a_job_sees_another_reasoning_level(database: str, tmp_path: Path) -> None:
    """The file stamps sent hold the reasoning level: a rerun with another one
    is no no-op (it answered "unchanged", and the index kept the other level's words)."""
    sources = _sources(tmp_path / "sources", range(2))
    aged(sources)
    runs = [("visible", "2 added, 0 updated"), ("none", "0 added, 2 updated"), ("none", "0 added, 0 updated")]
    for level, said in runs:
        done = cli("index", str(sources), "--index", database, "--reasoning", level)
        assert done.stderr.strip().startswith(said), done.stderr
