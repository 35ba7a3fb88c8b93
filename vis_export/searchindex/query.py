"""Queries: free text with quoted phrases, turned into one engine-neutral form,
and snippets with the matches marked (the same for every engine).

A snippet is made for each hit only, at query time: prose shows the words a
reader sees, on one line; code, tool output and the like keep their lines.
"""

from __future__ import annotations

import html
import re
import string
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice

from vis_export.formats.prose_words import visible_words
from vis_export.searchindex.cjk import CJK_CHARACTERS, is_run, query_grams, runs
from vis_export.searchindex.documents import _IDENTIFIER, _WORDS_OF_IDENTIFIER, LONGEST_WORD

_PHRASE_OR_WORD = re.compile(r'"([^"]*)"|(\S+)')
# A query's words: runs of word characters, a run of ``cjk`` scripts a word of
# its own (``Python設定`` is ``Python`` and ``設定``, as the index has them).
_WORD = re.compile(f"[{CJK_CHARACTERS}]+|(?:(?![{CJK_CHARACTERS}])\\w)+")
# Where a word of the query may start matching: the start of a word, or of an
# identifier's part (config in parse_config or in parseConfig), never inside one
# (a in "ate", form in "platform"). Case-sensitive inside an IGNORECASE pattern.
_WORD_START = "(?-i:(?<![A-Za-z0-9])|(?<=[a-z])(?=[A-Z]))"
# The same, checked once the word's first character has been read.
_WORD_STARTED = "(?-i:(?<![A-Za-z0-9][\\s\\S])|(?<=[a-z][A-Z]))"
# A letter or digit of a word (not of a ``cjk`` run, where a word ends), and the
# rest of a word from a stem on.
_LETTER = f"[^\\W_{CJK_CHARACTERS}]"
_WORD_REST = f"(?:(?![{CJK_CHARACTERS}])\\w)*"
# The same two on ASCII text (most texts: every character of theirs is ASCII).
# A pattern holding the classes above takes 3-7 ms to compile (their ranges
# case-folded one character at a time), paid by every query not searched
# before; one of these takes a twentieth of that.
_ASCII_LETTER = "[A-Za-z0-9]"
_ASCII_WORD_REST = "[A-Za-z0-9_]*"
_BLANK_LINES = re.compile(r"(?:[ \t]*\n)+")
_LINE_BREAK_NEXT = re.compile(r"[ \t]*\n")
_HTML_SPECIAL = re.compile("[&<>\"']")  # what ``html.escape`` replaces
SNIPPET_WIDTH = 160  # characters
SNIPPET_LINES = 6  # lines, of a text whose lines matter
SNIPPET_CONTEXT = 2  # lines before the match's
SNIPPET_SCAN = 10_000  # matches weighed to choose the one shown
# Words and phrases a query may hold: each costs the engine a clause, and a
# hostile query of many thousands takes minutes and gigabytes.
MAX_TERMS = 64


@dataclass(frozen=True)
class ParsedQuery:
    """``words`` must each match (stemmed prose or code-aware terms); ``phrases``
    must each occur exactly, as written, in the block's text."""

    words: tuple[str, ...]
    phrases: tuple[str, ...]


def parse(query: str) -> ParsedQuery:
    """Quoted phrases, and the words of the rest. A token with no word in it
    (``!=``, ``->``, ``**``, an emoji) is a phrase: no engine indexes it as a
    word, so only the exact check can find it."""
    words: list[str] = []
    phrases: list[str] = []
    for phrase, token in _PHRASE_OR_WORD.findall(query):
        if phrase.strip():
            phrases.append(phrase)
        elif token:
            found = [w for w in _WORD.findall(token) if w.strip("_")]
            words.extend(found)
            if not found:
                phrases.append(token)
    if len(words) + len(phrases) > MAX_TERMS:
        raise ValueError(
            f"the query holds {len(words) + len(phrases)} words and phrases; at most {MAX_TERMS} are searched"
        )
    return ParsedQuery(tuple(words), tuple(phrases))


def engine_words(parsed: ParsedQuery) -> list[str]:
    """The words to ask the engine for, each once: every free word (a run of
    ``cjk`` scripts as its bigrams, which the engines find among the terms), and
    words that every block containing the phrases holds. A long pasted phrase
    holds many; as many as fit narrow the candidates, and the exact check decides."""
    words: dict[str, None] = {}
    for word in parsed.words:
        words.update(dict.fromkeys(query_grams(word) if is_run(word) else (word,)))
    for phrase in parsed.phrases:
        words.update(dict.fromkeys(phrase_words(phrase)))
    return list(words)[:MAX_TERMS]


# ASCII punctuation (but "_") and white space: a boundary for every analyser.
_BOUNDARY = frozenset(string.punctuation.replace("_", "") + string.whitespace)


def phrase_words(phrase: str) -> list[str]:
    """Words every block containing ``phrase`` matches: the ASCII identifiers the
    phrase holds whole, between punctuation or spaces, and the bigrams (or lone
    characters) of its runs of ``cjk`` scripts, which the index holds of every
    run they are part of. An identifier touching the phrase's edge may be part
    of a longer one in the block (``fn(`` inside ``my_fn(``), and a letter of
    another script next to it may join it into one word."""
    return [gram for run in runs(phrase) for gram in query_grams(run)] + [
        m.group()
        for m in _IDENTIFIER.finditer(phrase)
        if m.start() > 0
        and m.end() < len(phrase)
        and m.group().strip("_")
        and len(m.group()) <= LONGEST_WORD
        and phrase[m.start() - 1] in _BOUNDARY
        and phrase[m.end()] in _BOUNDARY
    ]


_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")


def inner_runs(phrase: str) -> list[list[str]]:
    """The runs of two or more words that a block holding ``phrase`` holds
    side by side among its words (``analysed_words``), lowercase: the phrase's
    words but those at its edges (part of longer words in a block, maybe) and
    those too long to be indexed (a gap in the positions). ASCII phrases only,
    where every engine's analysis splits words alike (PostgreSQL's parser
    included); others are checked in full. The engines that index positions
    ask for these side by side (PostgreSQL's ``<->``)."""
    if not phrase.isascii():
        return []
    runs: list[list[str]] = [[]]
    for found in _ASCII_WORD.finditer(phrase):
        if found.start() > 0 and found.end() < len(phrase) and len(found.group()) <= LONGEST_WORD:
            runs[-1].append(found.group().lower())
        elif runs[-1]:
            runs.append([])
    return [run for run in runs if len(run) > 1]


@dataclass(frozen=True)
class Snippet:
    """A window on a block's text: its pieces in order, each a match or not,
    and what stands for the text left out before and after it (``…``)."""

    pieces: tuple[tuple[str, bool], ...]
    before: str = ""
    after: str = ""

    def marked(self, mark: Callable[[str], str], plain: Callable[[str], str] | None = None) -> str:
        """The snippet with each line of each match written by ``mark`` (a marker
        never spans a line break) and the rest by ``plain`` (``None``: as it is)."""
        out = [self.before]
        for piece, match in self.pieces:
            if not match:
                out.append(piece if plain is None else plain(piece))
            elif "\n" in piece:
                out.append("\n".join(mark(line) if line else line for line in piece.split("\n")))
            else:  # most matches: a word (no piece is empty)
                out.append(mark(piece))
        out.append(self.after)
        return "".join(out)

    @property
    def text(self) -> str:
        return self.marked(lambda match: f"**{match}**")

    @property
    def html(self) -> str:
        """Escaped a piece at a time, where any piece needs it: most snippets
        (prose) hold no character to escape, and escaping each of their pieces
        was a tenth of a query's snippets."""
        if _HTML_SPECIAL.search("".join(piece for piece, _ in self.pieces)) is None:
            return self.marked(lambda match: f"<mark>{match}</mark>")
        return self.marked(lambda match: f"<mark>{html.escape(match)}</mark>", html.escape)


@dataclass(frozen=True)
class SnippetMaker:
    words: tuple[str, ...]
    phrases: tuple[str, ...]

    def _pattern(self, text: str) -> re.Pattern[str] | None:
        """The pattern for ``text``: one for ASCII text, made once asked for,
        and one for the rest (see ``_ASCII_LETTER``)."""
        return _pattern_of(self, text.isascii())

    def _compile(self, letter: str, word_rest: str) -> re.Pattern[str] | None:
        """One named group per phrase and word (``_best_match`` tells them apart).

        A match's first character is read by a class of the characters a match
        can start with, outside the groups, and each way checks it (and where a
        word starts) behind it: a pattern that starts with a class is searched
        for by ``re`` in a loop of its own, a character at a time, where one
        that starts with alternatives or a look-ahead is tried at every
        position (a third of a query's snippets). On ASCII text the class holds
        the ASCII characters that match case-insensitively, so that it is
        case-sensitive: ``re`` takes no case-insensitive class for that loop."""
        groups = self._alternatives(letter, word_rest)
        if not groups:
            return None
        firsts = "".join(sorted({re.escape(first) for ways in groups for _, first, _ in ways}))
        if letter == _ASCII_LETTER:
            ascii_firsts = [c for c in map(chr, range(128)) if re.match(f"[{firsts}]", c, re.IGNORECASE)]
            if not ascii_firsts:  # no match can start in ASCII text
                return None
            lead = "[" + "".join(map(re.escape, ascii_firsts)) + "]"
        else:
            lead = f"(?i:[{firsts}])"
        grouped = "|".join(
            f"(?P<t{n}>" + "|".join(_read_first(started, first, rest) for started, first, rest in ways) + ")"
            for n, ways in enumerate(groups)
        )
        return re.compile(f"{lead}(?i:{grouped})")

    def _alternatives(self, letter: str, word_rest: str) -> list[list[tuple[bool, str, str]]]:
        """Each phrase's and word's ways to match, in order: whether the way
        starts a word or an identifier's part (``_WORD_START``), its first
        character, and the rest as a pattern (case-insensitive)."""
        groups = [[(False, p[0], re.escape(p[1:]))] for p in self.phrases]
        for word in self.words:
            parts = _WORDS_OF_IDENTIFIER.findall(word)
            if is_run(word):  # the run, else its bigrams where the text holds them apart
                options = dict.fromkeys((word, *query_grams(word)[:MAX_TERMS]))
                groups.append([(False, option[0], re.escape(option[1:])) for option in options])
            elif len(parts) > 1:  # parseConfig marks parse_config too
                rest = "[_-]?".join([re.escape(parts[0][1:]), *map(re.escape, parts[1:])])
                groups.append([(True, parts[0][0], rest)])
            elif len(word) < 4:  # too short to have a stem: the word itself
                groups.append([(True, word[0], re.escape(word[1:]) + f"(?!{letter})")])
            else:  # a stem's forms: config marks configured
                groups.append([(True, word[0], re.escape(word[1 : max(4, len(word) - 3)]) + word_rest)])
        return groups

    def _best_match(self, text: str) -> re.Match[str] | None:
        """The match a snippet shows: one of the query's word or phrase that the
        text holds fewest times (``processed batch 3999`` shows the line of
        ``3999``, not the first ``processed batch``), on the line that holds the
        most of the query's words and phrases, the first of equals. The same for
        every engine, and no question to the index: how rare a word is across
        the index says less of which line of this block a reader wants than how
        rare it is in the block. At most ``SNIPPET_SCAN`` matches are weighed."""
        pattern = self._pattern(text)
        if pattern is None:
            return None
        # No match is empty: every alternative holds a character of its word or phrase.
        if pattern.groups == 1:  # one word or phrase: every match the rarest, the first is shown
            return pattern.search(text)
        matches = list(islice(pattern.finditer(text), SNIPPET_SCAN))
        if not matches:
            return None
        groups = [m.lastgroup for m in matches]
        counts = Counter(groups)
        if len(counts) == 1:  # every match the rarest, each line holding one word: the first
            return matches[0]
        fewest = min(counts.values())
        if "\n" not in text:  # one line (prose as shown) holding them all: the first of the rarest
            return matches[[counts[group] for group in groups].index(fewest)]
        # The line of each rare match, and the matches starting on it, found by
        # bisection: walking every match to its line was most of a long block's time.
        starts = [m.start() for m in matches]
        best, most = -1, 0
        for n, group in enumerate(groups):
            if counts[group] != fewest:
                continue
            line_start = text.rfind("\n", 0, starts[n]) + 1
            line_end = text.find("\n", starts[n])
            first = bisect_left(starts, line_start, 0, n)
            last = len(starts) if line_end < 0 else bisect_right(starts, line_end, n)
            held = len(set(groups[first:last]))
            if held > most:
                best, most = n, held
        return matches[best]

    def __call__(self, text: str) -> Snippet:
        """Text whose lines matter (code, tool output): whole lines where the
        window allows, indentation kept, blank lines at either end dropped."""
        text = text.replace("\r\n", "\n").rstrip()
        blank = _BLANK_LINES.match(text)
        return self._window(text[blank.end() :] if blank else text, lines=True)

    def of_prose(self, markdown: str) -> Snippet:
        """Prose as a reader sees it (``read_cfg`` stays whole, a link shows its
        text), on one line; the Markdown itself when a phrase is only there
        (``**bold**``)."""
        words = visible_words(self._paragraphs_around_match(markdown))
        shown = words if all(p in words for p in self.phrases) else " ".join(markdown.split())
        return self._window(shown, lines=False)

    def _paragraphs_around_match(self, markdown: str) -> str:
        """The paragraphs around the match a snippet shows: a snippet shows a
        window of them, so a long prose block is not parsed whole for every hit."""
        if len(markdown) <= 4 * SNIPPET_WIDTH:
            return markdown
        match = self._best_match(markdown)
        first = match.start() if match else 0
        start = markdown.rfind("\n\n", 0, max(0, first - SNIPPET_WIDTH))
        end = markdown.find("\n\n", first + 2 * SNIPPET_WIDTH)
        return markdown[start + 1 if start >= 0 else 0 : end if end >= 0 else len(markdown)]

    def _window(self, text: str, lines: bool) -> Snippet:
        match = self._best_match(text)
        first, last = (match.start(), match.end()) if match else (0, 0)
        start = max(0, first - SNIPPET_WIDTH // 3)
        end = min(len(text), start + SNIPPET_WIDTH)
        if lines:
            start, end = _whole_lines(text, start, end, first, last)
            blank = _BLANK_LINES.match(text, start, first)
            start = blank.end() if blank else start
        end = max(start + len(text[start:end].rstrip()), min(last, start + SNIPPET_WIDTH))
        window = text[start:end]
        pieces: list[tuple[str, bool]] = []
        done = 0
        pattern = self._pattern(window)
        for found in pattern.finditer(window) if pattern else ():  # no match is empty (``_best_match``)
            at, until = found.span()
            if pieces and at == done:  # matches side by side are marked as one
                pieces[-1] = (pieces[-1][0] + window[at:until], True)
            else:
                if at > done:
                    pieces.append((window[done:at], False))
                pieces.append((window[at:until], True))
            done = until
        if done < len(window):
            pieces.append((window[done:], False))
        return Snippet(
            tuple(pieces),
            _elided(lines and start > 0 and text[start - 1] == "\n", start > 0, "…\n"),
            _elided(lines and _LINE_BREAK_NEXT.match(text, end) is not None, end < len(text), "\n…"),
        )


def _read_first(started: bool, first: str, rest: str) -> str:
    """A way to match once its first character is read: that character (and,
    for a word, where it starts: ``_WORD_START`` one character back) checked
    behind, then the rest."""
    return f"(?<={re.escape(first)})" + (_WORD_STARTED if started else "") + rest


@lru_cache(maxsize=64)
def _pattern_of(maker: SnippetMaker, ascii_only: bool) -> re.Pattern[str] | None:
    """A query's pattern, kept for its next search: building its source again
    took 13-14 µs (load average 15), the compiled pattern found in ``re``'s cache."""
    return maker._compile(_ASCII_LETTER, _ASCII_WORD_REST) if ascii_only else maker._compile(_LETTER, _WORD_REST)


def _whole_lines(text: str, start: int, end: int, first: int, last: int) -> tuple[int, int]:
    """The window ``start:end`` narrowed to whole lines around the match at
    ``first:last``: at most ``SNIPPET_CONTEXT`` lines before the match's line
    and ``SNIPPET_LINES`` in all (a snippet stays a few lines tall); a line the
    window cuts stays only where the match is on it."""
    if start > 0 and text[start - 1] != "\n":
        start = text.find("\n", start, first) + 1 or start
    breaks = []  # by ``str.find``, not a character at a time in Python
    at = text.find("\n", start, end)
    while at >= 0:
        breaks.append(at)
        at = text.find("\n", at + 1, end)
    starts, ends = [start, *(i + 1 for i in breaks)], [*breaks, end]
    matched = bisect_right(starts, first) - 1, max(bisect_left(ends, last), 0)
    kept_from = max(0, matched[0] - SNIPPET_CONTEXT)
    kept_to = min(max(matched[1], kept_from + SNIPPET_LINES - 1), len(ends) - 1)
    if kept_to == len(ends) - 1 > matched[1] and end < len(text) and text[end] != "\n":
        kept_to -= 1
    return starts[kept_from], ends[kept_to]


def _elided(at_line_break: bool, cut: bool, on_its_line: str) -> str:
    """What stands for text left out: ``…`` on its own line where the cut falls
    between lines, beside the text where it falls inside one."""
    return "" if not cut else on_its_line if at_line_break else "…"
