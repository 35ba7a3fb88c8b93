"""Keys as another tool wrote them.

The contract allows only snake_case keys, so an importer renames a foreign
map's other keys (``activeForm`` -> ``active_form``, see ``sources/foreign.py``)
and keeps each one's source spelling in the block's ``original_keys``: a list
of ``{"path": [field, key or index, ...], "key": "activeForm"}``, the path
naming the renamed key as stored. A provider replay gives a tool's arguments
back as the tool takes them; every other projection shows the stored keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vis_export.contract.reasoning_words import names_reasoning
from vis_export.model import thaw


def as_written(fields: Mapping[str, Any], name: str) -> Any:
    """The block's field ``name`` as plain JSON, with each renamed key spelt as the
    source wrote it. An entry that does not fit (its place gone, hidden by the
    policy, or its spelling already taken) leaves that key as stored."""
    value = thaw(fields[name])
    renames = [
        (entry["path"][1:], entry["key"])
        for entry in _entries(fields.get("original_keys"))
        if entry["path"][0] == name and len(entry["path"]) > 1
    ]
    # The deepest first: a path names the keys above it as stored, so those are renamed last.
    for path, key in sorted(renames, key=lambda rename: len(rename[0]), reverse=True):
        holder = _at(value, path[:-1])
        if isinstance(holder, dict) and path[-1] in holder and key not in holder:
            items = list(holder.items())
            holder.clear()
            holder.update((key if k == path[-1] else k, v) for k, v in items)
    return value


def _entries(found: Any) -> list[Mapping[str, Any]]:
    """The well-formed entries of an ``original_keys`` field (it may hold anything);
    none that would give a key a name of private reasoning (R2), which an importer never keeps."""
    if not isinstance(found, (list, tuple)):
        return []
    return [
        entry
        for entry in found
        if isinstance(entry, Mapping)
        and isinstance(entry.get("key"), str)
        and not names_reasoning(entry["key"])
        and isinstance(entry.get("path"), (list, tuple))
        and len(entry["path"]) > 0
        and all(isinstance(step, (str, int)) and not isinstance(step, bool) for step in entry["path"])
    ]


def _at(value: Any, path: Any) -> Any:
    for step in path:
        if isinstance(value, dict) and isinstance(step, str) and step in value:
            value = value[step]
        elif isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value):
            value = value[step]
        else:
            return None
    return value
