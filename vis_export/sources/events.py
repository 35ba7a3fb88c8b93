"""Gateway event logs folded into messages (``sources.md`` section 2).

A log may hold several sessions (``session_id``), each with its own ``seq``
(it increases per session): every session is folded on its own and yielded as
its own result, so a problem in one fails that one only. Within a session,
events are applied in ``seq`` order, a repeated ``seq`` once; each turn becomes
an assistant message. A turn the log never ends was interrupted: it is kept as
``cancelled`` with what the user saw, and a ``turn_interrupted`` notice is added
to the model (never to the source).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vis_export.contract import check_event
from vis_export.contract.check import EVENT_TYPES, TERMINAL_EVENTS
from vis_export.contract.private import WITHHELD, reasoning_map
from vis_export.model import Session, message_from_json
from vis_export.problems import Problem
from vis_export.sources.result import LoadResult

# The one field a streaming block may grow, by block type (the content-block protocol).
STREAMING_FIELDS = {"prose": "markdown", "reasoning": "text"}
INTERRUPTED_NOTICE = "The turn was interrupted before it finished."


def is_gateway_event(value: Any) -> bool:
    """Any gateway event line (``queue.paused`` too): a dotted ``type``, no ``role``."""
    return (
        isinstance(value, dict) and "role" not in value and isinstance(value.get("type"), str) and "." in value["type"]
    )


@dataclass
class _Block:
    data: dict[str, Any]
    chunks: list[str] = field(default_factory=list)
    completed: bool = False
    private: bool = False  # an event of it said it is reasoning (R2)

    def value(self) -> dict[str, Any]:
        name = STREAMING_FIELDS.get(self.data["type"])
        if self.private:  # its streamed text is private reasoning; nothing else of it is read
            text = self.data[name] + "".join(self.chunks) if name else ""
            return {"id": self.data["id"], "type": "reasoning", "text": text, "visibility": "private"}
        if not self.chunks or name is None:  # only a streaming block has chunks (``delta``)
            return self.data
        return {**self.data, name: self.data[name] + "".join(self.chunks)}


@dataclass
class _Turn:
    id: str
    created_at: int
    blocks: dict[str, _Block] = field(default_factory=dict)
    status: str | None = None
    completed_at: int | None = None

    def message(self) -> dict[str, Any]:
        content = [block.value() for block in self.blocks.values()]
        status = self.status
        if status is None:
            status = "cancelled"
            content.append(
                {
                    "id": f"{self.id}_interrupted",
                    "type": "notice",
                    "code": "turn_interrupted",
                    "message": INTERRUPTED_NOTICE,
                }
            )
        message = {
            "id": self.id,
            "role": "assistant",
            "status": status,
            "content": content,
            "created_at": self.created_at,
        }
        if self.completed_at is not None and self.completed_at >= self.created_at:
            message["completed_at"] = self.completed_at
        return message


def _ordered(events: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict[str, Any]]]:
    """One session's events sorted by ``seq`` (lines without one keep their place
    after the last seen) without replays of a ``seq`` already applied."""
    keyed: list[tuple[tuple[int, int, int], int | None, int, dict[str, Any]]] = []
    last = -1
    for position, (lineno, event) in enumerate(events):
        seq = event.get("seq")
        if isinstance(seq, int) and not isinstance(seq, bool):
            last = seq
            keyed.append(((seq, 0, position), seq, lineno, event))
        else:
            keyed.append(((last, 1, position), None, lineno, event))
    keyed.sort(key=lambda item: item[0])
    seen: set[int] = set()
    ordered = []
    for _, seq, lineno, event in keyed:
        if seq is not None:
            if seq in seen:
                continue
            seen.add(seq)
        ordered.append((lineno, event))
    return ordered


class _Folder:
    def __init__(self) -> None:
        self.turns: dict[str, _Turn] = {}
        self.problems: list[Problem] = []

    def fail(self, lineno: int, message: str) -> None:
        self.problems.append(Problem(f"line {lineno}", message))

    def apply(self, lineno: int, event: dict[str, Any]) -> None:
        kind = event["type"]
        turn_id = event["turn_id"]
        turn = self.turns.get(turn_id)
        if turn is not None and turn.status is not None:
            self.fail(lineno, f"{kind} after turn {turn_id!r} ended")
            return
        if turn is None:
            turn = self.turns[turn_id] = _Turn(turn_id, event.get("ts", 0))
        if kind == "content.block.started":
            block = event["block"]
            if block["id"] in turn.blocks:
                self.fail(lineno, f"{_named(block)} started twice in turn {turn_id!r}")
            else:
                turn.blocks[block["id"]] = _Block(dict(block), private=reasoning_map(event))
        elif kind == "content.block.delta":
            self.delta(lineno, turn, event)
        elif kind == "content.block.completed":
            block = self.existing(lineno, turn, event["block_id"], "completion")
            if block is not None:
                block.completed = True
                block.private = block.private or reasoning_map(event)
        else:
            turn.status = TERMINAL_EVENTS[kind]
            turn.completed_at = event.get("ts")

    def existing(self, lineno: int, turn: _Turn, block_id: str, what: str) -> _Block | None:
        block = turn.blocks.get(block_id)
        if block is None:
            self.fail(lineno, f"{what} for unknown block {block_id!r} in turn {turn.id!r}")
        elif block.completed:
            self.fail(lineno, f"{what} for completed {_named(block.data)}")
            return None
        return block

    def delta(self, lineno: int, turn: _Turn, event: dict[str, Any]) -> None:
        block = self.existing(lineno, turn, event["block_id"], "delta")
        if block is None:
            return
        kind = block.data["type"]
        expected = STREAMING_FIELDS.get(kind)
        if expected is None:
            what = f"a block ({WITHHELD})" if reasoning_map(block.data) else f"a {kind} block"
            self.fail(lineno, f"delta for {what}, which does not stream")
        elif event["field"] != expected:
            self.fail(
                lineno, f"delta field {event['field']!r} is not the streaming field of a {kind} block ({expected})"
            )
        else:
            block.chunks.append(event["text"])
            block.private = block.private or reasoning_map(event)  # a thought streamed into it makes it one


def _named(block: dict[str, Any]) -> str:
    """A block as a problem line names it: by its id, unless it is private reasoning (R2)."""
    return f"block ({WITHHELD})" if reasoning_map(block) else f"block {block['id']!r}"


@dataclass
class _Events:
    """The valid events of one session, and the problems of its invalid ones."""

    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # (turn, block) of each event left out that said its block is reasoning: the block still is (R2)
    private: set[tuple[str, str]] = field(default_factory=set)

    def result(self, session_id: str, source: str, lenient: bool) -> LoadResult:
        if not self.events or (self.problems and not lenient):
            return LoadResult(source, None, tuple(self.problems) or (Problem("", "no content or turn events"),))
        folder = _Folder()
        ordered = _ordered(self.events)
        for lineno, event in ordered:
            folder.apply(lineno, event)
        for turn_id, block_id in self.private:
            block = folder.turns[turn_id].blocks.get(block_id) if turn_id in folder.turns else None
            if block is not None:
                block.private = True
        problems = (*self.problems, *folder.problems)
        if folder.problems and not lenient:
            return LoadResult(source, None, problems)
        messages = tuple(message_from_json(turn.message()) for turn in folder.turns.values())
        session = Session(id=session_id, messages=messages, created_at=ordered[0][1].get("ts"), source=source)
        return LoadResult(source, session, problems)


def _session_id(event: dict[str, Any], default_id: str) -> str | None:
    """The session an event belongs to; ``None`` when its ``session_id`` is unusable."""
    session_id = event.get("session_id", default_id)
    return session_id if isinstance(session_id, str) and session_id.strip() else None


def _keep_private(events: _Events, event: dict[str, Any]) -> None:
    """Remembers the block of an invalid event that says it is reasoning: read leniently,
    the event is left out, but the reading that hides more wins (R2)."""
    block = event.get("block")
    block_id = block.get("id") if isinstance(block, dict) else event.get("block_id")
    turn_id = event.get("turn_id")
    if isinstance(turn_id, str) and isinstance(block_id, str):
        events.private.add((turn_id, block_id))


def event_log(lines: list[tuple[int, Any]], source: str, default_id: str, lenient: bool = False) -> list[LoadResult]:
    """Fold an event log into one result per ``session_id``, in order of first appearance.

    A line that is not an event, or whose session cannot be told, is a problem
    of the whole log. Read leniently, an event that is invalid or cannot be
    applied is left out (and reported as a warning); the rest is folded as usual.
    """
    problems: list[Problem] = []
    sessions: dict[str, _Events] = {}
    for lineno, value in lines:
        if not is_gateway_event(value):
            problems.append(Problem(f"line {lineno}", "not an event (a log mixes events and other lines)"))
            continue
        if value["type"] not in EVENT_TYPES:
            continue  # queue.*, view.*, turn.queued, turn.progress, ...: not part of the content
        found: list[Problem] = []
        check_event(value, (), found)
        located = [p.at(f"line {lineno}") for p in found]
        session_id = _session_id(value, default_id)
        if session_id is None:
            problems.extend(located)
            continue
        events = sessions.setdefault(session_id, _Events())
        events.problems.extend(located)
        if not found:
            events.events.append((lineno, value))
        elif reasoning_map(value):
            _keep_private(events, value)
    if problems and not lenient:
        return [LoadResult(source, None, tuple(problems))]
    if not sessions:
        return [LoadResult(source, None, (*problems, Problem("", "no content or turn events")))]
    results = [events.result(session_id, source, lenient) for session_id, events in sessions.items()]
    if problems:
        results[0] = LoadResult(source, results[0].session, (*problems, *results[0].problems))
    return results
