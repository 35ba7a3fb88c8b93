"""Queries: free text with quoted phrases, turned into one engine-neutral form,
and snippets with the matches marked (the same for every engine)."""

from __future__ import annotations

import html
import re
import string
from dataclasses import dataclass, field
from typing import Any

from vis_export.search.documents import _IDENTIFIER, _WORDS_OF_IDENTIFIER

_PHRASE_OR_WORD = re.compile(r'"([^"]*)"|(\S+)')
_WORD = re.compile(r"\w+")
SNIPPET_WIDTH = 160
# Words and phrases a query may hold: each costs the engine a clause, and a
# hostile query of many thousands takes minutes and gigabytes.
MAX_TERMS = 64


@dataclass(frozen=True)
class ParsedQuery:
    """``words`` must each match (stemmed prose or code-aware terms); ``phrases``
    must each occur exactly, as written, in the block's text."""

    words: tuple[str, ...]
    phrases: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not self.words and not self.phrases


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
        raise ValueError(f"the query holds {len(words) + len(phrases)} words and phrases; at most {MAX_TERMS} "
                         "are searched")
    return ParsedQuery(tuple(words), tuple(phrases))


def engine_words(parsed: ParsedQuery) -> list[str]:
    """The words to ask the engine for, each once: every free word, and words
    that every block containing the phrases holds. A long pasted phrase holds
    many; as many as fit narrow the candidates, and the exact check decides."""
    words = dict.fromkeys(parsed.words)
    for phrase in parsed.phrases:
        words.update(dict.fromkeys(phrase_words(phrase)))
    return list(words)[:MAX_TERMS]


# ASCII punctuation (but "_") and white space: a boundary for every analyser.
_BOUNDARY = frozenset(string.punctuation.replace("_", "") + string.whitespace)
_LONGEST_WORD = 39  # longer words are not indexed as words


def phrase_words(phrase: str) -> list[str]:
    """Words every block containing ``phrase`` matches: the ASCII identifiers the
    phrase holds whole, between punctuation or spaces. One touching the phrase's
    edge may be part of a longer one in the block (``fn(`` inside ``my_fn(``),
    and a letter of another script next to it may join it into one word."""
    return [
        m.group() for m in _IDENTIFIER.finditer(phrase)
        if m.start() > 0 and m.end() < len(phrase) and m.group().strip("_") and len(m.group()) <= _LONGEST_WORD
        and phrase[m.start() - 1] in _BOUNDARY and phrase[m.end()] in _BOUNDARY
    ]


@dataclass
class Snippet:
    text: str
    html: str


@dataclass
class SnippetMaker:
    words: tuple[str, ...]
    phrases: tuple[str, ...]
    _pattern: Any = field(init=False, default=None)

    def __post_init__(self) -> None:
        alternatives = [re.escape(p) for p in self.phrases]
        for word in self.words:
            parts = _WORDS_OF_IDENTIFIER.findall(word)
            if len(parts) > 1:  # parseConfig marks parse_config too
                alternatives.append("[_-]?".join(re.escape(p) for p in parts))
            else:  # a stem's forms: config marks configured
                alternatives.append(re.escape(word[:max(4, len(word) - 3)]) + r"\w*")
        self._pattern = re.compile("|".join(alternatives), re.IGNORECASE) if alternatives else None

    def __call__(self, text: str) -> Snippet:
        match = self._pattern.search(text) if self._pattern else None
        start = max(0, (match.start() if match else 0) - SNIPPET_WIDTH // 3)
        end = min(len(text), start + SNIPPET_WIDTH)
        window = text[start:end]
        prefix = "…" if start > 0 else ""
        suffix = "…" if end < len(text) else ""
        plain_parts, html_parts, last = [], [], 0
        for found in (self._pattern.finditer(window) if self._pattern else []):
            if found.start() == found.end():
                continue
            plain_parts.append(window[last:found.start()])
            html_parts.append(html.escape(window[last:found.start()]))
            plain_parts.append(f"**{found.group()}**")
            html_parts.append(f"<mark>{html.escape(found.group())}</mark>")
            last = found.end()
        plain_parts.append(window[last:])
        html_parts.append(html.escape(window[last:]))
        flat = lambda s: " ".join(s.split())  # noqa: E731 - one line per hit
        return Snippet(prefix + flat("".join(plain_parts)) + suffix, prefix + flat("".join(html_parts)) + suffix)
