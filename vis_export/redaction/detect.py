"""Finding the secret spans of one string, fast enough to run on every string of a session.

``triggered`` searches a whole text (the strings of a message or block joined) for
``TRIGGER`` with RE2, a linear-time automaton that runs every hint in one pass:
most text holds none and costs nothing more. Only the strings of text that does
are run through the rules whose literal hints they hold, and detect-secrets'
keyword and entropy plugins only on their lines with a secret-like assignment.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import re2
from detect_secrets.filters.heuristic import (
    is_indirect_reference,
    is_likely_id_string,
    is_prefixed_with_dollar_sign,
    is_sequential_string,
    is_templated_secret,
)
from detect_secrets.plugins.base import BasePlugin
from detect_secrets.plugins.high_entropy_strings import (
    Base64HighEntropyString,
    HexHighEntropyString,
    HighEntropyStringsPlugin,
)
from detect_secrets.plugins.keyword import KeywordDetector

from vis_export.redaction.rules import (
    BUILT_IN,
    KEYWORDS,
    MARKERS,
    TRIGGER,
    Redaction,
    Rule,
    allow_rules,
    custom_rules,
    plugin_rules,
)

Span = tuple[int, int, str]  # start, end, kind

# Not secrets unless a custom rule says so (redact.md): image data, labelled
# digests, UUIDs and hex ids (git commits, digests); a built-in find inside one is
# dropped, unless where it stands says it is a credential (``_CREDENTIAL_PLACES``).
_NOT_SECRET = re.compile(
    r"data:image/[^;,\s]*;base64,[A-Za-z0-9+/=\s]*"
    r"|\b(?:sha(?:1|224|256|384|512)|md5|blake2[bs]?)[:-][A-Za-z0-9+/=]+"
    r"|\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
    r"|\b[0-9a-f]{7,128}\b"
)

# Kinds found by where a value stands (assigned to a secret's name, after a scheme's user): a hex token there is one.
_CREDENTIAL_PLACES = frozenset({"authorization", "uri-credentials", "private-key", "secret"})

_LINE_PLUGINS: tuple[tuple[BasePlugin, str], ...] = (
    (KeywordDetector(), "secret"),
    (Base64HighEntropyString(limit=4.5), "high-entropy-string"),
    (HexHighEntropyString(limit=3.0), "high-entropy-string"),
)


_TRIGGER = re2.compile(TRIGGER)
_RULES = BUILT_IN + plugin_rules()


# Markdown shows a backslash before ASCII punctuation as the punctuation alone
# (CommonMark), so prose's ``ghp\_…`` reads, and is rendered, as the token ``ghp_…``.
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def shown(text: str) -> tuple[str, list[int]] | None:
    """``text`` with Markdown's backslash escapes taken out, and where each of its
    characters (and its end) stands in ``text``; ``None`` when it has none."""
    if "\\" not in text:
        return None
    pieces: list[str] = []
    origin: list[int] = []
    last = 0
    for match in _ESCAPE.finditer(text):
        pieces += (text[last : match.start()], match.group(1))
        origin += (*range(last, match.start()), match.start(1))
        last = match.end()
    if not pieces:
        return None
    pieces.append(text[last:])
    origin += (*range(last, len(text)), len(text))
    return "".join(pieces), origin


def triggered(text: str) -> bool:
    """Whether ``text`` may hold a built-in find, as written or as Markdown shows
    it (none is missed when it says no)."""
    if _TRIGGER.search(text) is not None:
        return True
    unescaped = shown(text)
    return unescaped is not None and _TRIGGER.search(unescaped[0]) is not None


def trigger_starts(text: str) -> Iterator[int]:
    """Where in ``text`` something that may be a find starts (as written, then as Markdown shows it)."""
    yield from (match.start() for match in _TRIGGER.finditer(text))
    unescaped = shown(text)
    if unescaped is not None:
        yield from (unescaped[1][match.start()] for match in _TRIGGER.finditer(unescaped[0]))


def _group_span(match: re.Match[str], group: int | str | None) -> tuple[int, int]:
    if group is None:  # the last group that matched, else all of it
        for index in range(len(match.groups()), 0, -1):
            if match.group(index):
                return match.span(index)
        group = 0
    return match.span(group)


_EDGE = " \t\r\n\"'=:,;"


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """A span without the quotes, separators and blanks some plugin expressions take in."""
    while start < end and text[start] in _EDGE:
        start += 1
    while end > start and text[end - 1] in _EDGE:
        end -= 1
    return start, end


class Detector:
    """The spans to redact in a string under one ``Redaction``."""

    def __init__(self, redaction: Redaction):
        self.custom = custom_rules(redaction.patterns)
        self.allow = allow_rules(redaction.allow)

    def allowed(self, secret: str) -> bool:
        return any(allow.search(secret) for allow in self.allow)

    def spans(self, text: str) -> list[Span]:
        found = self._found(text)
        unescaped = shown(text)
        if unescaped is not None:  # and what Markdown shows: each find's span mapped back to the text
            origin = unescaped[1]
            found += [(origin[start], origin[end - 1] + 1, kind) for start, end, kind in self._found(unescaped[0])]
        if found and "[redacted: " in text:  # a marker is never taken for a secret: redacting twice changes nothing
            markers = [match.span() for match in MARKERS.finditer(text)]
            found = [span for span in found if not any(a < span[1] and span[0] < b for a, b in markers)]
        if found and self.allow:
            found = [span for span in found if not self.allowed(text[span[0] : span[1]])]
        return _merged(found)

    def _found(self, text: str) -> list[Span]:
        found: list[Span] = []
        if len(text) > 5 and _TRIGGER.search(text) is not None:
            found = list(self._built_in_spans(text))
            if found:
                found = self._not_excluded(text, found)
        for rule in self.custom:
            found.extend(self._rule_spans(text, rule))
        return found

    def _built_in_spans(self, text: str) -> Iterator[Span]:
        keyworded = KEYWORDS.search(text) is not None
        for rule in _RULES:
            if (rule.keyworded and not keyworded) or (rule.hints and not any(hint in text for hint in rule.hints)):
                continue
            yield from self._rule_spans(text, rule)
        if keyworded:
            yield from _line_plugin_spans(text)

    @staticmethod
    def _rule_spans(text: str, rule: Rule) -> Iterator[Span]:
        for match in rule.regex.finditer(text):
            start, end = _trimmed(text, *_group_span(match, rule.group))
            if start < end and (rule.check is None or rule.check(text[start:end])):
                yield start, end, rule.kind

    @staticmethod
    def _not_excluded(text: str, found: list[Span]) -> list[Span]:
        masks = [match.span() for match in _NOT_SECRET.finditer(text)]
        credentials = {start for start, _, kind in found if kind == "uri-credentials"}
        return [
            (start, end, kind)
            for start, end, kind in found
            if not (kind == "email" and start in credentials)  # the password of user:password@host, not an address
            and (kind in _CREDENTIAL_PLACES or not any(a <= start and end <= b for a, b in masks))
        ]


def _line_plugin_spans(text: str) -> Iterator[Span]:
    """detect-secrets' keyword and entropy plugins on each line with a secret-like assignment,
    their finds passed through its own false-positive filters (as its scanner does)."""
    offset = 0
    for line in text.splitlines(keepends=True):
        if KEYWORDS.search(line) and not is_indirect_reference(line):
            for plugin, kind in _LINE_PLUGINS:
                for secret in set(plugin.analyze_string(line)):
                    if _plausible(secret, line, plugin):
                        for match in re.finditer(re.escape(secret), line):
                            yield offset + match.start(), offset + match.end(), kind
        offset += len(line)


def _plausible(secret: str, line: str, plugin: BasePlugin) -> bool:
    if len(secret) < 4 or is_sequential_string(secret) or is_templated_secret(secret):
        return False
    if is_prefixed_with_dollar_sign(secret) or is_likely_id_string(secret, line, plugin):
        return False
    if isinstance(plugin, HighEntropyStringsPlugin):
        return plugin.calculate_shannon_entropy(secret) > plugin.entropy_limit
    return True


def _merged(found: list[Span]) -> list[Span]:
    """Spans in order, overlapping ones made one (the earliest, then longest, names the kind)."""
    if len(found) < 2:
        return found
    found.sort(key=lambda span: (span[0], -span[1]))
    merged = [found[0]]
    for start, end, kind in found[1:]:
        last_start, last_end, last_kind = merged[-1]
        if start < last_end:
            merged[-1] = (last_start, max(last_end, end), last_kind)
        else:
            merged.append((start, end, kind))
    return merged
