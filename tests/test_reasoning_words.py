"""The one rule (R2) that judges block types, keys and flags, against look-alikes.

Generated disguises of the words R2 names: letters swapped for any of their
Unicode confusables (Cyrillic, Armenian, Greek, mathematical letters), small
capitals, fullwidth forms, digits and signs for letters, case, accents,
punctuation and invisible characters between letters, and words around.
"""

from __future__ import annotations

import json
import unicodedata
from importlib.resources import files

from hypothesis import given, strategies as st

from vis_export.contract.reasoning_words import letters_of, names_reasoning

# What R2 names, and what agents and providers call private thought.
NAMED = (
    "reasoning",
    "thinking",
    "thought",
    "thoughts",
    "redacted_thinking",
    "reasoning_content",
    "reasoning_details",
    "thinking_content",
    "private_reasoning",
    "hidden_reasoning",
    "chain_of_thought",
    "scratchpad",
)
# Keys that say why, or are ordinary data: not reasoning.
ORDINARY = ("finish_reason", "stop_reason", "reason", "text", "markdown", "tool", "output", "language", "signature")
DIGITS = {"o": "0", "i": "1", "e": "3", "a": "4", "s": "5", "t": "7", "g": "9"}


def _look_alikes() -> dict[str, list[str]]:
    """Each basic letter's look-alikes, from Unicode's confusables data and its names."""
    data = json.loads(files("confusable_homoglyphs").joinpath("confusables.json").read_text(encoding="utf-8"))
    found: dict[str, list[str]] = {}
    for letter in "abcdefghijklmnopqrstuvwxyz":
        glyphs = [g["c"] for g in data.get(letter, []) if len(g["c"]) == 1 and not g["c"].isascii()]
        try:
            glyphs.append(unicodedata.lookup(f"LATIN LETTER SMALL CAPITAL {letter.upper()}"))
        except KeyError:
            pass
        glyphs.append(chr(ord(letter) - ord("a") + 0xFF41))  # fullwidth
        found[letter] = [letter, letter.upper(), *glyphs, *DIGITS.get(letter, "")]
    return found


LOOK_ALIKES = _look_alikes()
between = st.sampled_from(["", "", "", "_", "-", " ", ".", "\u200b", "\u00ad", "\u0301"])


@st.composite
def disguised(draw: st.DrawFn, word: str) -> str:
    letters = [draw(st.sampled_from(LOOK_ALIKES.get(c, [c]))) + draw(between) for c in word]
    return draw(st.sampled_from(["", "x_", "my ", "2"])) + "".join(letters) + draw(st.sampled_from(["", "_v2", "s"]))


@given(st.sampled_from(NAMED).flatmap(disguised))
def test_every_disguise_of_a_named_word_is_reasoning(name: str) -> None:
    assert names_reasoning(name), (name, letters_of(name))


def test_the_examples_of_the_issue() -> None:
    for name in (
        "r\u0435asoning",
        "reas\u0585ning",
        "ʀᴇᴀꜱᴏɴɪɴɢ",
        "reas0ning",
        "th1nking",
        "ｔｈｏｕｇｈｔ",
        "thoughtful_reply",
    ):
        assert names_reasoning(name), name


def test_keys_that_say_why_are_not_reasoning() -> None:
    assert not any(names_reasoning(name) for name in ORDINARY)
