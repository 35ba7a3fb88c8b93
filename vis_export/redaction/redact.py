"""A session with every detected secret replaced by its marker (R8).

Every string the session carries is looked at once, in session order: the
title, the session's fields, then each message (its envelope fields, then its
blocks in order, keys and values at any depth), then the stored attachments
(names, transcriptions and the bytes of text types). Markers are numbered per
kind in order of first appearance and the same value is the same marker
everywhere in the session, so the result is a pure function of the session and
the rules (R7).

The policy redacts its view *after* hiding reasoning: what it hides is never
looked at, so numbering cannot betray that hidden reasoning held a secret
(a marker ``2`` with no ``1`` shown), and the numbers are stable for a given
session and reasoning level.
"""

from __future__ import annotations

import getpass
import json
import os
import re
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from types import MappingProxyType
from typing import Any, TypeVar
from urllib.parse import unquote

from vis_export.collector import paused
from vis_export.model import Block, Message, Session, StoredAttachment
from vis_export.redaction.detect import Detector, Span, _merged, shown, triggered, triggered_among
from vis_export.redaction.prefilter import flagged
from vis_export.redaction.rules import MARKER, SECRET_HINT, SECRET_KEY, SHARED_HOMES, Redaction, literal_secret

S = TypeVar("S", bound=Session)

# Never rewritten: ids name output files and anchors (redact.md), and a message's
# ``content`` is its blocks' place. Every other field is data, whatever its name:
# a known ``type``, ``role``, ``status`` or ``visibility`` is a word no rule finds
# (so a block stays the block it was), while an unknown one, or a block's own
# ``content``, is shown as it is and may hold anything.
_BLOCK_STRUCTURE = frozenset({"id"})
_MESSAGE_STRUCTURE = frozenset({"id", "content"})
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/x-ndjson", "application/yaml")


@dataclass(frozen=True)
class Finding:
    """One secret taken out: where (``messages[3].content[2].input.url``) and its kind; never the value."""

    where: str
    kind: str


class Redactor:
    """Markers for one session: the numbering lives as long as this object."""

    def __init__(self, redaction: Redaction):
        self.detector = Detector(redaction)
        self.markers: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        self.findings: list[Finding] = []
        # While messages are walked after ``_helds``: the strings it found something that may
        # be a find in; any other string there holds none, and is not looked at again.
        self.triggered: set[str] | None = None
        self.spans: dict[str, list[Span]] = {}  # of each text looked at: a session repeats many

    def text(self, text: str, where: tuple[str | int, ...], also: Sequence[Span] = ()) -> str:
        """``text`` with its finds (and the spans ``also`` given) replaced by markers."""
        if self.triggered is not None and text not in self.triggered and not also:
            return text
        if also:
            spans = _merged([*self.detector.spans(text), *also])
        elif (found := self.spans.get(text)) is not None:
            spans = found
        else:
            spans = self.spans[text] = self.detector.spans(text, self.triggered is not None)
        if not spans:
            return text
        parts, last = [], 0
        for start, end, kind in spans:
            parts.append(text[last:start])
            parts.append(self._marker(text[start:end], kind))
            self.findings.append(Finding(_where(where), kind))
            last = end
        parts.append(text[last:])
        return "".join(parts)

    def path(self, path: str, where: tuple[str | int, ...]) -> str:
        """A file's path, which names its user in more ways than prose does (``home_spans``)."""
        return self.text(path, where, home_spans(path))

    def _marker(self, secret: str, kind: str) -> str:
        value = _user_name(secret) if kind == "home-user" else secret
        marker = self.markers.get(value)
        if marker is None:
            number = self.counts[kind] = self.counts.get(kind, 0) + 1
            marker = self.markers[value] = MARKER.format(kind=kind, number=number)
        return marker

    def _keyed(self, key: str, item: Any, where: tuple[str | int, ...]) -> Any:
        """A map's value: a string under a key that names a secret is a secret whole; under
        a key that hints at one (``dbpassword``, ``api_token``, ``pwd``), what the rules find
        in the pair written as text (``"key": "value"``) is a find in the value too."""
        if type(item) in _NUMBERS and _names_secret(key):  # a pin, a numeric password (a bool is no secret)
            self.findings.append(Finding(_where(where), "secret"))
            return self._marker(repr(item), "secret")
        if type(item) is str:
            if _names_secret(key):
                if literal_secret(item) and not self.detector.allowed(item):
                    self.findings.append(Finding(_where(where), "secret"))
                    return self._marker(item, "secret")
            elif _hints_secret(key):
                return self.text(item, where, self._as_written(key, item))
        return self.value(item, where)

    def _as_written(self, key: str, value: str) -> list[Span]:
        """The spans of ``value`` that the rules find in ``"key": "value"``: a map's pair
        is redacted as the same pair in text is."""
        start = len(key) + 5
        end = start + len(value)
        return [
            (max(first, start) - start, min(last, end) - start, kind)
            for first, last, kind in self.detector.spans(f'"{key}": "{value}"')
            if first < end and last > start
        ]

    def value(self, value: Any, where: tuple[str | int, ...]) -> Any:
        """A stored value with its strings redacted (map keys too); the same object when nothing changed."""
        kind = type(value)
        if kind is str:
            return self.text(value, where)
        if kind is MappingProxyType or kind is dict:
            items = [
                (shown, self._keyed(key, item, (*where, shown)))
                for key, item in value.items()
                for shown in (self.text(key, where),)  # the location names a key as shown, never a secret in it
            ]
            if all(new is old for (new, _), old in zip(items, value, strict=True)) and all(
                new is old for (_, new), old in zip(items, value.values(), strict=True)
            ):
                return value
            return MappingProxyType(dict(items))
        if kind is tuple or kind is list:
            items = [self.value(item, (*where, index)) for index, item in enumerate(value)]
            return value if all(new is old for new, old in zip(items, value, strict=True)) else tuple(items)
        return value

    def fields(
        self, fields: Mapping[str, Any], where: tuple[str | int, ...], structure: frozenset[str]
    ) -> Mapping[str, Any]:
        """A model object's own fields: their names and the values of ``structure`` stay."""
        changed = {
            key: new
            for key, item in fields.items()
            if key not in structure and (new := self._keyed(key, item, (*where, key))) is not item
        }
        return MappingProxyType({**fields, **changed}) if changed else fields

    def _helds(self, messages: tuple[Message, ...]) -> list[set[int] | None]:
        """For each message, which of its parts (its fields, then its blocks' fields) may
        hold a find (``None``: all may, under custom rules): every string of the messages
        in one list, searched by RE2 in a few passes, each hit placed in its string and so
        in its part; and the parts with a string under a key that names a secret."""
        if self.detector.custom:
            return [None] * len(messages)
        numbers = flagged(messages)  # the messages that may hold a find: only these are walked
        if numbers is None:
            numbers = list(range(len(messages)))
        strings, firsts, bases, held = _gathered([messages[number] for number in numbers])
        hits = triggered_among(strings)
        held.update(bisect_right(firsts, index) - 1 for index in hits)
        self.triggered = {strings[index] for index in hits}
        helds: list[set[int] | None] = [_NONE] * len(messages)
        for part in held:
            walked = bisect_right(bases, part) - 1
            message = numbers[walked]
            if helds[message] is _NONE:
                helds[message] = set()
            helds[message].add(part - bases[walked])  # type: ignore[union-attr]
        return helds

    def block(self, block: Block, where: tuple[str | int, ...]) -> Block:
        fields = self.fields(block.fields, where, _BLOCK_STRUCTURE)
        return block if fields is block.fields else type(block)(fields)

    def message(self, message: Message, index: int, held: set[int] | None | bool = True) -> Message:
        """``held``: which parts may hold a find, when the caller knows (``_helds``)."""
        if held is True:
            (held,) = self._helds((message,))
            try:
                return self.message(message, index, held)
            finally:
                self.triggered = None  # what else is redacted was not looked at by ``_helds``
        if held is not None and not held:
            return message
        where = ("messages", index)
        fields = self.fields(message.fields, where, _MESSAGE_STRUCTURE) if held is None or 0 in held else message.fields
        blocks = tuple(
            self.block(block, (*where, "content", n)) if held is None or n + 1 in held else block
            for n, block in enumerate(message.blocks)
        )
        if fields is message.fields and all(new is old for new, old in zip(blocks, message.blocks, strict=True)):
            return message
        return replace(
            message,
            blocks=blocks,
            fields=fields,
            model=fields.get("model"),
            provider=fields.get("provider"),
            author=fields.get("author"),
        )

    def attachment(self, attachment: StoredAttachment) -> StoredAttachment:
        """Its name, place and transcription, then its bytes when they are text (in that order)."""
        where = ("attachments", attachment.id)
        filename = self.value(attachment.filename, (*where, "filename"))
        storage_uri = self.value(attachment.storage_uri, (*where, "storage_uri"))
        transcription = self.value(attachment.transcription, (*where, "transcription"))
        data = attachment.data
        if data is not None and (attachment.media_type or "").startswith(_TEXT_TYPES):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                pass  # not text after all: bytes that are not text are not scanned, like images
            else:
                data = self.text(text, (*where, "data")).encode("utf-8")
        return replace(
            attachment,
            filename=filename,
            storage_uri=storage_uri,
            transcription=transcription,
            data=data,
            size_bytes=attachment.size_bytes if data is attachment.data or data is None else len(data),
        )

    def session(self, session: S) -> S:
        with paused():  # as loading: many acyclic objects, a collector walking them for nothing
            return self._session(session)

    def _session(self, session: S) -> S:
        title = self.value(session.title, ("title",))
        metadata = self.value(session.metadata, ())
        helds = self._helds(session.messages)
        messages = tuple(
            message if held is _NONE else self.message(message, index, held)  # most messages: no call
            for index, (message, held) in enumerate(zip(session.messages, helds, strict=True))
        )
        self.triggered = None  # attachments were not looked at by ``_helds``
        attachments = MappingProxyType({key: self.attachment(item) for key, item in session.attachments.items()})
        return replace(session, title=title, metadata=metadata, messages=messages, attachments=attachments)


# Judged once per key, for as many keys as are common (bounded: the keys are data, and
# ``serve`` lives long; a key past the bound is judged again, as ``_CLEAN_KEYS`` does).
_KEYS_JUDGED = 1 << 16
_names_secret = lru_cache(_KEYS_JUDGED)(lambda key: SECRET_KEY.fullmatch(key) is not None)
# A key holding a secret-like word (as the keyword rules read a name before ``=`` or ``:``).
_hints_secret = lru_cache(_KEYS_JUDGED)(lambda key: SECRET_HINT.search(key) is not None)
_CONTAINERS = frozenset({MappingProxyType, dict, tuple, list})
_NUMBERS = frozenset({int, float})
_NONE: set[int] = set()  # no part of a message holds a find (never changed: ``message`` returns it as it is)
# Keys seen to name no secret and hold no hint (bounded, so at most so many are looked at on their
# own): a map whose keys are all here is judged by one set operation, its keys left out of the search.
_CLEAN_KEYS: set[str] = set()
_MAX_CLEAN_KEYS = 100_000


def _collect(value: Any, strings: list[str], keyed: list[bool]) -> None:
    """Append every string ``value`` holds (map keys that are not ``_CLEAN_KEYS`` too, in
    no particular order) to ``strings``; set ``keyed`` when a string sits under a key that
    names a secret. Written for speed: it runs over every string of every redacted view."""
    kind = type(value)
    if kind is MappingProxyType or kind is dict:
        if not _CLEAN_KEYS.issuperset(value):
            strings.extend(value)
            _judge_keys(value, keyed)
        for item in value.values():
            kind = type(item)
            if kind is str:
                strings.append(item)
            elif kind in _CONTAINERS:
                _collect(item, strings, keyed)
    elif kind is tuple or kind is list:
        for item in value:
            kind = type(item)
            if kind is str:
                strings.append(item)
            elif kind in _CONTAINERS:
                _collect(item, strings, keyed)
    elif kind is str:
        strings.append(value)


def _judge_keys(value: Mapping[str, Any], keyed: list[bool]) -> None:
    """Set ``keyed`` when a key of ``value`` names a secret and holds a string; remember the clean keys."""
    for key, item in value.items():
        if _names_secret(key) or _hints_secret(key):
            # A number only under a secret's name (``input_tokens`` holds a count: its part is not walked again).
            if type(item) is str or type(item) in _NUMBERS and _names_secret(key):
                keyed[0] = True
        elif key not in _CLEAN_KEYS and len(_CLEAN_KEYS) < _MAX_CLEAN_KEYS and not triggered(key):
            _CLEAN_KEYS.add(key)


def _gathered(messages: Sequence[Message]) -> tuple[list[str], list[int], list[int], set[int]]:
    """The strings of ``messages``; where each part's strings (a message's fields', then its
    blocks') start among them, the parts numbered across the messages; where each message's
    parts start among the parts; and the parts with a string under a key that names a
    secret. The parts' own level is walked here, not by ``_collect``: this runs for every
    block of every redacted view."""
    strings: list[str] = []
    append = strings.append
    firsts: list[int] = []
    bases: list[int] = []
    held: set[int] = set()
    keyed = [False]
    for message in messages:
        bases.append(len(firsts))
        owners: tuple[Message | Block, ...] = (message, *message.blocks)
        for owner in owners:
            part = owner.fields
            firsts.append(len(strings))
            if not _CLEAN_KEYS.issuperset(part):
                strings.extend(part)
                _judge_keys(part, keyed)
            for item in part.values():
                kind = type(item)
                if kind is str:
                    append(item)
                elif kind in _CONTAINERS:
                    _collect(item, strings, keyed)
            if keyed[0]:
                held.add(len(firsts) - 1)
                keyed[0] = False
    return strings, firsts, bases, held


_JSON_ESCAPES = re.compile(r"(?:\\u[0-9A-Fa-f]{4})+")


def _user_name(found: str) -> str:
    """A home folder's user as the name it is, however the path wrote it: percent-escaped once or twice
    (``John%20Smith``, ``Jos%25C3%25A9``), escaped for a shell (``John\\ Smith``), in JSON (``Jos\\u00e9``)
    or in Markdown (``alice\\_b``), hidden characters left out. The same user is then the same marker
    (redact.md: the same value, the same marker), not one for each way a tool wrote the path."""
    if "%" in found:
        found = unquote(unquote(found))
    if "\\u" in found:
        found = _JSON_ESCAPES.sub(lambda escapes: json.loads(f'"{escapes[0]}"'), found)
    unescaped = shown(found)
    return (unescaped[0] if unescaped else found).replace("\\ ", " ")


def _where(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out or "session"


def redacted_part(shown: object, redaction: Redaction) -> Message | Block | list[Message] | None:
    """A message, a block or a list of messages the policy shows (``None``: nothing),
    redacted on its own: markers are numbered within it, messages in order."""
    redactor = Redactor(redaction)
    if shown is None:
        return None
    if isinstance(shown, Block):
        return redactor.block(shown, ())
    if isinstance(shown, Message):
        return redactor.message(shown, 0)
    assert isinstance(shown, (list, tuple)), shown  # the policy shows a session only as a view, made apart
    return [redactor.message(message, index) for index, message in enumerate(shown)]


def redacted_line(line: str, redaction: Redaction) -> str:
    """A problem or warning line with the secrets it quotes (a key named in a location,
    a value in a message) replaced by markers numbered within the line."""
    return Redactor(redaction).text(line, ())


_HOMES = frozenset({"home", "users"})
_COMPONENT = re.compile(r"[^/\\]+")


@cache
def _own_names() -> frozenset[str]:
    """The running user's name and its home folder's (as given and as its links lead): what a
    path from ``realpath`` names where the home is a link to a folder of any other name."""
    home = os.path.expanduser("~")
    names = {os.path.basename(home), os.path.basename(os.path.realpath(home))}
    try:
        names.add(getpass.getuser())
    except (OSError, KeyError):  # no name in the environment nor the password database
        pass
    return frozenset(name.casefold() for name in names if name not in ("", "/", "\\"))


def home_spans(path: str) -> list[Span]:
    """The user folders of ``path``: a whole folder name (spaces and all) after any folder
    named ``home`` or ``Users`` in any case, wherever it stands (``/var/home`` and
    ``/usr/home``, where a linked ``/home`` leads; ``c:\\users``), and a folder named as the
    running user or their home. The prose rule stops at a space and wants ``/home`` first."""
    spans: list[Span] = []
    after_home = False
    for match in _COMPONENT.finditer(path):
        name = match.group().casefold()
        if name == ".":
            continue
        if (after_home and name not in SHARED_HOMES) or name in _own_names():
            spans.append((*match.span(), "home-user"))
        after_home = name in _HOMES
    return spans


def manifest_path(path: str, redaction: Redaction) -> str:
    """A source file's path as an index's manifest keeps it under redaction: the user
    of a home folder (or any other find) as its marker, numbered within the path. The
    same path gives the same text, so a rerun still knows an unchanged file; two users'
    files at the same place share it, and the one not named last is read again."""
    return Redactor(redaction).path(path, ())


def redacted(session: S, redaction: Redaction) -> S:
    """``session`` with its secrets replaced by markers."""
    return Redactor(redaction).session(session)


def findings(session: Session, redaction: Redaction) -> Iterator[Finding]:
    """What redaction would take out of ``session``: places and kinds, in session order."""
    redactor = Redactor(redaction)
    redactor.session(session)
    yield from redactor.findings
