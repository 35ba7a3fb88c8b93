"""What a search index holds of a session: one document per indexable block.

Prose, code, speech, tool names, error and notice messages, and visible
reasoning when asked for; private reasoning never, whatever the option (R2).

Each text is indexed twice. As words (the engine's own analysis: Unicode
words, lowercase, English stems), which already splits ``parse_config`` into
``parse`` and ``config`` and keeps ``parseConfig`` whole as ``parseconfig``. And
as code-aware terms, made here so both engines see the same, for what word
analysis misses: a snake_case identifier whole without separators
(``parse_config`` gives ``parseconfig``) and a camelCase one as its words
(``parseConfig`` gives ``parse``, ``config``; ``HTTPServer`` gives ``http``,
``server``). A query word then matches either way (see ``search.query``).
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from typing import Any, Iterator, Literal

from vis_export.model import (
    Block, CodeBlock, ErrorBlock, Message, NoticeBlock, ProseBlock, ReasoningBlock, Session, SpeechBlock, ToolBlock,
)
from vis_export.policy import visible_session

SCHEMA_VERSION = 1
IndexReasoning = Literal["none", "visible"]
INDEX_REASONING: tuple[IndexReasoning, ...] = ("none", "visible")

_IDENTIFIER = re.compile(r"[A-Za-z0-9_]+")
_WORDS_OF_IDENTIFIER = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_MARKDOWN_NOISE = re.compile(r"(^|\n)\s{0,3}(#{1,6}|>|[-*+]|\d+[.)])\s+|[*_~`]{1,3}|!?\[|\]\([^)]*\)")


def identifier_key(word: str) -> str:
    """``parse_config``, ``parseConfig``, ``ParseConfig`` -> ``parseconfig``."""
    return word.replace("_", "").lower()


def identifier_words(identifier: str) -> list[str]:
    """``parseConfig``, ``parse_config`` -> ``["parse", "config"]``."""
    return [part.lower() for part in _WORDS_OF_IDENTIFIER.findall(identifier)]


@lru_cache(maxsize=1 << 16)
def _terms_of(identifier: str) -> tuple[str, ...]:
    key = identifier_key(identifier)
    words = identifier_words(identifier)
    return (key, *words) if key else tuple(words)


def code_terms(text: str) -> str:
    """The code-aware terms of a text, space separated, each once.

    Texts repeat a few identifiers many times, and sessions repeat them across
    texts: each distinct compound identifier is split once per text, and cached."""
    terms: dict[str, None] = {}
    for identifier in set(_IDENTIFIER.findall(text)):
        # Only identifiers word analysis indexes differently: with an underscore
        # or mixed case.
        if "_" in identifier or not (identifier.islower() or identifier.isupper() or identifier.isdigit()):
            terms.update(dict.fromkeys(_terms_of(identifier)))
    return " ".join(sorted(terms))


def plain_text(markdown: str) -> str:
    """Prose without its Markdown marks: what a snippet shows (made for the hits
    only, at query time)."""
    return _MARKDOWN_NOISE.sub(lambda m: m.group(1) or "", markdown)


def check_index_reasoning(reasoning: str) -> IndexReasoning:
    if reasoning not in INDEX_REASONING:
        raise ValueError("the index takes reasoning none or visible: private reasoning is never indexed")
    return reasoning  # type: ignore[return-value]


def indexed_view(session: Session, reasoning: IndexReasoning) -> Session:
    """The session as the index sees it: private reasoning gone in every case."""
    return visible_session(session, check_index_reasoning(reasoning))


def content_hash(session: Session, reasoning: IndexReasoning) -> str:
    """Changes exactly when what the index would hold of the session changes."""
    view = indexed_view(session, reasoning)
    payload = json.dumps([SCHEMA_VERSION, reasoning, view.to_json()], ensure_ascii=True, sort_keys=False)
    return hashlib.sha256(payload.encode("ascii")).hexdigest()


def text_of(block: Block) -> str | None:
    if isinstance(block, ProseBlock):
        return block.markdown
    if isinstance(block, (CodeBlock, SpeechBlock)):
        return block.text
    if isinstance(block, ReasoningBlock):
        return block.text  # the view holds visible reasoning only, and only when asked
    if isinstance(block, ToolBlock):
        return block.tool
    if isinstance(block, (ErrorBlock, NoticeBlock)):
        return f"{block.code}: {block.message}"
    return None


def documents(session: Session, reasoning: IndexReasoning) -> Iterator[dict[str, Any]]:
    view = indexed_view(session, reasoning)
    for message in view.messages:
        for block in message.blocks:
            text = text_of(block)
            if text is None:
                continue
            yield _document(view, message, block, text)


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
