"""What a search index holds of a session: one document per indexable block.

Prose, code, speech, tools (name, input, output and error), attachments (name
and media type), error and notice messages, and visible reasoning when asked
for; private reasoning never, whatever the option (R2).

Each text is indexed twice. As words (the engine's own analysis: Unicode
words, lowercase, English stems), which already splits ``parse_config`` into
``parse`` and ``config`` and keeps ``parseConfig`` whole as ``parseconfig``. And
as code-aware terms, made here so every engine sees the same, for what word
analysis misses: a snake_case identifier whole without separators
(``parse_config`` gives ``parseconfig``) and a camelCase one as its words
(``parseConfig`` gives ``parse``, ``config``; ``HTTPServer`` gives ``http``,
``server``); and text in scripts written without spaces (Chinese, Japanese,
Korean) as its characters and bigrams (``cjk``), which word analysis leaves
out. A query word then matches either way (see ``search.query``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from vis_export.contract.blocktypes import KNOWN_TYPES, RENDERED_TYPES, UNKNOWN, for_each_type
from vis_export.index_marker import SCHEMA_VERSION as SCHEMA_VERSION  # beside the manifest: a rerun checks it alone
from vis_export.model import Block, CodeBlock, Message, Session, ToolBlock, UnknownBlock
from vis_export.policy import (  # the index's levels are the policy's; named here too for the modules of the index
    INDEX_REASONING as INDEX_REASONING,
    IndexReasoning as IndexReasoning,
    SessionView,
    check_index_reasoning as check_index_reasoning,
    visible_session,
)
from vis_export.searchindex.cjk import WORD_PATTERN, index_grams

if TYPE_CHECKING:
    from vis_export.redaction import Redaction


_IDENTIFIER = re.compile(r"[A-Za-z0-9_]+")
_WORDS_OF_IDENTIFIER = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


@cache
def _analysed_word() -> re.Pattern[str]:
    """Compiled on first use (milliseconds, see ``cjk._run``)."""
    return re.compile(WORD_PATTERN)


# ASCII text lowered, with every character that is not a letter or digit made
# a space: its ``split()`` is ``_analysed_word()``'s words, lowered (no ASCII
# character is of the scripts ``WORD_PATTERN`` leaves out).
_ASCII_WORDS = {code: chr(code).lower() if chr(code).isalnum() else " " for code in range(128)}
LONGEST_WORD = 39  # longer words are not indexed as words


def analysed_words(text: str) -> list[str]:
    """A text's words as every engine indexes them: Unicode letters and digits
    (an underscore splits) but those of ``cjk`` (indexed as bigrams among the
    terms), lowercase, none longer than ``LONGEST_WORD``; the
    engine stems them (Snowball English). Engines whose library splits words
    its own way (PostgreSQL's parser keeps ``example.com`` whole) are given these.
    An ASCII text is split by one ``translate`` (``distinct_analysed_words``),
    and its words are measured in C: a text rarely holds a word too long."""
    words = _unmeasured_words(text)
    if max(map(len, words), default=0) <= LONGEST_WORD:
        return words
    return [word for word in words if len(word) <= LONGEST_WORD]


def counted_words(text: str) -> Counter[str]:
    """How often each of ``analysed_words(text)``'s words occurs: counted as
    split, and only the distinct words measured (the benchmark's texts repeat
    each word five times)."""
    counts = Counter(_unmeasured_words(text))
    if max(map(len, counts), default=0) > LONGEST_WORD:
        for word in [word for word in counts if len(word) > LONGEST_WORD]:
            del counts[word]
    return counts


def _unmeasured_words(text: str) -> list[str]:
    """``analysed_words`` of any length."""
    if text.isascii():
        return text.translate(_ASCII_WORDS).split()
    return [word.lower() for word in _analysed_word().findall(text)]


def distinct_analysed_words(text: str) -> set[str]:
    """The words of ``analysed_words``, each once and in no order (all a
    PostgreSQL tsvector keeps): each distinct spelling is lowered and measured
    once, as texts repeat their words. Most texts are ASCII, where a word is a
    run of ASCII letters and digits: split out by one ``translate`` (half the
    time of a regular expression, on the job's critical path)."""
    if text.isascii():
        lowered = set(text.translate(_ASCII_WORDS).split())
    else:
        lowered = {word.lower() for word in set(_analysed_word().findall(text))}
    if max(map(len, lowered), default=0) <= LONGEST_WORD:
        return lowered
    return {word for word in lowered if len(word) <= LONGEST_WORD}


def identifier_key(word: str) -> str:
    """``parse_config``, ``parseConfig``, ``ParseConfig`` -> ``parseconfig``."""
    return word.replace("_", "").lower()


def identifier_words(identifier: str) -> list[str]:
    """``parseConfig``, ``parse_config`` -> ``["parse", "config"]``."""
    return [part.lower() for part in _WORDS_OF_IDENTIFIER.findall(identifier)]


@lru_cache(maxsize=1 << 16)
def _terms_of(identifier: str) -> tuple[str, ...]:
    """The terms of an identifier that word analysis indexes differently (with
    an underscore, or mixed case); none for the rest."""
    if "_" not in identifier and (identifier.islower() or identifier.isupper() or identifier.isdigit()):
        return ()
    key = identifier_key(identifier)
    words = identifier_words(identifier)
    return (key, *words) if key else tuple(words)


@lru_cache(maxsize=1 << 16)
def _terms_of_token(token: str) -> frozenset[str]:
    return frozenset(term for identifier in _IDENTIFIER.findall(token) for term in _terms_of(identifier))


# Texts repeat whole (a file read again, a tool's output, a snippet pasted
# twice): the terms of a text of up to ``_MEMO_LENGTH`` characters are kept for
# the last ``_MEMO_TEXTS`` (at most 8M characters held, with their terms).
_MEMO_TEXTS = 1024
_MEMO_LENGTH = 8192
Made = TypeVar("Made")


def by_text(function: Callable[[str], Made]) -> Callable[[str], Made]:
    """``function`` of a text, kept for a short text seen again (``_MEMO_TEXTS``).
    What it makes is shared by every caller: it is never changed."""
    kept = lru_cache(maxsize=_MEMO_TEXTS)(function)
    return lambda text: kept(text) if len(text) <= _MEMO_LENGTH else function(text)


@by_text
def code_terms(text: str) -> str:
    """The code-aware terms of a text, and the characters and bigrams of its
    runs of ``cjk`` scripts, space separated, each once, in order.

    The job's largest cost in Python, profiled. Texts repeat a few tokens many
    times (words, ``parse_config(path)``), and sessions repeat them across
    texts: the text is split at white space (which no identifier or run holds),
    and each distinct token's identifiers are found and split once, cached; a
    third of the time of scanning the whole text for identifiers."""
    terms = set().union(*map(_terms_of_token, set(text.split())))
    if not text.isascii():
        terms.update(index_grams(text))
    return " ".join(sorted(terms))


def indexed_view(session: Session, reasoning: IndexReasoning, redaction: Redaction | None = None) -> SessionView:
    """The session as the index sees it: private reasoning gone in every case,
    and with ``redaction`` its secrets too (a redacted value is not findable)."""
    return visible_session(session, check_index_reasoning(reasoning), redaction)


def view_digest(view: SessionView, reasoning: IndexReasoning) -> str:
    """Changes exactly when what the index would hold of the session changes.
    Made of the view (``indexed_view``), which a job makes once for this and
    for the documents: making it is a fair part of a session's indexing."""
    import hashlib  # here: OpenSSL's loading is 5 ms of a no-op rerun, which digests nothing

    policy: list[Any] = [reasoning] if view.redaction is None else [reasoning, view.redaction.describe()]
    payload = json.dumps([SCHEMA_VERSION, *policy, view.to_json()], ensure_ascii=True, sort_keys=False)
    return hashlib.sha256(payload.encode("ascii")).hexdigest()


def readable(value: Any) -> str:
    """A stored JSON value as a person reads it, and as a search finds it:
    strings as written (an exact phrase of a command or its output matches), a
    map as ``key: value`` lines with a nested map or list indented below its
    key and a multi-line string below its key as written, a list as its items'
    lines, other values as JSON."""
    return "\n".join(_readable_lines(value, ""))


def _readable_lines(value: Any, indent: str) -> Iterator[str]:
    """Nesting is bounded by the contract's depth limit, so this recursion is too."""
    if not _nested(value):
        text = _scalar(value)
        yield text if "\n" in text else indent + text
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if _nested(item):
                yield f"{indent}{key}:"
                yield from _readable_lines(item, indent + "  ")
            else:
                text = _scalar(item)
                yield from (f"{indent}{key}:", text) if "\n" in text else (f"{indent}{key}: {text}".rstrip(),)
    else:
        for item in value:
            yield from _readable_lines(item, indent)


_LEAVES = frozenset({str, int, float, bool, type(None)})
_JSON_CONSTANTS = {None: "null", True: "true", False: "false"}


def _nested(value: Any) -> bool:
    """A map or list with something in it: lines of their own. Most values
    are strings and numbers, told apart by their type first (a ``Mapping``
    test is an abstract class's, a tenth of the documents' time)."""
    return type(value) not in _LEAVES and isinstance(value, (Mapping, list, tuple)) and len(value) > 0


def _scalar(value: Any) -> str:
    """As JSON writes it; strings, integers and constants without an encoder made for each (``json.dumps``)."""
    if isinstance(value, str):
        return value
    if value is None or value is True or value is False:
        return _JSON_CONSTANTS[value]
    if type(value) is int:
        return repr(value)
    if isinstance(value, (Mapping, list, tuple)):  # empty
        return "{}" if isinstance(value, Mapping) else "[]"
    return json.dumps(value)


def _tool_text(block: ToolBlock) -> str:
    stored = (block.fields[key] for key in ("input", "output", "error") if block.fields.get(key) is not None)
    return "\n".join(text for text in (block.tool, *map(readable, stored)) if text)


# What each block type is found by (None: not indexed). Reasoning reaches here
# only when it is visible and asked for: the view has dropped the rest.
_TEXT: dict[str, Callable[[Any], str | None]] = for_each_type(
    {
        "prose": lambda block: block.markdown,
        "code": lambda block: block.text,
        "speech": lambda block: block.text,
        "reasoning": lambda block: block.text,
        "tool": _tool_text,
        "attachment": lambda block: f"{block.name}\n{block.media_type}",
        "error": lambda block: f"{block.code}: {block.message}",
        "notice": lambda block: f"{block.code}: {block.message}",
        "lonis": lambda block: None,  # its own kinds, not a Vis block's text
        UNKNOWN: lambda block: None,  # inert data: never searchable as if it were text
    },
    RENDERED_TYPES,
    "indexed text",
)
INDEXED_TYPES = KNOWN_TYPES


def text_of(block: Block) -> str | None:
    """The text a block is indexed and found by, or ``None`` when it has none."""
    return _TEXT[UNKNOWN if isinstance(block, UnknownBlock) else block.type](block)


def documents(
    session: Session, reasoning: IndexReasoning, redaction: Redaction | None = None
) -> Iterator[dict[str, Any]]:
    """A document per block of the session the index holds (``indexed_view``)."""
    return view_documents(indexed_view(session, reasoning, redaction))


def view_documents(view: SessionView) -> Iterator[dict[str, Any]]:
    """A document per block of the view (``indexed_view``) that has text. Ids
    may repeat (the contract allows it), keys may not: a repeated key gets a
    count (a database's primary key refused the session, and a hit was lost)."""
    keys: set[str] = set()
    for message in view.messages:
        for block in message.blocks:
            text = text_of(block)
            if text is None:
                continue
            document = _document(view, message, block, text)
            key, count = document["key"], 0
            while document["key"] in keys:
                count += 1
                document["key"] = f"{key}\x1f{count}"
            keys.add(document["key"])
            yield document


def _document(session: Session, message: Message, block: Block, text: str) -> dict[str, Any]:
    language = block.language.lower() if isinstance(block, CodeBlock) and block.language else ""
    return {
        "key": f"{session.id}\x1f{message.id}\x1f{block.id}",
        "session_id": session.id,
        "session_title": session.title or "",
        "message_id": message.id,
        "block_id": block.id,
        "role": message.role,
        "block_type": block.type,
        "language": language,
        "created_at": int(message.created_at),
        "text": text,
        "terms": code_terms(text),
    }
