"""The one rule (R2) that says whether a block type, a map key or a flag names reasoning.

A name is folded to the Latin letters a reader sees, then searched for the
words agents and providers use for private thought. Folding takes, in order:
compatibility forms and accents (NFKD: fullwidth ``ｒ``, ``é``), case, Unicode's
confusables (the table ``confusable-homoglyphs`` ships: Cyrillic ``е``,
Armenian ``օ``, mathematical letters), Latin letters Unicode names as another
letter's small capital, dotless or barred form (``ʀᴇᴀꜱᴏɴɪɴɢ``, ``ı``, ``ø``),
and digits and signs written for letters (``reas0ning``, ``th1nking``). Every
other character is dropped, so spacing, punctuation and invisible characters
(``reasoning_v2``, ``r-e-a-s-o-n-i-n-g``, a zero-width space) do not hide a word.

The words are searched *inside* the letters, not matched whole: the word
boundary is exactly what disguises play with. So ``thoughtful_reply`` counts
too: a field hidden by mistake costs a line of output, a disguise let through
leaks. ``reason`` alone is not a word here (``finish_reason``, an error's
``reason`` say why, not how a model thought): ``reasoning`` is. No word has an
``l``, so the glyphs that pass for ``i`` (``1 l | !``) all fold to ``i``.

A map is reasoning when its type (or a Lonis payload's kind) names reasoning,
its visibility is anything but exactly ``visible``, or it carries a flag so
named that says yes (``"thought": true``, ``1`` or ``"true"``): the policy
hides such a map whole, wherever it sits, and a key so named hides its value.
"""

from __future__ import annotations

import json
import re
import string
import unicodedata
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

# What is searched for in the folded letters.
REASONING_WORDS = ("reasoning", "think", "thought", "scratchpad")

# Digits and ASCII signs written for letters (Unicode's confusables take ``1``
# for ``l`` and leave most digits alone: these are read as the letter they stand for).
_DIGITS_AND_SIGNS = str.maketrans("0123456789|!@$l", "oizeasgtbgiiasi")
_BASIC_LETTERS = frozenset(string.ascii_letters)
_NOT_LETTERS = re.compile(r"[^a-z]+")
# Latin letters Unicode names as a form of one basic letter.
_FORM_OF_LETTER = re.compile(r"LATIN (?:SMALL |CAPITAL )?LETTER (?:SMALL CAPITAL |DOTLESS )?([A-Z])(?: WITH .*)?$")
# The Unicode blocks of Latin letters beyond ASCII (Latin-1 to Latin Extended-G).
_LATIN_RANGES = (
    (0x00C0, 0x0250),
    (0x0250, 0x02B0),
    (0x1D00, 0x1DC0),
    (0x1E00, 0x1F00),
    (0x2C60, 0x2C80),
    (0xA720, 0xA800),
    (0xAB30, 0xAB70),
    (0x1DF00, 0x1E000),
)


@cache
def _fold_table() -> dict[int, str]:
    """Every character that passes for a basic Latin letter, to that letter.

    Made on first need from Unicode's data (only a name with a character
    outside ASCII needs it), once a process."""
    from importlib.resources import files  # 10 ms of imports (tempfile, shutil): here, where it is needed

    table: dict[int, str] = {}
    data = files("confusable_homoglyphs").joinpath("confusables.json").read_text(encoding="utf-8")
    confusables: dict[str, list[dict[str, str]]] = json.loads(data)
    # Each character lists what it is confused with, not always both ways:
    # a letter's own list is read too.
    for char, homoglyphs in confusables.items():
        glyphs = [glyph["c"] for glyph in homoglyphs if len(glyph["c"]) == 1 and not glyph["c"].isascii()]
        pairs = [(glyph, char) for glyph in glyphs] if char in _BASIC_LETTERS else []
        if len(char) == 1 and not char.isascii():
            pairs += [(char, glyph["c"]) for glyph in homoglyphs if glyph["c"] in _BASIC_LETTERS]
        for glyph, letter in pairs:
            table.setdefault(ord(glyph), letter.lower())
    # Then forms Unicode names (small capitals are not in the confusables).
    for start, end in _LATIN_RANGES:
        for point in range(start, end):
            found = _FORM_OF_LETTER.match(unicodedata.name(chr(point), ""))
            if found:
                table.setdefault(point, found.group(1).lower())
    # Then, until nothing is added, what passes for a character already known:
    # Cyrillic ``т`` and Greek ``τ`` for ``ᴛ``, Cyrillic ``н`` for ``ʜ``, ``ĸ`` for
    # ``ᴋ`` and Cyrillic ``к`` for ``ĸ`` (the confusables list them beside the small
    # capital or another look-alike, not beside the letter).
    confused = [
        (ord(char), ord(glyph["c"]))
        for char, homoglyphs in confusables.items()
        for glyph in homoglyphs
        if len(char) == 1 and len(glyph["c"]) == 1 and not (char + glyph["c"]).isascii()
    ]
    added = True
    while added:
        added = False
        for one, other in confused:
            for known, new in ((one, other), (other, one)):
                if known in table and new not in table:
                    table[new] = table[known]
                    added = True
    return table


def letters_of(text: str) -> str:
    """The basic Latin letters a reader sees in ``text``, lower case."""
    folded = text.casefold()
    if not folded.isascii():
        # Each step can make another look-alike: a sign the table knows that
        # NFKD splits (``˛``), a letter case folding turns (Cherokee ``ꮁ`` to ``Ꮁ``).
        table = _fold_table()
        folded = unicodedata.normalize("NFKD", text.translate(table)).translate(table).casefold().translate(table)
        folded = unicodedata.normalize("NFKD", folded)
    return _NOT_LETTERS.sub("", folded.translate(_DIGITS_AND_SIGNS))


def _judge(name: object) -> bool:
    """Whether a type, key or flag called ``name`` names reasoning (see the module's
    rule); a name that is not a string (a map's key ``7``) names nothing."""
    if not isinstance(name, str):
        return False
    letters = letters_of(name)
    return any(word in letters for word in REASONING_WORDS)


class _Judged(dict[object, bool]):
    """``_judge``'s answers, at most ``_JUDGED_AT_MOST`` of them (hostile input may use
    any number of names): every key and type of every export is asked, and sessions
    repeat a few. A dict's own lookup, not ``lru_cache``'s (which makes a key tuple
    a call): a Claude Code entry or its message is judged in 6.2k instructions, not 8.0k."""

    def __missing__(self, name: object) -> bool:
        if len(self) >= _JUDGED_AT_MOST:
            self.clear()
        judged = self[name] = _judge(name)
        return judged


_JUDGED_AT_MOST = 8192
# Whether a type, key or flag called ``name`` names reasoning (``_judge``); ``name`` must
# be hashable: a map's key, or a value checked to be a string.
names_reasoning: Callable[[object], bool] = _Judged().__getitem__


# --- maps: the same rule for a map's type, its keys and its flags ----------------------------


def _flag_set(value: object) -> bool:
    """Whether a flag's value says yes: ``true``, ``1`` or the word ``"true"``."""
    kind = type(value)
    if kind is bool or kind is int or kind is float:
        return value == 1
    return kind is str and value.strip().casefold() == "true"  # type: ignore[attr-defined]


# The keys ``says_reasoning`` reads: a map with none of them says nothing (a caller judging
# every message of every export looks at its keys first, at C speed).
SAYING_KEYS = frozenset({"type", "kind", "visibility"})


def says_reasoning(value: Mapping[str, Any]) -> bool:
    """A map whose type (or a Lonis payload's kind) names reasoning, or whose
    visibility is anything but exactly ``visible``."""
    # Asked of every entry an importer reads and every message exported: a string type
    # is judged without a call to ``_named``, and an absent kind without any.
    kind = value.get("type")
    if names_reasoning(kind) if type(kind) is str else _named(kind):
        return True
    kind = value.get("kind")
    return (kind is not None and _named(kind)) or value.get("visibility", "visible") != "visible"


def _named(value: object) -> bool:
    """Whether a type or kind names reasoning: a string, or a list holding one."""
    if type(value) is str:
        return names_reasoning(value)
    return type(value) in (list, tuple) and any(_named(item) for item in value)  # type: ignore[attr-defined]


def is_reasoning_map(value: Mapping[str, Any]) -> bool:
    """A map that is reasoning: it says so, or carries a true flag that names
    reasoning (Gemini's ``{"text": ..., "thought": true}``)."""
    # Its keys judged at C speed first: ``flagged`` is called only for a key that names reasoning (rare).
    return says_reasoning(value) or (any(map(names_reasoning, value)) and flagged(value))


def flagged(value: Mapping[str, Any]) -> bool:
    """Whether a map carries a true flag that names reasoning."""
    return any(map(names_reasoning, value)) and any(  # rare: the flags are looked at only then
        names_reasoning(key) and _flag_set(item) for key, item in value.items()
    )
