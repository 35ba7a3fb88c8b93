"""A new Whoosh segment's postings gathered per term as its documents are added.

Whoosh pools a tuple per posting (field, term, document, weight, value) and
sorts them all at the commit: making the tuples, sorting them and walking them
back into terms was half of an index job's Whoosh time. Here each term is
numbered as first seen, and a document adds the numbers of its terms and their
frequencies to two arrays: a counted field's words are counted by one
``Counter`` in C, and each distinct spelling mapped to its term's number
(stemmed and numbered once for all documents; ``_Counted``). At the commit each term's documents and frequencies
are dealt out to its own arrays by C loops (``map`` of ``array.append``), and
the terms handed over a term at a time in Whoosh's order (field, term): no
NumPy, whose import alone was 0.11 CPU-s of a job of 3.2.

Memory: a posting takes 8 bytes here (and 8 more once dealt out at the
commit) against Whoosh's estimate of 170 for its tuple; past its share of the
writer's ``limitmb`` the writer hands what is gathered to Whoosh's pool, which
sorts runs on disk as before (``whoosh_engine._Writer``).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from itertools import repeat

from vis_export.searchindex.documents import by_text

# Bytes a posting and a term take while gathered, the arrays of each term at
# the commit included (a posting's term, frequency, and then its document and
# frequency again: 16 bytes, and room for the arrays' growth).
POSTING_BYTES = 32
TERM_BYTES = 600  # the term's bytes, its entries in the mappings below, its tuple and two arrays


class _Terms(dict[bytes, int]):
    """A field's terms, each numbered as first seen (``every`` holds them by number)."""

    def __init__(self, name: str, every: list[tuple[str, bytes]]):
        super().__init__()
        self.name = name
        self.every = every

    def __missing__(self, term: bytes) -> int:
        number = self[term] = len(self.every)
        self.every.append((self.name, term))
        return number


class _Spellings(dict[str, int]):
    """A counted field's words as spelled, each the number of its term (its stem)."""

    def __init__(self, terms: _Terms, normal: Callable[[str], str]):
        super().__init__()
        self.terms = terms
        self.normal = normal

    def __missing__(self, spelling: str) -> int:
        number = self[spelling] = self.terms[self.normal(spelling).encode()]
        return number


class _Counted:
    """A counted field's postings of a text: its terms' numbers, their
    frequencies and its length, kept for a text seen again (``by_text``: a
    quarter of the benchmark's texts repeat one of the last thousand)."""

    def __init__(self, spellings: _Spellings, count: Callable[[str], dict[str, int]]):
        self.spellings = spellings
        self.count = count
        self.postings = by_text(self._postings)

    def _postings(self, text: str) -> tuple[tuple[int, ...], tuple[int, ...], int]:
        """Each distinct spelling's term found once, as its words are counted
        (a text repeats its words), then the counts of spellings of one term
        (``parse``, ``parses``) added up."""
        counts = self.count(text)
        numbers = tuple(map(self.spellings.__getitem__, counts))
        frequencies = tuple(counts.values())
        if len(set(numbers)) < len(numbers):
            merged: dict[int, int] = {}
            for number, frequency in zip(numbers, frequencies, strict=True):
                merged[number] = merged.get(number, 0) + frequency
            numbers, frequencies = tuple(merged), tuple(merged.values())
        return numbers, frequencies, sum(frequencies)


class Gathered:
    """Postings as numbers: the term of each, its frequency, and each document's
    number and count of postings, in the order the documents were added."""

    def __init__(self) -> None:
        self.every: list[tuple[str, bytes]] = []  # (field, term) by number
        self.fields: dict[str, _Terms] = {}
        self.counted_fields: dict[str, _Counted] = {}
        self.terms = array("i")
        self.frequencies = array("i")
        self.documents = array("i")
        self.ends = array("q")  # each document's postings end here in ``terms``

    def field(self, name: str) -> _Terms:
        terms = self.fields.get(name)
        if terms is None:
            terms = self.fields[name] = _Terms(name, self.every)
        return terms

    def counted(
        self, name: str, count: Callable[[str], dict[str, int]], normal: Callable[[str], str], text: str
    ) -> int:
        """A counted field's postings of a document's text (``count``: how often
        each word occurs in it as spelled, ``normal``: a spelling's term); the
        field's length, its count of words."""
        counted = self.counted_fields.get(name)
        if counted is None:
            counted = self.counted_fields[name] = _Counted(_Spellings(self.field(name), normal), count)
        numbers, frequencies, length = counted.postings(text)
        self.terms.extend(numbers)
        self.frequencies.extend(frequencies)
        return length

    def once(self, numbers: list[int]) -> None:
        """Terms of a document once each (an id's, a time's)."""
        self.terms.extend(numbers)
        self.frequencies.extend([1] * len(numbers))

    def finish(self, docnum: int) -> None:
        """The postings added since the last document are ``docnum``'s."""
        self.documents.append(docnum)
        self.ends.append(len(self.terms))

    def cancel(self) -> None:
        """The postings added since the last document are dropped (its terms
        stay numbered: a term of no posting is not handed over)."""
        end = self.ends[-1] if self.ends else 0
        del self.terms[end:]
        del self.frequencies[end:]

    def size(self) -> int:
        """Bytes held, and to be held by the sort at the commit (an estimate)."""
        return len(self.terms) * POSTING_BYTES + len(self.every) * TERM_BYTES

    def postings(self) -> Iterator[tuple[str, bytes, array[int], array[int]]]:
        """Each term's field, bytes, documents (ascending) and frequencies, in
        Whoosh's order (by field, then term)."""
        every, terms, frequencies = self.every, self.terms, self.frequencies
        documents: list[array[int]] = [array("I") for _ in every]  # the type of Whoosh's block of ids
        counts: list[array[int]] = [array("i") for _ in every]
        append, start = array.append, 0
        for docnum, end in zip(self.documents, self.ends, strict=True):  # ``any`` of ``None``s: every append
            numbers = terms[start:end]
            any(map(append, map(documents.__getitem__, numbers), repeat(docnum)))
            any(map(append, map(counts.__getitem__, numbers), frequencies[start:end]))
            start = end
        for number in sorted(range(len(every)), key=every.__getitem__):
            if documents[number]:  # a term whose only document was cancelled has none
                name, term = every[number]
                yield name, term, documents[number], counts[number]
