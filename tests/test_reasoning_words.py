"""The one rule (R2) that judges block types, keys and flags, against look-alikes.

Generated disguises of the words R2 names: letters swapped for any of their
Unicode confusables (Cyrillic, Armenian, Greek, mathematical letters), small
capitals, fullwidth forms, digits and signs for letters, case, accents,
punctuation and invisible characters between letters, and words around.
"""

from __future__ import annotations

from hypothesis import given, strategies as st
from strategies import REASONING_NAMES, disguised

from vis_export.contract.reasoning_words import letters_of, names_reasoning

# Keys that say why, or are ordinary data: not reasoning.
ORDINARY = ("finish_reason", "stop_reason", "reason", "text", "markdown", "tool", "output", "language", "signature")


@given(st.sampled_from(REASONING_NAMES).flatmap(disguised))
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
        "тhinking",  # Cyrillic т, which passes for the small capital ᴛ
        "τhinking",  # Greek τ, the same
        "tнink",  # Cyrillic н for ʜ
        "thinк",  # Cyrillic к, listed beside ĸ, which is listed beside ᴋ
    ):
        assert names_reasoning(name), name


def test_keys_that_say_why_are_not_reasoning() -> None:
    assert not any(names_reasoning(name) for name in ORDINARY)


def test_a_type_that_is_not_a_string_names_reasoning_only_by_the_strings_it_lists() -> None:
    from types import MappingProxyType

    from vis_export.contract.reasoning_words import is_reasoning_map

    frozen_kind = MappingProxyType({"k": (MappingProxyType({"k": "thinking"}),)})
    assert not is_reasoning_map(MappingProxyType({"type": ("note",), "kind": frozen_kind, "text": "x"}))
    assert is_reasoning_map(MappingProxyType({"type": ("note", ["Thinking"]), "text": "x"}))
    assert is_reasoning_map({"type": ["x"], "text": "x", "th0ught": True})
    assert not is_reasoning_map({"text": "x", "thought": False})
