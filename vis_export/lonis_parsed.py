"""What a Lonis block says, parsed once: its one-line human form and every data
field, from which every format renders (render parity, ``docs/sources.md``)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vis_export.contract.lonis_check import SEED_KINDS, ReplayVerdict, content_hash, replay_verdict
from vis_export.model import LonisBlock, Session, thaw

CATEGORIES = {
    **dict.fromkeys(("message", "question", "answer", "decision", "action", "assumption", "summary"), "participant"),
    **dict.fromkeys(("evidence", "definition", "capability", "intent"), "knowledge"),
    **dict.fromkeys(("plan", "result", "outcome"), "process"),
}
CODE_FIELDS = {"input_schema", "output_schema", "signature"}


@dataclass(frozen=True)
class Field:
    """One data field: ``style`` is ``text``, ``code`` (monospace), ``list``
    (``value`` is a list of strings, numbered in order) or ``json``."""

    name: str
    style: str
    value: Any

    def apart(self, marks_code: bool, breaks_inline: bool) -> bool:
        """Whether a format shows the value apart, verbatim under the name, rather than on the name's line (a list
        is always numbered items). JSON always; code where the format sets code in monospace (``marks_code``);
        a value of several lines where a line of the format cannot keep its breaks (``breaks_inline``: Markdown's
        hard breaks can)."""
        if self.style == "list":
            return False
        code = marks_code and self.style == "code"
        return self.style == "json" or code or (not breaks_inline and "\n" in self.value)

    @property
    def language(self) -> str | None:
        """How a value shown apart is highlighted: JSON as JSON, code as plain (its language is not said)."""
        return "json" if self.style == "json" else None


@dataclass(frozen=True)
class ParsedLonis:
    kind: str
    category: str
    summary: str
    header: tuple[tuple[str, str], ...]
    fields: tuple[Field, ...]
    content_hash: str
    replay: str


def pascal(word: Any) -> str:
    """``no_match`` -> ``NoMatch``, ``insufficient-evidence`` -> ``InsufficientEvidence``."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_\-\s]+", str(word)) if part)


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def summary_line(kind: str, data: Mapping[str, Any]) -> str:
    def get(name: str) -> Any:
        return data.get(name, "")

    forms = {
        "message": lambda: f"message: {get('content')}",
        "question": lambda: f"question: {get('text')}",
        "answer": lambda: f"answer: {get('text')}",
        "decision": lambda: f"decision: {get('statement')}",
        "action": lambda: f"action: {get('verb')} {pascal(get('status'))}",
        "assumption": lambda: f"assumption: {get('statement')} ({pascal(get('status'))})",
        "summary": lambda: f"summary: {get('text')}",
        "evidence": lambda: f"evidence[{get('kind')}]: {get('summary')}",
        "definition": lambda: f"definition: {get('name')} ({get('kind')})",
        "capability": lambda: f"capability: {get('name')} — {get('description')}",
        "intent": lambda: f"intent: {get('statement')}",
        "plan": lambda: f"plan: {len(data.get('steps') or ())} step(s)",
        "result": lambda: f"result: {len(data.get('validated_assumptions') or ())} assumption(s) validated",
        "outcome": lambda: f"outcome[{pascal(get('status'))}]: {get('message')}",
    }
    if kind in forms:
        return forms[kind]()
    return f"extension[{kind}]: {compact(data)}"


def _field(kind: str, name: str, value: Any) -> Field:
    if kind == "plan" and name == "steps" and isinstance(value, list):
        return Field(
            name,
            "list",
            [
                f"{s.get('kind', '?')}: {compact(s.get('detail', {}))}" if isinstance(s, dict) else compact(s)
                for s in value
            ],
        )
    if name == "evidence" and isinstance(value, list):
        return Field(
            name,
            "list",
            [f"[{e.get('kind', '?')}] {e.get('summary', '')}" if isinstance(e, dict) else compact(e) for e in value],
        )
    if name in CODE_FIELDS and isinstance(value, str):
        return Field(name, "code", value)
    if isinstance(value, str):
        return Field(name, "text", value)
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
        return Field(name, "text", json.dumps(value))
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return Field(name, "list", [v if isinstance(v, str) else json.dumps(v) for v in value])
    return Field(name, "json", json.dumps(value, ensure_ascii=False, indent=2))


def _mapping(value: Any) -> dict[str, Any]:
    """A part of the envelope as a map: a block read from Vis JSON was not
    checked against the Lonis schemas, and must still render."""
    return value if isinstance(value, dict) else {}


def parsed(envelope: Mapping[str, Any]) -> ParsedLonis:
    block = thaw(envelope)
    payload = block.get("payload") if isinstance(block.get("payload"), dict) else {}
    kind = str(payload.get("kind", "?"))
    data = payload.get("data")
    attribution = _mapping(block.get("attribution"))
    made = _mapping(attribution.get("provenance"))
    header = [("by", str(attribution.get("identity", "")))]
    for label, value in (
        ("viewpoint", attribution.get("viewpoint")),
        ("when", made.get("when")),
        ("where", made.get("where")),
        ("producer", made.get("producer")),
    ):
        if value:
            header.append((label, str(value)))
    for name, value in _mapping(block.get("bounds")).items():
        header.append((name, str(value)))
    warnings = block.get("warnings")
    for warning in warnings if isinstance(warnings, list) else ():
        header.append(("warning", str(warning)))
    if isinstance(data, dict) and kind in SEED_KINDS:
        fields = tuple(_field(kind, name, value) for name, value in data.items())
    else:
        fields = (Field("data", "json", json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True)),)
    return ParsedLonis(
        kind,
        CATEGORIES.get(kind, "extension"),
        summary_line(kind, data if isinstance(data, dict) else {}),
        tuple(header),
        fields,
        content_hash(payload),
        str(replay_verdict(block)),
    )


def replay_reports(session: Session) -> list[tuple[int, str, ReplayVerdict]]:
    """(number, kind, verdict) of each Lonis block of the session, numbered from 1."""
    reports = []
    blocks = [block for _, block in session.blocks() if isinstance(block, LonisBlock)]
    for number, block in enumerate(blocks, 1):
        envelope = thaw(block.envelope)
        reports.append((number, str(envelope["payload"]["kind"]), replay_verdict(envelope)))
    return reports
