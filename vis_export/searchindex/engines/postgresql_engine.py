"""The PostgreSQL engine: one index that many machines feed and many people query.

A block is a row: its stored fields, its code-aware terms (``documents``) as a
text array, and its words (``documents.analysed_words``, stemmed by the
``vis_english`` configuration, stop words kept) as a tsvector. A query word
matches the same three ways as in the other engines.

Unlike a folder index, there is no writer lock: each session is written in one
transaction that first takes an advisory lock on the session's id, so a search
sees a session's old blocks or its new ones, two jobs writing one session take
turns (the later one's copy stays, whole), and jobs on other sessions never
wait. The session's content hash and origin are written in that same
transaction, so a job killed at any moment leaves each session done or not.
A writer's transactions run on a thread of their own (``postgresql_writer``),
while the job makes the next session's rows.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import groupby
from typing import Any

from vis_export.searchindex.documents import analysed_words, by_text, identifier_key, identifier_words
from vis_export.searchindex.engines import STORED
from vis_export.searchindex.engines.postgresql_schema import connect, display, failures, prepare
from vis_export.searchindex.engines.postgresql_text import each_string, restored, storable
from vis_export.searchindex.engines.postgresql_vector import LEXEMES, Lexemes, Positions, positions
from vis_export.searchindex.engines.postgresql_writer import Step, TransactionWriter
from vis_export.searchindex.guard import IndexFailure
from vis_export.searchindex.query import inner_runs

_LIKE_SPECIAL = re.compile(r"[\\%_]")
LONGEST_LOCK_TIMEOUT = 2**31 - 1  # milliseconds
TSVECTOR_BYTES = (1 << 20) - 1024  # a tsvector's limit, less room for its header
_WORD_COST = 10  # bytes of a tsvector per word beyond the word's own, at most


def like_literal(text: str) -> str:
    """``text`` as a ``LIKE`` pattern that matches exactly it (escape ``\\``)."""
    return _LIKE_SPECIAL.sub(lambda special: "\\" + special.group(), text)


def text_array(terms: str) -> str:
    """A block's terms (``documents.code_terms``: space separated) as an array
    literal, which the server reads: psycopg's dumping of a list, element by
    element in Python, was a fifth of the writer's time. Each term is quoted
    (``null`` is a term), and none holds what a quoted element escapes (a
    quote or a backslash: terms are letters and digits, see ``cjk`` for the rest)."""
    each = terms.split()
    return '{"' + '","'.join(each) + '"}' if each else "{}"


def tsvector_words(words: set[str]) -> tuple[str, list[str]]:
    """``words`` as ``to_tsvector`` is given them, and for a block of more distinct
    words than a tsvector holds (1 MB: each word's bytes, padded to even, and 8
    more for its entry and position, until ``strip``; a long log of hashes), all
    of them again in parts that each fit: its tsvector keeps the first that fit,
    in sorted order (what ranks it), and ``more_words`` the lexemes of every part
    (what finds it by any of its words)."""
    joined = " ".join(words)
    if len(joined) * 4 + _WORD_COST * len(words) < TSVECTOR_BYTES:  # fits, whatever the characters
        return joined, []
    parts: list[list[str]] = [[]]
    size = 0
    for word in sorted(words):
        size += len(word.encode()) + _WORD_COST
        if size >= TSVECTOR_BYTES:
            parts.append([])
            size = len(word.encode()) + _WORD_COST
        parts[-1].append(word)
    return " ".join(parts[0]), [" ".join(part) for part in parts]


# How a block's words become its tsvector (``vis_words`` in the schema).
NO_POSITIONS, POSITIONS, CHECKED_POSITIONS = 0, 1, 2
# A tsvector keeps at most 255 positions of a word, and counts positions up to
# 16,383 (later words all stand at 16,383): a text within both holds exact
# positions, and one beyond either none (a phrase's words side by side could
# not be told apart from the lost positions).
_FEWEST_CAPPED = 255


@by_text
def words_of(text: str) -> tuple[str | Positions, int, list[str]]:
    """A block's words for ``vis_words``: in order, with positions (phrases are
    narrowed by their words side by side), when they fit in a tsvector
    (``TSVECTOR_BYTES``, two more bytes per position), as ``Positions`` (which
    the writer makes a tsvector of where it can, ``postgresql_vector``); else
    each once, without positions, and all of them in parts when even that does
    not fit (``tsvector_words``). A text of fewer words than a tsvector caps
    holds exact positions; a longer one's are checked. Kept for a short text
    seen again (``documents.by_text``), as texts repeat whole: the positions
    were the writer's largest cost in Python, and a quarter of the benchmark's
    texts are repeats."""
    words = analysed_words(text)
    distinct = set(words)
    if len(" ".join(distinct)) * 4 + _WORD_COST * len(distinct) + 2 * len(words) >= TSVECTOR_BYTES:
        kept, parts = tsvector_words(distinct)
        return kept, NO_POSITIONS, parts
    return positions(words, distinct), POSITIONS if len(words) < _FEWEST_CAPPED else CHECKED_POSITIONS, []


def lock_timeout(wait: float) -> int:
    """``--wait`` seconds as ``lock_timeout`` milliseconds: at least 1 (0 means
    no limit), at most PostgreSQL's (an int: 24.8 days), and no limit for an
    infinite wait."""
    if math.isinf(wait):
        return 0
    return min(LONGEST_LOCK_TIMEOUT, max(1, round(wait * 1000)))


@contextmanager
def pipelined(connection: Any) -> Iterator[None]:
    """``connection.pipeline()``, raising only the first failure: psycopg logs
    the failure of a pipeline's end that follows one raised within it (a
    connection lost mid-transaction gives both) on stderr, a second line."""
    failure: Exception | None = None
    try:
        with connection.pipeline():
            try:
                yield
            except Exception as error:  # noqa: BLE001 - raised again once the pipeline ended
                failure = error
    except Exception:
        if failure is None:
            raise
    if failure is not None:
        raise failure


def psycopg_errors() -> Any:
    import psycopg.errors

    return psycopg.errors


_COLUMNS = ", ".join(STORED)
_TEXT_FIELDS = frozenset(name for name in STORED if name != "created_at")
# How many matches a query ranks (the first by key): a page within them is
# found without ranking the rest.
CANDIDATES = 1000
_INSERT = (
    f"INSERT INTO vis_blocks ({_COLUMNS}, terms, words, positional, more_words) "
    f"SELECT {', '.join(['%s'] * len(STORED))}, %s::text[], w.vector, w.positional, w.more "
    "FROM vis_words(%s, %s, %s) AS w"
)
# Blocks whose tsvectors the writer made (``postgresql_vector``), nearly all,
# are copied straight into the table: through the temporary table (below) the
# server wrote each row twice (0.3 of 1.9 server CPU-s at 19k blocks).
_COPY = f"COPY vis_blocks ({_COLUMNS}, terms, words, positional) FROM STDIN"
# A session's transaction is a few round trips (lock and delete; copy; the rest
# and commit), since the writer thread waits for the GIL after each one (up to
# ``sys.getswitchinterval()`` while the job analyses text): with a dozen round
# trips, those waits were most of the job's time.
_DELETE = (
    "WITH sessions AS (DELETE FROM vis_sessions WHERE session_id = %(session)s) "
    "DELETE FROM vis_blocks WHERE session_id = %(session)s"
)
# A session's rows are copied into this connection's own temporary table, then
# moved with their words analysed: COPY costs the job half the client time of
# one INSERT per row, and the job's client is what limits its throughput.
_STAGE = (
    "CREATE TEMPORARY TABLE vis_stage ("
    + ", ".join(f"{name} {'bigint' if name == 'created_at' else 'text'}" for name in STORED)
    + ", terms text[], words text, positions smallint, parts text[], vector tsvector, positional boolean, n int)"
    " ON COMMIT DELETE ROWS"
)
# Rows given a tsvector, and rows whose words the server analyses (``vis_words``
# costs even on no words: called only for these), in the order given (``n``):
# rows are stored in the same order as before, and so met by a query's plan
# in the same order (see ``phrase_search``).
_FROM_STAGE = (
    f"INSERT INTO vis_blocks ({_COLUMNS}, terms, words, positional, more_words) "
    f"SELECT {_COLUMNS}, terms, vector, positional, more FROM ("
    f"SELECT n, {_COLUMNS}, terms, vector, positional, '{{}}'::text[] AS more FROM vis_stage "
    "WHERE vector IS NOT NULL UNION ALL "
    f"SELECT n, {', '.join(f'vis_stage.{name}' for name in STORED)}, terms, w.vector, w.positional, w.more "
    "FROM vis_stage, LATERAL vis_words(words, positions, parts) AS w WHERE vis_stage.vector IS NULL"
    ") AS given ORDER BY n"
)


_RECORD_SESSION = (
    "INSERT INTO vis_sessions (session_id, digest, origin) VALUES (%s, %s, %s) ON CONFLICT (session_id) "
    "DO UPDATE SET digest = excluded.digest, origin = excluded.origin, indexed_at = now()"
)
_RECORD_FILE = (
    "INSERT INTO vis_files VALUES (%s, %s, %s) ON CONFLICT (origin, key) DO UPDATE SET entry = excluded.entry"
)
# Sessions (id, digest, origin), files (origin, key, entry) and files gone (origin, key).
Records = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]]]


class PostgresEngine:
    name = "postgresql"

    def __init__(self, uri: str, writable: bool, wait: float = 0.0, job: str = ""):
        self.uri, self.writable, self.wait, self.job = uri, writable, wait, job
        self.command = "index" if writable else "search"
        self.connection = connect(uri, autocommit=not writable, command=self.command)
        self._steps: list[Step] = []  # the transaction being made, for the writer
        self._records: list[Records] = []  # what it records, written with its commit
        self._writer: TransactionWriter | None = None
        self._changed = False  # whether the job added or removed any block
        self._lexemes = Lexemes()  # the writer's, see ``postgresql_vector``
        self._learning: set[str] = set()  # the words of the transaction being made, for the writer to learn
        self._staged = False  # whether rows are copied through vis_stage (see _stage)
        self._stage_holds = False  # whether vis_stage holds rows (until the commit empties it)
        try:
            with failures(uri, self.command):
                # Tables before version 4 hold no positions (nor the column saying so), before 5 no more_words.
                version = prepare(self.connection, uri, writable)
                self.positions, self.more_words = version >= 4, version >= 5
                if not writable:  # one order of rows per plan (see ``phrase_search``)
                    self.connection.execute("SET max_parallel_workers_per_gather = 0")
                    self.connection.execute("SET synchronize_seqscans = off")
                if writable:
                    self._check_writable()
                    self.connection.commit()
                    self._stage()
                    self._writer = TransactionWriter()
        except BaseException:
            self.connection.close()
            raise

    def _check_writable(self) -> None:
        """A role that may only read (``pg_read_all_data``) stops here, before any work."""
        allowed = self.connection.execute(
            "SELECT has_table_privilege('vis_blocks', 'INSERT, DELETE') "
            "AND has_table_privilege('vis_sessions', 'INSERT, UPDATE, DELETE')"
        ).fetchone()[0]
        if not allowed:
            raise IndexFailure(
                f"index: {display(self.uri)}: this role may only read the index; "
                "index with a role that may write its tables"
            )

    def _stage(self) -> None:
        """The temporary table rows are copied into. A database that denies
        its roles temporary tables (``REVOKE TEMPORARY``) gets one INSERT per row."""
        try:
            self.connection.execute(_STAGE)
            self.connection.commit()
            self._staged = True
        except psycopg_errors().InsufficientPrivilege:
            self.connection.rollback()

    def add(self, documents: list[dict[str, Any]]) -> None:
        """The rows are made here, in the job's thread; the writer inserts them."""
        rows = [
            (
                *(storable(document[name]) if name in _TEXT_FIELDS else document[name] for name in STORED),
                text_array(document["terms"]),
                *words_of(document["text"]),
            )
            for document in documents
        ]
        for row in rows:
            if isinstance(row[-3], Positions):
                self._learning.update(row[-3].distinct)
        self._steps.append(lambda: self._insert(rows))
        self._changed = True

    def _insert(self, rows: list[tuple[Any, ...]]) -> None:
        with failures(self.uri, self.command), self.connection.cursor() as cursor:
            made = [(row, self._vector(row)) for row in rows]
            if self._stage_holds:  # a second batch in one transaction: the first's rows go first
                cursor.execute(_FROM_STAGE)
                cursor.execute("DELETE FROM vis_stage")
                self._stage_holds = False
            if not self._staged or all(vector for _, vector in made):  # each run of rows of one kind, in order
                for given, run in groupby(made, lambda pair: pair[1] is not None):
                    if given:
                        with cursor.copy(_COPY) as copy:
                            for values in [(*row[:-3], *vector) for row, vector in run if vector]:
                                copy.write_row(values)
                    else:
                        cursor.executemany(_INSERT, [self._words(row) for row, _ in run])
                return
            with cursor.copy("COPY vis_stage FROM STDIN") as copy:
                for n, (row, vector) in enumerate(made):
                    staged = (*row[:-3], None, None, [], *vector) if vector else (*self._words(row), None, None)
                    copy.write_row((*staged, n))
            self._stage_holds = True

    def _vector(self, row: tuple[Any, ...]) -> tuple[str, bool] | None:
        """A row's tsvector made here, and whether it keeps positions; ``None``
        where the server analyses its words (a word not one lexeme, or not
        learnt: the session's words are learnt as it is deleted, ``_delete``)."""
        words, kind = row[-3], row[-2]
        return self._lexemes.vector(words, kind == CHECKED_POSITIONS) if isinstance(words, Positions) else None

    @staticmethod
    def _words(row: tuple[Any, ...]) -> tuple[Any, ...]:
        """A row as ``vis_words`` takes it: its words as one text."""
        words = row[-3]
        return (*row[:-3], " ".join(words.every) if isinstance(words, Positions) else words, *row[-2:])

    def delete_session(self, session_id: str) -> None:
        session_id = storable(session_id)
        learning = self._learning  # filled by the adds that follow, before the transaction is handed over
        self._steps.append(lambda: self._delete(session_id, learning))
        self._changed = True

    def _delete(self, session_id: str, learning: set[str]) -> None:
        """Starts the session's transaction: its locks first, then its old rows go.

        The job's own lock on the session comes first, without a time limit: a
        job on Dask has several writers, and two of them may hold the same
        session (two sources hold its id; see ``jobs.indexing``); they
        take turns. Then the session's lock, which waits at most ``wait``
        seconds for another job holding it (at once when 0). Only this wait is
        bounded: a ``lock_timeout`` on the whole connection would also stop a
        job at the brief waits that jobs on other sessions share (a table
        growing, an index page), and jobs on disjoint sessions would fail each
        other. The DELETE, a statement after the lock, sees every copy a job
        that held the lock committed. (The two locks are in the two key spaces
        of advisory locks, which never meet.) The lexemes of the session's
        words the writer has not met are asked in the same round trip."""
        from psycopg.errors import LockNotAvailable

        unknown = self._lexemes.unknown(learning)
        with failures(self.uri, self.command), self.connection.cursor() as lookup:
            try:
                with pipelined(self.connection):
                    if unknown:
                        lookup.execute(LEXEMES, (unknown,))
                    self.connection.execute(
                        "SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", (self.job, session_id)
                    )
                    self.connection.execute(f"SET LOCAL lock_timeout = {lock_timeout(self.wait)}")
                    self.connection.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (session_id,))
                    self.connection.execute("SET LOCAL lock_timeout = 0")
                    self.connection.execute(_DELETE, {"session": session_id})
            except LockNotAvailable:
                raise IndexFailure(
                    f"{self.command}: {display(self.uri)}: another index job is writing session "
                    f"{restored(session_id)!r} (waited {self.wait:g} s; see --wait)"
                ) from None
            if unknown:
                self._lexemes.learn(lookup.fetchall())

    def record(self, digests: dict[str, str], origin: str, files: dict[str, Any], files_gone: set[str]) -> None:
        """What the job knows now, written with the blocks it describes when the
        transaction is committed."""
        from psycopg.types.json import Jsonb

        origin = storable(origin)
        self._records.append(
            (
                [(storable(session_id), digest, origin) for session_id, digest in digests.items()],
                [(origin, storable(key), Jsonb(each_string(entry, storable))) for key, entry in files.items()],
                [(origin, storable(key)) for key in files_gone],
            )
        )

    def known(self, origin: str) -> tuple[dict[str, str], set[str], dict[str, Any]]:
        """Every session's hash, the sessions of ``origin``, and its files."""
        with failures(self.uri, self.command):
            rows = self.connection.execute("SELECT session_id, digest, origin FROM vis_sessions").fetchall()
            files = self.connection.execute(
                "SELECT key, entry FROM vis_files WHERE origin = %s", (storable(origin),)
            ).fetchall()
            self.connection.commit()
        return (
            {restored(session_id): digest for session_id, digest, _ in rows},
            {restored(session_id) for session_id, _, where in rows if where == storable(origin)},
            {restored(key): each_string(entry, restored) for key, entry in files},
        )

    def commit(self) -> None:
        """Hands the transaction made since the last commit to the writer."""
        if self._writer is None:
            return
        records, self._records = self._records, []
        steps, self._steps = [*self._steps, lambda: self._commit(records)], []
        self._learning = set()
        self._writer.submit(steps)

    def _commit(self, records: list[Records]) -> None:
        """The staged rows, the records and the commit, sent at once."""
        with failures(self.uri, self.command), pipelined(self.connection), self.connection.cursor() as cursor:
            if self._stage_holds:
                cursor.execute(_FROM_STAGE)
            for sessions, entries, gone in records:
                cursor.executemany(_RECORD_SESSION, sessions)
                cursor.executemany(_RECORD_FILE, entries)
                cursor.executemany("DELETE FROM vis_files WHERE origin = %s AND key = %s", gone)
            self.connection.commit()
        self._stage_holds = False

    def finish(self) -> None:
        """Returns once every transaction handed over is committed; raises the first that failed."""
        if self._writer is not None:
            self._writer.wait()

    def refresh_statistics(self) -> None:
        """After a job that changed sessions, the planner's statistics of the blocks,
        so the next query is planned for the table as it is (a search right after
        a large job otherwise waits for autovacuum, and runs several times slower).
        The word indexes' pending lists are merged too: until then every search
        reads them whole (up to 4 MB each; at 92k blocks a third of a phrase
        query's time). A role that does not own the table leaves both to autovacuum."""
        if not self._changed:
            return
        with failures(self.uri, self.command):
            # Committed first: the database's owner may analyse a table it does
            # not own, yet not merge its indexes' lists, and a rollback would undo both.
            self.connection.execute("ANALYZE vis_blocks")
            self.connection.commit()
            try:
                self.connection.execute(
                    "SELECT gin_clean_pending_list('vis_blocks_words'), gin_clean_pending_list('vis_blocks_terms')"
                    + (", gin_clean_pending_list('vis_blocks_more_words')" if self.more_words else "")
                )
                self.connection.commit()
            except psycopg_errors().InsufficientPrivilege:
                self.connection.rollback()

    def count(self) -> int:
        self.finish()
        with failures(self.uri, self.command):
            return int(self.connection.execute("SELECT count(*) FROM vis_blocks").fetchone()[0])

    def search(
        self, words: list[str], filters: dict[str, str], since: int | None, until: int | None, limit: int, offset: int
    ) -> list[tuple[float, dict[str, Any]]]:
        return self.phrase_search(words, (), filters, since, until, limit, offset)

    def phrase_search(
        self,
        words: list[str],
        phrases: Sequence[str],
        filters: dict[str, str],
        since: int | None,
        until: int | None,
        limit: int,
        offset: int = 0,
    ) -> list[tuple[float, dict[str, Any]]]:
        """``search``, where each of ``phrases`` also occurs exactly in the text:
        checked by the server, so a phrase with few words or none (``"=>"``)
        never sends the client every block to check. The condition is a
        ``LIKE``, which a trigram index uses when a database has one (``docs/searching.md``, Phrases)."""
        conditions: list[str] = []
        parameters: list[Any] = []
        ranked: list[str] = []
        for word in words:
            ways, analysed = ["terms @> %s"], " ".join(analysed_words(word))
            parameters.append([identifier_key(word)])
            if analysed:
                ways.append("words @@ plainto_tsquery('vis_english', %s)")
                parameters.append(analysed)
                ranked.append(analysed)
                if self.more_words:  # a block of more words than its tsvector holds
                    ways.append("more_words @> tsvector_to_array(to_tsvector('vis_english', %s))")
                    parameters.append(analysed)
            if identifier_words(word) and identifier_words(word) != [identifier_key(word)]:
                ways.append("terms @> %s")
                parameters.append(identifier_words(word))
            conditions.append(f"({' OR '.join(ways)})")
        for phrase in phrases:
            for run in inner_runs(phrase) if self.positions else ():
                conditions.append("(NOT positional OR words @@ phraseto_tsquery('vis_english', %s))")
                parameters.append(" ".join(run))
            conditions.append("text LIKE %s ESCAPE '\\'")
            parameters.append(f"%{like_literal(storable(phrase))}%")
        for field, value in filters.items():
            conditions.append(f"{field} = %s")
            parameters.append(storable(value))
        for bound, operator in ((since, ">="), (until, "<=")):
            if bound is not None:
                conditions.append(f"created_at {operator} %s")
                parameters.append(bound)
        either = " || ".join(["plainto_tsquery('vis_english', %s)"] * len(ranked))
        score = f"ts_rank(words, {either})" if ranked else "0"
        # Ranked are the first CANDIDATES matches the server finds, not every
        # match: the ranking itself (a tsvector's rank for each row) was most of
        # a query's time, and grows with the matches. They are taken in the
        # order the plan meets them (the table's, or the key's), not sorted by
        # key first: a sort must visit every match, and a phrase of common
        # words had thousands (16 ms of a 20 ms query at 92k blocks). The
        # connection plans without parallel workers or synchronized scans, so
        # a plan meets rows in one order (see ``__init__``). Unranked matches
        # (a phrase with no whole word) come by key, all of score 0: the page
        # is the first of them, and the scan stops at its end rather than at
        # CANDIDATES (a phrase of two common words at 1M blocks checked a
        # hundred times the rows it showed). Only the rows returned are joined
        # back for their stored fields. A page past CANDIDATES ranks every match.
        bound = offset + limit if not ranked else CANDIDATES if offset + limit <= CANDIDATES else None
        order = "" if ranked else " ORDER BY key"
        query = (
            f"SELECT best.score, {_COLUMNS} FROM ("
            f"SELECT key, {score} AS score FROM ("
            f"SELECT key, words FROM vis_blocks WHERE {' AND '.join(conditions) or 'true'}{order} LIMIT %s"
            ") AS candidates ORDER BY score DESC, key LIMIT %s OFFSET %s"
            ") AS best JOIN vis_blocks USING (key) ORDER BY best.score DESC, key"
        )
        # Never prepared: a prepared statement's generic plan, made without the
        # words, walked every match (8x slower than the plan for the words given).
        with failures(self.uri, self.command), self.connection.cursor() as cursor:
            rows = cursor.execute(query, [*ranked, *parameters, bound, limit, offset], prepare=False).fetchall()
        return [(float(row[0]), _fields(row[1:])) for row in rows]

    def close(self) -> None:
        """Transactions handed over are finished; steps never handed over (a session
        the job did not get to commit) are dropped, so the database rolls them back."""
        if self._writer is not None:
            self._writer.close()
        self.connection.close()


def _fields(row: tuple[Any, ...]) -> dict[str, Any]:
    """A row's stored fields, as they were given."""
    return {name: restored(value) if name in _TEXT_FIELDS else value for name, value in zip(STORED, row, strict=True)}
