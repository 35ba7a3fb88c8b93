"""Lonis blocks (``lonis.block/v1``): validation, content hash and replay verdict.

The 16 closed JSON Schemas in ``lonis/`` are the contract (the project's copy
of the Lonis reference); they are checked with the ``jsonschema`` library. The
payload is checked against its own kind's schema (or the extension schema), so
a problem is named where it is, not as "no branch of oneOf matched".
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import Any

from vis_export.contract.check import withheld_at
from vis_export.contract.private import holds_reasoning, reasoning_map, reasoning_point, remembered
from vis_export.problems import Problem, format_path

SCHEMA_VERSION = "lonis.block/v1"
SEED_KINDS = (
    "message",
    "question",
    "answer",
    "decision",
    "action",
    "assumption",
    "summary",
    "evidence",
    "definition",
    "capability",
    "intent",
    "plan",
    "result",
    "outcome",
)
_MAX_SAFE_INTEGER = 2**53


@lru_cache(maxsize=1)
def _validators() -> tuple[Any, dict[str, Any]]:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    folder = files("vis_export.contract") / "lonis_schemas"
    schemas = [
        json.loads((folder / name).read_text(encoding="utf-8"))
        for name in sorted(p.name for p in folder.iterdir() if p.name.endswith(".json"))
    ]
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas)
    block = next(s for s in schemas if s["$id"].endswith("lonis.block/v1"))
    envelope = {**block, "properties": {**block["properties"], "payload": {"type": "object"}}}
    payloads = {
        kind: Draft202012Validator({"$ref": f"{block['$id']}#/$defs/{kind}"}, registry=registry)
        for kind in (*SEED_KINDS, "extension")
    }
    return Draft202012Validator(envelope, registry=registry), payloads


def _problems(validator: Any, block: dict[str, Any], prefix: tuple[str, ...]) -> list[Problem]:
    """The schema's problems of ``block`` (or of its part at ``prefix``), each withheld
    where it lies under private reasoning or its message could quote some: the
    schema library's messages quote the value (``{'thinking': ...} is not of type
    'string'``) and its keys (``'thinking' was unexpected``)."""
    value = block.get(prefix[0]) if prefix else block
    found: dict[Problem, None] = {}  # in order, each line once
    judge, holds = remembered(reasoning_map), remembered(holds_reasoning)
    for error in sorted(validator.iter_errors(value), key=lambda e: (list(map(str, e.absolute_path)), e.message)):
        path = (*prefix, *error.absolute_path)
        point = reasoning_point(block, path, judge)
        if point is not None:
            problem = withheld_at(path[:point])
        elif holds(error.instance):
            problem = withheld_at(path)
        else:
            problem = Problem(format_path(path), _message(error))
        found[problem] = None
    return list(found)


def _message(error: Any) -> str:
    """The schema library's message, cut to a line a person reads: it quotes the
    whole value (an array of 50,000 items made a line of 600 KB)."""
    message = str(error.message)
    if error.validator == "additionalProperties":
        message = message.replace("Additional properties are not allowed", "unknown field(s) not allowed")
    return message if len(message) <= _LONGEST else message[:_LONGEST] + "…"


_LONGEST = 300


def check_lonis_block(block: Any) -> list[Problem]:
    """Every problem of one envelope, located (``payload.data.confidence: ...``)."""
    if not isinstance(block, dict):
        return [Problem("", "a Lonis block must be an object")]
    envelope, payloads = _validators()
    problems = _problems(envelope, block, ())
    payload = block.get("payload")
    if isinstance(payload, dict):
        kind = payload.get("kind")
        validator = payloads.get(kind if kind in SEED_KINDS else "extension")
        problems += _problems(validator, block, ("payload",))
    return problems


def _canonical(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_SAFE_INTEGER:
        return int(value)  # 1.0 -> 1, and -0.0 -> 0
    if isinstance(value, dict):
        return {key: _canonical(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_canonical(item) for item in value]
    return value


def content_hash(payload: Any) -> str:
    """sha256 hex of the canonical payload: keys sorted, compact, UTF-8 unescaped,
    integral floats as integers (``lonis.md``)."""
    text = json.dumps(_canonical(payload), separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ReplayVerdict:
    """``status``: ``replayable``, ``not_replayable`` (with its reasons), ``failed``
    (a required hash missing or mismatched), or ``undeclared``."""

    status: str
    reasons: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    mismatched: tuple[str, ...] = ()
    content_hash: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        for name in ("reasons", "missing", "mismatched"):
            if getattr(self, name):
                out[name] = list(getattr(self, name))
        return out

    def __str__(self) -> str:
        if self.status == "failed":
            parts = [
                f"missing {', '.join(self.missing)}" if self.missing else "",
                f"mismatched {', '.join(self.mismatched)}" if self.mismatched else "",
            ]
            return "replay failed: " + "; ".join(p for p in parts if p)
        if self.status == "not_replayable":
            return "not replayable" + (f": {'; '.join(self.reasons)}" if self.reasons else "")
        return self.status.replace("_", " ")


def replay_verdict(block: dict[str, Any]) -> ReplayVerdict:
    """Whether the block declares itself replayable and its required hashes hold.

    A required hash names a provenance field (``input_hash``) or the content hash
    (``content_hash``), optionally with the value it must have (``name=hex``).
    A name this toolkit can compute (the content hash; ``plan_hash`` of a plan)
    must equal its computed value."""
    digest = content_hash(block.get("payload"))
    provenance: dict[str, Any] = block["provenance"] if isinstance(block.get("provenance"), dict) else {}
    replay = provenance.get("replay")
    if not isinstance(replay, dict):
        return ReplayVerdict("undeclared", content_hash=digest)
    if not replay.get("replayable"):
        reasons = replay.get("reasons")
        return ReplayVerdict(
            "not_replayable", tuple(map(str, reasons)) if isinstance(reasons, list) else (), content_hash=digest
        )
    payload: dict[str, Any] = block["payload"] if isinstance(block.get("payload"), dict) else {}
    known = {"content_hash": digest}
    if payload.get("kind") == "plan" and isinstance(payload.get("data"), dict) and "plan_hash" in payload["data"]:
        known["plan_hash"] = payload["data"]["plan_hash"]
    missing: list[str] = []
    mismatched: list[str] = []
    required = replay.get("required_hashes")
    for entry in required if isinstance(required, list) else ():
        name, _, expected = str(entry).partition("=")
        present = known.get(name) if name == "content_hash" else provenance.get(name, known.get(name))
        if not present:
            missing.append(name)
        elif (expected and present != expected) or (name in known and present != known[name]):
            mismatched.append(name)
    if missing or mismatched:
        return ReplayVerdict("failed", missing=tuple(missing), mismatched=tuple(mismatched), content_hash=digest)
    return ReplayVerdict("replayable", content_hash=digest)
