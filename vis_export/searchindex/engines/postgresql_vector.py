"""A block's tsvector made by the job, from the lexeme the server gave each
distinct word once.

Since the words keep their positions (schema 4), the server's ``to_tsvector``
over every word of every block was most of its work in a job: its parser
reads every character of every word, and the stemmer stems each again (2.1 of
3.6 CPU-s at 19k blocks), while texts repeat their words (a block of 115 words
has 23 distinct ones; 2M words of the benchmark, 3k). Instead the writer asks
the server once for the lexeme of each word it has not met (``to_tsvector`` of
the word alone: a word is never parsed together with its neighbours, as no
token the parser makes spans a space) and keeps it; a block whose words are
each one lexeme at one position, as nearly all are, is given as a tsvector
literal, each distinct word's lexeme with the word's positions, which the
server reads at a quarter of the cost. The value is the one ``vis_words``
makes of the same words (``tests/test_postgres_vector.py`` compares them):
hits, ranks and phrases are unchanged. A block holding a word the parser cuts
in two or drops, and a block too large for positions, are given as before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

# Each word's one lexeme, or NULL where the word alone is not one lexeme at position 1.
LEXEMES = (
    "SELECT w, CASE WHEN length(v) = 1 AND (SELECT positions FROM unnest(v)) = '{1}' "
    "THEN (SELECT lexeme FROM unnest(v)) END FROM unnest(%s::text[]) AS w, to_tsvector('vis_english', w) AS v"
)
# What a tsvector counts: positions up to 16,383, and 255 of one lexeme (see ``vis_words``).
LAST_POSITION, MOST_POSITIONS = 16_383, 255
_POSITIONS = [str(n) for n in range(1, LAST_POSITION + 1)]
_MOST_KNOWN = 1 << 20  # words kept at most: a job over millions of distinct words (hashes) starts again


class Positions(NamedTuple):
    """A block's words in order; its distinct words, sorted; and each one's
    positions as the literal writes them (``1,5,9``; none past what a tsvector
    counts, where none are kept)."""

    every: list[str]
    distinct: list[str]
    at: list[str]


def positions(words: list[str], distinct: set[str]) -> Positions:
    """Each distinct word's positions (``distinct``: the words, each once): a
    list per word, in the order of the sorted words, filled by one pass over
    the words (half the time of sorting the positions by word and grouping
    them, on the job's critical path)."""
    ordered = sorted(distinct)
    if len(words) >= LAST_POSITION:  # beyond what a tsvector counts: no positions are kept
        return Positions(words, ordered, [])
    at: dict[str, list[str]] = {word: [] for word in ordered}
    for word, position in zip(words, _POSITIONS, strict=False):  # words fewer than positions
        at[word].append(position)
    return Positions(words, ordered, list(map(",".join, at.values())))


class Lexemes:
    """The lexemes the server gave, quoted for a tsvector literal and followed
    by its colon (``None``: a word that is not one lexeme at one position).
    Used by the writer's thread only."""

    def __init__(self) -> None:
        self.known: dict[str, str | None] = {}

    def unknown(self, words: Iterable[str]) -> list[str]:
        return [word for word in words if word not in self.known]

    def learn(self, answers: Iterable[tuple[str, str | None]]) -> None:
        if len(self.known) > _MOST_KNOWN:
            self.known.clear()
        for word, lexeme in answers:
            self.known[word] = None if lexeme is None else "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "':"

    def vector(self, block: Positions, checked: bool) -> tuple[str, bool] | None:
        """The block's tsvector literal, and whether it keeps positions (a
        ``checked`` block only where no lexeme has more than a tsvector keeps
        and no word stands past the last position it counts), or ``None``:
        some word is not one lexeme at one position, or not learnt."""
        lexemes = list(map(self.known.get, block.distinct))
        if None in lexemes:
            return None
        if checked and not _within(lexemes, block):  # type: ignore[arg-type]
            return " ".join([lexeme[:-1] for lexeme in lexemes]), False  # type: ignore[index]
        return " ".join(map(str.__add__, lexemes, block.at)), True  # type: ignore[arg-type]


def _within(lexemes: list[str], block: Positions) -> bool:
    """Whether ``to_tsvector`` keeps every position of the block: none past
    the last it counts, none of a lexeme beyond the most it keeps (two words
    may share a lexeme: ``run``, ``runs``)."""
    if len(block.every) >= LAST_POSITION:
        return False
    counts: Counter[str] = Counter()
    for lexeme, at in zip(lexemes, block.at, strict=True):
        counts[lexeme] += at.count(",") + 1
    return max(counts.values(), default=0) < MOST_POSITIONS
