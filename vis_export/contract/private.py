"""Where private reasoning starts in loaded JSON, for what problem lines may say (R2).

A problem line names its place, and its message may quote a value or spell
keys. Under private reasoning neither may reach the line: it names the place up
to the reasoning and says ``WITHHELD``. The same predicates pick, when a JSON
key is duplicated and the input is read leniently, the reading that hides more.

What counts as reasoning is judged by ``reasoning_words``, the one rule for
block types, map keys and flags, so that a change of the rule reaches problem
lines as it reaches the policy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from vis_export.contract.reasoning_words import is_reasoning_map, names_reasoning
from vis_export.problems import Path

WITHHELD = "details withheld (private reasoning)"
# Fields a reasoning block has by the contract: naming one of them says nothing
# of what the block holds.
REASONING_FIELDS = frozenset({"id", "type", "text", "visibility"})


def reasoning_map(value: Mapping[str, Any]) -> bool:
    """Whether a map is private reasoning, or may be: the policy's own map rule (a type or Lonis kind
    that names reasoning, a ``visibility`` other than exactly ``visible``, a true reasoning flag)."""
    return is_reasoning_map(value)


def holds_reasoning(value: Any, depth: int = 0) -> bool:
    """Whether a value is or holds private reasoning anywhere (a reasoning map, a
    key that names reasoning). Past ``_DEEPEST`` levels it is taken to hold some:
    the answer is only ever used to say less."""
    if depth > _DEEPEST:
        return isinstance(value, (dict, list))
    if isinstance(value, dict):
        if reasoning_map(value) or any(names_reasoning(key) for key in value):
            return True
        return any(holds_reasoning(item, depth + 1) for item in value.values() if isinstance(item, (dict, list)))
    if isinstance(value, list):
        return any(holds_reasoning(item, depth + 1) for item in value if isinstance(item, (dict, list)))
    return False


_DEEPEST = 200


def reasoning_point(value: Any, path: Path, judge: Callable[[dict[str, Any]], bool] = reasoning_map) -> int | None:
    """How many parts of ``path`` (into ``value``) lead to where private reasoning
    starts along it, or ``None`` if it does not: a map that is reasoning (as
    ``judge`` says: ``reasoning_map``, or a memo of it for many paths through
    the same maps) ends the place at that map, a key that names reasoning at that key."""
    for depth, part in enumerate(path):
        if isinstance(value, dict):
            if judge(value):
                return depth
            if names_reasoning(part):
                return depth + 1
            value = value.get(part)
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            value = value[part]
        else:
            return None
    if isinstance(value, dict) and judge(value):
        return len(path)
    return None


def remembered(judge: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """``judge`` asked once per object (while the objects live): many problems of
    one document pass through the same wide maps."""
    answers: dict[int, bool] = {}

    def remembering(value: Any) -> bool:
        key = id(value)
        if key not in answers:
            answers[key] = judge(value)
        return answers[key]

    return remembering
