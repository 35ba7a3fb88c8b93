"""Claude Code session files (``~/.claude/projects/<project>/<session>.jsonl``) onto
the session model; the mapping is in ``docs/sources.md``.

Each line is an entry: ``user`` and ``assistant`` entries carry an Anthropic
message (one content block a line for assistants, several lines sharing one
``message.id``), ``summary`` entries a title; the rest (``system``, meta
entries) are notices, and entry types with nothing to read are counted in one
warning. Sidechain entries (subagents, also kept as ``subagents/agent-*.jsonl``)
are sessions of their own, ``<session>/<agent>``. The Anthropic content-block
mapping here is also what ``provider_logs`` reads Anthropic Messages with.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any

from vis_export.contract.reasoning_words import is_reasoning_map
from vis_export.sources.foreign import (
    NO_INPUT,
    Transcript,
    first_line,
    foreign_block,
    foreign_map,
    foreign_type,
    iso_ms,
    map_or_empty,
    reasoning_of,
    text_of_parts,
    text_or,
)
from vis_export.sources.result import LoadResult

CONVERSATION = ("user", "assistant")
_TEXT = {"type", "text"}  # a text part of only these keys is no reasoning: nothing says or flags it
# Entry types that are Claude Code's own and hold nothing to show.
_KNOWN_TYPES = frozenset({"user", "assistant", "summary", "system"})
_SPOKEN = frozenset({"user", "assistant", "system"})  # the entries that become messages
# User text that Claude Code itself wrote (slash commands, hooks, reminders): shown, but not as a prompt.
_REMINDER_END = "</system-reminder>"
_REMINDER = re.compile(rf"<system-reminder>.*?{_REMINDER_END}\n?", re.DOTALL)
_NOTICE_TEXT = re.compile(
    r"^\s*<(command-name|command-message|command-args|local-command-stdout|local-command-stderr|"
    r"system-reminder|user-prompt-submit-hook|bash-input|bash-stdout|bash-stderr)>"
)


def is_claude_code(values: list[Any]) -> bool:
    """Entries of a Claude Code session: some a user or assistant entry holding a message, none a Vis message."""
    found = False
    for value in values:  # one pass, no list: a transcript has thousands of entries
        if isinstance(value, dict):
            if "role" in value:
                return False
            if not found and value.get("type") in CONVERSATION and isinstance(value.get("message"), dict):
                found = True
    return found


def claude_code(lines: list[tuple[int, Any]], source: str, default_id: str, lenient: bool) -> list[LoadResult]:
    """The sessions of one file: the main conversation, then each sidechain. One pass
    over the lines finds the title, the session's id and each entry's conversation."""
    groups: dict[str | None, list[tuple[int, dict[str, Any]]]] = {}
    title: str | None = None
    session_id: str | None = None
    for line in lines:  # each line kept as the pair it is, unless its value is replaced
        lineno, value = line
        key = None
        if not isinstance(value, dict):
            line = (lineno, {"type": "line that is not an entry"})
        else:
            if session_id is None:
                found = value.get("sessionId")
                if isinstance(found, str) and found:
                    session_id = found
            kind = value.get("type")
            if not isinstance(kind, str):  # anything but an object with a type is one more thing skipped
                line = (lineno, {"type": "line that is not an entry"})
            else:
                if (
                    kind == "summary"
                    and title is None
                    and isinstance(value.get("summary"), str)
                    and not is_reasoning_map(value)  # a summary that says it is reasoning names nothing (R2)
                ):
                    title = value["summary"]
                if value.get("isSidechain") is True:
                    agent = value.get("agentId")
                    key = agent if isinstance(agent, str) and agent else "sidechain"
        group = groups.get(key)
        if group is None:
            group = groups[key] = []
        group.append(line)
    if session_id is None:
        session_id = default_id
    results = []
    for agent, entries in groups.items():
        if agent is None:
            results.append(_session(entries, source, session_id, title, None, lenient))
        else:
            results.append(_session(entries, source, f"{session_id}/{agent}", None, session_id, lenient))
    return results


def _session(
    entries: list[tuple[int, dict[str, Any]]],
    source: str,
    session_id: str,
    title: str | None,
    parent: str | None,
    lenient: bool,
) -> LoadResult:
    transcript = Transcript(source)
    by_api_id: dict[str, dict[str, Any]] = {}
    prompt: str | None = None
    at = 0  # the entry's time, else the last one seen (entries may lack one)
    for lineno, entry in entries:
        kind = entry["type"]
        ms = iso_ms(entry.get("timestamp"))
        if ms is not None:
            at = ms
        uuid = entry.get("uuid")
        entry_id = uuid if isinstance(uuid, str) and uuid.strip() else f"line{lineno}"
        api = entry.get("message")
        if kind in _SPOKEN and (is_reasoning_map(entry) or (isinstance(api, dict) and is_reasoning_map(api))):
            # An entry (or its message) that says it is reasoning: its text is private reasoning (R2).
            held = transcript.message(entry_id, kind if kind in CONVERSATION else "system", at)
            content = (api if isinstance(api, dict) else entry).get("content")
            held["content"].append(reasoning_of(f"{entry_id}_0", content))
        elif kind == "system" or (kind in CONVERSATION and entry.get("isMeta") is True):
            _notice_entry(transcript, entry, entry_id, at)
        elif not isinstance(api, dict):
            if kind != "summary":
                transcript.skip(kind if kind not in _KNOWN_TYPES else f"{kind} without a message")
        elif kind == "assistant":
            api_id = api.get("id")
            message = by_api_id.get(api_id) if isinstance(api_id, str) and api_id else None
            if message is None:
                model = text_or(api.get("model"), "") or None
                message = transcript.message(entry_id, "assistant", at, model=model, provider="anthropic")
                if isinstance(api_id, str) and api_id:
                    by_api_id[api_id] = message
            elif at > message["created_at"]:
                message["completed_at"] = at
            content_blocks(transcript, message, api.get("content"), entry_id, entry)
        elif kind == "user":
            message = _user_entry(transcript, entry, api, entry_id, at)
            if prompt is None and message is not None:
                prompt = next((b["markdown"] for b in message["content"] if b["type"] == "prose"), None)
        elif kind != "summary":
            transcript.skip(kind if kind not in _KNOWN_TYPES else f"{kind} without a message")
    if title is None and prompt is not None:
        title = first_line(prompt)
    if parent is not None:
        title = f"Subagent of {parent}: {title}" if title else f"Subagent of {parent}"
    first = _first(entries, ("cwd", "version", "gitBranch"))
    facts = {
        "origin": "claude_code",
        "cwd": first["cwd"],
        "project": PurePath(source).parent.name or None,
        "tool_version": first["version"],
        "git_branch": first["gitBranch"],
        "parent_session": parent,
    }
    return transcript.result(session_id, title, facts, lenient)


def _first(entries: list[tuple[int, dict[str, Any]]], keys: tuple[str, ...]) -> dict[str, str | None]:
    """Each key's first value in the entries that is a non-empty string (summaries and
    snapshots have none), in one pass that ends once all are found: a key no entry has
    (``gitBranch`` outside a repository) is looked for in every entry."""
    found: dict[str, str | None] = dict.fromkeys(keys)
    missing = list(keys)
    for _, entry in entries:
        for key in missing:
            value = entry.get(key)
            if isinstance(value, str) and value:
                found[key] = value
                missing = [k for k in missing if k != key]
        if not missing:
            break
    return found


def _notice_entry(transcript: Transcript, entry: dict[str, Any], entry_id: str, at: int) -> None:
    """A system or meta entry: readable, never a prompt. Its text is a notice; anything
    else it holds is read as content blocks (thinking there stays private reasoning)."""
    api = entry.get("message")
    content = api.get("content") if isinstance(api, dict) else entry.get("content")
    text = text_of_parts(content)
    if text is not None and not text.strip() or content is None:
        transcript.skip(f"empty {entry['type']}")
        return
    message = transcript.message(entry_id, "system", at)
    if text is None:
        content_blocks(transcript, message, content, entry_id, entry)
        return
    code = "claude_code_meta" if entry.get("isMeta") is True else "claude_code_system"
    message["content"].append({"id": f"{entry_id}_0", "type": "notice", "code": code, "message": text})


def _user_entry(
    transcript: Transcript, entry: dict[str, Any], api: dict[str, Any], entry_id: str, at: int
) -> dict[str, Any] | None:
    """A user entry: its prompt is a user message; tool results only answer calls (no turn of their own)."""
    content = api.get("content")
    if isinstance(content, str):
        others: Any = content  # a prompt: ``content_blocks`` reads it as one text part
    elif isinstance(content, list):
        others = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "tool_result":
                _tool_result(transcript, part, at, entry)
            else:
                others.append(part)
        if not others and content:  # only results
            return None
    else:
        transcript.skip("user entry without content")
        return None
    message = transcript.message(entry_id, "user", at)
    content_blocks(transcript, message, others, entry_id, entry)
    return message


def _tool_result(transcript: Transcript, part: dict[str, Any], at: int, entry: dict[str, Any]) -> None:
    """A result: its text is the call's output, its images attachments beside the call (kept
    in the output as read when the call is not known yet), and the subagent it ran is named."""
    call_id = part.get("tool_use_id")
    if not (isinstance(call_id, str) and call_id.strip()):
        call_id = f"result_line{at}"
    content = part.get("content", "")
    if isinstance(content, str):  # the common result: its text, nothing to look through
        transcript.answer(call_id, content, part.get("is_error") is True, at)
    else:
        owner = transcript.owners.get(call_id)
        parts = content if isinstance(content, list) else []
        images = [p for p in parts if isinstance(p, dict) and p.get("type") == "image"]
        text = text_of_parts([p for p in parts if p not in images] if images and owner else content)
        transcript.answer(call_id, text if text is not None else content, part.get("is_error") is True, at)
        if owner is not None:
            for n, image in enumerate(images):
                source = map_or_empty(image.get("source"))
                name = f"{call_id}-image-{n + 1}"
                media_type, data = source.get("media_type"), source.get("data")
                transcript.attach_base64(owner, f"{call_id}_image{n}", media_type, data, name)
    ran = entry.get("toolUseResult")
    if isinstance(ran, dict):
        agent = ran.get("agentId")
        if agent is not None and text_or(agent, "") and text_or(entry.get("sessionId"), ""):
            transcript.links[call_id] = {"subagent_session": f"{entry['sessionId']}/{agent}"}


def content_blocks(transcript: Transcript, message: dict[str, Any], parts: Any, prefix: str, entry: Any) -> None:
    """Anthropic content blocks (a string, or a list of blocks) onto ``message``; ids
    are the source's (``tool_use`` ids) or derived from the place (``<prefix>_<n>``)."""
    if isinstance(parts, str):
        parts = [{"type": "text", "text": parts}]
    if not isinstance(parts, list):
        return
    blocks = message["content"]
    for part in parts:
        if not isinstance(part, dict):
            blocks.append(foreign_block({"id": f"{prefix}_{len(blocks)}", "type": "unknown"}, value=part))
            continue
        kind = part.get("type")
        if kind == "tool_use":  # the most of a session's blocks: its id is the source's
            call_id = part.get("id")
            if not (isinstance(call_id, str) and call_id.strip()):
                call_id = f"{prefix}_{len(blocks)}"
            transcript.tool(message, call_id, part.get("name"), part.get("input", NO_INPUT))
            continue
        if kind == "tool_result":
            _tool_result(transcript, part, message["created_at"], entry if isinstance(entry, dict) else {})
            continue
        block_id = f"{prefix}_{len(blocks)}"
        if not isinstance(kind, str):
            # A block that does not say what it is may be thinking: private, and counted (R2).
            blocks.append({"id": block_id, "type": "reasoning", "text": "", "visibility": "private"})
            transcript.skip("content block without a type (hidden as private)")
        elif (
            kind == "text"
            and isinstance(part.get("text"), str)
            and (part.keys() == _TEXT or not is_reasoning_map(part))
        ):
            text = part["text"]
            if message["role"] == "user":
                _user_text(blocks, text, block_id)
            else:
                blocks.append({"id": block_id, "type": "prose", "markdown": text})
        elif kind in ("thinking", "redacted_thinking") or (kind == "text" and is_reasoning_map(part)):
            # Private reasoning: its text only (redacted thinking has none), never its signature or data;
            # a text part flagged as thought (``"thought": true``) is reasoning too (R2).
            text = part.get("thinking") if kind == "thinking" else part.get("text") if kind == "text" else ""
            text = text if isinstance(text, str) else ""
            blocks.append({"id": block_id, "type": "reasoning", "text": text, "visibility": "private"})
        elif kind in ("image", "document"):
            _media(transcript, message, part, block_id)
        else:
            blocks.append(foreign_map(part, id=block_id, type=foreign_type(kind)))


def _user_text(blocks: list[dict[str, Any]], text: str, block_id: str) -> None:
    """A user's text: what Claude Code wrote into it (a command's tags, a ``<system-reminder>``
    anywhere in it) are notices; the rest, the prompt, is prose, in order."""
    if _NOTICE_TEXT.match(text):
        blocks.append({"id": block_id, "type": "notice", "code": "claude_code_command", "message": text})
        return
    start = 0
    # Searched only up to the last end tag: each opening tag past it was searched to the
    # text's end in vain (quadratic: 8,000 of them, 136 KB, took 5.4 CPU-s).
    searched = text.rfind(_REMINDER_END) + len(_REMINDER_END) + 1
    for n, reminder in enumerate([*_REMINDER.finditer(text, 0, searched), None]):
        said = text[start : reminder.start() if reminder else len(text)]
        if said.strip() or (n == 0 and reminder is None):
            blocks.append({"id": f"{block_id}_{2 * n}" if n else block_id, "type": "prose", "markdown": said})
        if reminder is not None:
            code = "claude_code_reminder"
            blocks.append({"id": f"{block_id}_{2 * n + 1}", "type": "notice", "code": code, "message": reminder[0]})
            start = reminder.end()


def _media(transcript: Transcript, message: dict[str, Any], part: dict[str, Any], block_id: str) -> None:
    source = map_or_empty(part.get("source"))
    name = text_or(part.get("title"), block_id)
    data = source.get("data")
    if source.get("type") == "base64":
        transcript.attach_base64(message, block_id, source.get("media_type"), source.get("data"), name)
    elif source.get("type") == "text" and isinstance(data, str):
        transcript.attach(message, block_id, "text/plain", data.encode("utf-8"), name)
    elif source.get("type") == "url" and text_or(source.get("url"), ""):
        message["content"].append({"id": block_id, "type": "prose", "markdown": f"<{source.get('url')}>"})
    else:
        message["content"].append(foreign_map(part, id=block_id, type=part["type"]))
