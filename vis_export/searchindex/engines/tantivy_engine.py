"""The default engine: tantivy (Rust, through tantivy-py)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tantivy

from vis_export.searchindex.cjk import without_runs
from vis_export.searchindex.documents import LONGEST_WORD, identifier_key, identifier_words
from vis_export.searchindex.engines.tantivy_files import RAW_FIELDS

HEAP = 128 * 1024 * 1024
# tantivy splits the writer's memory between its threads and refuses less than
# 15 MB each ("The memory arena in bytes per thread needs to be at least
# 15000000"): the heap grows with the threads, 16 MiB each (what 8 threads get
# of ``HEAP``), up to 1 GiB for ``engines.MAX_THREADS``.
HEAP_PER_THREAD = HEAP // 8


def heap_for(threads: int) -> int:
    """The writer's memory for ``threads`` (0: tantivy chooses, at most 8)."""
    return max(HEAP, threads * HEAP_PER_THREAD)


_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")
WORD_QUERIES = 1024  # the words' queries an engine keeps (``_word_query``)
_Run = list[str | tuple[int, str]]  # words side by side, as tantivy's phrase query takes them


def _analyzers() -> dict[str, Any]:
    builder, tokenizer, filters = tantivy.TextAnalyzerBuilder, tantivy.Tokenizer, tantivy.Filter
    return {
        # Words as ``documents.analysed_words`` finds them, given ``cjk.without_runs``.
        "vis_words": builder(tokenizer.simple())
        .filter(filters.remove_long(40))
        .filter(filters.lowercase())
        .filter(filters.stemmer("english"))
        .build(),
        "vis_terms": builder(tokenizer.whitespace()).filter(filters.remove_long(100)).build(),
        # Stored-only text: nothing of it is indexed.
        "vis_stored": builder(tokenizer.raw()).filter(filters.remove_long(1)).build(),
    }


def _schema() -> Any:
    schema = tantivy.SchemaBuilder()
    for name in RAW_FIELDS:
        schema.add_text_field(name, stored=True, tokenizer_name="raw", index_option="basic")
    for name in ("session_title", "text"):
        schema.add_text_field(name, stored=True, tokenizer_name="vis_stored", index_option="basic")
    schema.add_integer_field("created_at", stored=True, indexed=True, fast=True)
    schema.add_text_field("words", stored=False, tokenizer_name="vis_words")
    schema.add_text_field("terms", stored=False, tokenizer_name="vis_terms", index_option="freq")
    return schema.build()


class TantivyEngine:
    name = "tantivy"

    def __init__(self, directory: Path, writable: bool, threads: int = 0):
        directory.mkdir(parents=True, exist_ok=True)
        self.analyzers = _analyzers()
        self.index = tantivy.Index(_schema(), path=str(directory), reuse=True)
        for name, analyzer in self.analyzers.items():
            self.index.register_tokenizer(name, analyzer)
        self.schema = self.index.schema
        self.threads = threads
        self.meta = str(directory / "meta.json")
        self.seen: bytes | None = None  # ``meta.json`` as the reader was last reloaded
        self.word_queries: dict[str, Any] = {}
        self.writer = self.index.writer(heap_for(threads), threads) if writable else None

    def add(self, documents: list[dict[str, Any]]) -> None:
        """Each document as it is (its fields are the schema's: ``STORED`` and
        ``terms``) with its words: two thirds of the Python time of a list per field."""
        assert self.writer is not None
        for document in documents:
            values = {**document, "words": without_runs(document["text"])}
            self.writer.add_document(tantivy.Document.from_dict(values, self.schema))

    def delete_session(self, session_id: str) -> None:
        assert self.writer is not None
        self.writer.delete_documents_by_term("session_id", session_id)

    def commit(self) -> None:
        assert self.writer is not None
        self.writer.commit()
        self.writer.wait_merging_threads()
        self.writer = self.index.writer(heap_for(self.threads), self.threads)  # --jobs holds after a commit too

    def count(self) -> int:
        self.index.reload()
        return int(self.index.searcher().num_docs)

    def _term(self, field: str, value: Any) -> Any:
        return tantivy.Query.term_query(self.schema, field, value)

    def search(
        self, words: list[str], filters: dict[str, str], since: int | None, until: int | None, limit: int, offset: int
    ) -> list[tuple[float, dict[str, Any]]]:
        return self._search(words, [], filters, since, until, limit, offset)

    def phrase_search(
        self,
        words: list[str],
        phrases: Sequence[str],
        filters: dict[str, str],
        since: int | None,
        until: int | None,
        limit: int,
    ) -> list[tuple[float, dict[str, Any]]]:
        """``search``, narrowed by each phrase's inner words, side by side at
        the positions the index holds; the search checks each hit exactly."""
        positional = [words for phrase in phrases for words in self._inner_runs(phrase)]
        return self._search(words, positional, filters, since, until, limit, 0)

    def _inner_runs(self, phrase: str) -> list[_Run]:
        """The runs of two or more words a text holding ``phrase`` holds side by
        side, as analysed (stemmed): the phrase's words but those at its edges
        (part of longer words in a text, maybe) and those too long to be indexed
        (a gap in the positions). ASCII phrases only, where this analysis and
        tantivy's agree on every character; others are checked in full."""
        if not phrase.isascii():
            return []
        runs: list[_Run] = [[]]
        for found in _ASCII_WORD.finditer(phrase):
            inner = found.start() > 0 and found.end() < len(phrase) and len(found.group()) <= LONGEST_WORD
            analysed = self.analyzers["vis_words"].analyze(found.group()) if inner else []
            if len(analysed) == 1:
                runs[-1].append(analysed[0])
            elif runs[-1]:
                runs.append([])
        return [run for run in runs if len(run) > 1]

    def _search(
        self,
        words: list[str],
        positional: list[_Run],
        filters: dict[str, str],
        since: int | None,
        until: int | None,
        limit: int,
        offset: int,
    ) -> list[tuple[float, dict[str, Any]]]:
        must = tantivy.Occur.Must
        clauses = [(must, self._word_query(word)) for word in words]
        clauses += [(must, tantivy.Query.phrase_query(self.schema, "words", run)) for run in positional]
        clauses += [(must, self._term(field, value)) for field, value in filters.items()]
        if since is not None or until is not None:
            clauses.append(
                (must, tantivy.Query.range_query(self.schema, "created_at", tantivy.FieldType.Integer, since, until))
            )
        query = tantivy.Query.boolean_query(clauses) if clauses else tantivy.Query.all_query()
        searcher = self._searcher()
        # tantivy allocates room for offset + limit hits up front (a huge limit
        # aborts the process) and panics on a limit of 0: ask for no more than it holds.
        limit = min(limit, searcher.num_docs - offset)
        if limit < 1:
            return []
        hits = searcher.search(query, limit, count=False, offset=offset).hits
        return [(float(score), _flat(searcher.doc(address).to_dict())) for score, address in hits]

    def _word_query(self, word: str) -> Any:
        """Where ``word`` matches: its identifier key, its analysed words, or its
        identifier words. Kept for the word's next search (a query is immutable):
        analysing it and building its query took 15-20 µs a word (load average 12)."""
        query = self.word_queries.get(word)
        if query is None:
            must, should = tantivy.Occur.Must, tantivy.Occur.Should
            ways = [self._term("terms", identifier_key(word))]
            for field, tokens in (
                ("words", self.analyzers["vis_words"].analyze(without_runs(word))),
                ("terms", identifier_words(word)),
            ):
                if tokens and (field, tokens) != ("terms", [identifier_key(word)]):  # that way is the first
                    ways.append(tantivy.Query.boolean_query([(must, self._term(field, t)) for t in tokens]))
            query = tantivy.Query.boolean_query([(should, way) for way in ways])
            if len(self.word_queries) >= WORD_QUERIES:
                self.word_queries.clear()
            self.word_queries[word] = query
        return query

    def _searcher(self) -> Any:
        """The searcher of the last commit. The reader is reloaded only when
        ``meta.json``, which tantivy writes anew at each commit (its opstamp
        counts commits, its segments' ids are random), reads otherwise: a reload
        opens every segment again and starts their caches of stored documents
        cold (0.07-0.12 ms a search at load 10-13). Its stat is no proof: ext4
        gives each new ``meta.json`` the inode the one before last freed, the
        size stays while the segments' count does, and times of one second (or
        none) make commits within it alike, so a searcher kept the reader of two
        commits back (a pruned session found). Reading the file: some 10 µs."""
        try:
            with open(self.meta, "rb") as meta:
                seen: bytes | None = meta.read()
        except OSError:  # the reload says what is wrong
            seen = None
        if seen is None or seen != self.seen:
            self.index.reload()
            self.seen = seen
        return self.index.searcher()

    def close(self) -> None:
        self.writer = None


def _flat(stored: dict[str, list[Any]]) -> dict[str, Any]:
    return {name: values[0] if values else "" for name, values in stored.items()}
