"""The canonical JSON projection: the stored contract, minus what the policy hides.

Output is the contract itself (snake_case keys, lowercase enums, stored field
order), so it is also a valid source for every reader.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vis_export.formats.options import ExportOptions
from vis_export.model import Block, Message, Session
from vis_export.policy import DEFAULT_REASONING, Exportable, Reasoning, visible
from vis_export.strings import surrogates_escaped

if TYPE_CHECKING:
    from vis_export.redaction import Redaction


def json_value(
    obj: Exportable, reasoning: Reasoning = DEFAULT_REASONING, redact: Redaction | bool | None = None
) -> Any:
    shown = visible(obj, reasoning, ExportOptions(reasoning=reasoning, redact=redact).redaction)
    if shown is None:
        return None
    if isinstance(shown, (Session, Message, Block)):
        return shown.to_json()
    return [message.to_json() for message in shown]


def _dump(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=2) + "\n"
    # A lone surrogate (valid in JSON, not in UTF-8) stays an escape, so the
    # output is exact and can still be written.
    return surrogates_escaped(text)


def to_json(
    obj: Exportable, *, reasoning: Reasoning = DEFAULT_REASONING, redact: Redaction | bool | None = None
) -> str:
    """JSON text of a session, message, block or list of messages."""
    return _dump(json_value(obj, reasoning, redact))


def session_json(session: Session, options: ExportOptions) -> str:
    return to_json(session, reasoning=options.reasoning, redact=options.redaction)


def sessions_json(sessions: Sequence[Session], options: ExportOptions) -> str:
    """Several sessions on one stream: one JSON array, still valid input."""
    return _dump([json_value(session, options.reasoning, options.redaction) for session in sessions])
