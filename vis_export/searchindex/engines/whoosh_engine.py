"""The Whoosh engine (whoosh-reloaded), for deployments that already run Whoosh."""

from __future__ import annotations

import functools
import operator
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from whoosh import index as whoosh_index, query as q
from whoosh.analysis import LowercaseFilter, RegexTokenizer, SpaceSeparatedTokenizer, StemFilter, StopFilter
from whoosh.codec.base import OutOfOrderError
from whoosh.codec.whoosh3 import (
    LENGTHS_COLUMN,
    W3Codec,
    W3PerDocWriter,
    W3PostingsWriter,
    _lenfield,
    byte_to_length,
    length_to_byte,
)
from whoosh.externalsort import SortingPool
from whoosh.fields import ID, NUMERIC, STORED, TEXT, Schema
from whoosh.lang import stemmer_for_language
from whoosh.scoring import BM25F, BM25FScorer
from whoosh.system import pack_uint
from whoosh.writing import PostingPool, SegmentWriter

from vis_export.searchindex.cjk import WORD_PATTERN
from vis_export.searchindex.documents import LONGEST_WORD, counted_words, identifier_key, identifier_words
from vis_export.searchindex.engines.whoosh_gathered import Gathered
from vis_export.searchindex.engines.whoosh_pickle import install, restricted
from vis_export.searchindex.guard import IndexFailure

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


_WORD = re.compile(WORD_PATTERN)
_TERM = re.compile(r"[^ \t\r\n]+")  # ``SpaceSeparatedTokenizer``'s
_stem = functools.lru_cache(maxsize=1 << 16)(stemmer_for_language("en"))


def spelled(text: str) -> dict[str, int]:
    """How often each of ``WORDS(text)``'s words occurs before it is stemmed,
    counted without a token object per word (the analysis was a third of an
    index job's time): an ASCII text's words as ``counted_words`` counts them
    (lowering keeps their lengths), another's measured before lowering, as
    ``WORDS`` measures them."""
    if text.isascii():
        return counted_words(text)
    return Counter(word.lower() for word in _WORD.findall(text) if len(word) <= LONGEST_WORD)


def analysed(text: str) -> dict[str, int]:
    """How often each of ``WORDS(text)``'s words occurs: each distinct spelling
    stemmed once. The query's words still go through ``WORDS``; a test holds
    the two to the same words."""
    counts: dict[str, int] = {}
    for word, count in spelled(text).items():
        stem = _stem(word)
        counts[stem] = counts.get(stem, 0) + count
    return counts


def _terms(text: str) -> dict[str, int]:
    return Counter(_TERM.findall(text))


# A counted field's frequencies as a writer that gathers postings takes them
# (``whoosh_gathered``): how often each of its words occurs as spelled, and the
# term of a spelling. Kept here rather than on the field, which the index's
# table of contents pickles.
_SPELLED: dict[Callable[[str], dict[str, int]], tuple[Callable[[str], dict[str, int]], Callable[[str], str]]] = {
    analysed: (spelled, _stem),
    _terms: (_terms, str),
}


class _Postings(TEXT):  # type: ignore[misc]
    """A text field that makes its postings from its words' frequencies
    (``frequencies``), without positions (no query of this engine asks for
    them: phrases are checked in the text)."""

    def __init__(self, analyzer: Any, frequencies: Callable[[str], dict[str, int]]):
        super().__init__(analyzer=analyzer, phrase=False)
        self.frequencies = frequencies

    def index(self, value: str, **_: Any) -> Iterator[tuple[bytes, int, float, bytes]]:
        for word, frequency in self.frequencies(value).items():
            yield word.encode(), frequency, float(frequency), _PACKED[frequency]

    def postings(self, name: str, value: str, docnum: int) -> tuple[list[Posting], int]:
        """``index``'s postings as the writer pools them, and the field's length
        (the sum of their frequencies), made in one comprehension."""
        counts = self.frequencies(value)
        made = [(name, word.encode(), docnum, float(n), _PACKED[n]) for word, n in counts.items()]
        return made, sum(counts.values())


Posting = tuple[str, bytes, int, float, bytes]


class _Packed(dict[int, bytes]):
    """A frequency as ``Frequency`` writes it (``pack_uint``): the common ones packed once."""

    def __missing__(self, frequency: int) -> bytes:
        return pack_uint(frequency)  # type: ignore[no-any-return]


_PACKED = _Packed({n: pack_uint(n) for n in range(256)})


class _Id(ID):  # type: ignore[misc]
    """An ID field that makes its one posting itself, as Whoosh's own analysis
    and format (``IDTokenizer``, ``Existence``) make it: the value whole."""

    def index(self, value: str, **_: Any) -> Iterator[tuple[bytes, int, float, bytes]]:
        yield value.encode(), 1, 1.0, b""


class _Lengths:
    """A new segment's field lengths, as its writer reads them to write the
    postings: each scorable field's read once, not once per posting (half the
    time of a commit, with a file system check per posting of a field that
    has none)."""

    def __init__(self, reader: Any, schema: Schema):
        self.reader = reader
        self.lengths = {
            name: [reader.doc_field_length(n, name) for n in range(reader.doc_count_all())]
            for name, field in schema.items()
            if field.scorable
        }

    def doc_field_length(self, docnum: int, fieldname: str, default: int = 0) -> int:
        lengths = self.lengths.get(fieldname)
        return default if lengths is None else lengths[docnum]

    def close(self) -> None:
        self.reader.close()


class _Pool(PostingPool):  # type: ignore[misc]
    """Whoosh's pool of postings to sort, bounded by their count rather than by
    an estimate of each one's size made as it is added (a tenth of a job's
    time): as many as ``limitmb`` holds at Whoosh's estimate of a posting."""

    POSTING_BYTES = 170  # ``PostingPool.add``'s estimate, for a word of 8 letters

    def __init__(self, tempstore: Any, segment: Any, limitmb: int):
        super().__init__(tempstore, segment, limitmb=limitmb)
        self.maxsize = self.limit // self.POSTING_BYTES

    add = SortingPool.add


def _add_postings(
    writer: Any, schema: Schema, lengths: Any, items: Iterable[tuple[str, bytes, int, float, Any]]
) -> None:
    """``FieldWriter.add_postings`` for a new segment's sorted postings: each
    term's postings gathered into lists by three appends, then written a block
    at a time by ``_write_term`` with Whoosh's calls per field and term and the
    same blocks, without ``add_posting``'s method call, length lookup and
    type checks per posting (the loop was a sixth of a job's time, profiled)."""
    if not isinstance(lengths, _Lengths):  # postings merged from another segment: Whoosh's own way
        type(writer).add_postings(writer, schema, lengths, items)
        return
    field: str | None = None
    term: bytes | None = None
    known: list[int] | None = None
    ids: list[int] = []
    weights: list[float] = []
    values: list[bytes] = []
    for fieldname, btext, docnum, weight, value in items:
        if docnum == -1:  # a word for the spelling graph, which Whoosh skips too
            if fieldname != field:
                _write_term(writer, term, known, ids, weights, values)
                term, ids, weights, values = None, [], [], []
                field, known = _start_field(writer, schema, field, fieldname, lengths.lengths)
            continue
        if btext != term or fieldname != field:
            _write_term(writer, term, known, ids, weights, values)
            ids, weights, values = [], [], []
            if fieldname != field:
                field, known = _start_field(writer, schema, field, fieldname, lengths.lengths)
            elif term is not None and btext < term:
                raise OutOfOrderError(f"Term {field}:{term!r} .. {fieldname}:{btext!r}")
            term = btext
        ids.append(docnum)
        weights.append(weight)
        values.append(value)
    _write_term(writer, term, known, ids, weights, values)
    if field is not None:
        writer.finish_field()


def _start_field(
    writer: Any, schema: Schema, field: str | None, name: str, lengths: dict[str, list[int]]
) -> tuple[str, Any]:
    """``name``'s field started (the one before finished), and its documents' lengths."""
    if field is not None:
        writer.finish_field()
    writer.start_field(name, schema[name])
    # The codec makes Whoosh's postings writer, and the index's table of
    # contents pickles the codec (which the restricted unpickler allows): the
    # writer's class is swapped here, where no reader or merge can see it.
    writer._postwriter.__class__ = _PostingsWriter
    return name, lengths.get(name)


def _write_term(
    writer: Any,
    term: bytes | None,
    known: list[int] | None,
    ids: Sequence[int],
    weights: list[float],
    values: list[bytes],
) -> None:
    """A term's postings as ``add_posting`` buffers them, a block's worth at a
    time: each full block written as the next posting would write it, the last
    left to ``finish_term`` (which inlines a term of one posting)."""
    if term is None:
        return
    writer.start_term(term)
    postings = writer._postwriter
    limit = postings._blocklimit
    for start in range(0, len(ids), limit):
        if start:
            postings._write_block()
        block = ids[start : start + limit]
        postings._ids.extend(block)
        postings._weights.extend(weights[start : start + limit])
        heaviest = max(weights[start : start + limit])
        if heaviest > postings._maxweight:
            postings._maxweight = heaviest
        postings._values.extend(filter(None, values[start : start + limit]))
        measured = [] if known is None else list(filter(None, map(known.__getitem__, block)))
        if measured:
            postings._minlength = min(measured)
            postings._maxlength = max(measured)
    writer.finish_term()


def _write_gathered(writer: Any, schema: Schema, lengths: dict[str, list[int]], gathered: Gathered) -> None:
    """A new segment's gathered postings written as ``_add_postings`` writes
    them from Whoosh's pool: the same blocks (a test)."""
    field: str | None = None
    known: list[int] | None = None
    counted = False
    for name, term, documents, frequencies in gathered.postings():
        if name != field:
            field, known = _start_field(writer, schema, field, name, lengths)
            counted = isinstance(schema[name], _Postings)
        if counted:
            weights = list(map(float, frequencies))
            _write_term(writer, term, known, documents, weights, list(map(_PACKED.__getitem__, frequencies)))
        else:
            _write_term(writer, term, known, documents, [1.0] * len(documents), [])
    if field is not None:
        writer.finish_field()


# Whoosh compresses each document's stored fields at level 3: a tenth of an
# index job's CPU (0.5 CPU-s of 5 on the benchmark's 19k blocks). Level 1 takes
# about 30% less of that for a segment 1% larger; level 0 (0.05 CPU-s) would
# make it twice as large (8.9 -> 20 MB), too much disk for 8% of a job.
STORED_LEVEL = 1

_KNOWN_VALUES = 4096  # values whose terms a writer keeps (``_Writer._terms``)

# Postings per block (Whoosh writes 128): a query reads and unpickles each
# block of its terms whole (``whoosh_scoring``), and a block costs about as
# much for its call as for its postings.
POSTING_BLOCK = 1024


class _PostingsWriter(W3PostingsWriter):  # type: ignore[misc]
    """Whoosh's postings writer, a block's ids and weights made small by C
    loops (``map``, ``array.count``) rather than a generator per posting (a
    third of a commit's time in ``_write_block``, profiled): the same values."""

    def _mini_ids(self) -> tuple[Any, ...]:
        ids = self._ids
        if self._byteids:
            return tuple(ids)
        return tuple(map(operator.sub, ids, chain((0,), ids)))  # ``delta_encode``

    def _mini_weights(self) -> Any:
        weights = self._weights
        if weights.count(1.0) == len(weights):
            return None
        if weights.count(weights[0]) == len(weights):
            return weights[0]
        return tuple(weights)


class _PerDocWriter(W3PerDocWriter):  # type: ignore[misc]
    """Whoosh's per-document writer, given the lengths of each document's
    counted fields by ``_Writer.add`` in an array per field (``measured``: a
    byte each, ``length_to_byte``'s), and writing them to their columns in
    one piece, as Whoosh's calls per document and field write them (76 ms of
    a job, and the commit read them back from the file: 50 ms more), when a
    document is started by anything else (Whoosh's ``add_document``, a merge)
    and at the close."""

    measured: dict[str, bytearray] | None = None

    def start_measured(self, docnum: int) -> dict[str, bytearray] | None:
        """``start_doc`` for ``_Writer.add``: the arrays to measure the
        document's lengths in, each 0 until measured (``None``: lengths are
        no longer measured, but written as Whoosh writes them)."""
        W3PerDocWriter.start_doc(self, docnum)
        for lengths in (self.measured or {}).values():
            lengths.append(0)
        return self.measured

    def start_doc(self, docnum: int) -> None:
        self.write_measured()
        super().start_doc(docnum)

    def close(self) -> None:
        self.write_measured()
        super().close()

    def write_measured(self) -> None:
        """The lengths measured written; any later ones are written as Whoosh writes them."""
        measured, self.measured = self.measured, None
        for name, lengths in (measured or {}).items():
            written = bytes(lengths).rstrip(b"\0")  # a column ends at its last length (``NumericColumn``)
            if written:
                self._create_column(_lenfield(name), LENGTHS_COLUMN)
                column = self._get_column(_lenfield(name))
                column._dbfile.write(written)
                column._count = len(written)


class _Writer(SegmentWriter):  # type: ignore[misc]
    def __init__(self, index: Any, limitmb: int):
        super().__init__(index, limitmb=limitmb, codec=W3Codec(blocklimit=POSTING_BLOCK))
        self.pool = _Pool(self._tempstorage, self.newsegment, limitmb)
        self.fieldwriter.add_postings = functools.partial(_add_postings, self.fieldwriter)
        # Each field as ``add_document`` visits it (sorted by name): its name, the
        # field, whether its postings are counted (``_Postings``), and whether stored.
        self.fields = [
            (name, field, isinstance(field, _Postings), field.stored) for name, field in sorted(self.schema.items())
        ]
        plain = not any(
            field.separate_spelling() or field.vector or field.column_type for _, field, _, _ in self.fields
        )
        self.names = frozenset(self.schema.names()) if plain else frozenset()  # else each document Whoosh's way
        self.known: dict[tuple[str, Any], list[tuple[bytes, float, bytes]]] = {}
        # Postings gathered per term (``whoosh_gathered``) up to half of ``limitmb``
        # (the rest for Whoosh's pool, should they be handed to it), where every
        # field is one this writer makes: counted words, or terms of weight 1.
        once = all(
            field.frequencies in _SPELLED if counted else isinstance(field, (_Id, NUMERIC)) or not field.indexed
            for _, field, counted, _ in self.fields
        )
        self.gathered: Gathered | None = Gathered() if plain and once else None
        self.numbers: dict[tuple[str, Any], list[int]] = {}
        # Each document's stored fields (its text whole) as a zlib stream of
        # ``STORED_LEVEL``, which any Whoosh reads as it reads its own level 3.
        self.perdocwriter._colwriters["_stored"]._child._level = STORED_LEVEL
        if plain:  # documents of this engine's schema: ``add`` measures their lengths
            self.perdocwriter.__class__ = _PerDocWriter
            self.perdocwriter.measured = {name: bytearray() for name, _, counted, _ in self.fields if counted}

    def add(self, document: dict[str, Any]) -> None:
        """``add_document(**document)``, the same postings pooled and the same
        fields and lengths written, for a document of this engine's schema
        (no boosts, spellings, vectors or columns): without sorting its keys,
        checking each against the schema, and a call and a multiplication per
        posting, and without ``perdoc.add_field``'s call per field (a third of
        a job's time in Whoosh's writer, profiled)."""
        if document.keys() != self.names:
            self.add_document(**document)
            return
        self._check_state()
        perdoc, docnum, gathered = self.perdocwriter, self.docnum, self.gathered
        pooled: list[Posting] = []
        measured = perdoc.start_measured(docnum)
        totals = perdoc._fieldlengths.copy()  # as they were: a refused document adds nothing to them
        try:
            for name, field, counted, stored in self.fields:
                value = document[name]
                if value is None:
                    continue
                if counted:
                    if gathered is not None:
                        count, normal = _SPELLED[field.frequencies]
                        length = gathered.counted(name, count, normal, value)
                    else:
                        postings, length = field.postings(name, value, docnum)
                        pooled += postings
                    if length:  # ``perdoc.add_field``'s work for a length
                        perdoc._fieldlengths[name] += length
                        if measured is None:
                            perdoc.add_column_value(_lenfield(name), LENGTHS_COLUMN, length_to_byte(length))
                        else:
                            measured[name][docnum] = length_to_byte(length)
                elif field.indexed:  # ids and the time: a weight of 1.0 a term, not scored
                    if gathered is not None:
                        gathered.once(self._numbers(gathered, name, value))
                    else:
                        pooled += [
                            (name, tbytes, docnum, weight, vbytes)
                            for tbytes, weight, vbytes in self._terms(name, value)
                        ]
                if stored:  # and for a stored value
                    perdoc._storedfields[name] = value
        except Exception:
            perdoc.cancel_doc()  # which keeps what Whoosh's ``add_field`` added to the totals
            perdoc._fieldlengths = totals
            if gathered is not None:
                gathered.cancel()
            for lengths in (measured or {}).values():
                del lengths[docnum:]
            raise
        perdoc.finish_doc()
        if gathered is None:
            self._pool(pooled)
        else:
            gathered.finish(docnum)
            if gathered.size() > self.pool.limit // 2:
                self._spill()
        self._added = True
        self.docnum += 1

    def _terms(self, name: str, value: Any) -> list[tuple[bytes, float, bytes]]:
        """A field's terms of a value, as ``index`` makes them, kept for the
        documents of the same value (a session's id, a message's time: the
        time's terms are four numbers packed each)."""
        terms = self.known.get((name, value))
        if terms is None:
            if len(self.known) >= _KNOWN_VALUES:
                self.known.clear()
            terms = self.known[name, value] = [(t, weight, v) for t, _, weight, v in self.schema[name].index(value)]
        return terms

    def _numbers(self, gathered: Gathered, name: str, value: Any) -> list[int]:
        """``_terms`` as gathered: their numbers, kept as they are."""
        numbers = self.numbers.get((name, value))
        if numbers is None:
            if len(self.numbers) >= _KNOWN_VALUES:
                self.numbers.clear()
            terms = gathered.field(name)
            numbers = self.numbers[name, value] = [terms[tbytes] for tbytes, _, _ in self._terms(name, value)]
        return numbers

    def _spill(self) -> None:
        """The postings gathered handed to Whoosh's pool (which sorts them in runs
        on disk past ``limitmb``), and those of the documents still to come."""
        gathered, self.gathered = self.gathered, None
        self.numbers.clear()
        if gathered is None:
            return
        add = self.pool.add
        for name, term, documents, frequencies in gathered.postings():
            if isinstance(self.schema[name], _Postings):
                for docnum, frequency in zip(documents, frequencies, strict=True):
                    add((name, term, docnum, float(frequency), _PACKED[frequency]))
            else:
                for docnum in documents:
                    add((name, term, docnum, 1.0, b""))

    def _flush_segment(self) -> None:
        """The gathered postings written a term at a time, unless the pool holds
        postings (past the writer's memory, or of segments merged into this one):
        then all go through it, Whoosh's way."""
        pool = self.pool
        if self.gathered is not None and (pool.current or pool.runs):
            self._spill()
        if self.gathered is None:
            super()._flush_segment()
            return
        measured = self.perdocwriter.measured
        self.perdocwriter.close()
        if measured is not None:  # every document's lengths: none read back from the file
            _write_gathered(self.fieldwriter, self.schema, _measured_lengths(measured), self.gathered)
        else:
            lengths = self.per_document_reader()
            _write_gathered(self.fieldwriter, self.schema, lengths.lengths, self.gathered)
            lengths.close()
        self.fieldwriter.close()

    def _pool(self, postings: list[Posting]) -> None:
        """``pool.add`` of each posting: at once, unless the pool is to be saved among them."""
        pool = self.pool
        if len(pool.current) + len(postings) <= pool.maxsize:
            pool.current += postings
        else:
            for posting in postings:
                pool.add(posting)

    def per_document_reader(self) -> _Lengths:
        return _Lengths(super().per_document_reader(), self.schema)


def _measured_lengths(measured: dict[str, bytearray]) -> dict[str, list[int]]:
    """Each document's lengths as ``_Lengths`` reads them from the file (0 for
    none, where the file gives ``None``: neither is a length of the blocks)."""
    return {name: list(map(byte_to_length, lengths)) for name, lengths in measured.items()}


def _schema() -> Schema:
    return Schema(
        key=STORED(),
        session_id=_Id(stored=True),
        session_title=STORED(),
        message_id=STORED(),
        block_id=STORED(),
        role=_Id(stored=True),
        block_type=_Id(stored=True),
        language=_Id(stored=True),
        # Four terms a time, not sixteen (the default step of 4 bits): a third
        # of the postings an index job sorts and writes (see ``WRITER``).
        created_at=NUMERIC(stored=True, bits=64, signed=True, shift_step=16),
        text=STORED(),
        words=_Postings(WORDS, analysed),
        terms=_Postings(SpaceSeparatedTokenizer(), _terms),
    )


class _Scoring(BM25F):  # type: ignore[misc]
    """Whoosh's BM25F, the same scores, with each field's lengths read once per
    searcher into a list (``_lengths``): a search scores every match, and
    reading each match's length from its column was a quarter of its time."""

    def scorer(self, searcher: Any, fieldname: str, text: bytes, qf: int = 1) -> Any:
        scorer = super().scorer(searcher, fieldname, text, qf)
        if isinstance(scorer, BM25FScorer):
            scorer.dfl = _lengths(searcher, fieldname).__getitem__
        return scorer


def _lengths(searcher: Any, fieldname: str) -> list[int]:
    """A field's length in each document of a searcher's segment, as its
    scorer reads them (1 where none), kept with the searcher (the engine keeps
    the searcher until the index changes)."""
    kept = vars(searcher).setdefault("vis_lengths", {})
    if fieldname not in kept:
        kept[fieldname] = [searcher.doc_field_length(n, fieldname, 1) for n in range(searcher.doc_count_all())]
    lengths: list[int] = kept[fieldname]
    return lengths


def _query(words: list[str], filters: dict[str, str], since: int | None, until: int | None) -> Any:
    """The engines' question (``engines.Engine.search``) as a Whoosh query."""
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
    return q.And(clauses) if clauses else q.Every()


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


# The layout of the engine's files, beside the manifest's schema version (which
# all engines share): 2 holds words and terms without positions and the key
# unindexed (a third less to write, and postings read in one piece). Whoosh
# cannot merge segments of two layouts, so an index of another is refused.
LAYOUT = "2"
LAYOUT_FILE = "vis-export-layout"
EARLIER_LAYOUTS = frozenset({"1"})  # 1: the layout before the file, which an index without one has


def _layout(directory: Path) -> str:
    try:
        return (directory / LAYOUT_FILE).read_text().strip()
    except FileNotFoundError:
        return "1"


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
            (directory / LAYOUT_FILE).write_text(LAYOUT)
        layout = _layout(directory)
        if layout != LAYOUT:
            self.index.close()
            if layout in EARLIER_LAYOUTS:
                raise IndexFailure(
                    f"{directory.parent}: this Whoosh index was written by an earlier vis-export, "
                    "in another layout; rebuild it in a new directory"
                )
            raise IndexFailure(  # no layout vis-export wrote: the file was changed, not written by an earlier one
                f"index {directory.parent} is damaged: its {LAYOUT_FILE} names no layout ({layout[:20]!r}); "
                "remove it and rebuild it with vis-export index"
            )
        self.writer: Any = None
        self.writable = writable
        # Kept between searches (opening one costs more than a query of a rare
        # word); engine calls take turns (``guard.engine_call``), so one at a time.
        self.searcher: Any = None

    def _searcher(self) -> Any:
        """The kept searcher, made again when the index changed (a cheap check when
        nothing was committed). Not Whoosh's ``refresh``: it keeps the readers of the
        segments it knew, with the deletions they had (a session deleted by a commit
        was still found), and fails on an empty index's reader, which has no segments
        (a second search of an empty index said the index was damaged)."""
        if self.searcher is not None and self.searcher.reader().generation() != self.index.latest_generation():
            self.searcher.close()
            self.searcher = None
        if self.searcher is None:
            self.searcher = self.index.searcher(weighting=_Scoring())
        return self.searcher

    def _writing(self) -> Any:
        if self.writer is None:
            self.writer = _Writer(self.index, **WRITER)
        return self.writer

    @_restricted
    def add(self, documents: list[dict[str, Any]]) -> None:
        writer = self._writing()
        for document in documents:
            writer.add({**document, "words": document["text"]})

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
        # Imported by the first search: it needs NumPy, which an index job does
        # not (its import was 0.11 CPU-s of a job of 3.2).
        from vis_export.searchindex.engines.whoosh_scoring import top_hits

        query = _query(words, filters, since, until)
        searcher = self._searcher()
        found = top_hits(searcher, query, offset + limit, _lengths)
        if found is None:
            found = [(hit.score, hit.docnum) for hit in searcher.search(query, limit=offset + limit)]
        return [(float(score or 0.0), dict(searcher.stored_fields(docnum))) for score, docnum in found[offset:]]

    @_restricted
    def close(self) -> None:
        if self.writer is not None:
            self.writer.cancel()
            self.writer = None
        if self.searcher is not None:
            self.searcher.close()
            self.searcher = None
