"""Index documents: the short cuts of making them change nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import given, strategies as st
from strategies import json_values

from vis_export.model import freeze
from vis_export.searchindex.documents import readable


def _lines(value: Any, indent: str) -> Iterator[str]:
    """``readable`` as it was defined, every value told apart by ``isinstance`` and written by ``json.dumps``."""
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            if isinstance(item, (Mapping, list, tuple)) and item:
                yield f"{indent}{key}:"
                yield from _lines(item, indent + "  ")
            else:
                text = _scalar(item)
                yield from (f"{indent}{key}:", text) if "\n" in text else (f"{indent}{key}: {text}".rstrip(),)
    elif isinstance(value, (list, tuple)) and value:
        for item in value:
            yield from _lines(item, indent)
    else:
        text = _scalar(value)
        yield text if "\n" in text else indent + text


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (Mapping, list, tuple)):
        return "{}" if isinstance(value, Mapping) else "[]"
    return json.dumps(value)


@given(json_values | st.integers(-(2**70), 2**70) | st.floats())
def test_readable_text_is_its_definition(value: Any) -> None:
    """Plain and frozen (as the model holds them): maps, lists, strings, integers, constants, floats."""
    for form in (value, freeze(value)):
        assert readable(form) == "\n".join(_lines(form, ""))
