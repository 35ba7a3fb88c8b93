"""The tsvector the writer makes of a block's words (``postgresql_vector``) is
the one the server's ``vis_words`` makes of them: lexemes, positions and
whether it keeps them, for short blocks and blocks past what a tsvector keeps
of a word (255) or counts (16,383), words that share a lexeme, and words the
server's parser cuts or drops (given to the server as before)."""

from __future__ import annotations

from typing import Any

import psycopg
from conftest import examples
from hypothesis import HealthCheck, example, given, settings, strategies as st
from postgres import Server, database_fixture, postgres_server_fixture  # noqa: F401 - fixtures
from sessions import message_of, session_of
from timelimit import time_limit

from vis_export.jobs.indexing import index
from vis_export.searchindex import _close_databases
from vis_export.searchindex.documents import analysed_words, code_terms
from vis_export.searchindex.engines.postgresql_engine import POSITIONS, text_array, words_of
from vis_export.searchindex.engines.postgresql_vector import LEXEMES, Lexemes, Positions

# Stems shared (run, runs, running), digits (the parser's uint, mapped to the
# simple dictionary), letters and digits (numword), scripts beyond ASCII, and
# words the parser may not take as one word (a ligature, a combining mark, Arabic digits).
_WORDS = st.sampled_from(
    ["run", "runs", "running", "the", "a", "9", "2024", "x1", "1e5", "café", "straße", "ﬁle", "é", "١٢٣", "ǅx", "ok"]
)
_TEXTS = st.lists(_WORDS, min_size=1, max_size=30).flatmap(
    lambda words: st.sampled_from([1, 2, 127, 128, 254, 255, 300, 17_000]).map(lambda times: " ".join(words * times))
)


def _server_vector(connection: Any, words: str, kind: int) -> tuple[str, bool]:
    row = connection.execute("SELECT vector::text, positional FROM vis_words(%s, %s, '{}')", (words, kind)).fetchone()
    return row[0], row[1]


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TEXTS)
@example(text=" ".join(["run"] * 255))  # one more than a kept word may have
@example(text=" ".join(["run", "runs"] * 128))  # two words of one lexeme, 256 together
@example(text=" ".join(["run", "runs", "a"] * 127))  # the same, 254: kept
def test_the_writers_vector_is_the_servers(database: str, text: str) -> None:
    index([], database)  # the tables and vis_words
    with psycopg.connect(database, autocommit=True) as connection, time_limit(60):
        words, kind, _ = words_of(text)
        assert isinstance(words, Positions)
        lexemes = Lexemes()
        lexemes.learn(connection.execute(LEXEMES, (list(dict.fromkeys(words.every)),)).fetchall())
        made = lexemes.vector(words, kind != POSITIONS)
        expected = _server_vector(connection, " ".join(words.every), kind)
        if made is None:  # a word the parser cuts or drops: the server analyses the block
            assert any(lexemes.known[word] is None for word in words.every)
            return
        literal, positional = made
        assert (connection.execute("SELECT %s::tsvector::text", (literal,)).fetchone()[0], positional) == expected


def test_most_words_are_made_by_the_writer() -> None:
    """Not a test of nothing: plain words are each one lexeme at one position."""
    lexemes = Lexemes()
    lexemes.learn([("runs", "run"), ("the", "the")])
    assert lexemes.vector(words_of("runs the runs")[0], False) == ("'run':1,3 'the':2", True)  # type: ignore[arg-type]
    assert lexemes.vector(words_of("runs it")[0], False) is None  # type: ignore[arg-type]


def test_an_index_holds_the_servers_vectors(database: str) -> None:
    texts = ["parse the config, then runs run running", "ﬁle café ١٢٣ x1", " ".join(["a b run"] * 200)]
    texts += ["9 " * n + "run" for n in (16_381, 16_382, 16_383)]  # a last word at 16,382 to 16,384
    blocks = [{"type": "code", "language": "text", "text": text} for text in texts]
    index([session_of({"id": "s", "messages": [message_of(*blocks, role="user", created_at=1)]}, "")], database)
    _close_databases()
    with psycopg.connect(database, autocommit=True) as connection:
        stored = connection.execute("SELECT text, words::text, positional FROM vis_blocks ORDER BY key").fetchall()
        assert len(stored) == len(texts)
        for text, vector, positional in stored:
            _, kind, _ = words_of(text)
            assert (vector, positional) == _server_vector(connection, " ".join(analysed_words(text)), kind)


def test_rows_are_stored_in_the_order_given(database: str) -> None:
    """Blocks given a tsvector and blocks the server analyses, alternating, are
    stored in their order, as before: a query ranks the first matches its plan
    meets, in the table's order."""
    texts = ["plain words", "half ½", "more plain words", "① first", "last plain"]  # ½, ①: not one lexeme
    blocks = [{"type": "code", "language": "text", "text": text} for text in texts]
    index([session_of({"id": "s", "messages": [message_of(*blocks, role="user", created_at=1)]}, "")], database)
    _close_databases()
    with psycopg.connect(database, autocommit=True) as connection:
        stored = [row[0] for row in connection.execute("SELECT text FROM vis_blocks ORDER BY ctid")]
    assert stored == texts


@given(st.lists(_WORDS, max_size=60))
def test_each_words_positions_are_where_it_stands(words: list[str]) -> None:
    """``positions`` by its definition: the distinct words sorted, and each one's
    positions (counted from 1) in order, as the tsvector literal writes them."""
    from vis_export.searchindex.engines.postgresql_vector import positions

    made = positions(words, set(words))
    expected = [",".join(str(n) for n, word in enumerate(words, 1) if word == each) for each in sorted(set(words))]
    assert made == Positions(words, sorted(set(words)), expected)


# Identifiers (a term ``null``), scripts of bigrams, and what an array literal quotes or escapes.
_PIECES = ["null_x", "NULL_", "parseConfig", "a_b", "x1", "é", "中文字", "한국어", " ", "\n", '"', "\\", "{", ",", "}"]


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.lists(st.sampled_from(_PIECES)).map("".join))
@example(text="null_value NULL_value")  # null: a term an unquoted array element would read as NULL
@example(text="")
def test_the_terms_literal_is_the_terms(database: str, text: str) -> None:
    """The array literal a block's terms are given as is read by the server as
    the terms, each one element, whatever text they came from."""
    terms = code_terms(text)
    with psycopg.connect(database, autocommit=True) as connection:
        assert connection.execute("SELECT %s::text[]", (text_array(terms),)).fetchone()[0] == terms.split()


def test_a_text_seen_again_is_analysed_once() -> None:
    """Texts repeat whole (a tool's output, a file read again): a short one's
    words and positions are made once and shared, as they are never changed."""
    text = "parse the config, then parse it again"
    again = "".join(text)  # the same text, another string
    assert again is not text and words_of(again) is words_of(text)
