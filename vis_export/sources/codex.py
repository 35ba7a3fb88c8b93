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

import json
from typing import Any

from vis_export.sources.foreign import NO_INPUT, Transcript, first_line, text_of_parts
from vis_export.sources.result import LoadResult

RECORD_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg"})
_CALLS = {"function_call": "arguments", "custom_tool_call": "input", "local_shell_call": "action"}
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})
# Event messages that repeat a response item (shown once, from the item).
_REPEATS = frozenset({"user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content"})
# Text Codex itself puts in user messages: context for the model, shown as notices.
_CONTEXT = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions instructions>")


def is_codex(values: list[Any]) -> bool:
    """Records of a Codex rollout: typed records, some of them one of Codex's with a payload."""
    return any(
        isinstance(v, dict) and v.get("type") in RECORD_TYPES and isinstance(v.get("payload"), dict) for v in values
    )


def codex(lines: list[tuple[int, Any]], source: str, default_id: str, lenient: bool) -> list[LoadResult]:
    transcript = Transcript(source)
    facts: dict[str, Any] = {"origin": "codex"}
    session_id, model, prompt = default_id, None, None
    turn: dict[str, Any] | None = None
    for lineno, value in lines:
        record = value if isinstance(value, dict) else {}
        payload = record.get("payload")
        kind = record.get("type")
        at = transcript.time(record.get("timestamp"))
        if not isinstance(payload, dict):
            transcript.skip(str(kind) if isinstance(kind, str) else "record without a type")
            continue
        if kind == "session_meta":
            if isinstance(payload.get("id"), str) and payload["id"].strip():
                session_id = payload["id"]
            for fact, key in (("cwd", "cwd"), ("tool_version", "cli_version"), ("originator", "originator")):
                if isinstance(payload.get(key), str):
                    facts[fact] = payload[key]
        elif kind == "turn_context":
            model = payload["model"] if isinstance(payload.get("model"), str) and payload["model"].strip() else model
        elif kind == "event_msg":
            if payload.get("type") not in _REPEATS:
                transcript.skip(f"event {payload.get('type')}")
        elif kind == "response_item":
            item_type = payload.get("type")
            line_id = f"line{lineno}"
            if item_type == "message" and payload.get("role") in ("user", "developer", "system"):
                turn = None
                message = transcript.message(line_id, payload["role"], at)
                _parts(transcript, message, payload.get("content"), line_id)
                if prompt is None and payload["role"] == "user":
                    prompt = next((b["markdown"] for b in message["content"] if b["type"] == "prose"), None)
            elif item_type in _OUTPUTS:
                output = payload.get("output")
                text = text_of_parts(output)
                transcript.answer(_call_id(payload, line_id), text if text is not None else output, False, at)
            elif item_type == "message" or item_type == "reasoning" or item_type in _CALLS:
                if turn is None:
                    turn = transcript.message(line_id, "assistant", at, model=model, provider="openai")
                elif at > turn["created_at"]:
                    turn["completed_at"] = at
                _assistant_item(transcript, turn, payload, line_id)
            else:
                transcript.skip(f"item {item_type}")
        else:
            transcript.skip(str(kind))
    return [transcript.result(session_id, first_line(prompt) if prompt else None, facts, lenient)]


def _call_id(payload: dict[str, Any], line_id: str) -> str:
    for key in ("call_id", "id"):
        if isinstance(payload.get(key), str) and payload[key].strip():
            return str(payload[key])
    return line_id


def _assistant_item(transcript: Transcript, turn: dict[str, Any], item: dict[str, Any], line_id: str) -> None:
    kind = item.get("type")
    if kind == "message":
        _parts(transcript, turn, item.get("content"), line_id)
    elif kind == "reasoning":
        texts = [
            part["text"]
            for key in ("summary", "content")
            if isinstance(item.get(key), list)
            for part in item[key]
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
        turn["content"].append(
            {"id": line_id, "type": "reasoning", "text": "\n\n".join(texts), "visibility": "private"}
        )
    else:
        value = item.get(_CALLS[str(kind)], NO_INPUT)
        if kind == "function_call" and isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                pass  # not JSON: kept as the text it is
        name = "local_shell_call" if kind == "local_shell_call" else item.get("name")
        transcript.tool(turn, _call_id(item, line_id), name, value)


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
        if part.get("type") in ("input_text", "output_text", "text") and isinstance(text, str):
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
