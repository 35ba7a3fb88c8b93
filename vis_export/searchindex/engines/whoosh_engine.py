"""The Whoosh engine (whoosh-reloaded), for deployments that already run Whoosh."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from whoosh import index as whoosh_index, query as q
from whoosh.analysis import LowercaseFilter, RegexTokenizer, SpaceSeparatedTokenizer, StemFilter, StopFilter
from whoosh.fields import ID, NUMERIC, STORED, TEXT, Schema
from whoosh.lang import stemmer_for_language

from vis_export.searchindex.cjk import WORD_PATTERN
from vis_export.searchindex.documents import identifier_key, identifier_words
from vis_export.searchindex.engines.whoosh_pickle import install, restricted

install()
P = ParamSpec("P")
R = TypeVar("R")

# The same analysis as the tantivy engine: Unicode words (no underscore, no
# ``cjk`` scripts), long tokens dropped, lowercase, Snowball English stems.
WORDS = (
    RegexTokenizer(WORD_PATTERN)
    | StopFilter(stoplist=frozenset(), minsize=1, maxsize=39)
    | LowercaseFilter()
    | StemFilter(stemfn=stemmer_for_language("en"))
)


def _schema() -> Schema:
    return Schema(
        key=ID(stored=True, unique=True),
        session_id=ID(stored=True),
        session_title=STORED(),
        message_id=STORED(),
        block_id=STORED(),
        role=ID(stored=True),
        block_type=ID(stored=True),
        language=ID(stored=True),
        # Four terms a time, not sixteen (the default step of 4 bits): a third
        # of the postings an index job sorts and writes (see ``WRITER``).
        created_at=NUMERIC(stored=True, bits=64, signed=True, shift_step=16),
        text=STORED(),
        words=TEXT(analyzer=WORDS),
        terms=TEXT(analyzer=SpaceSeparatedTokenizer()),
    )


def _restricted(method: Callable[P, R]) -> Callable[P, R]:
    """Runs ``method`` with Whoosh's unpickling restricted (``whoosh_pickle``):
    opening or reading an index never runs code from its files."""

    @functools.wraps(method)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with restricted():
            return method(*args, **kwargs)

    return run


# Whoosh sorts a commit's postings in memory up to ``limitmb`` (estimated), and
# beyond it in runs pickled to disk and merged: at its default (128) a
# fifth of the job's time on the benchmark's 19k blocks. Peak memory stays
# near 210 MB there; a larger job writes runs as before.
WRITER = {"limitmb": 256}


class WhooshEngine:
    name = "whoosh"

    @_restricted
    def __init__(self, directory: Path, writable: bool):
        directory.mkdir(parents=True, exist_ok=True)
        schema = _schema()  # the index's own is a pickle: never read (the manifest has its version)
        try:
            self.index = whoosh_index.open_dir(str(directory), schema=schema)
        except whoosh_index.EmptyIndexError:
            self.index = whoosh_index.create_in(str(directory), schema)
        self.writer: Any = None
        self.writable = writable
        # Kept between searches (opening one costs more than a query of a rare
        # word); engine calls take turns (``guard.engine_call``), so one at a time.
        self.searcher: Any = None

    def _searcher(self) -> Any:
        """The kept searcher, made current (a cheap check when nothing was committed)."""
        self.searcher = self.index.searcher() if self.searcher is None else self.searcher.refresh()
        return self.searcher

    def _writing(self) -> Any:
        if self.writer is None:
            self.writer = self.index.writer(**WRITER)
        return self.writer

    @_restricted
    def add(self, documents: list[dict[str, Any]]) -> None:
        writer = self._writing()
        for document in documents:
            writer.add_document(**document, words=document["text"])

    @_restricted
    def delete_session(self, session_id: str) -> None:
        self._writing().delete_by_term("session_id", session_id)

    @_restricted
    def commit(self) -> None:
        if self.writer is not None:
            self.writer.commit()
            self.writer = None

    @_restricted
    def count(self) -> int:
        return int(self._searcher().doc_count())

    @_restricted
    def search(
        self, words: list[str], filters: dict[str, str], since: int | None, until: int | None, limit: int, offset: int
    ) -> list[tuple[float, dict[str, Any]]]:
        clauses: list[Any] = []
        for word in words:
            ways = [q.Term("terms", identifier_key(word))]
            for field, tokens in (("words", [token.text for token in WORDS(word)]), ("terms", identifier_words(word))):
                if tokens and (field, tokens) != ("terms", [identifier_key(word)]):  # that way is the first
                    ways.append(q.And([q.Term(field, t) for t in tokens]))
            clauses.append(q.Or(ways))
        clauses += [q.Term(field, value) for field, value in filters.items()]
        if since is not None or until is not None:
            clauses.append(q.NumericRange("created_at", since, until))
        query = q.And(clauses) if clauses else q.Every()
        hits = self._searcher().search(query, limit=offset + limit)
        return [(float(hit.score or 0.0), dict(hit.fields())) for hit in hits[offset:]]

    @_restricted
    def close(self) -> None:
        if self.writer is not None:
            self.writer.cancel()
            self.writer = None
        if self.searcher is not None:
            self.searcher.close()
            self.searcher = None
