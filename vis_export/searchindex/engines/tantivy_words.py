"""The ``words`` field's terms made before tantivy sees the text: each word
stemmed once per index writer, not once per occurrence.

tantivy's own analysis (simple tokenizer, words of 40 bytes or more left out,
lowercase, Snowball English stems) stemmed every word of every text: 2 of the
engine's 4.5 CPU-seconds on the benchmark's 96k blocks, where the vocabulary
is a few thousand words and the words 7 million. Here the text is split into
tantivy's words (for ASCII text, its pieces between white space and their
words, each piece once; otherwise by tantivy's simple tokenizer itself), each distinct word is stemmed once by
tantivy's own analyzer and kept, and the field gets the stems space-separated
(``GAP`` where a word too long to index was: tantivy drops it there too and
leaves its position empty, so phrases and field lengths stay what they were).
The field's tokenizer then only splits at the spaces and drops the gaps
(``INDEXED``): the same terms at the same positions as ``STEMMING`` gives the
text (a property test checks), so an index written either way is one index.
"""

from __future__ import annotations

from typing import Any

import tantivy

from vis_export.searchindex.cjk import without_runs
from vis_export.searchindex.documents import _ASCII_WORDS, by_text

_LONG = 40  # bytes: tantivy's analysis drops a word this long or longer (``remove_long``)
# Longer than any stem of a word shorter than ``_LONG`` (lowercase grows a
# word's UTF-8 by half at most: ``İ``, 2 bytes, is ``i̇``, 3), so dropped.
_GAP_LENGTH = 2 * _LONG
GAP = "_" * _GAP_LENGTH
_CACHED = 1 << 18  # distinct words kept; more and the cache starts again


def stemming() -> Any:
    """tantivy's analysis of a text into the ``words`` field's terms; queries are analysed by it too."""
    builder, tokenizer, filters = tantivy.TextAnalyzerBuilder, tantivy.Tokenizer, tantivy.Filter
    return (
        builder(tokenizer.simple())
        .filter(filters.remove_long(_LONG))
        .filter(filters.lowercase())
        .filter(filters.stemmer("english"))
        .build()
    )


def indexed() -> Any:
    """The ``words`` field's tokenizer, given ``Stems``' text: its words, the gaps left out."""
    builder, tokenizer, filters = tantivy.TextAnalyzerBuilder, tantivy.Tokenizer, tantivy.Filter
    return builder(tokenizer.whitespace()).filter(filters.remove_long(_GAP_LENGTH)).build()


class Stems(dict[str, str]):
    """A word's stem (``GAP`` for a word too long to index), stemmed by tantivy when first seen."""

    def __init__(self) -> None:
        super().__init__()
        self.stemming = stemming()
        self.words = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).build()
        self.pieces = _Pieces(self)
        self.text = by_text(self._text)

    def __missing__(self, word: str) -> str:
        if len(self) >= _CACHED:
            self.clear()
        stem: str = GAP if len(word.encode("utf-8")) >= _LONG else self.stemming.analyze(word)[0]
        self[word] = stem
        return stem

    def _text(self, text: str) -> str:
        """``text``'s terms for ``indexed``. An ASCII text goes by the pieces
        between its white space (which no word holds), each piece's stems
        made once and kept: texts repeat pieces (``parse_config(path)``) as
        they repeat words, and a piece is looked up faster than its words.
        Others go as tantivy splits them, in their own case (the byte length
        it measures)."""
        if text.isascii():
            return " ".join(map(self.pieces.__getitem__, text.split()))
        return " ".join(map(self.__getitem__, self.words.analyze(without_runs(text))))


class _Pieces(dict[str, str]):
    """An ASCII piece of text's stems, space separated ("" for a piece without
    words): its words lowered (the same stem, and no word changes its length)."""

    def __init__(self, stems: Stems) -> None:
        super().__init__()
        self.stems = stems

    def __missing__(self, piece: str) -> str:
        if len(self) >= _CACHED:
            self.clear()
        stems = " ".join(map(self.stems.__getitem__, piece.translate(_ASCII_WORDS).split()))
        self[piece] = stems
        return stems
