"""A new Whoosh segment's postings gathered per term as its documents are added.

Whoosh pools a tuple per posting (field, term, document, weight, value) and
sorts them all at the commit: making the tuples, sorting them and walking them
back into terms was half of an index job's Whoosh time. Here each term is
numbered as first seen, and a document adds the numbers of its terms and their
frequencies to two arrays: a counted field's words become numbers by one
``Counter`` over a mapping of their spellings (each distinct spelling stemmed
and numbered once), in C. At the commit the postings are put in Whoosh's order
(field, term, document) by one stable sort of their terms' ranks, and handed
over a term at a time.

Memory: a posting takes 8 bytes here (and about 50 more during the sort at
the commit) against Whoosh's estimate of 170 for its tuple; past its share
of the writer's ``limitmb`` the writer hands what is gathered to Whoosh's pool,
which sorts runs on disk as before (``whoosh_engine._Writer``).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterator

import numpy as np

# Bytes a posting and a term take while gathered, the sort at the commit
# included (its keys, order, documents and frequencies: 8 bytes each a posting).
POSTING_BYTES = 64
TERM_BYTES = 400  # the term's bytes, its entries in the mappings below and its tuple


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


class Gathered:
    """Postings as numbers: the term of each, its frequency, and each document's
    number and count of postings, in the order the documents were added."""

    def __init__(self) -> None:
        self.every: list[tuple[str, bytes]] = []  # (field, term) by number
        self.fields: dict[str, _Terms] = {}
        self.spellings: dict[str, _Spellings] = {}
        self.terms = array("i")
        self.frequencies = array("i")
        self.documents = array("i")
        self.ends = array("q")  # each document's postings end here in ``terms``

    def field(self, name: str) -> _Terms:
        terms = self.fields.get(name)
        if terms is None:
            terms = self.fields[name] = _Terms(name, self.every)
        return terms

    def counted(self, name: str, normal: Callable[[str], str], words: list[str]) -> int:
        """A counted field's postings of a document's words (``normal``: a
        spelling's term); the field's length, its count of words."""
        spellings = self.spellings.get(name)
        if spellings is None:
            spellings = self.spellings[name] = _Spellings(self.field(name), normal)
        counts = Counter(map(spellings.__getitem__, words))
        self.terms.extend(counts.keys())
        self.frequencies.extend(counts.values())
        return len(words)

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

    def postings(self) -> Iterator[tuple[str, bytes, list[int], list[int]]]:
        """Each term's field, bytes, documents (ascending) and frequencies, in
        Whoosh's order (by field, then term)."""
        every = self.every
        if not every or not self.terms:
            return
        order = sorted(range(len(every)), key=every.__getitem__)
        rank = np.empty(len(every), np.int64)
        rank[order] = np.arange(len(every))
        keys = rank[np.frombuffer(self.terms, np.int32)]
        ranked = np.argsort(keys, kind="stable")  # each term's postings in the order added: by document
        ends = np.frombuffer(self.ends, np.int64)
        counts = ends - np.concatenate((np.zeros(1, np.int64), ends[:-1]))  # each document's postings
        documents = np.repeat(np.frombuffer(self.documents, np.int32), counts)[ranked]
        frequencies = np.frombuffer(self.frequencies, np.int32)[ranked]
        bounds = np.cumsum(np.bincount(keys, minlength=len(every))).tolist()
        start = 0
        for number, end in zip(order, bounds, strict=True):
            if end > start:
                name, term = every[number]
                yield name, term, documents[start:end].tolist(), frequencies[start:end].tolist()
            start = end
