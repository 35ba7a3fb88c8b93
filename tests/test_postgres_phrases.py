"""Phrases on PostgreSQL: the server narrows them by their words' positions
(``<->``) where the words allow, and still finds a phrase exactly where it
occurs: in short texts and long ones (beyond the positions a tsvector keeps),
in texts too large for positions at all, and in an index of the schema before
positions until its next job writes it anew."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import examples
from hypothesis import HealthCheck, given, settings, strategies as st
from postgres import Server, database_fixture, postgres_server_fixture  # noqa: F401 - fixtures
from sessions import message_of, session_of
from timelimit import time_limit

from vis_export.jobs.indexing import index
from vis_export.searchindex import _close_databases, search
from vis_export.searchindex.engines.postgresql_schema import SCHEMA
from vis_export.searchindex.query import inner_runs


def _session(texts: list[str]) -> Any:
    blocks = [{"type": "code", "language": "text", "text": text} for text in texts]
    return session_of({"id": "s", "messages": [message_of(*blocks, role="user", created_at=1)]}, "")


def _found(phrase: str, database: str) -> set[str]:
    return {hit.block_id for hit in search(f'"{phrase}"', database, limit=1000)}


def test_inner_runs_are_the_words_a_block_holds_side_by_side() -> None:
    assert inner_runs("fig parse the Config files") == [["parse", "the", "config"]]
    assert inner_runs("toml.load(f)") == [["load", "f"]]
    assert inner_runs("fn(x)") == []  # one inner word: a word of the query already
    assert inner_runs("a b " + "x" * 40 + " c d e") == [["c", "d"]]  # a word too long to index breaks a run
    assert inner_runs("a café au lait b") == []  # not ASCII: checked in full


def test_the_server_holds_positions_and_narrows_by_them(database: str, postgres_server: Server) -> None:
    texts = ["x parse the config y", "x config the parse y", "x parse, the; config y"]
    index([_session(texts)], database)
    name = database.rsplit("/", 1)[1]
    side_by_side = "SELECT string_agg(block_id, ',' ORDER BY block_id) FROM vis_blocks "
    side_by_side += "WHERE words @@ phraseto_tsquery('vis_english', 'parse the config')"
    assert postgres_server.sql(side_by_side, name).strip() == "b0,b2"
    assert _found("x parse the config y", database) == {"b0"}
    assert _found("parse, the; config", database) == {"b2"}


_WORDS = st.sampled_from(["parse", "Parsing", "the", "config", "configs", "a", "b_c", "9", "é", "x" * 41, "be"])
_GAPS = st.sampled_from([" ", "  ", ". ", "\n", "_", "-", ""])
_TEXT = st.lists(st.tuples(_WORDS, _GAPS), max_size=12).map(lambda pairs: "".join(w + g for w, g in pairs))


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(_TEXT, min_size=1, max_size=4), phrase=_TEXT.filter(lambda p: '"' not in p and p.strip()))
def test_a_phrase_is_found_exactly_where_it_occurs(database: str, texts: list[str], phrase: str) -> None:
    """Texts of a few words, and the same repeated past the positions a
    tsvector keeps of a word (255) and past the last position it counts (16,383)."""
    long = [" ".join([text] * n) for text in texts[:1] for n in (300, 3000)]
    every = texts + long
    with time_limit(60):
        index([_session(every)], database, prune=True)
        found = _found(phrase, database)
    assert found == {f"b{n}" for n, text in enumerate(every) if phrase in text}


def test_a_phrase_in_a_block_too_large_for_positions_is_found(database: str) -> None:
    hashes = [f"h{n * 2654435761 % 2**32:08x}" for n in range(150_000)]
    text = " ".join(hashes[:70_000] + ["alpha beta config files"] + hashes[70_000:])
    index([_session([text, "alpha config beta"])], database)
    assert _found("x alpha beta config files", database) == set()
    assert _found(" alpha beta config ", database) == {"b0"}  # words that sort first: the ones it keeps


def test_an_index_of_schema_version_3_finds_phrases_and_is_written_anew(database: str, postgres_server: Server) -> None:
    """Version 3 held each word once, without positions: its phrases are found
    as before, and the next job writes its sessions with positions."""
    name = database.rsplit("/", 1)[1]
    session = _session(["x parse the config y", "x config the parse y"])
    index([session], database)
    postgres_server.sql(
        "UPDATE vis_blocks SET words = strip(words); ALTER TABLE vis_blocks DROP COLUMN positional; "
        "DROP FUNCTION vis_words; "
        "UPDATE vis_meta SET value = '3' WHERE name = 'schema_version'",
        name,
    )
    _close_databases()
    assert _found(" parse the config ", database) == {"b0"}
    assert index([session], database).updated == 1
    assert postgres_server.sql("SELECT value FROM vis_meta WHERE name = 'schema_version'", name).strip() == str(SCHEMA)
    positions = "SELECT count(*) FROM vis_blocks WHERE words @@ phraseto_tsquery('vis_english', 'parse the config')"
    assert postgres_server.sql(positions, name).strip() == "1"
    assert _found(" parse the config ", database) == {"b0"}


def test_a_block_of_more_words_than_a_tsvector_holds_is_found_by_every_word(database: str) -> None:
    """The words past what one tsvector holds (1 MB: here the words sorted after
    the hashes) are found by each word and by a phrase that holds them inside."""
    hashes = [f"h{n * 2654435761 % 2**32:08x}" for n in range(150_000)]
    text = " ".join(hashes[:70_000] + ["the zebra parsing yurts here"] + hashes[70_000:])
    index([_session([text, "zebra yurts"])], database)
    assert _found("the zebra parsing yurts here", database) == {"b0"}
    assert _found("x the zebra parsing yurts here", database) == set()
    assert _found(" zebra parsing yurts ", database) == {"b0"}
    assert _found("zebra yurts", database) == {"b1"}
    for word in ("zebra", "parse", "yurt", hashes[-1]):
        assert {hit.block_id for hit in search(word, database, limit=10)} >= {"b0"}, word


@pytest.mark.slow
def test_an_index_of_schema_version_4_is_searched_and_its_large_blocks_written_anew(
    database: str, postgres_server: Server
) -> None:
    """Version 4 kept only the words that fit of a block too large for a tsvector:
    it is searched as it is, and the next job writes anew the sessions that may
    hold such a block (one without positions), and only those."""
    name = database.rsplit("/", 1)[1]
    hashes = " ".join(f"h{n * 2654435761 % 2**32:08x}" for n in range(150_000))
    large, small = (
        _session([f"{hashes} zebra"]),
        session_of({"id": "t", "messages": [message_of(role="user", created_at=1)]}),
    )
    index([large, small], database)
    postgres_server.sql(
        "ALTER TABLE vis_blocks DROP COLUMN more_words; UPDATE vis_meta SET value = '4' WHERE name = 'schema_version'",
        name,
    )
    _close_databases()
    assert search("zebra", database) == []  # as version 4 found it
    assert index([large, small], database).updated == 1
    assert postgres_server.sql("SELECT value FROM vis_meta WHERE name = 'schema_version'", name).strip() == str(SCHEMA)
    _close_databases()  # a reader knows the version it opened
    assert [hit.block_id for hit in search("zebra", database)] == ["b0"]
