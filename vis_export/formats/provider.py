"""Provider messages (``--to provider``): a stored session replayed as the chat
messages a model provider takes, one JSON line per session.

It follows the rules the Vis runtime uses for prior turns: each user message
opens a turn, each assistant message closes it with its answer; tool blocks
become the provider's tool call and tool result pair (ids ``vis_<message>_<n>``,
failed tools marked as errors, a tool without output answered with an explicit
"result unavailable"; a tool block outside an assistant's turn, as an orphaned
result, is said as user text with its output); an unfinished turn closes with what was said plus a
notice that it was cancelled or interrupted; error blocks are not replayed;
reasoning never is, unless ``reasoning="all"``; system and developer messages
keep their roles (Anthropic takes them as its ``system`` text).

What is written is a request the APIs take: OpenAI's tool messages come right
after the assistant message that called them, and no assistant message is
empty; Anthropic's first message is the user's, roles alternate, no text is
empty or blank, every ``tool_use`` is answered at the start of the next
user message, and a closing assistant message does not end with whitespace;
call ids have at most 40 characters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vis_export.attachments import Attachments
from vis_export.contract.blocktypes import RENDERED_TYPES, UNKNOWN, for_each_type
from vis_export.formats.markdown_syntax import fenced
from vis_export.formats.options import PROVIDER_FORMATS, ExportOptions, Folder, ProviderFormat, options_given
from vis_export.model import AttachmentBlock, Block, ErrorBlock, LonisBlock, Message, Session, ToolBlock, UnknownBlock
from vis_export.policy import DEFAULT_REASONING, Reasoning, visible_session
from vis_export.problems import Problem
from vis_export.spellings import as_written

if TYPE_CHECKING:
    from vis_export.redaction import Redaction

_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
CANCELLED = "[Notice: the previous turn was cancelled before it finished.{partial}]"
INTERRUPTED = "[Notice: the previous turn was interrupted before it finished.{partial}]"
UNAVAILABLE = "Result unavailable: the tool call ended ({status}) without a result."
# Anthropic takes a conversation only from a user message: one that opens with the assistant gets this first.
OPENING = "[Notice: the conversation opens with the assistant's turn.]"
UNCALLED = "[Tool result from {tool}; its call is not in this conversation]"


def safe_name(name: str, limit: int = 64) -> str:
    """Tool names and ids as providers accept them: ``[A-Za-z0-9_-]``, at most 64."""
    return (_NAME_UNSAFE.sub("_", name) or "_")[:limit]


@dataclass
class _Call:
    id: str
    name: str
    arguments: Any
    result: str
    is_error: bool


@dataclass
class _Step:
    """Assistant text followed by the tool calls made after it."""

    text: list[str] = field(default_factory=list)
    calls: list[_Call] = field(default_factory=list)


def _lonis_line(block: LonisBlock) -> str:
    from vis_export.lonis_parsed import parsed

    return parsed(block.envelope).summary


# A block as text in a provider message; None: not replayed (an error's text is
# not the model's to see again, notices are the runtime's own, tools are calls).
_TEXT: dict[str, Callable[[Any], str | None]] = for_each_type(
    {
        "prose": lambda block: block.markdown,
        "code": lambda block: fenced(block.text, block.language).rstrip("\n"),
        "speech": lambda block: block.text,
        "reasoning": lambda block: f"[reasoning]\n{block.text}",  # only here when all reasoning is authorised
        "attachment": lambda block: f"[attachment: {block.name} ({block.media_type})]",
        "lonis": _lonis_line,
        "tool": lambda block: None,
        "error": lambda block: None,
        "notice": lambda block: None,
        UNKNOWN: lambda block: None,
    },
    RENDERED_TYPES,
    "provider text",
)


def _text_of(block: Block) -> str | None:
    return _TEXT[UNKNOWN if isinstance(block, UnknownBlock) else block.type](block)


def _result(block: ToolBlock) -> tuple[str, bool]:
    """The tool's result as the provider reads it, and whether it is an error; output and
    error with keys as the tool wrote them (``spellings``)."""
    fields = block.fields
    if block.status == "failed":
        name = "error" if "error" in fields else "output"
        detail = as_written(fields, name) if name in fields else None
        return "Error: " + (json.dumps(detail, ensure_ascii=False) if detail is not None else "failed"), True
    if "output" in fields:
        output = as_written(fields, "output")
        return (output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)), False
    return UNAVAILABLE.format(status=block.status), False


def _call(message: Message, number: int, block: ToolBlock, taken: set[str]) -> _Call:
    """The block as a call: its input with keys as the tool wrote them, and its result."""
    call_id = _call_id(message.id, number, taken)
    taken.add(call_id)
    arguments = as_written(block.fields, "input") if "input" in block.fields else {}
    return _Call(call_id, safe_name(block.tool), arguments, *_result(block))


def _uncalled(block: ToolBlock) -> str:
    """A tool block outside an assistant's turn (an importer's orphaned result: a result whose
    call is not in the file) as text: no assistant message called it, and a provider takes a
    tool result only as the answer to its call, so it is said in words, its output kept."""
    lines = [UNCALLED.format(tool=block.tool)]
    if "input" in block.fields:
        lines.append("Input: " + json.dumps(as_written(block.fields, "input"), ensure_ascii=False, default=dict))
    return "\n".join([*lines, _result(block)[0]])


def _said(message: Message) -> str:
    """What a message other than the assistant's says, as one text."""
    texts = (_uncalled(b) if isinstance(b, ToolBlock) else _text_of(b) for b in message.blocks)
    return "\n\n".join(t for t in texts if t is not None)


# OpenAI refuses a tool call id longer than this ("string_above_max_length").
CALL_ID_LIMIT = 40


def _call_id(message_id: str, number: int, taken: set[str]) -> str:
    """``vis_<message>_<n>``, the message id cut to fit ``CALL_ID_LIMIT``; message
    ids need not be unique, call ids must: underscores after a taken one, and past
    what fits, ``vis_<k>``, the first free."""
    tail = f"_{number}"
    while len("vis_") + 1 + len(tail) <= CALL_ID_LIMIT:
        call_id = f"vis_{safe_name(message_id, CALL_ID_LIMIT - len('vis_') - len(tail))}{tail}"
        if call_id not in taken:
            return call_id
        tail += "_"
    return next(f"vis_{k}" for k in range(len(taken) + 1) if f"vis_{k}" not in taken)


def _steps(message: Message, attachments: Attachments, taken: set[str]) -> list[_Step]:
    steps = [_Step()]
    number = 0
    for block in message.blocks:
        if isinstance(block, ToolBlock):
            number += 1
            steps[-1].calls.append(_call(message, number, block, taken))
            continue
        text = _text_of(block)
        # Text that says nothing is not replayed, and it parts no steps: a boundary only it
        # marked would be written as nothing, so a reader could not find it again.
        if text is None or not text.strip():
            continue
        if steps[-1].calls:  # text after tool calls starts the next step
            steps.append(_Step())
        steps[-1].text.append(text)
    # A step that says nothing and calls nothing is no message a provider takes.
    return [step for step in steps if step.calls or step.text]


def _closing_notice(message: Message, said: bool) -> str | None:
    partial = " What was said before it stopped is above." if said else " No partial answer exists."
    if message.status == "cancelled":
        return CANCELLED.format(partial=partial)
    failed_silently = message.status == "failed" and not any(isinstance(b, ErrorBlock) for b in message.blocks)
    if message.status == "streaming" or failed_silently:
        return INTERRUPTED.format(partial=partial)
    return None


def _images(message: Message, attachments: Attachments) -> list[str]:
    return [
        uri
        for b in message.blocks
        if isinstance(b, AttachmentBlock)
        for uri in [attachments.data_uri(b.attachment_id, b.media_type)]
        if uri
    ]


# --- the two wire formats ----------------------------------------------------------------


def _openai(session: Session, attachments: Attachments) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    taken: set[str] = set()
    for message in session.messages:
        if message.role == "assistant":
            steps = _steps(message, attachments, taken)
            for step in steps:
                reply: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(step.text) or None}
                if step.calls:
                    reply["tool_calls"] = [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {
                                "name": c.name,
                                "arguments": json.dumps(c.arguments, ensure_ascii=False, default=dict),
                            },
                        }
                        for c in step.calls
                    ]
                out.append(reply)
                out += [{"role": "tool", "tool_call_id": c.id, "content": c.result} for c in step.calls]
            notice = _closing_notice(message, bool(steps))
            if notice:
                out.append({"role": "user", "content": notice})
            continue
        text = _said(message)
        role = message.role if message.role in ("system", "developer", "user") else "user"
        images = _images(message, attachments) if role == "user" else []
        if images:
            parts: Any = [{"type": "text", "text": text}] + [
                {"type": "image_url", "image_url": {"url": uri}} for uri in images
            ]
            out.append({"role": role, "content": parts})
        elif text or role == "user":
            out.append({"role": role, "content": text})
    return {"session_id": session.id, "messages": out}


def _anthropic(session: Session, attachments: Attachments) -> dict[str, Any]:
    system: list[str] = []
    out: list[dict[str, Any]] = []
    taken: set[str] = set()

    def say(role: str, parts: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:  # roles must alternate: one message per run
            out[-1]["content"].extend(parts)
        else:
            out.append({"role": role, "content": parts})

    for message in session.messages:
        if message.role in ("system", "developer"):
            text = _said(message)
            if text.strip():
                system.append(text)
            continue
        if message.role == "assistant":
            steps = _steps(message, attachments, taken)
            for step in steps:
                said = "\n\n".join(step.text)
                parts: list[dict[str, Any]] = [{"type": "text", "text": said}] if said.strip() else []
                parts += [
                    {
                        "type": "tool_use",
                        "id": c.id,
                        "name": c.name,
                        "input": c.arguments if hasattr(c.arguments, "keys") else {"input": c.arguments},
                    }
                    for c in step.calls
                ]
                say("assistant", json.loads(json.dumps(parts, default=dict)))
                if step.calls:
                    say(
                        "user",
                        [
                            {
                                "type": "tool_result",
                                "tool_use_id": c.id,
                                "content": c.result,
                                **({"is_error": True} if c.is_error else {}),
                            }
                            for c in step.calls
                        ],
                    )
            notice = _closing_notice(message, bool(steps))
            if notice:
                say("user", [{"type": "text", "text": notice}])
            continue
        text = _said(message)
        parts = [{"type": "text", "text": text}] if text.strip() else []
        for uri in _images(message, attachments):
            kind, data = uri[len("data:") :].split(";base64,", 1)
            parts.append({"type": "image", "source": {"type": "base64", "media_type": kind, "data": data}})
        if parts:  # Anthropic refuses empty text: a message that says nothing is left out
            say("user", parts)
    if out and out[0]["role"] == "assistant":
        out.insert(0, {"role": "user", "content": [{"type": "text", "text": OPENING}]})
    last = out[-1]["content"][-1] if out and out[-1]["role"] == "assistant" else None
    if last is not None and last["type"] == "text":
        # Anthropic takes a closing assistant message as the start of its answer, and
        # refuses one that ends with whitespace (the text is not blank: it ends otherwise).
        last["text"] = last["text"].rstrip()
    result: dict[str, Any] = {"session_id": session.id}
    if system:
        result["system"] = "\n\n".join(system)
    result["messages"] = out
    return result


def conversation(session: Session, options: ExportOptions, flavour: str = "openai") -> dict[str, Any]:
    """The session as one provider conversation (``openai`` or ``anthropic``)."""
    if flavour not in PROVIDER_FORMATS:
        raise ValueError(f"provider format must be one of {', '.join(PROVIDER_FORMATS)}")
    # Reasoning never goes to a provider, not even visible reasoning, unless all is authorised.
    view = visible_session(session, "all" if options.reasoning == "all" else "none", options.redaction)
    attachments = Attachments.of(session, options.attachments)
    return (_openai if flavour == "openai" else _anthropic)(view, attachments)


def unreplayable(session: Session, options: ExportOptions) -> list[Problem]:
    """Why the request written for ``session`` is one no API takes, when it cannot be
    made one without inventing content: it holds no message (a session of system
    text only, for Anthropic, or of nothing a provider message carries)."""
    if conversation(session, options, options.provider_format)["messages"]:
        return []
    return [
        Problem(
            f"session {session.id}",
            "has no message a provider takes: the request written holds none, which the API refuses",
        )
    ]


def to_provider(
    session: Session,
    *,
    reasoning: Reasoning = DEFAULT_REASONING,
    attachments: Folder = None,
    provider_format: ProviderFormat = "openai",
    redact: Redaction | bool | None = None,
) -> dict[str, Any]:
    """The session as the chat messages a provider takes (``provider_format``
    ``"openai"`` or ``"anthropic"``); the options are those of ``vis-export
    convert --to provider`` (see ``ExportOptions``)."""
    settings = options_given(locals())
    return conversation(session, settings, settings.provider_format)


def session_lines(session: Session, options: ExportOptions) -> str:
    return json.dumps(conversation(session, options, options.provider_format), ensure_ascii=False) + "\n"


def sessions_lines(sessions: Sequence[Session], options: ExportOptions) -> str:
    return "".join(session_lines(session, options) for session in sessions)
