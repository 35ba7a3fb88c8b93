"""Whoosh's top hits for a query, scored a posting block at a time.

Whoosh's collector walks its matcher tree one document at a time, in Python:
a step, a skip and a score per match through every level of the tree (a query
of two common words over 19k blocks: 40-50 ms, nearly all of it that walk).
The same tree, built by Whoosh for the same query, is evaluated here whole:
each leaf's postings read a block at a time, scored by the same formula on
the same numbers, and the scores added in the order Whoosh adds them (``a``
then ``b`` at each node), so every score is the same float. The top hits are
Whoosh's too: highest score first, the lower document number of equals (its
collector keeps a document only when it beats the last kept one).

A tree holding a matcher this module does not know (a numeric range's)
gives ``None``: Whoosh searches it itself.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Callable
from itertools import accumulate, islice, repeat
from typing import Any

from whoosh.codec.whoosh3 import W3LeafMatcher
from whoosh.matching.binary import IntersectionMatcher, UnionMatcher
from whoosh.matching.combo import ArrayUnionMatcher
from whoosh.matching.mcore import ListMatcher, NullMatcherClass
from whoosh.matching.wrappers import FilterMatcher
from whoosh.scoring import BM25FScorer, WeightScorer

Scores = dict[int, float]


Lengths = Callable[[Any, str], list[int]]


def top_hits(searcher: Any, query: Any, limit: int, lengths: Lengths) -> list[tuple[float, int]] | None:
    """``(score, document number)`` of the best ``limit`` matches of ``query``,
    as ``searcher.search(query, limit=limit)`` finds them, or ``None`` where its
    tree holds a matcher not known here. ``lengths(searcher, field)``: the
    field's length in each document of a segment's searcher, as its scorer
    reads them."""
    context = searcher.context()
    found: Scores = {}
    for subsearcher, offset in searcher.leaf_searchers():
        scores = _scores(query.matcher(subsearcher, context), subsearcher, lengths)
        if scores is None:
            return None
        found.update(((offset + docnum, score) for docnum, score in scores.items()) if offset else scores)
    if len(found) > limit:  # the scores that can be among the best first (no key to call per match)
        least = heapq.nlargest(limit, found.values())[-1]
        found = {docnum: score for docnum, score in found.items() if score >= least}
    return sorted(((score, docnum) for docnum, score in found.items()), key=lambda hit: (-hit[0], hit[1]))[:limit]


def _scores(matcher: Any, searcher: Any, lengths: Lengths) -> Scores | None:
    kind = type(matcher)
    if kind is W3LeafMatcher or kind is ListMatcher:
        return _leaf(matcher, searcher, lengths)
    if kind is NullMatcherClass:
        return {}
    if kind is FilterMatcher and matcher.boost == 1.0:  # documents deleted, or kept by a filter
        child = _scores(matcher.child, searcher, lengths)
        if child is None:
            return None
        ids, exclude = matcher._ids, matcher._exclude
        return {docnum: score for docnum, score in child.items() if (docnum in ids) != exclude}
    if kind is IntersectionMatcher or kind is UnionMatcher:
        a, b = _scores(matcher.a, searcher, lengths), _scores(matcher.b, searcher, lengths)
        if a is None or b is None:
            return None
        if kind is IntersectionMatcher:
            return {docnum: score + b[docnum] for docnum, score in a.items() if docnum in b}
        union = dict(b)
        for docnum, score in a.items():
            union[docnum] = score + b[docnum] if docnum in b else score
        return union
    if kind is ArrayUnionMatcher and matcher._scored and matcher._boost == 1.0:  # a union of many, or in a small index
        added: Scores = {}
        for sub in matcher._submatchers:  # each one's scores added in turn to the document's, from 0
            scores = _scores(sub, searcher, lengths)
            if scores is None:
                return None
            for docnum, score in scores.items():
                added[docnum] = added[docnum] + score if docnum in added else score
        return added
    return None


def _f32(weight: float) -> float:
    """``weight`` as a block's weights hold it (single precision)."""
    return array("f", [weight])[0]


def _leaf(matcher: Any, searcher: Any, lengths: Lengths) -> Scores | None:
    """A term's postings with their scores: ``BM25FScorer._score`` (Whoosh's
    ``bm25``, the same expression) or, for a field that is not scored, the weight."""
    ids: list[int] = []
    weights: list[float] = []
    matcher.reset()  # at its first posting (a union of many has read some)
    if type(matcher) is ListMatcher:  # a term of one document, its posting kept with the term
        while matcher.is_active():
            ids.append(matcher.id())
            weights.append(matcher.weight())
            matcher.next()
    while matcher.is_active():  # each block read whole, as ``_read_ids`` and ``_read_weights`` read it
        if matcher._data is None:
            matcher._read_data()
        start, count = matcher._i, matcher._blocklength
        ids += matcher._ids[start:] if matcher._ids is not None else islice(accumulate(matcher._data[0]), start, None)
        block_weights = matcher._data[1]
        if block_weights is None or isinstance(block_weights, float):
            weights += repeat(_f32(1.0 if block_weights is None else block_weights), count - start)
        else:
            weights += block_weights[start:]
        matcher._next_block()
    scorer = matcher._scorer if type(matcher) is ListMatcher else matcher.scorer
    if scorer is None or type(scorer) is WeightScorer:  # the weight is the score
        return dict(zip(ids, weights, strict=True))
    if not isinstance(scorer, BM25FScorer):
        return None
    norms = _norms(searcher, matcher._term[0], scorer, lengths)
    idf, K1 = scorer.idf, scorer.K1  # noqa: N806 (Whoosh's names)
    return {docnum: idf * ((tf * (K1 + 1)) / (tf + norms[docnum])) for docnum, tf in zip(ids, weights, strict=True)}


def _norms(searcher: Any, field: str, scorer: BM25FScorer, lengths: Lengths) -> list[float]:
    """``K1 * ((1 - B) + B * fl / avgfl)`` of ``bm25`` for each document's
    length ``fl`` of the field: the part of a score that is the document's,
    made once per searcher (kept with it, as its lengths are)."""
    kept = vars(searcher).setdefault("vis_norms", {})
    key = (field, scorer.K1, scorer.B, scorer.avgfl)
    if key not in kept:
        K1, B, avgfl = scorer.K1, scorer.B, scorer.avgfl  # noqa: N806
        # None: a deleted document's (its postings are filtered out before they are scored)
        kept[key] = [0.0 if fl is None else K1 * ((1 - B) + B * fl / avgfl) for fl in lengths(searcher, field)]
    norms: list[float] = kept[key]
    return norms
