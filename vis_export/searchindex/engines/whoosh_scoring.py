"""Whoosh's top hits for a query, scored a posting block at a time.

Whoosh's collector walks its matcher tree one document at a time, in Python:
a step, a skip and a score per match through every level of the tree (a query
of two common words over 19k blocks: 40-50 ms, nearly all of it that walk).
The same tree, built by Whoosh for the same query, is evaluated here whole:
each leaf's postings read a block at a time, scored by the same formula on
the same numbers (NumPy's double arithmetic is Python's, an operation at a
time), and the scores added as Whoosh adds them at each node, so every score
is the same float. The top hits are Whoosh's ranking of every match: highest
score first, the lower document number of equals (its own collector skips
documents by bounds that are not, and can miss a better hit).

A tree holding a matcher this module does not know (a numeric range's)
gives ``None``: Whoosh searches it itself.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray
from whoosh.codec.whoosh3 import W3LeafMatcher
from whoosh.matching.binary import IntersectionMatcher, UnionMatcher
from whoosh.matching.combo import ArrayUnionMatcher
from whoosh.matching.mcore import ListMatcher, NullMatcherClass
from whoosh.matching.wrappers import FilterMatcher
from whoosh.scoring import BM25FScorer, WeightScorer

# A matcher's documents, ascending, and the score of each.
Scores = tuple[NDArray[np.int64], NDArray[np.float64]]
Lengths = Callable[[Any, str], list[int]]
_NONE: Scores = (np.zeros(0, np.int64), np.zeros(0, np.float64))


def top_hits(searcher: Any, query: Any, limit: int, lengths: Lengths) -> list[tuple[float, int]] | None:
    """``(score, document number)`` of the best ``limit`` matches of ``query``
    by Whoosh's scores, or ``None`` where its tree holds a matcher not known
    here. ``lengths(searcher, field)``: the field's length in each document of
    a segment's searcher, as its scorer reads them."""
    context = searcher.context()
    ids, scores = [], []
    for subsearcher, offset in searcher.leaf_searchers():
        found = _scores(query.matcher(subsearcher, context), subsearcher, lengths)
        if found is None:
            return None
        ids.append(found[0] + offset)
        scores.append(found[1])
    every, scored = np.concatenate(ids), np.concatenate(scores)
    best = np.lexsort((every, -scored))[:limit]
    return [(float(score), int(docnum)) for score, docnum in zip(scored[best], every[best], strict=True)]


def _scores(matcher: Any, searcher: Any, lengths: Lengths) -> Scores | None:
    kind = type(matcher)
    if kind is W3LeafMatcher or kind is ListMatcher:
        return _leaf(matcher, searcher, lengths)
    if kind is NullMatcherClass:
        return _NONE
    if kind is FilterMatcher and matcher.boost == 1.0:  # documents deleted, or kept by a filter
        child = _scores(matcher.child, searcher, lengths)
        if child is None:
            return None
        kept = np.isin(child[0], np.fromiter(matcher._ids, np.int64, len(matcher._ids))) != matcher._exclude
        return child[0][kept], child[1][kept]
    if kind is IntersectionMatcher or kind is UnionMatcher:
        a, b = _scores(matcher.a, searcher, lengths), _scores(matcher.b, searcher, lengths)
        if a is None or b is None:
            return None
        if kind is IntersectionMatcher:  # a.score() + b.score()
            common, in_a, in_b = np.intersect1d(a[0], b[0], assume_unique=True, return_indices=True)
            return common, a[1][in_a] + b[1][in_b]
        return _added([a, b])  # a's, b's, or a.score() + b.score()
    if kind is ArrayUnionMatcher and matcher._scored and matcher._boost == 1.0:  # a union of many, or in a small index
        subs = [_scores(sub, searcher, lengths) for sub in matcher._submatchers]
        return None if any(sub is None for sub in subs) else _added(subs)  # type: ignore[arg-type]
    return None


def _added(parts: list[Scores]) -> Scores:
    """Each document's scores added in turn from 0, as Whoosh's unions add
    them: where a part lacks the document it adds 0.0, which changes no
    score (every score is positive)."""
    ids = _union([part[0] for part in parts])
    total = np.zeros(len(ids), np.float64)
    for part_ids, part_scores in parts:
        found = np.zeros(len(ids), np.float64)
        found[np.searchsorted(ids, part_ids)] = part_scores
        total = total + found
    return ids, total


def _union(ids: list[NDArray[np.int64]]) -> NDArray[np.int64]:
    """The documents of any of ``ids``, ascending, each once: ``np.union1d``'s,
    by a sort and a comparison of neighbours (NumPy 2's ``unique`` hashes them
    first: twenty times as long for a common word's ten thousand documents)."""
    every = np.sort(np.concatenate(ids))
    first = np.ones(len(every), bool)
    np.not_equal(every[1:], every[:-1], out=first[1:])
    return every[first]


def _f32(weight: float) -> float:
    """``weight`` as a block's weights hold it (single precision)."""
    return array("f", [weight])[0]


def _block_ids(ids: Any, deltas: Any, start: int) -> NDArray[np.int64]:
    """A block's documents from its ``start``: those the matcher decoded, or
    its differences added up (``delta_decode``), made arrays by C loops
    (``fromiter`` of a known count: half the time of a list and ``np.array``)."""
    if ids is not None:
        return np.fromiter(ids[start:], np.int64, len(ids) - start)
    return np.cumsum(np.fromiter(deltas, np.int64, len(deltas)))[start:]


def _floats(weights: Any) -> NDArray[np.float64]:
    return np.fromiter(weights, np.float64, len(weights))


def _leaf(matcher: Any, searcher: Any, lengths: Lengths) -> Scores | None:
    """A term's postings with their scores: ``BM25FScorer._score`` (Whoosh's
    ``bm25``, the same operations in the same order) or, for a field that is
    not scored, the weight."""
    id_parts: list[NDArray[np.int64]] = [_NONE[0]]
    weight_parts: list[NDArray[np.float64]] = [_NONE[1]]
    matcher.reset()  # at its first posting (a union of many has read some)
    if type(matcher) is ListMatcher:  # every document (a search of no words), or a term's postings kept with it
        ids: list[int] = []
        weights: list[float] = []
        while matcher.is_active():
            ids.append(matcher.id())
            weights.append(matcher.weight())
            matcher.next()
        id_parts.append(np.array(ids, np.int64))
        weight_parts.append(np.array(weights, np.float64))
    while matcher.is_active():  # each block read whole, as ``_read_ids`` and ``_read_weights`` read it
        if matcher._data is None:
            matcher._read_data()
        start, count = matcher._i, matcher._blocklength
        id_parts.append(_block_ids(matcher._ids, matcher._data[0], start))
        block_weights = matcher._data[1]
        if block_weights is None or isinstance(block_weights, float):
            weight_parts.append(np.full(count - start, _f32(1.0 if block_weights is None else block_weights)))
        else:
            weight_parts.append(_floats(block_weights[start:]))
        matcher._next_block()
    docnums, tf = np.concatenate(id_parts), np.concatenate(weight_parts)
    scorer = matcher._scorer if type(matcher) is ListMatcher else matcher.scorer
    if scorer is None or type(scorer) is WeightScorer:  # the weight is the score
        return docnums, tf
    if not isinstance(scorer, BM25FScorer):
        return None
    norms = _norms(searcher, matcher._term[0], scorer, lengths)
    idf, K1 = scorer.idf, scorer.K1  # noqa: N806 (Whoosh's names)
    return docnums, idf * ((tf * (K1 + 1)) / (tf + norms[docnums]))


def _norms(searcher: Any, field: str, scorer: BM25FScorer, lengths: Lengths) -> NDArray[np.float64]:
    """``K1 * ((1 - B) + B * fl / avgfl)`` of ``bm25`` for each document's
    length ``fl`` of the field: the part of a score that is the document's,
    made once per searcher (kept with it, as its lengths are)."""
    kept = vars(searcher).setdefault("vis_norms", {})
    key = (field, scorer.K1, scorer.B, scorer.avgfl)
    if key not in kept:
        K1, B, avgfl = scorer.K1, scorer.B, scorer.avgfl  # noqa: N806
        # None: a deleted document's (its postings are filtered out before they are scored)
        made = [0.0 if fl is None else K1 * ((1 - B) + B * fl / avgfl) for fl in lengths(searcher, field)]
        kept[key] = np.array(made, np.float64)
    norms: NDArray[np.float64] = kept[key]
    return norms
