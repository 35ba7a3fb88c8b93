"""What every importer of another tool's transcripts shares (``docs/sources.md``,
"Other agents' transcripts"): building canonical messages, pairing tool calls with
their results, ids derived from place, times, and the warnings that say what was
skipped.

An importer turns entries into plain JSON messages of the canonical contract and
hands them to ``Transcript.result``, which checks each like any other source: a
message that still breaks the contract (nesting too deep, a time out of range)
is refused in strict mode and salvaged in lenient mode, as for Vis files. Keys
of foreign maps (tool inputs and outputs, unknown blocks) are turned to
snake_case, since the contract allows no other key; values are kept exactly, and
so is each renamed key's spelling, in the block's ``original_keys`` (where in the
block, and the key as the source wrote it; see ``vis_export.spellings``), except
where it names or sits in private reasoning (R2). Encrypted or signed payloads
(``encrypted_content``, ``signature``, redacted thinking's ``data``) never enter
the model: they are dropped before anything is built.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from vis_export.contract import check_message
from vis_export.contract.blocktypes import RENDERED_TYPES
from vis_export.contract.check import MAX_DEPTH, MAX_TIME
from vis_export.contract.reasoning_words import is_reasoning_map, names_reasoning
from vis_export.model import Message, Session, StoredAttachment, freeze, message_from_json
from vis_export.problems import NOTE, Problem
from vis_export.sources.result import LoadResult
from vis_export.sources.salvage import salvage_message
from vis_export.sources.trusted import NotCertain, trusted_messages
from vis_export.timefmt import aware, epoch_ms

# Payloads that are opaque to people and private to the provider: never copied.
SECRET_KEYS = frozenset({"encrypted_content", "signature", "encrypted_reasoning"})
# And in a map typed as reasoning (Anthropic's ``redacted_thinking``), its opaque ``data``.
REASONING_SECRET_KEYS = SECRET_KEYS | {"data"}
NO_INPUT: Any = object()  # a call that holds no input at all (``null`` is an input)
_LABEL = re.compile(r"[\w .:/-]{1,60}")
# The nouns the importers' phrases for a skipped entry start with, and their plurals.
_NOUNS = {
    "entry": "entries",
    "user entry": "user entries",
    "record": "records",
    "event": "events",
    "item": "items",
    "message part": "message parts",
    "content block": "content blocks",
}
_SNAKE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")  # whole keys: ``$`` would let "a\n" through
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_WORD = re.compile(r"[^a-z0-9]+")


@lru_cache(maxsize=8192)
def snake_key(key: str) -> str:
    """``key`` as a contract key: ``activeForm`` -> ``active_form``, ``Content-Type``
    -> ``content_type``; a key with no letter or digit becomes ``key``.

    Cached: a transcript's tool inputs and outputs repeat a few keys thousands of times."""
    if _SNAKE.fullmatch(key):
        return key
    words = _NOT_WORD.sub("_", _CAMEL_BOUNDARY.sub("_", key).lower()).strip("_") or "key"
    return words if words[0].isalpha() else f"k_{words}"


# What a key that names reasoning is stored as when its snake_case form would not.
REASONING_KEY = "private_reasoning"


@lru_cache(maxsize=8192)
def foreign_key(key: str) -> str:
    """``snake_key``, except that a key naming reasoning stays one (R2): folding can
    drop the very letters that name it (fullwidth ``ｔｈｉｎｋｉｎｇ`` becomes ``key``,
    Greek ``τhinking`` ``hinking``), which would show the value it hides."""
    name = snake_key(key)
    return REASONING_KEY if names_reasoning(key) and not names_reasoning(name) else name


# Keys a foreign map keeps exactly as they are: their own contract key, no secret, and
# no ``type`` or ``kind`` (which can make a map reasoning, whose ``data`` is secret). A map
# of only these is copied as it is (``foreign_value``): most of a tool's input and output.
_PLAIN_KEYS: set[str] = set()
_PLAIN_KEYS_LIMIT = 100_000


def _plain(key: str) -> bool:
    return foreign_key(key) == key and key not in SECRET_KEYS and snake_key(key) not in ("type", "kind")


Spellings = list[tuple[tuple[str | int, ...], str]]  # where a renamed key is, and how the source wrote it


def foreign_value(value: Any, spellings: Spellings, path: tuple[str | int, ...] = ()) -> Any:
    """A foreign JSON value with contract keys and no secret payload, values unchanged.
    Two keys that fold to the same snake_case key keep both values (``_2`` ...). Each
    key renamed goes to ``spellings``, with its place (``path`` is the value's). Past
    ``MAX_DEPTH`` levels the value is left as read: the contract check refuses it as
    nested too deep, where recursing on would exhaust the stack first."""
    if len(path) > MAX_DEPTH:
        return value
    if isinstance(value, dict):
        if _PLAIN_KEYS.issuperset(value):  # nothing renamed, dropped or told apart: as it is
            return {
                key: foreign_value(item, spellings, (*path, key)) if type(item) in _CONTAINERS else item
                for key, item in value.items()
            }
        out: dict[str, Any] = {}
        secret = REASONING_SECRET_KEYS if _typed_as_reasoning(value) else SECRET_KEYS
        suffixes: dict[str, int] = {}  # the last suffix given each name: no name is tried twice
        for key, item in value.items():
            name = foreign_key(str(key))
            if name in secret:
                continue
            unique = name
            if unique in out:
                n = suffixes.get(name, 1)
                while unique in out:
                    n += 1
                    unique = f"{name}_{n}"
                suffixes[name] = n
            if unique != key:
                spellings.append(((*path, unique), str(key)))
            elif len(_PLAIN_KEYS) < _PLAIN_KEYS_LIMIT and _plain(unique):
                _PLAIN_KEYS.add(unique)
            out[unique] = foreign_value(item, spellings, (*path, unique)) if type(item) in _CONTAINERS else item
        return out
    if isinstance(value, list):
        # Scalars are kept as they are, without the call (most of a tool's input and output).
        return [
            foreign_value(item, spellings, (*path, n)) if type(item) in _CONTAINERS else item
            for n, item in enumerate(value)
        ]
    return value


_CONTAINERS = frozenset({dict, list})


def _typed_as_reasoning(value: dict[Any, Any]) -> bool:
    """Whether a foreign map's type (or kind), however its key is spelt, names reasoning:
    redacted thinking sits anywhere (a sub-agent's transcript in a tool result), and
    its ``data`` must not show even with ``--reasoning all``."""
    return any(
        snake_key(str(key)) in ("type", "kind")
        and any(
            isinstance(name, str) and names_reasoning(name) for name in (item if isinstance(item, list) else [item])
        )
        for key, item in value.items()
    )


def foreign_block(block: dict[str, Any], **values: Any) -> dict[str, Any]:
    """``block`` given foreign ``values`` as fields (``foreign_value``), and the
    spelling of every key renamed in them kept in its ``original_keys``."""
    spellings: Spellings = []
    for name, value in values.items():
        block[name] = foreign_value(value, spellings, (name,)) if isinstance(value, (dict, list)) else value
    return _spelled(block, spellings) if spellings else block


def put_foreign(block: dict[str, Any], name: str, value: Any) -> None:
    """``foreign_block(block, name=value)`` without building its keywords: a tool's
    input and output, once for each of a transcript's thousands of calls."""
    if isinstance(value, (dict, list)):
        spellings: Spellings = []
        block[name] = foreign_value(value, spellings, (name,))
        if spellings:
            _spelled(block, spellings)
    else:
        block[name] = value


def foreign_type(kind: str) -> str:
    """The stored type of a foreign block kept as unknown: its own, unless that is
    a type Vis gives a meaning (``reasoning`` with ``"visibility": "visible"`` would
    show as visible reasoning, ``prose`` be rendered as Markdown), then ``foreign_``
    before it, which names reasoning whenever the type did (R2)."""
    return f"foreign_{kind}" if kind in RENDERED_TYPES else kind


def foreign_map(value: dict[str, Any], **fixed: Any) -> dict[str, Any]:
    """A foreign map as a block of its own (an unknown block): its fields as
    ``foreign_block`` keeps them, then the ``fixed`` ones (``id``, ``type``)."""
    spellings: Spellings = []
    return _spelled({**foreign_value(value, spellings), **fixed}, spellings)


def _spelled(block: dict[str, Any], spellings: Spellings) -> dict[str, Any]:
    judged: dict[int, bool] = {}
    kept = [{"path": list(path), "key": key} for path, key in spellings if not _private(block, path, judged)]
    found = block.get("original_keys", [])
    if kept and isinstance(found, list):  # a source's own field of that name is kept as it is
        block["original_keys"] = [*found, *kept]
    return block


def _private(block: dict[str, Any], path: tuple[str | int, ...], judged: dict[int, bool]) -> bool:
    """Whether the key at ``path`` names private reasoning or sits in it (R2): its
    spelling is not kept, since the policy hides the key and all under it. Each map
    is judged once (``judged``, by identity): one with many renamed keys would
    otherwise be read whole for each of them."""
    value: Any = block
    for step in path:
        if isinstance(value, dict):
            if names_reasoning(step):
                return True
            reasoning = judged.get(id(value))
            if reasoning is None:
                reasoning = judged[id(value)] = is_reasoning_map(value)
            if reasoning:
                return True
        value = value[step]
    return False


def text_or(value: Any, default: str) -> str:
    """``value`` if it is a non-blank string, else ``default`` (foreign fields may be anything)."""
    return value if isinstance(value, str) and value.strip() else default


_JSON_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def text_names_reasoning(text: str) -> bool:
    """Whether a text that the JSON reading refused (``NaN``, a number too
    large, a lone surrogate, nesting too deep) holds a string that names
    reasoning (a key such as ``thinking``, a ``thought`` flag, a ``type``):
    kept as the text it is, its reasoning would be shown. The reading that
    hides more wins (R2), as for a duplicate key."""
    for found in _JSON_STRING.finditer(text):
        try:
            word = json.loads(found[0])
        except ValueError:
            word = found[1]
        if names_reasoning(word):
            return True
    return False


def call_arguments(text: str, read: Callable[[str], Any]) -> Any:
    """A call's arguments given as JSON text: their value when ``read`` takes
    it, else the text as written, held as private reasoning when it names
    reasoning (``text_names_reasoning``)."""
    try:
        return read(text)
    except ValueError:
        return {REASONING_KEY: text} if text_names_reasoning(text) else text


def field_text(value: Any, key: str) -> str | None:
    """A map's ``key`` when it is a string (a type, a role), for comparing with known names:
    a foreign value may be a list or a map, which no set of names can hold."""
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


def map_or_empty(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# The form every entry of Claude Code and Codex is stamped with (``2025-06-21T10:00:00.123Z``,
# or microseconds, or whole seconds): read by slicing it, each slice looked up in a table of
# its every valid text (``_CLOCK``: minutes and seconds below 60; ``_DIGITS3``) or, for its
# hour, in a cache of the hours met (``_HOURS``), each read exactly once. ASCII digits only,
# seconds below 60, as ``fromisoformat`` takes them. A regular expression, a match object
# and three ``int`` calls took three times as many instructions.
_HOUR = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}")
_CLOCK = {f":{m:02d}:{s:02d}": (60 * m + s) * 1000 for m in range(60) for s in range(60)}
_DIGITS3 = {f"{n:03d}": n for n in range(1000)}
_HOURS: dict[str, int | None] = {}  # an hour's text -> its ms, or None if it is no time
_HOURS_LIMIT = 100_000


def iso_ms(value: Any) -> int | None:
    """An ISO 8601 time (``2025-06-21T10:00:00.123Z``) in ms since the epoch (UTC), if it is one.

    A transcript stamps each of its thousands of entries; parsing each stamp whole was a
    tenth of mapping them, and their hours repeat: the common form reads its hour from a
    cache (``tests/test_timefmt.py`` holds it to the exact reading)."""
    if type(value) is not str or value[-1:] != "Z":
        return _iso_ms(value)
    size = len(value)
    clock = _CLOCK.get(value[13:19])
    if clock is None:
        return _iso_ms(value)
    if size == 24 or size == 27:  # milliseconds, or microseconds read to the millisecond
        fraction = _DIGITS3.get(value[20:23])
        if value[19] != "." or fraction is None or (size == 27 and value[23:26] not in _DIGITS3):
            return _iso_ms(value)
    elif size == 20:
        fraction = 0
    else:
        return _iso_ms(value)
    hour = value[:13]
    base = _HOURS.get(hour, -1)
    if base == -1:
        if not _HOUR.fullmatch(hour):
            return _iso_ms(value)
        base = _iso_ms(f"{hour}:00:00Z")
        if len(_HOURS) < _HOURS_LIMIT:
            _HOURS[hour] = base
    if base is None:
        return None
    ms = base + clock + fraction
    return ms if ms <= MAX_TIME else None


def _iso_ms(value: Any) -> int | None:
    """``iso_ms`` the exact way, for any ISO 8601 form."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)  # Python 3.11 reads every ISO 8601 form the tools write
    except ValueError:
        return None
    ms = epoch_ms(aware(moment))
    return ms if 0 <= ms <= MAX_TIME else None


def first_line(text: str, limit: int = 100) -> str | None:
    """The first non-blank line of ``text``, shortened, as a title."""
    for line in text.splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return None


def text_of_parts(parts: Any) -> str | None:
    """The text of a tool result's content: a string, or a list of only text parts
    (joined by blank lines); ``None`` when it holds anything else, a text part that
    is reasoning too (``"thought": true``): kept as read, the policy hides it (R2)."""
    if isinstance(parts, str):
        return parts
    if isinstance(parts, list) and all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in parts):
        if all(p.get("type") in ("text", "output_text", "input_text") and not is_reasoning_map(p) for p in parts):
            return "\n\n".join(p["text"] for p in parts)
    return None


def reasoning_of(block_id: str, content: Any) -> dict[str, Any]:
    """A private reasoning block of the text in ``content`` (a string, or parts with a
    ``text`` or ``thinking``): what an entry, item or message that is reasoning (a true
    reasoning flag, a type or visibility that says so) becomes, whatever its role (R2).
    Nothing else of it is read: a call or a result in it would show what it holds."""
    parts = [{"text": content}] if isinstance(content, str) else content if isinstance(content, list) else []
    texts = [
        part[key]
        for part in parts
        if isinstance(part, dict)
        for key in ("text", "thinking")
        if isinstance(part.get(key), str)
    ]
    return {"id": block_id, "type": "reasoning", "text": "\n\n".join(texts), "visibility": "private"}


@dataclass
class Transcript:
    """One session being built from a foreign file: messages as JSON, attachments,
    tool blocks by call id, and the counts of what was skipped."""

    source: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    attachments: dict[str, StoredAttachment] = field(default_factory=dict)
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    owners: dict[str, dict[str, Any]] = field(default_factory=dict)  # call id -> its message
    skipped: Counter[str] = field(default_factory=Counter)
    # Results before their call, and results no call takes, each with its place: (messages before it, arrival).
    results: int = 0
    links: dict[str, dict[str, str]] = field(default_factory=dict)  # call id -> fields its block gains
    early: dict[str, tuple[Any, bool, int, tuple[int, int]]] = field(default_factory=dict)
    orphans: list[tuple[tuple[int, int], dict[str, Any]]] = field(default_factory=list)
    shared: Counter[str] = field(default_factory=Counter)  # call id -> calls after the first with it

    def message(
        self, message_id: str, role: str, created_at: int, model: str | None = None, provider: str | None = None
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"id": message_id, "role": role, "status": "completed", "created_at": created_at}
        if model is not None:
            message["model"] = model
        if provider is not None:
            message["provider"] = provider
        message["content"] = []
        self.messages.append(message)
        return message

    def tool(self, message: dict[str, Any], call_id: str, name: Any, tool_input: Any) -> dict[str, Any]:
        """A tool block waiting for its result (``pending`` until one comes)."""
        block: dict[str, Any] = {
            "id": call_id,
            "type": "tool",
            "tool": name if isinstance(name, str) and name.strip() else "unknown",
            "status": "pending",
        }
        if tool_input is not NO_INPUT:
            put_foreign(block, "input", tool_input)
        message["content"].append(block)
        if call_id in self.calls:  # shown, still pending: results pair with the first (counted in the warning)
            self.shared[call_id] += 1
        else:
            self.calls[call_id], self.owners[call_id] = block, message
            if call_id in self.early:  # its result came first
                output, failed, _, _ = self.early.pop(call_id)
                _settle(block, output, failed)
        return block

    def answer(self, call_id: str, output: Any, failed: bool, at: int) -> None:
        """The result of call ``call_id``, whether the call came before or comes later; a
        result no call takes (none has its id, or it already has one) is still shown, as an
        orphaned result where it came."""
        block = self.calls.get(call_id)
        self.results += 1
        if block is not None and block["status"] == "pending":
            _settle(block, output, failed)
        elif block is None and call_id not in self.early:
            self.early[call_id] = (output, failed, at, (len(self.messages), self.results))
        else:
            self.orphans.append(((len(self.messages), self.results), _orphan(call_id, output, failed, at)))

    def attach(self, message: dict[str, Any], block_id: str, media_type: str, data: bytes | None, name: str) -> None:
        self.attachments[block_id] = StoredAttachment(block_id, message["id"], media_type, name, None, data, None, None)
        block = {"id": block_id, "type": "attachment", "attachment_id": block_id, "name": name}
        block["media_type"] = media_type
        message["content"].append(block)

    def attach_base64(self, message: dict[str, Any], block_id: str, media_type: Any, data: Any, name: str) -> None:
        kind = media_type if isinstance(media_type, str) and media_type.strip() else "application/octet-stream"
        try:
            raw = base64.b64decode(data, validate=True) if isinstance(data, str) else None
        except (binascii.Error, ValueError):
            raw = None
        self.attach(message, block_id, kind, raw, name)

    def attach_data_uri(self, message: dict[str, Any], block_id: str, uri: Any, name: str) -> bool:
        """An image given as a ``data:`` URI; ``False`` when ``uri`` is not one (a link stays text)."""
        if not isinstance(uri, str) or not uri.startswith("data:") or ";base64," not in uri:
            return False
        kind, data = uri[len("data:") :].split(";base64,", 1)
        self.attach_base64(message, block_id, kind, data, name)
        return True

    def skip(self, kind: str) -> None:
        """One more entry not shown, counted under ``kind`` when it reads as a name (a warning
        line must stay one plain line, whatever a file calls its entries) that names no
        reasoning: a warning never quotes what may be private reasoning (R2)."""
        if names_reasoning(kind):
            kind = "entry of a reasoning type"
        self.skipped[kind if _LABEL.fullmatch(kind) else "entry of an unreadable type"] += 1

    def result(self, session_id: str, title: str | None, facts: dict[str, Any], lenient: bool) -> LoadResult:
        """The session, checked as any source is; what was skipped, and calls that share
        an id, are one warning."""
        for call_id, fields in self.links.items():
            if call_id in self.calls:
                self.calls[call_id].update(fields)
        orphans = self.orphans + [(index, _orphan(i, out, bad, at)) for i, (out, bad, at, index) in self.early.items()]
        for (index, _), message in sorted(orphans, key=lambda found: found[0], reverse=True):
            self.messages.insert(index, message)  # the last first, so each index still means what it did
        problems: list[Problem] = []
        at_once = _in_one_pass(self.messages)
        built: list[Message] = at_once if at_once is not None else []
        refused: list[Problem] = []
        for index, value in enumerate(self.messages if at_once is None else ()):
            found: list[Problem] = []
            check_message(value, ("messages", index), found)
            if not found:
                built.append(message_from_json(value, owned=True))  # built here, held by nobody else
                continue
            refused += found
            salvaged = salvage_message(value, index) if lenient else None
            if salvaged is not None:
                built.append(salvaged)
        if refused and not lenient:
            return LoadResult(self.source, None, tuple(problems + refused))
        said = []
        if self.skipped:
            counts = ", ".join(_counted(n, kind) for kind, n in sorted(self.skipped.items()))
            said.append(f"skipped entries this version does not show: {counts}")
        if self.shared:
            calls = sum(n + 1 for n in self.shared.values())
            said.append(f"{calls} tool calls sharing an id (their results pair with the first)")
        if said:
            problems.append(Problem("", "; ".join(said), NOTE))
        session = Session(
            id=session_id,
            messages=tuple(built),
            title=title,
            created_at=built[0].created_at if built else None,
            metadata=freeze({k: v for k, v in facts.items() if v is not None}),
            source=self.source,
            attachments=MappingProxyType(dict(self.attachments)),
        )
        return LoadResult(self.source, session, tuple(problems + refused))


def _in_one_pass(messages: list[dict[str, Any]]) -> list[Message] | None:
    """``messages`` checked and built in one pass (``sources.trusted``: what the check
    and the model make, each container visited once), in one call (a call for each of a
    transcript's hundreds of messages added a tenth to building them), or ``None`` when
    that pass cannot vouch for one of them: each is then checked in detail, to say what
    is wrong and where. The pass freezes in place, so all are first given back their
    lists and maps."""
    contents = [message["content"] for message in messages]
    try:
        return list(trusted_messages(messages, 2))
    except NotCertain:
        for message, content in zip(messages, contents, strict=True):
            message["content"] = content  # the pass sets it last, but only once every block was built
            for key, item in message.items():
                message[key] = _thawed(item, 1)
        return None


def _thawed(value: Any, depth: int = 0) -> Any:
    """A value as JSON again, after the one-pass building froze part of it: the pass
    stops at the contract's depth, so deeper values are as read (and may be nested
    far deeper than this could recurse)."""
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, (dict, MappingProxyType)):
        return {key: _thawed(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thawed(item, depth + 1) for item in value]
    return value


def _settle(block: dict[str, Any], output: Any, failed: bool) -> None:
    block["status"] = "failed" if failed else "completed"
    put_foreign(block, "error" if failed else "output", output)


def _counted(n: int, kind: str) -> str:
    """``n`` entries of ``kind``, the noun an importer starts its phrase with ("entry of
    an unreadable type", "item <type>") in the plural when ``n`` is not 1; a file's own
    name for its entries (``file-history-snapshot``) is written as it is: a name."""
    if n != 1:
        head = next((one for one in _NOUNS if kind.startswith(one + " ")), None)
        if head is not None:
            kind = _NOUNS[head] + kind.removeprefix(head)
    return f"{n} {kind}"


def _orphan(call_id: str, output: Any, failed: bool, at: int) -> dict[str, Any]:
    """A ``tool`` message holding a result whose call is not in the file."""
    block = {"id": f"{call_id}_result", "type": "tool", "tool": "unknown", "status": "pending", "orphaned": True}
    _settle(block, output, failed)
    return {"id": f"{call_id}_result", "role": "tool", "status": "completed", "created_at": at, "content": [block]}
