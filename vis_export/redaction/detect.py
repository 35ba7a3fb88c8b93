"""Finding the secret spans of one string, fast enough to run on every string of a session.

``triggered_among`` searches many strings at once (all of a session's, joined) for
``TRIGGER`` with RE2, a linear-time automaton that runs every hint in one pass:
most text holds none and costs nothing more. Only the strings that do are run
through the rules whose literal hints they hold, and detect-secrets' keyword and
entropy plugins only on their lines with a secret-like assignment.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate
from typing import TypeVar
from urllib.parse import unquote

import re2
from detect_secrets.filters.allowlist import get_allowlist_regexes
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
    KEYWORD_LINE,
    KEYWORDS,
    MARKERS,
    PLUGIN_GROUP,
    TRIGGER,
    Redaction,
    Rule,
    allow_rules,
    custom_rules,
    plugin_rules,
    self_described,
)

Span = tuple[int, int, str]  # start, end, kind

# Not secrets unless a custom rule says so (redact.md): image data, labelled
# digests, UUIDs and hex ids (git commits, digests); a built-in find inside one is
# dropped unless where it stands says it is a credential (``_CREDENTIAL_PLACES``), and in a digest or an id
# only when it is of a kind one may be taken for (``_MASKED_KINDS``).
_NOT_SECRET = re.compile(
    r"data:image/[^;,\s]*;base64,[A-Za-z0-9+/=\s]*"
    r"|\b(?:sha(?:1|224|256|384|512)|md5|blake2[bs]?)[:-][A-Za-z0-9+/=]+"
    r"|\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
    r"|\b[0-9a-f]{7,128}\b"
)

# Kinds found by where a value stands (assigned to a secret's name, after a scheme's user): a hex token there is one.
_CREDENTIAL_PLACES = frozenset({"authorization", "uri-credentials", "private-key", "secret"})
# The kinds a digest, a UUID or a hex id may be taken for: a value judged by its entropy, an address-like text.
# A provider's token has a shape no digest has, and a label before it (``sha256:AKIA…``) makes it none; an
# image's bytes are not scanned (any find in them is chance).
_MASKED_KINDS = frozenset({"high-entropy-string", "email", "home-user"})


def _masked(kind: str, start: int, end: int, masks: list[tuple[int, int, bool]], starts: list[int]) -> bool:
    """Whether a find of ``kind`` lies in an image's data, or in a digest or an id it may be taken for."""
    mask = _holding(masks, starts, start, end)
    return mask is not None and (mask[2] or kind in _MASKED_KINDS)


Held = TypeVar("Held", bound=tuple[int, ...])


def _holding(spans: Sequence[Held], starts: list[int], start: int, end: int) -> Held | None:
    """The one of ``spans`` (``starts`` their starts; found by ``finditer``: in order and apart)
    that holds ``start:end``, if one does: only the last to start at or before it can. One
    look-up a find: a walk of them all for each made a text of many finds quadratic (20 s
    for 480 KB of ``git log``'s hashes and addresses)."""
    at = bisect_right(starts, start) - 1
    return spans[at] if at >= 0 and end <= spans[at][1] else None


_LINE_PLUGINS: tuple[tuple[BasePlugin, str], ...] = (
    (KeywordDetector(), "secret"),
    (Base64HighEntropyString(limit=4.5), "high-entropy-string"),
    (HexHighEntropyString(limit=3.0), "high-entropy-string"),
)


_TRIGGER = re2.compile(TRIGGER)
_KEYWORDS = re2.compile(KEYWORD_LINE)  # as ``KEYWORDS``, in linear time (Python's tries every word at every place)
_RULES = BUILT_IN + plugin_rules()
_HINTS = tuple(sorted({hint for rule in _RULES for hint in rule.hints}))


def _hint_set() -> re2.Set:
    """Every rule's hints in one RE2 set: which of them a text holds, in one pass."""
    hints = re2.Set.SearchSet()
    for hint in _HINTS:
        hints.Add(re2.escape(hint))
    hints.Compile()
    return hints


_HINT_SET = _hint_set()
# For each hint (by its place in ``_HINTS``), the rules (by their place in ``_RULES``) it hints at;
# and the rules no hint is needed for: the rules to run on a text are found without a look at every rule.
_HINTED = tuple(frozenset(n for n, rule in enumerate(_RULES) if hint in rule.hints) for hint in _HINTS)
_UNHINTED = frozenset(n for n, rule in enumerate(_RULES) if not rule.hints)
_INLINE_FLAGS = {re.IGNORECASE: "i", re.DOTALL: "s", re.MULTILINE: "m"}


def _ascii_twin(regex: re.Pattern[str]) -> re2._Regexp | None:
    """``regex`` in RE2, for ASCII text, where its matches and groups are the same as
    Python's (RE2 finds the match a backtracking engine would, and ``\\w``, ``\\d`` and
    ``\\b`` agree on ASCII); ``None`` when it cannot be: a look-around, a flag of its
    own, ``$``, or ``\\s`` (RE2's leaves out the vertical tab and the separators 0x1c-0x1f)."""
    flags, pattern = regex.flags & ~(re.UNICODE | re.ASCII), regex.pattern
    if any(part in pattern for part in ("\\s", "\\S", "$", "(?<", "(?=", "(?!")) or flags & ~sum(_INLINE_FLAGS):
        return None  # ``$`` too: Python's also matches before a last newline
    inline = "".join(letter for flag, letter in _INLINE_FLAGS.items() if flags & flag)
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(f"(?{inline}){pattern}" if inline else pattern, options=options)
    except re2.error:
        return None


_TWINS = {id(rule): _ascii_twin(rule.regex) for rule in _RULES}
# ``_NOT_SECRET`` for ASCII text, where RE2's ``\b`` and an explicit ``\s`` mean what Python's do.
_NOT_SECRET_ASCII = re2.compile(_NOT_SECRET.pattern.replace(r"\s", r"\t\n\x0b\x0c\r\x1c-\x1f "))  # \s: in classes only


# Markdown shows a backslash before ASCII punctuation as the punctuation alone
# (CommonMark), so prose's ``ghp\_…`` reads, and is rendered, as the token ``ghp_…``;
# and no one sees a zero-width, soft-hyphen, joiner or direction character, so a token
# cut by one reads, and is copied by eye, whole.
INVISIBLE = "\u00ad\u034f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
PUNCTUATION = r"[!-/:-@\[-`{-~]"  # what a backslash escapes in Markdown
_HIDDEN = re.compile(rf"\\({PUNCTUATION})|[{INVISIBLE}]+")
_HAS_INVISIBLE = re.compile(f"[{INVISIBLE}]")


def hides(text: str) -> bool:
    """Whether ``text`` may read otherwise than written (``shown``): a backslash, or an invisible character."""
    return "\\" in text or (not text.isascii() and _HAS_INVISIBLE.search(text) is not None)


def shown(text: str) -> tuple[str, list[int]] | None:
    """``text`` as a reader sees it: Markdown's backslash escapes and the invisible
    characters taken out, with where each of its characters (and its end) stands in
    ``text``; ``None`` when it has none."""
    if not hides(text):
        return None
    pieces: list[str] = []
    origin: list[int] = []
    last = 0
    for match in _HIDDEN.finditer(text):
        pieces.append(text[last : match.start()])
        origin += range(last, match.start())
        if match.group(1):
            pieces.append(match.group(1))
            origin.append(match.start(1))
        last = match.end()
    if not pieces:
        return None
    pieces.append(text[last:])
    origin += (*range(last, len(text)), len(text))
    return "".join(pieces), origin


_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8(text: str) -> bytes:
    """``text`` as RE2 reads it: UTF-8, a lone surrogate (which no UTF-8 holds) as U+FFFD,
    one character for one, so character offsets stay. RE2 is given bytes: on ``str`` its
    wrapper decodes every match's offsets from the start of the text."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def _hit(regex: re2._Regexp, text: str) -> bool:
    return regex.search(_utf8(text)) is not None


def _starts(regex: re2._Regexp, text: str) -> Iterator[int]:
    """Where ``regex`` finds something in ``text``, as character offsets."""
    data = _utf8(text)
    if len(data) == len(text):  # ASCII: a byte is a character
        yield from (match.start() for match in regex.finditer(data))
        return
    chars = done = 0
    for match in regex.finditer(data):  # each match starts on a character: counted from the one before
        chars += len(data[done : match.start()].decode("utf-8"))
        done = match.start()
        yield chars


def triggered(text: str) -> bool:
    """Whether ``text`` may hold a built-in find, as written or as Markdown shows
    it (none is missed when it says no)."""
    return _hit(_TRIGGER, text) or _unescaped_hit(text)


def _unescaped_hit(text: str) -> bool:
    unescaped = shown(text)
    return unescaped is not None and _hit(_TRIGGER, unescaped[0])


def triggered_among(texts: Sequence[str], batch: int = 1 << 16) -> set[int]:
    """Which of ``texts`` are ``triggered``: they are joined ``batch`` at a time, each
    join searched in one RE2 pass (a search has a cost of its own, and most texts hold
    nothing), and each hit placed in its text by its offset. A text that may read
    otherwise than written (``hides``) is looked at again as shown, found by a search
    for backslashes and invisible characters, one a text."""
    hits: set[int] = set()
    for first in range(0, len(texts), batch):
        chunk = texts[first : first + batch]
        joined = SEPARATOR.join(chunk)
        # A hit may start at the separator before its text (``pin=``'s leading non-word character): the text after it.
        found = [at + (joined[at] == SEPARATOR) for at in _first_hits(joined)]
        hiding = list(_hiding(joined))
        if found or hiding:
            index = dict(zip(places := sorted({*found, *hiding}), _placed(joined, chunk, places), strict=True))
            hits.update(first + index[at] for at in found)
            hits.update(first + index[at] for at in hiding if _unescaped_hit(chunk[index[at]]))
    return hits


# Between two joined texts: a blank (``\s`` in RE2) that ends every class of ``TRIGGER``
# but ``Bearer\s``'s, which it ends, so no hint takes in a character of the next text;
# and rare in text (a page break), so where the texts end is mostly counted by it.
SEPARATOR = "\f"


def _first_hits(joined: str) -> Iterator[int]:
    """Where ``TRIGGER`` finds something in the texts ``joined`` holds: in ASCII, the first
    of each text, the next search from the next separator (past which a later hit is, even
    when a text holds one too); else every one."""
    data = _utf8(joined)
    if len(data) != len(joined):  # offsets in bytes are not in characters
        yield from _starts(_TRIGGER, joined)
        return
    at = 0
    while (match := _TRIGGER.search(data, at)) is not None:
        yield match.start()
        at = data.find(_SEPARATOR_BYTE, match.start()) + 1
        if not at:
            return


_SEPARATOR_BYTE = SEPARATOR.encode()


def _placed(joined: str, texts: Sequence[str], offsets: Sequence[int]) -> list[int]:
    """Which of ``texts`` each offset (in order) of their join is in. Each pass over the texts
    reads many objects spread in memory, so the separators before each offset are counted
    in the join instead, and their number checked: a text may hold one too."""
    indices, counted, at = [], 0, 0
    for offset in offsets:
        counted += joined.count(SEPARATOR, at, offset)
        indices.append(counted)
        at = offset
    if counted + joined.count(SEPARATOR, at) == len(texts) - 1:
        return indices
    ends = list(accumulate(map(_after_separator, map(len, texts))))  # where each text's separator ends
    return [bisect_right(ends, offset) for offset in offsets]


_after_separator = (1).__add__
_HIDING = re.compile(f"[\\\\{INVISIBLE}]")


def _hiding(joined: str) -> Iterator[int]:
    """Where a backslash or an invisible character stands in ``joined``: the first of each
    text (a later one is after the next separator, which a text may hold too: none is missed)."""
    search = None if joined.isascii() else _HIDING.search  # ASCII: no invisible character, and a backslash
    at = 0  # is found as fast as a byte is
    while True:
        if search is None:
            at = joined.find("\\", at)
        else:
            match = search(joined, at)
            at = -1 if match is None else match.start()
        if at < 0:
            return
        yield at
        at = joined.find(SEPARATOR, at) + 1
        if not at:
            return


def _group_span(match: re.Match[str], group: int | str | None) -> tuple[int, int]:
    if group is None or group == PLUGIN_GROUP:  # the last group that matched, else all of it
        for index in range(len(match.groups()), 0, -1):
            if match.group(index):
                if group is None or match.end(index) == match.end():
                    return match.span(index)
                break
        group = 0
    return match.span(group)


_EDGE = " \t\r\n\"'=:,;"


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """A span without the quotes, separators and blanks some plugin expressions take in; a
    base64 value's padding (``dXNlcjpwYXNz==``) is the value's: shown, it told its length."""
    while start < end and text[start] in _EDGE:
        start += 1
    while end > start and text[end - 1] in _EDGE:
        if text[end - 1] == "=" and (text[start:end].rstrip("=")[-1:] or "=") in _BASE64:
            break
        end -= 1
    return start, end


_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")


class Detector:
    """The spans to redact in a string under one ``Redaction``."""

    def __init__(self, redaction: Redaction):
        self.custom = custom_rules(redaction.patterns)
        self.allow = allow_rules(redaction.allow)

    def allowed(self, secret: str) -> bool:
        return any(allow.search(secret) for allow in self.allow)

    def spans(self, text: str, triggered: bool = False) -> list[Span]:
        """``triggered``: the caller knows ``text`` may hold a find (``triggered_among`` said so)."""
        found = self._found(text, triggered)
        unescaped = shown(text)
        if unescaped is not None:  # and what Markdown shows: each find's span mapped back to the text
            origin = unescaped[1]
            # A find starts where what is hidden before it starts (its escaping backslash): a
            # marker after a lone backslash would read as an escaped "[", in Markdown not a marker.
            found += [
                (origin[start - 1] + 1 if start else 0, origin[end - 1] + 1, kind)
                for start, end, kind in self._found(unescaped[0])
            ]
        if found and "[redacted: " in text:  # a marker is never taken for a secret: redacting twice changes nothing
            markers = [match.span() for match in MARKERS.finditer(text)]
            ends = [marker[1] for marker in markers]
            found = [piece for span in found for piece in _outside(text, span, markers, ends)]
        if found and self.allow:
            found = [span for span in found if not self.allowed(text[span[0] : span[1]])]
        return _merged(found)

    def _found(self, text: str, triggered: bool = False) -> list[Span]:
        found: list[Span] = []
        if len(text) > 5 and (triggered or _hit(_TRIGGER, text)):
            found = list(self._built_in_spans(text))
            if found:
                found = self._not_excluded(text, found)
        for rule in self.custom:
            found.extend(self._rule_spans(text, rule))
        return found

    def _built_in_spans(self, text: str) -> Iterator[Span]:
        data = _utf8(text)
        keyworded = _KEYWORDS.search(data) is not None
        ascii = len(data) == len(text)
        hinted = (_HINTED[index] for index in _HINT_SET.Match(data) or ())  # None from ``Match``: no hint
        for number in sorted(_UNHINTED.union(*hinted)):
            rule = _RULES[number]
            if rule.keyworded and not keyworded:
                continue
            twin = _TWINS[id(rule)] if ascii else None
            yield from self._rule_spans(text, rule, twin, data)
        if keyworded:
            yield from _line_plugin_spans(text)

    @staticmethod
    def _rule_spans(text: str, rule: Rule, twin: re2._Regexp | None = None, data: bytes = b"") -> Iterator[Span]:
        """``rule``'s finds in ``text``; by ``twin``, its RE2 form, in ``data`` (``text`` in ASCII) when given."""
        for match in twin.finditer(data) if twin is not None else rule.regex.finditer(text):
            start, end = _trimmed(text, *_group_span(match, rule.group))
            if start < end and (rule.check is None or rule.check(text[start:end])):
                yield start, end, rule.kind

    @staticmethod
    def _not_excluded(text: str, found: list[Span]) -> list[Span]:
        if text.isascii():  # bytes: no offset to decode
            masks = [(*match.span(), match[0][:5] == b"data:") for match in _NOT_SECRET_ASCII.finditer(text.encode())]
        else:
            masks = [(*match.span(), match[0][:5] == "data:") for match in _NOT_SECRET.finditer(text)]
        public = [match.span(1) for match in _PUBLIC_TOKEN.finditer(text)] if "badge.svg?" in text else []
        credentials = {start for start, _, kind in found if kind == "uri-credentials"}
        mask_starts, public_starts = [mask[0] for mask in masks], [span[0] for span in public]
        lines = _Lines(text) if "pragma" in text else None
        return [
            (start, end, kind)
            for start, end, kind in found
            if not (kind == "email" and start in credentials)  # the password of user:password@host, not an address
            and (kind in _CREDENTIAL_PLACES or not _masked(kind, start, end, masks, mask_starts))
            and not (kind in _JUDGED_KINDS and _holding(public, public_starts, start, end) is not None)
            and not (kind == "uri-credentials" and _example_credentials(text, start, end))
            and not (kind in _JUDGED_KINDS and lines is not None and _allowlisted(lines, start))
        ]


# A badge's token: codecov's graphing token, made to be shown in a README's badge (``…/graph/badge.svg?token=…``),
# at codecov's own host only and kept only from the kinds a person judges: a provider's token (``ghp_…``, a JWT)
# in such a URL, or any token in a badge-like URL of another host, is a secret.
_PUBLIC_TOKEN = re.compile(
    r"\bhttps?://(?:app\.)?codecov\.io/[^\s\"'<>()#?@]*/graph/badge\.svg\?(?:[^\s\"'<>()#]*&)?token=([A-Za-z0-9_-]+)"
)
# Hosts that no one has: the domains kept for documentation (RFC 2606). The host is what ends the authority
# (a port, a path, the end): in ``user:pw@example.com@evil.net`` or ``@example.com%2Eevil.net`` the host is another.
_HOST = re.compile(r"@([A-Za-z0-9.-]+)(?::\d*)?(?=[/?#\s\"'<>)\]`,;]|$)")
_DOCUMENTATION_DOMAINS = ("example.com", "example.net", "example.org", "example", "invalid")
_TOKEN_LOOK = re.compile(r"[A-Za-z]\d|\d[A-Za-z]")


def _example_credentials(text: str, start: int, end: int) -> bool:
    """Whether the password at ``start:end`` is an example's: a word, no letter beside a digit once
    its %-escapes are read (``p%2Fss``, ``pass``), for a host of a documentation domain. A generated
    password there (``Zq7Lp2Xw9Rt4@db.example.org``) is a real one with its host made up, and stays a secret."""
    host = _HOST.match(text, end)
    name = host[1].rstrip(".").lower() if host else ""
    return any(name == domain or name.endswith("." + domain) for domain in _DOCUMENTATION_DOMAINS) and not (
        _TOKEN_LOOK.search(unquote(text[start:end]))
    )


# Kinds a person judges, not a token's shape: detect-secrets' keyword and entropy finds, an assigned
# value. A line its pragma allowlists (``# pragma: allowlist secret``, or the line before says
# ``pragma: allowlist nextline secret``) holds none, as detect-secrets' own scanner reads it.
_JUDGED_KINDS = frozenset({"secret", "high-entropy-string"})
_BREAKS = re.compile("[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+$")
_COMMENTS = (("#", ""), ("//", ""), (r"/\*", r" *\*/"), ("'", ""), ("--", ""), (r"<!--[# \t]*?", " *?-->"))


class _Lines:
    """A text's lines as a reader (and detect-secrets' scanner, which reads with universal newlines)
    sees them, where each ends, and whether each is allowlisted once known: split, and each line
    judged, once for all of a text's finds (a long line of many finds, each of which judged the
    whole line again, took 31 CPU-s for 70 KB)."""

    def __init__(self, text: str):
        self.lines = text.splitlines(keepends=True)
        self.ends = list(accumulate(map(len, self.lines)))
        self.judged: dict[int, bool] = {}


def _allowlisted(lines: _Lines, at: int) -> bool:
    """Whether detect-secrets' pragma allowlists the line of ``at`` in the text of ``lines``."""
    number = bisect_right(lines.ends, at)  # the first line that ends after ``at``
    judged = lines.judged.get(number)
    if judged is None:
        line = lines.lines[number] if number < len(lines.lines) else ""
        previous = lines.lines[number - 1] if number else ""
        judged = lines.judged[number] = _pragma_allows(line, previous)
    return judged


def _pragma_allows(line: str, previous: str) -> bool:
    """Whether detect-secrets' pragma on ``line`` or the one before allowlists ``line``. A line ends
    at any break a reader sees: a lone ``\r`` or U+2028 puts a pragma after it on a line of its own,
    which allowlists nothing on the secret's."""
    line, previous = _BREAKS.sub("", line), _BREAKS.sub("", previous)
    return any(get_allowlist_regexes(comment, False).search(line) for comment in _COMMENTS) or any(
        get_allowlist_regexes(comment, True).search(previous) for comment in _COMMENTS
    )


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
    if len(secret) < 4 or is_sequential_string(secret) or is_templated_secret(secret) or self_described(secret):
        return False
    if is_prefixed_with_dollar_sign(secret) or is_likely_id_string(secret, line, plugin):
        return False
    if isinstance(plugin, HighEntropyStringsPlugin):
        return plugin.calculate_shannon_entropy(secret) > plugin.entropy_limit
    return True


def _outside(text: str, span: Span, markers: list[tuple[int, int]], ends: list[int]) -> Iterator[Span]:
    """The parts of a find that no marker covers: a marker inside one (a line of a private
    key, a custom pattern's words) leaves the rest of it a secret, not a find to drop.
    ``markers`` in order and apart (``ends``: their ends), so only those from the first that
    ends after the find's start are looked at (each find walked them all: a text redacted
    again, of many markers and finds, took quadratic time)."""
    start, end, kind = span
    for number in range(bisect_right(ends, start), len(markers)):
        a, b = markers[number]
        if end <= a:
            break
        if start < a:
            yield from _trimmed_span(text, start, a, kind)
        start = max(start, b)
    if start < end:
        yield from _trimmed_span(text, start, end, kind)


def _trimmed_span(text: str, start: int, end: int, kind: str) -> Iterator[Span]:
    start, end = _trimmed(text, start, end)
    if start < end:
        yield start, end, kind


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
