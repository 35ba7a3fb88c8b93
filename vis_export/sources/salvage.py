"""What ``--lenient`` exports from invalid input: everything that can be shown safely.

The problems are still reported (as warnings); this only decides what to keep:
an envelope value that is merely mis-cased (``"Assistant"``, ``":user"``) is
read as meant, a message whose role or status cannot be read is left out, a
block that breaks its type's contract is kept as an unknown block (shown only
as inert data), and a block that is not even an object is left out. A block or
message envelope with a limit problem (nesting too deep, a time no format can
show) is left out too: keeping it would only move the failure to the export.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from vis_export.contract import MESSAGE_ROLES, MESSAGE_STATUSES, check_block, check_message
from vis_export.contract.check import LIMIT, MAX_TIME
from vis_export.model import Block, Message, UnknownBlock, block_from_json, freeze, message_from_json
from vis_export.problems import Problem


def _enum(value: Any, allowed: tuple[str, ...]) -> str | None:
    if not isinstance(value, str):
        return None
    meant = value.strip().lstrip(":").lower()
    return meant if meant in allowed else None


def time_or_none(value: Any) -> int | None:
    """``value`` if it is a time every format can show."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TIME else None


def _block(value: Any, index: int) -> Block | None:
    if not isinstance(value, dict):
        return None
    data = dict(value)
    if not isinstance(data.get("id"), str) or not data["id"].strip():
        data["id"] = f"block_{index}"
    if not isinstance(data.get("type"), str):
        # A block that does not say what it is may be reasoning (under any field
        # name): typed so, it is private unless authorised (R2), never shown as data.
        data["type"] = "reasoning"
    problems: list[Problem] = []
    check_block(data, (), problems)
    if any(p.kind == LIMIT for p in problems):
        return None
    if not [p for p in problems if p.kind == "schema"]:
        return block_from_json(data)
    return UnknownBlock(freeze(data))


def salvage_message(value: Any, index: int) -> Message | None:
    """A message to show from an invalid one, or ``None`` when there is none."""
    if not isinstance(value, dict):
        return None
    role, status = _enum(value.get("role"), MESSAGE_ROLES), _enum(value.get("status"), MESSAGE_STATUSES)
    if role is None or status is None:
        return None
    created = time_or_none(value.get("created_at")) or 0
    envelope: dict[str, Any] = {**value, "role": role, "status": status, "content": [], "created_at": created}
    if not isinstance(envelope.get("id"), str) or not envelope["id"].strip():
        envelope["id"] = f"message_{index}"
    completed = time_or_none(value.get("completed_at"))
    if completed is None or completed < created:
        envelope.pop("completed_at", None)
    for field in ("model", "provider"):
        if not isinstance(envelope.get(field), str):
            envelope.pop(field, None)
    problems: list[Problem] = []
    check_message(envelope, (), problems)
    if any(p.kind == LIMIT for p in problems):
        return None
    content: list[Any] = value["content"] if isinstance(value.get("content"), list) else []
    blocks = tuple(b for b in (_block(item, i) for i, item in enumerate(content)) if b is not None)
    return replace(message_from_json(envelope), blocks=blocks)


def salvage_messages(values: list[Any]) -> tuple[Message, ...]:
    return tuple(m for m in (salvage_message(v, i) for i, v in enumerate(values)) if m is not None)
