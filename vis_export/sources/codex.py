"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) onto the
session model; the mapping is in ``docs/sources.md``.

Each line is a record ``{"timestamp", "type", "payload"}``. ``response_item``
records are the conversation: a user message opens a turn, and everything the
model does until the next one (reasoning, tool calls, its answer) is one
assistant message. ``event_msg`` records repeat those items for the terminal
(or are telemetry), so they are not shown again. Reasoning keeps its summary
(private); its ``encrypted_content`` is never read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vis_export.contract.reasoning_words import is_reasoning_map
from vis_export.sources.foreign import (
    NO_INPUT,
    Transcript,
    call_arguments,
    field_text,
    first_line,
    iso_ms,
    map_or_empty,
    reasoning_of,
    text_of_parts,
    text_or,
)
from vis_export.sources.jsontext import parse_quickly  # as every reader parses: no NaN, no exhausted stack
from vis_export.sources.result import LoadResult

RECORD_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg"})
_CALLS = {"function_call": "arguments", "custom_tool_call": "input", "local_shell_call": "action"}
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})
ITEM_TYPES = frozenset({"message", "reasoning", *_CALLS, *_OUTPUTS})
# Event messages that only repeat what response items hold (reasoning, never shown from an event).
_REPEATS = frozenset({"agent_reasoning", "agent_reasoning_raw_content", "agent_reasoning_section_break"})
# Event messages that say what was said; shown when no response item says it (some rollouts keep only these).
_SAID = {"user_message": "user", "agent_message": "assistant"}
# Text Codex itself puts in user messages: context for the model, shown as notices.
_CONTEXT = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions instructions>")


def is_codex(values: list[Any]) -> bool:
    """Records of a Codex rollout (some of Codex's record types with a payload), or an
    older rollout: a first line with the session's ``id`` and ``timestamp``, then bare response items."""
    if any(field_text(v, "type") in RECORD_TYPES and isinstance(v.get("payload"), dict) for v in values):
        return True
    return _is_legacy_head(values[0]) and any(field_text(v, "type") in ITEM_TYPES for v in values[1:])


def _is_legacy_head(value: Any) -> bool:
    return isinstance(value, dict) and "type" not in value and "id" in value and "timestamp" in value


def _records(lines: list[tuple[int, Any]]) -> tuple[list[tuple[int, dict[str, Any]]], set[tuple[str, str]]]:
    """The lines as current records: an older rollout's head is its ``session_meta``, its
    bare items are ``response_item`` records, and its ``record_type`` state lines are dropped.
    And, in the same pass (a rollout has thousands of records), what the response items'
    messages say (``_says``), to know which events repeat them."""
    records: list[tuple[int, dict[str, Any]]] = []
    said: set[tuple[str, str]] = set()
    for n, line in enumerate(lines):
        lineno, value = line
        if n and isinstance(value, dict) and "payload" in value:  # a current record: most of them
            if "record_type" not in value:
                records.append(line)  # the pair as it is: no new one for each of thousands
                if value.get("type") == "response_item":
                    _says(said, value["payload"])
        elif not isinstance(value, dict):
            records.append((lineno, {"type": "line that is not a record"}))
        elif n == 0 and _is_legacy_head(value):
            records.append((lineno, {"type": "session_meta", "timestamp": value["timestamp"], "payload": value}))
        elif "payload" not in value and field_text(value, "type") in ITEM_TYPES:
            records.append((lineno, {"type": "response_item", "timestamp": value.get("timestamp"), "payload": value}))
            _says(said, value)
        elif "record_type" not in value:
            records.append((lineno, value))
            if value.get("type") == "response_item":
                _says(said, value.get("payload"))
    return records, said


def codex(lines: list[tuple[int, Any]], source: str, default_id: str, lenient: bool) -> list[LoadResult]:
    records, said = _records(lines)
    rollout = _Rollout(Transcript(source), default_id, said)
    for lineno, record in records:
        rollout.record(lineno, record)
    title = first_line(rollout.prompt) if rollout.prompt else None
    parent = rollout.facts.get("parent_session")
    if parent is not None:
        title = f"Subagent of {parent}: {title}" if title else f"Subagent of {parent}"
    return [rollout.transcript.result(rollout.session_id, title, rollout.facts, lenient)]


def _says(said: set[tuple[str, str]], item: Any) -> None:
    """Adds (role, text) of every text part of a response item's message to ``said``."""
    if isinstance(item, dict) and item.get("type") == "message":
        parts: Any = item.get("content")
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                said.add((str(item.get("role")), part["text"].strip()))


@dataclass
class _Rollout:
    transcript: Transcript
    session_id: str
    said: set[tuple[str, str]]
    facts: dict[str, Any] = field(default_factory=lambda: {"origin": "codex"})
    model: str | None = None
    prompt: str | None = None
    turn: dict[str, Any] | None = None
    at: int = 0  # the record's time, else the last one seen (records may lack one)

    def record(self, lineno: int, record: dict[str, Any]) -> None:
        payload, kind = record.get("payload"), record.get("type")  # compared, never looked up: may be anything
        at = iso_ms(record.get("timestamp"))
        if at is None:
            at = self.at
        else:
            self.at = at
        if not isinstance(payload, dict):
            self.transcript.skip(kind if isinstance(kind, str) else "record without a type")
        elif kind == "response_item":  # the most of a rollout's records: compared first
            self.item(payload, lineno, at)
        elif kind == "event_msg":
            self.event(payload, lineno, at)
        elif kind == "session_meta":
            self.session_meta(payload)
        elif kind == "turn_context":
            self.model = text_or(payload.get("model"), "") or self.model
        else:
            self.transcript.skip(str(kind))

    def session_meta(self, payload: dict[str, Any]) -> None:
        self.session_id = text_or(payload.get("id"), self.session_id)
        for fact, key in (("cwd", "cwd"), ("tool_version", "cli_version"), ("originator", "originator")):
            if isinstance(payload.get(key), str):
                self.facts[fact] = payload[key]
        spawn = map_or_empty(map_or_empty(map_or_empty(payload.get("source")).get("subagent")).get("thread_spawn"))
        if text_or(spawn.get("parent_thread_id"), ""):
            self.facts["parent_session"] = spawn["parent_thread_id"]

    def event(self, payload: dict[str, Any], lineno: int, at: int) -> None:
        kind, text = field_text(payload, "type"), payload.get("message")
        role = _SAID.get(str(kind))
        if role is None or is_reasoning_map(payload):  # reasoning is never shown from an event (R2)
            if kind not in _REPEATS:
                self.transcript.skip(f"event {kind}")
        elif isinstance(text, str) and (role, text.strip()) not in self.said:
            parts = [{"type": "input_text" if role == "user" else "output_text", "text": text}]
            self.item({"type": "message", "role": role, "content": parts}, lineno, at)

    def item(self, item: dict[str, Any], lineno: int, at: int) -> None:
        """One response item; its id is made from its line (``line<n>``) only where one is
        needed: most items are calls and outputs, which carry their own."""
        kind = item.get("type")  # compared with names only when a string (it may be a list or a map)
        if not isinstance(kind, str):
            kind = None
        if kind != "reasoning" and is_reasoning_map(item):
            kind = "reasoning"  # an item that says it is reasoning (a flag, a visibility, a type's disguise) is (R2)
        if kind == "message" and item.get("role") in ("user", "developer", "system"):
            self.turn = None
            line_id = f"line{lineno}"
            message = self.transcript.message(line_id, item["role"], at)
            _parts(self.transcript, message, item.get("content"), line_id)
            if self.prompt is None and item["role"] == "user":
                self.prompt = next((b["markdown"] for b in message["content"] if b["type"] == "prose"), None)
        elif kind in _OUTPUTS:
            output = item.get("output")
            text = output if isinstance(output, str) else text_of_parts(output)  # most outputs are text
            self.transcript.answer(_call_id(item, lineno), text if text is not None else output, False, at)
        elif kind in ITEM_TYPES:
            if self.turn is None:
                self.turn = self.transcript.message(
                    f"line{lineno}", "assistant", at, model=self.model, provider="openai"
                )
            elif at > self.turn["created_at"]:
                self.turn["completed_at"] = at
            _assistant_item(self.transcript, self.turn, item, kind, lineno)
        else:
            self.transcript.skip(f"item {kind}")


def _call_id(payload: dict[str, Any], lineno: int) -> str:
    """The item's ``call_id``, else its ``id``, else its line's id: once for each of a rollout's
    thousands of calls and outputs, so written out rather than looped over."""
    found = payload.get("call_id")
    if isinstance(found, str) and found.strip():
        return found
    found = payload.get("id")
    return found if isinstance(found, str) and found.strip() else f"line{lineno}"


def _assistant_item(transcript: Transcript, turn: dict[str, Any], item: dict[str, Any], kind: str, lineno: int) -> None:
    if kind == "message":
        _parts(transcript, turn, item.get("content"), f"line{lineno}")
    elif kind == "reasoning":
        parts = [part for key in ("summary", "content") if isinstance(item.get(key), list) for part in item[key]]
        turn["content"].append(reasoning_of(f"line{lineno}", parts))
    else:
        value = item.get(_CALLS[kind], NO_INPUT)
        if kind == "function_call" and isinstance(value, str):
            value = call_arguments(value, parse_quickly)
        name = "local_shell_call" if kind == "local_shell_call" else item.get("name")
        transcript.tool(turn, _call_id(item, lineno), name, value)


def _parts(transcript: Transcript, message: dict[str, Any], parts: Any, line_id: str) -> None:
    if isinstance(parts, str):
        parts = [{"type": "input_text", "text": parts}]
    if not isinstance(parts, list):
        return
    for n, part in enumerate(parts):
        block_id = f"{line_id}_{n}"
        if not isinstance(part, dict):
            continue
        text = part.get("text")
        if isinstance(text, str) and is_reasoning_map(part):  # flagged as a thought, or typed so: private (R2)
            message["content"].append({"id": block_id, "type": "reasoning", "text": text, "visibility": "private"})
        elif part.get("type") in ("input_text", "output_text", "text") and isinstance(text, str):
            if message["role"] == "user" and text.lstrip().startswith(_CONTEXT):
                message["content"].append({"id": block_id, "type": "notice", "code": "codex_context", "message": text})
            else:
                message["content"].append({"id": block_id, "type": "prose", "markdown": text})
        elif part.get("type") == "input_image":
            url = part.get("image_url")
            if not transcript.attach_data_uri(message, block_id, url, f"image-{n + 1}"):
                message["content"].append({"id": block_id, "type": "prose", "markdown": f"<{url}>"})
        else:
            transcript.skip(f"message part {part.get('type')}")
