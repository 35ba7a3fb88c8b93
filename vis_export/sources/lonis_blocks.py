"""Lonis blocks as a source (``docs/sources.md``, Lonis blocks): a block, an array, or JSON Lines.

A set of blocks becomes one session, one message per block, in file order: a
block is one act of one participant, and grouping by attribution would reorder
what was said. The role is the ``message`` kind's own ``role`` when it is a
Vis role, else ``assistant``; the author is the attribution's identity.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from vis_export.contract import MAX_TIME, MESSAGE_ROLES, check_depth
from vis_export.contract.lonis_check import check_lonis_block
from vis_export.model import LonisBlock, Message, Session, freeze, message_from_json
from vis_export.problems import Problem
from vis_export.sources.result import LoadResult, failed
from vis_export.timefmt import aware, epoch_ms


def _created(block: dict[str, Any]) -> int:
    """``when`` in ms, clamped to the times a format can show (a valid ISO time
    may lie a few hours past the year 9999 in UTC)."""
    when = ((block.get("attribution") or {}).get("provenance") or {}).get("when")
    try:
        moment = epoch_ms(aware(datetime.fromisoformat(str(when).replace("Z", "+00:00"))))
    except (ValueError, OverflowError):
        return 0
    return min(max(0, moment), MAX_TIME)


def _message(block: dict[str, Any], block_id: str) -> dict[str, Any]:
    payload = block["payload"]
    role = (payload.get("data") or {}).get("role") if payload.get("kind") == "message" else None
    created = _created(block)
    return {
        "id": block_id,
        "role": role if role in MESSAGE_ROLES else "assistant",
        "status": "completed",
        "content": [{"id": f"{block_id}_block", "type": "lonis", "envelope": block}],
        "created_at": created,
        "author": {"display_name": block["attribution"]["identity"]},
    }


def lonis_blocks(items: list[tuple[str, Any]], source: str, default_id: str) -> LoadResult:
    """``items`` pairs each block with where it is (``line 3``, ``[2]``, or "")."""
    problems: list[Problem] = []
    for where, block in items:
        found: list[Problem] = []
        check_depth(block, (), found)  # before the schema check, which recurses without a bound
        problems.extend(p.at(where) for p in found or check_lonis_block(block))
    if problems:
        return LoadResult(source, None, tuple(problems))
    if not items:
        return failed(source, Problem("", "no Lonis blocks"))
    messages = tuple(_lonis_message(block, f"{default_id}_{n}") for n, (_, block) in enumerate(items, 1))
    return LoadResult(source, Session(id=default_id, messages=messages, source=source))


def _lonis_message(block: dict[str, Any], block_id: str) -> Message:
    """The message of a block checked above: its envelope is not checked again."""
    envelope = _message(block, block_id)
    (carried,) = envelope["content"]
    return replace(message_from_json({**envelope, "content": []}), blocks=(LonisBlock(freeze(carried)),))
