"""Scripts written without spaces between words (Chinese, Japanese, Korean),
indexed as search engines index them: overlapping bigrams.

Word analysis takes a word to be a run of letters between spaces or
punctuation, which in these scripts is a whole sentence (``日本語の会話``): a
query for one of its words (``日本語``) never matched. Lucene's CJK analyzer
(``CJKBigramFilter``) instead cuts each run of Han, Hiragana, Katakana and
Hangul into its overlapping pairs of characters (``日本``, ``本語``, ``語の``,
…), in the text and in the query alike, so a query's run matches wherever the
text holds its pairs. The same is done here, once for every engine: the index
holds each run's bigrams and its single characters among the code-aware terms
(``documents.code_terms``), word analysis leaves these scripts out
(``WORD_PATTERN``), and a query's run asks for its bigrams, or for the
character itself when it stands alone (``query_grams``), so a one-character
query finds every text holding that character.
"""

from __future__ import annotations

import re
from functools import cache

# Han (ideographs, radicals, iteration marks and numerals), Hiragana, Katakana
# (full and half width, the prolonged sound mark, not the middle dot that
# separates words) and Hangul (syllables and jamo): the scripts Lucene's
# StandardTokenizer marks for CJKBigramFilter.
_RANGES = (
    (0x1100, 0x11FF),
    (0x2E80, 0x2FDF),
    (0x3005, 0x3007),
    (0x3021, 0x3029),
    (0x3038, 0x303C),
    (0x3041, 0x3096),
    (0x3099, 0x309A),
    (0x309D, 0x309F),
    (0x30A1, 0x30FA),
    (0x30FC, 0x30FF),
    (0x3131, 0x318E),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7FF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0xFFA0, 0xFFDC),
    (0x1B000, 0x1B16F),
    (0x20000, 0x323AF),
)


def _escape(code: int) -> str:
    """``\\uXXXX`` or ``\\UXXXXXXXX`` in a pattern: no combining mark stands bare in it."""
    return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"


CJK_CHARACTERS = "".join(f"{_escape(first)}-{_escape(last)}" for first, last in _RANGES)
# A word as every engine's word analysis finds it: letters and digits (an
# underscore splits), these scripts left to their bigrams (Whoosh, and
# PostgreSQL's words; tantivy's tokenizer is given ``without_runs``).
WORD_PATTERN = f"[^\\W_{CJK_CHARACTERS}]+"


@cache
def _run() -> re.Pattern[str]:
    """Compiled on first use: the class of every range takes milliseconds,
    which a command that analyses no text (a no-op rerun) does not pay."""
    return re.compile(f"[{CJK_CHARACTERS}]+")


def runs(text: str) -> list[str]:
    """The runs of these scripts in ``text``."""
    return _run().findall(text)


def without_runs(text: str) -> str:
    """``text`` with each run of these scripts made a space, for a tokenizer
    that splits words at anything but a letter or digit (tantivy's simple one,
    twice as fast as its regular expression one); most texts are ASCII, and
    are given as they are."""
    return text if text.isascii() else _run().sub(" ", text)


def is_run(word: str) -> bool:
    return _run().fullmatch(word) is not None


def index_grams(text: str) -> set[str]:
    """What the index holds of ``text``'s runs: every character, and every pair
    of neighbours within a run."""
    grams: set[str] = set()
    for run in runs(text):
        grams.update(run)
        grams.update(run[i : i + 2] for i in range(len(run) - 1))
    return grams


def query_grams(run: str) -> list[str]:
    """What a query's run asks for, in order: its bigrams; a lone character itself."""
    if len(run) < 2:
        return [run] if run else []
    return list(dict.fromkeys(run[i : i + 2] for i in range(len(run) - 1)))
