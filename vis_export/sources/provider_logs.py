"""Provider message logs onto the session model: OpenAI chat messages and
Anthropic Messages, as a ``{"messages": [...]}`` document, a bare array, or
JSON Lines (of messages, or of conversations as ``--to provider`` writes them).

This is the inverse of ``formats/provider.py``: what it wrote reads back to a
session that it writes again byte for byte (reasoning aside, which it never
writes). For that, assistant steps are grouped into messages the way the
writer split them: a step is text followed by tool calls; a text-only step
ends its message; call ids ``vis_<message>_<n>`` give the message id back and
say where one message's calls end and the next one's begin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from vis_export.contract.reasoning_words import is_reasoning_map
from vis_export.sources.claude_code import content_blocks
from vis_export.sources.foreign import (
    NO_INPUT,
    Transcript,
    call_arguments,
    field_text,
    map_or_empty,
    reasoning_of,
    text_of_parts,
    text_or,
)
from vis_export.sources.jsontext import parse  # as every reader parses: no NaN, no exhausted stack
from vis_export.sources.result import LoadResult

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_ANTHROPIC_PARTS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})
_WRITTEN_CALL = re.compile(r"^vis_(.+)_(\d+)_*$")
_ERROR = "Error: "


def is_provider_message(value: Any) -> bool:
    """A provider message: a role and nothing of a Vis message's envelope (``status``, ``created_at``)."""
    return (
        isinstance(value, dict)
        and field_text(value, "role") in ROLES
        and "status" not in value
        and "created_at" not in value
        and ("content" in value or "tool_calls" in value)
    )


def is_conversation(value: Any) -> bool:
    """A conversation document: ``{"messages": [...]}`` of provider messages only."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("messages"), list)
        and bool(value["messages"])
        and all(is_provider_message(m) for m in value["messages"])
    )


def is_provider_log(values: list[Any]) -> bool:
    """Lines (or array items) that are all provider messages, or all conversations."""
    return bool(values) and (all(is_provider_message(v) for v in values) or all(is_conversation(v) for v in values))


def provider_log(values: list[Any], source: str, default_id: str, lenient: bool) -> list[LoadResult]:
    """One session per conversation (numbered ``<id>_<n>`` when several lack a ``session_id``)."""
    if all(is_provider_message(v) for v in values):
        return [conversation({"messages": values}, source, default_id, lenient)]
    several = len(values) > 1
    return [
        conversation(doc, source, f"{default_id}_{n}" if several else default_id, lenient)
        for n, doc in enumerate(values, 1)
    ]


@dataclass
class _Group:
    """The assistant message being rebuilt from consecutive steps."""

    message: dict[str, Any]
    calls: int = 0
    from_calls: bool = False  # its id came from its calls' ids
    last_step_calls: bool = False


def conversation(doc: dict[str, Any], source: str, default_id: str, lenient: bool) -> LoadResult:
    messages = doc["messages"]
    anthropic = "system" in doc or any(
        isinstance(m.get("content"), list) and any(field_text(p, "type") in _ANTHROPIC_PARTS for p in m["content"])
        for m in messages
    )
    session_id = doc["session_id"] if isinstance(doc.get("session_id"), str) and doc["session_id"] else default_id
    transcript = Transcript(source)
    reader = _Reader(transcript)
    system = doc.get("system")
    whole = is_reasoning_map(doc)  # a conversation that says it is reasoning: every message of it is (R2)
    if system:
        (reader.reasoning if whole else reader.plain)("system", system, "system")
    for n, message in enumerate(messages):
        if whole or is_reasoning_map(message):
            reader.reasoning(message["role"], message.get("content"), f"message{n}")
        else:
            (reader.anthropic if anthropic else reader.openai)(message, f"message{n}")
    facts = {"origin": "anthropic_messages" if anthropic else "openai_chat"}
    return transcript.result(session_id, None, facts, lenient)


@dataclass
class _Reader:
    transcript: Transcript
    group: _Group | None = None

    def plain(self, role: str, content: Any, message_id: str) -> dict[str, Any]:
        """A user, system or developer message (text and images); it ends the assistant's turn."""
        self.group = None
        message = self.transcript.message(message_id, role if role in ROLES - {"function"} else "user", 0)
        self._user_parts(message, content, message_id)
        return message

    def reasoning(self, role: str, content: Any, message_id: str) -> None:
        """A message that says it is reasoning (a true reasoning flag, a type or visibility):
        its text is one private reasoning block, under its own role; it ends the assistant's turn."""
        self.group = None
        message = self.transcript.message(message_id, role if role in ROLES - {"tool", "function"} else "assistant", 0)
        message["content"].append(reasoning_of(f"{message_id}_0", content))

    def _user_parts(self, message: dict[str, Any], content: Any, prefix: str) -> None:
        if isinstance(content, str):
            if content:
                message["content"].append({"id": f"{prefix}_0", "type": "prose", "markdown": content})
            return
        for n, part in enumerate(content if isinstance(content, list) else []):
            block_id = f"{prefix}_{n}"
            if isinstance(part, dict) and part.get("type") == "image_url" and isinstance(part.get("image_url"), dict):
                if self.transcript.attach_data_uri(message, block_id, part["image_url"].get("url"), f"image-{n}"):
                    continue
            content_blocks(self.transcript, message, [part], block_id, None)

    def _step(self, text: str | None, reasoning: str | None, calls: list[tuple[str, Any, Any]], key: str) -> None:
        """One assistant step (text, then calls): it goes on the current message only
        after that message's calls, and only if its own calls continue their numbering."""
        group = self.group
        first = calls[0][0] if calls else None
        if group is None or not group.last_step_calls or (first is not None and not _continues(group, first)):
            group = self.group = _Group(self.transcript.message(key, "assistant", 0))
        blocks = group.message["content"]
        if reasoning is not None:
            blocks.append({"id": f"{key}_r", "type": "reasoning", "text": reasoning, "visibility": "private"})
        if text is not None:
            blocks.append({"id": f"{key}_t", "type": "prose", "markdown": text})
        group.last_step_calls = False
        for call_id, name, arguments in calls:
            self._call(call_id, name, arguments, key)

    def _call(self, call_id: str, name: Any, arguments: Any, key: str) -> None:
        group = self.group
        if group is None or ((group.calls or group.from_calls) and not _continues(group, call_id)):
            group = self.group = _Group(self.transcript.message(key, "assistant", 0))
        written = _WRITTEN_CALL.match(call_id)
        if not group.from_calls and group.calls == 0 and written and written.group(2) == "1":
            group.message["id"], group.from_calls = written.group(1), True  # the writer's own call ids
        group.calls += 1
        group.last_step_calls = True
        self.transcript.tool(group.message, call_id, name, arguments)

    def openai(self, message: dict[str, Any], key: str) -> None:
        role = message.get("role")
        if role in ("tool", "function"):
            call_id = text_or(message.get("tool_call_id"), text_or(message.get("name"), key))
            self.transcript.answer(call_id, _text_or_value(message.get("content")), False, 0)
            return
        if role == "user" and isinstance(message.get("content"), list):
            self._user_turns(message["content"], key)  # as Anthropic's: the flavour of a text-only log is unknown
            return
        if role != "assistant":
            self.plain(str(role), message.get("content"), key)
            return
        if isinstance(message.get("content"), list) and not message.get("tool_calls"):
            self.anthropic(message, key)  # content blocks, one step each: a text-only log has no known flavour
            return
        calls = []
        listed = message.get("tool_calls")
        for n, call in enumerate(listed if isinstance(listed, list) else []):
            call = map_or_empty(call)
            function = map_or_empty(call.get("function"))
            call_id = text_or(call.get("id"), f"{key}_{n}")
            calls.append((call_id, function.get("name"), _arguments(function.get("arguments", NO_INPUT))))
        text = text_of_parts(message.get("content")) or None
        reasoning = message.get("reasoning_content") if isinstance(message.get("reasoning_content"), str) else None
        self._step(text if text is not None or calls else "", reasoning, calls, key)

    def anthropic(self, message: dict[str, Any], key: str) -> None:
        content = message.get("content")
        if message.get("role") != "assistant":
            parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
            self._user_turns(parts if isinstance(parts, list) else [], key)
            return
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        step: tuple[str | None, list[tuple[str, Any, Any]], str] | None = None
        for n, part in enumerate(parts if isinstance(parts, list) else []):
            part_key = f"{key}_{n}"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "tool_use":
                step = step or (None, [], part_key)
                call_id = part["id"] if isinstance(part.get("id"), str) and part["id"] else part_key
                step[1].append((call_id, part.get("name"), part.get("input", NO_INPUT)))
                continue
            if step is not None:
                self._step(step[0], None, step[1], step[2])
                step = None
            if kind == "text" and isinstance(part.get("text"), str) and not is_reasoning_map(part):
                step = (part["text"], [], part_key)
                continue
            if self.group is None:
                self.group = _Group(self.transcript.message(part_key, "assistant", 0))
            content_blocks(self.transcript, self.group.message, [part], part_key, None)
        if step is not None:
            self._step(step[0], None, step[1], step[2])

    def _user_turns(self, parts: list[Any], key: str) -> None:
        """A user message's parts: tool results answer calls; each text opens a user message
        (the writer merges consecutive user messages into one)."""
        current: dict[str, Any] | None = None
        for n, part in enumerate(parts):
            if isinstance(part, dict) and part.get("type") == "tool_result":
                self._result(part, key)
                continue
            is_text = (
                isinstance(part, dict)
                and part.get("type") == "text"
                and isinstance(part.get("text"), str)
                and not is_reasoning_map(part)  # a thought (``"thought": true``) is read as reasoning (R2)
            )
            if current is None or is_text:
                current = self.plain("user", part["text"] if is_text else [], f"{key}_{n}")
                if is_text:
                    continue
            self._user_parts(current, [part], f"{key}_{n}")

    def _result(self, part: dict[str, Any], key: str) -> None:
        call_id = part["tool_use_id"] if isinstance(part.get("tool_use_id"), str) and part["tool_use_id"] else key
        content = _text_or_value(part.get("content", ""))
        if part.get("is_error") is not True:
            self.transcript.answer(call_id, content, False, 0)
            return
        # The writer's "Error: <JSON of the error>" (or "Error: failed" with none) gives the error back.
        detail: Any = content
        if isinstance(content, str) and content.startswith(_ERROR):
            try:
                detail = parse(content[len(_ERROR) :])
            except ValueError:
                detail = None if content == _ERROR + "failed" else content
        self.transcript.answer(call_id, detail, True, 0)
        if detail is None and call_id in self.transcript.calls:
            self.transcript.calls[call_id].pop("error", None)


def _continues(group: _Group, call_id: str) -> bool:
    """Whether call ``call_id`` is the next call of the group's message: the writer numbers
    a message's calls ``vis_<message>_1``, ``_2``...; other ids keep a message together."""
    written = _WRITTEN_CALL.match(call_id)
    if not group.from_calls:
        return written is None or (group.calls == 0 and written.group(2) == "1")
    return written is not None and written.group(1) == group.message["id"] and int(written.group(2)) == group.calls + 1


def _text_or_value(content: Any) -> Any:
    text = text_of_parts(content)
    return text if text is not None else content


def _arguments(arguments: Any) -> Any:
    """Call arguments: JSON text parsed when it is JSON, else kept as the text it is (``call_arguments``)."""
    return call_arguments(arguments, parse) if isinstance(arguments, str) else arguments
