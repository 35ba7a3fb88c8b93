"""A fast validator with the same verdicts as the contract's JSON Schemas.

The schemas in ``schema/`` are the normative form; the test suite proves that
this module reaches the same verdict as the ``jsonschema`` library on generated
valid and invalid documents. It exists because a generic validator is an order
of magnitude slower than ``json.loads`` on large sessions, and because it can
say *where* and *what* in words a person understands. Problems of kind
``"rule"`` are the contract rules no schema expresses (snake_case keys at every
depth, ``completed_at`` not before ``created_at``). Problems of kind ``"limit"``
are bounds that keep hostile input from breaking what comes after loading:
nesting deeper than ``MAX_DEPTH`` (renderers and the model recurse), and times
outside what ``datetime`` can show (every format shows times). ``--lenient``
never keeps a value with a limit problem.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from vis_export.contract.blocktypes import KNOWN_TYPES, for_each_type
from vis_export.contract.duplicates import any_recorded, duplicated
from vis_export.contract.private import REASONING_FIELDS, WITHHELD, reasoning_map
from vis_export.contract.reasoning_words import names_reasoning
from vis_export.problems import Path, Problem, format_path

SNAKE_CASE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")
_SNAKE_CASE_EXACT = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")

MESSAGE_ROLES = ("assistant", "developer", "system", "tool", "user")
MESSAGE_STATUSES = ("cancelled", "completed", "failed", "streaming", "suspended")
TOOL_STATUSES = ("cancelled", "completed", "failed", "pending", "running")
VISIBILITIES = ("private", "visible")
DELTA_FIELDS = ("markdown", "text")
TERMINAL_EVENTS = {"turn.completed": "completed", "turn.failed": "failed", "turn.cancelled": "cancelled"}
EVENT_TYPES = ("content.block.started", "content.block.delta", "content.block.completed", *TERMINAL_EVENTS)

LIMIT = "limit"
# Containers nest at most this many levels, counted from the document (file or
# line) down: deep enough for any real tool JSON, shallow enough that every
# recursive step after loading stays far from Python's recursion limit.
MAX_DEPTH = 100
# The last millisecond datetime can show: 9999-12-31T23:59:59.999Z.
MAX_TIME = 253_402_300_799_999
_OUT_OF_RANGE = f"is out of range: a time is 0 to {MAX_TIME} ms (up to the year 9999)"
_TOOL_TIMES = ("started_at", "completed_at")

Out = list[Problem]


def _problem(out: Out, path: Path, message: str, kind: str = "schema") -> None:
    out.append(Problem(format_path(path), message, kind))


# --- scalar constraints (common.json) -------------------------------------------


def _is_integer(value: Any) -> bool:
    # JSON Schema counts 3.0 as an integer, and booleans as no number at all.
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, int)


def _non_blank(out: Out, path: Path, value: Any) -> bool:
    if not isinstance(value, str):
        _problem(out, path, f"must be a string, not {_json_type(value)}")
        return False
    if not value or value.isspace():
        _problem(out, path, "must not be blank")
        return False
    return True


def _snake_case_id(out: Out, path: Path, value: Any) -> None:
    if not isinstance(value, str):
        _problem(out, path, f"must be a string, not {_json_type(value)}")
    elif not SNAKE_CASE.search(value):
        _problem(out, path, f"{_quote(value)} is not a snake_case identifier")
    elif not _SNAKE_CASE_EXACT.fullmatch(value):
        # The schema's `$` lets a trailing newline through; the contract does not.
        _problem(out, path, f"{_quote(value)} is not a snake_case identifier", "rule")


def _non_negative_integer(out: Out, path: Path, value: Any, nullable: bool = False) -> bool:
    if nullable and value is None:
        return False
    if not _is_integer(value):
        expected = "an integer (milliseconds) or null" if nullable else "an integer (milliseconds)"
        _problem(out, path, f"must be {expected}, not {_json_type(value)}")
        return False
    if value < 0:
        _problem(out, path, "must not be negative")
        return False
    return True


def _time(out: Out, path: Path, value: Any, nullable: bool = False) -> bool:
    """A time: an integer of milliseconds (the schema) that a format can show (a limit)."""
    if not _non_negative_integer(out, path, value, nullable):
        return False
    if value > MAX_TIME:
        _problem(out, path, _OUT_OF_RANGE, LIMIT)
        return False
    return True


def _enum(out: Out, path: Path, value: Any, allowed: tuple[str, ...]) -> None:
    if isinstance(value, str) and value in allowed:
        return
    choices = ", ".join(allowed)
    if not isinstance(value, str):
        _problem(out, path, f"must be one of {choices}, not {_json_type(value)}")
    elif value.startswith(":"):
        _problem(out, path, f"{_quote(value)} is a keyword-looking value; expected one of {choices}")
    elif value.lower() in allowed:
        _problem(out, path, f"{_quote(value)} must be lowercase ({value.lower()})")
    else:
        _problem(out, path, f"{_quote(value)} is not one of {choices}")


def _optional_string(out: Out, path: Path, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        _problem(out, path, f"must be a string or null, not {_json_type(value)}")


def _require(out: Out, path: Path, obj: dict[str, Any], fields: tuple[str, ...]) -> None:
    for field in fields:
        if field not in obj:
            _problem(out, path, f"missing required field {_quote(field)}")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _quote(value: str, limit: int = 60) -> str:
    """A value quoted for a one-line message: JSON escapes keep it on one line."""
    shown = value if len(value) <= limit else value[:limit] + "…"
    return json.dumps(shown, ensure_ascii=False)


# --- keys at every depth ------------------------------------------------------------


# Keys already seen to be snake_case. Real sessions repeat a few dozen keys
# millions of times, so one set lookup for all of an object's keys replaces a
# regular expression per key. Bounded, so hostile input cannot grow it forever.
_GOOD_KEYS: set[str] = set()
_GOOD_KEYS_LIMIT = 4096


def _bad_keys(obj: dict[str, Any], path: Path, out: Out) -> None:
    for key in duplicated(obj):
        _problem(out, path, f"duplicate key {_quote(key)}", "rule")
    if _GOOD_KEYS.issuperset(obj):
        return
    for key in obj:
        if key in _GOOD_KEYS:
            continue
        if _SNAKE_CASE_EXACT.fullmatch(key):
            if len(_GOOD_KEYS) < _GOOD_KEYS_LIMIT:
                _GOOD_KEYS.add(key)
        else:
            _problem(out, (*path, key), "key is not snake_case", "rule")


def check_keys(value: Any, path: Path, out: Out) -> None:
    """Every map key is a snake_case string, at every depth (tool input/output too);
    no container nests deeper than ``MAX_DEPTH``, so this recursion is bounded too.
    What is wrong under private reasoning is said as one problem where it starts."""
    kind = type(value)
    if kind in _CONTAINERS and len(path) >= MAX_DEPTH:
        _too_deep(out, path)
    elif kind is dict:
        if reasoning_map(value):
            found: Out = []
            _check_map_keys(value, path, found)
            withhold(found, path, out)
        else:
            _check_map_keys(value, path, out)
    elif kind is list:
        for index, item in enumerate(value):
            if type(item) in _CONTAINERS:
                check_keys(item, (*path, index), out)


def _check_map_keys(obj: dict[str, Any], path: Path, out: Out) -> None:
    _bad_keys(obj, path, out)
    for key, item in obj.items():
        if type(item) in _CONTAINERS:
            _check_field_keys(key, item, (*path, key), out)


def _check_field_keys(key: str, item: Any, path: Path, out: Out) -> None:
    """``check_keys`` for a field's value; under a key that names reasoning, withheld."""
    if names_reasoning(key):
        found: Out = []
        check_keys(item, path, found)
        withhold(found, path, out)
    else:
        check_keys(item, path, out)


def withhold(found: Out, path: Path, out: Out) -> None:
    """The problems ``found`` under private reasoning that starts at ``path``, as one
    problem there that quotes nothing (R2); as grave as the gravest of them."""
    if not found:
        return
    out.append(withheld_at(path, max((problem.kind for problem in found), key=_GRAVITY.__getitem__)))


def _say_once(problem: Problem, out: Out) -> None:
    """Append ``problem`` to the few said of one block unless the same line is
    already there; a graver kind replaces a milder one."""
    for index, said in enumerate(out):
        if said.location == problem.location and said.message == problem.message:
            if _GRAVITY[problem.kind] > _GRAVITY[said.kind]:
                out[index] = problem
            return
    out.append(problem)


_GRAVITY = {"rule": 0, "schema": 1, LIMIT: 2}


def check_depth(value: Any, path: Path, out: Out) -> None:
    """Nesting deeper than ``MAX_DEPTH``, and duplicate keys, in documents whose
    keys are not the Vis contract's to judge (Lonis envelopes); ``check_keys``
    does this for Vis. Under private reasoning, withheld as there."""
    if type(value) not in _CONTAINERS:
        return
    if len(path) >= MAX_DEPTH:
        _too_deep(out, path)
        return
    if type(value) is dict and reasoning_map(value):
        found: Out = []
        _check_map_depth(value, path, found)
        withhold(found, path, out)
    elif type(value) is dict:
        _check_map_depth(value, path, out)
    else:
        for index, item in enumerate(value):
            if type(item) in _CONTAINERS:
                check_depth(item, (*path, index), out)


def _check_map_depth(obj: dict[str, Any], path: Path, out: Out) -> None:
    for key in duplicated(obj):
        _problem(out, path, f"duplicate key {_quote(key)}", "rule")
    for key, item in obj.items():
        if type(item) not in _CONTAINERS:
            continue
        if names_reasoning(key):
            found: Out = []
            check_depth(item, (*path, key), found)
            withhold(found, (*path, key), out)
        else:
            check_depth(item, (*path, key), out)


def _too_deep(out: Out, path: Path) -> None:
    out.append(Problem(f"{format_path(path[:_SHOWN_PARTS])}…", f"nested deeper than {MAX_DEPTH} levels", LIMIT))


_CONTAINERS = frozenset({dict, list})
# A too-deep value is named by where it starts to nest, not by a hundred parts.
_SHOWN_PARTS = 12


def _check_own_keys(obj: dict[str, Any], path: Path, out: Out, structured: frozenset[str]) -> None:
    """Check this object's keys, and every key below its fields except ``structured``
    ones, which the caller checks itself as it descends."""
    _bad_keys(obj, path, out)
    for key, item in obj.items():
        if type(item) in _CONTAINERS and key not in structured:
            _check_field_keys(key, item, (*path, key), out)


# --- blocks --------------------------------------------------------------------------


def _prose(b: dict[str, Any], path: Path, out: Out) -> None:
    _require(out, path, b, ("markdown",))
    if "markdown" in b and not isinstance(b["markdown"], str):
        _problem(out, (*path, "markdown"), f"must be a string, not {_json_type(b['markdown'])}")


def _speech(b: dict[str, Any], path: Path, out: Out) -> None:
    _require(out, path, b, ("text",))
    if "text" in b:
        _non_blank(out, (*path, "text"), b["text"])


def _code(b: dict[str, Any], path: Path, out: Out) -> None:
    _require(out, path, b, ("text",))
    if "text" in b and not isinstance(b["text"], str):
        _problem(out, (*path, "text"), f"must be a string, not {_json_type(b['text'])}")
    if "language" in b and not isinstance(b["language"], str):  # empty or blank: no language named
        _problem(out, (*path, "language"), f"must be a string, not {_json_type(b['language'])}")


def _tool(b: dict[str, Any], path: Path, out: Out) -> None:
    _require(out, path, b, ("tool", "status"))
    if "tool" in b:
        _non_blank(out, (*path, "tool"), b["tool"])
    if "status" in b:
        _enum(out, (*path, "status"), b["status"], TOOL_STATUSES)
    for field in _TOOL_TIMES:
        if field in b and not _tool_time_ok(b[field]):
            _problem(out, (*path, field), _OUT_OF_RANGE, LIMIT)


def _tool_time_ok(value: Any) -> bool:
    """Tool times are not in the contract, but formats show a number there as a time."""
    return type(value) not in (int, float) or 0 <= value <= MAX_TIME


def _reasoning(b: dict[str, Any], path: Path, out: Out) -> None:
    _require(out, path, b, ("text",))
    if "text" in b and not isinstance(b["text"], str):
        _problem(out, (*path, "text"), f"must be a string, not {_json_type(b['text'])}")
    if "visibility" in b:
        _enum(out, (*path, "visibility"), b["visibility"], VISIBILITIES)


def _coded(b: dict[str, Any], path: Path, out: Out) -> None:
    _require(out, path, b, ("code", "message"))
    if "code" in b:
        _snake_case_id(out, (*path, "code"), b["code"])
    if "message" in b:
        _non_blank(out, (*path, "message"), b["message"])


def _error(b: dict[str, Any], path: Path, out: Out) -> None:
    _coded(b, path, out)
    if "retryable" in b and not isinstance(b["retryable"], bool):
        _problem(out, (*path, "retryable"), f"must be true or false, not {_json_type(b['retryable'])}")


def _attachment(b: dict[str, Any], path: Path, out: Out) -> None:
    _require(out, path, b, ("attachment_id", "name", "media_type"))
    for field in ("attachment_id", "name", "media_type"):
        if field in b:
            _non_blank(out, (*path, field), b[field])


_BLOCK_CHECKS: dict[str, Callable[[dict[str, Any], Path, Out], None]] = for_each_type(
    {
        "prose": _prose,
        "speech": _speech,
        "code": _code,
        "tool": _tool,
        "reasoning": _reasoning,
        "error": _error,
        "attachment": _attachment,
        "notice": _coded,
    },
    KNOWN_TYPES,
    "block checks",
)
_NO_STRUCTURE: frozenset[str] = frozenset()


def check_block(block: Any, path: Path, out: Out) -> None:
    """Append every problem of one content block (known or unknown type) to ``out``."""
    if any_recorded() or not _block_ok(block, len(path)):
        _check_block_in_detail(block, path, out)


# What may be said of a reasoning block's own fields: these messages quote nothing.
_SAID_OF_OWN_FIELDS = frozenset(
    message
    for field in REASONING_FIELDS
    for message in (f"missing required field {_quote(field)}", f"duplicate key {_quote(field)}")
)


def _check_block_in_detail(block: Any, path: Path, out: Out) -> None:
    if isinstance(block, dict) and reasoning_map(block):
        # A problem's place or message can quote the data (a key, a value): for
        # what may be private reasoning, say where it is, never what it says (R2);
        # the block's own fields (``visibility``) are the contract's, not its data.
        found: Out = []
        _check_any_block(block, path, found)
        at = format_path(path)
        said_of_block: Out = []  # a few lines at most: the block and its own fields
        for problem in found:
            if problem.location == at and problem.message in _SAID_OF_OWN_FIELDS:
                said = problem
            else:
                field = problem.location[len(at) :].lstrip(".").split("[")[0].split(".")[0]
                said = withheld_at((*path, field) if field in REASONING_FIELDS else path, problem.kind)
            _say_once(said, said_of_block)
        out.extend(said_of_block)
        return
    _check_any_block(block, path, out)


def withheld_at(path: Path, kind: str = "schema") -> Problem:
    """The problem said for what is wrong under private reasoning at ``path``."""
    return Problem(format_path(path), WITHHELD, kind)


def _check_any_block(block: Any, path: Path, out: Out) -> None:
    if not isinstance(block, dict):
        _problem(out, path, f"a block must be an object, not {_json_type(block)}")
        return
    _check_own_keys(block, path, out, _NO_STRUCTURE)
    _require(out, path, block, ("id", "type"))
    if "id" in block:
        _non_blank(out, (*path, "id"), block["id"])
    kind = block.get("type")
    if "type" in block and not isinstance(kind, str):
        _problem(out, (*path, "type"), f"must be a string, not {_json_type(kind)}")
        return
    check = _BLOCK_CHECKS.get(kind)  # type: ignore[arg-type]
    if check is not None:
        check(block, path, out)


# --- messages, sessions, events ---------------------------------------------------------

_MESSAGE_STRUCTURE = frozenset({"content"})


def check_message(message: Any, path: Path, out: Out) -> None:
    """Append every problem of one message envelope and its blocks to ``out``."""
    depth = len(path)
    if any_recorded() or not _envelope_ok(message, depth):
        _check_message_in_detail(message, path, out)
        return
    for index, block in enumerate(message["content"]):
        if not _block_ok(block, depth + 2):
            _check_block_in_detail(block, (*path, "content", index), out)


def _check_message_in_detail(message: Any, path: Path, out: Out) -> None:
    if not isinstance(message, dict):
        _problem(out, path, f"a message must be an object, not {_json_type(message)}")
        return
    _check_own_keys(message, path, out, _MESSAGE_STRUCTURE)
    _require(out, path, message, ("id", "role", "status", "content", "created_at"))
    if "id" in message:
        _non_blank(out, (*path, "id"), message["id"])
    if "role" in message:
        _enum(out, (*path, "role"), message["role"], MESSAGE_ROLES)
    if "status" in message:
        _enum(out, (*path, "status"), message["status"], MESSAGE_STATUSES)
    created = completed = False
    if "created_at" in message:
        created = _time(out, (*path, "created_at"), message["created_at"])
    if "completed_at" in message:
        completed = _time(out, (*path, "completed_at"), message["completed_at"], True)
    if created and completed and message["completed_at"] < message["created_at"]:
        _problem(out, (*path, "completed_at"), "is before created_at", "rule")
    for field in ("model", "provider"):
        if field in message:
            value = message[field]
            _optional_string(out, (*path, field), value)
            if isinstance(value, str) and value.startswith(":"):
                # A Clojure keyword leaked into JSON (the contract's own example).
                _problem(out, (*path, field), f"{_quote(value)} is a keyword-looking value", "rule")
    if "content" in message:
        content = message["content"]
        if not isinstance(content, list):
            _problem(out, (*path, "content"), f"must be an array, not {_json_type(content)}")
        else:
            for index, block in enumerate(content):
                check_block(block, (*path, "content", index), out)


_SESSION_STRUCTURE = frozenset({"messages"})


def check_session(session: Any, path: Path, out: Out) -> None:
    """Append every problem of a session object (metadata and messages) to ``out``."""
    if not isinstance(session, dict):
        _problem(out, path, f"a session must be an object, not {_json_type(session)}")
        return
    check_session_fields(session, path, out)
    messages = session.get("messages")
    if isinstance(messages, list):
        for index, message in enumerate(messages):
            check_message(message, (*path, "messages", index), out)


def check_session_fields(session: dict[str, Any], path: Path, out: Out) -> None:
    """The problems of a session object's own fields (``messages`` only as far as
    being an array): a reader that checks the messages its own way checks these."""
    _check_own_keys(session, path, out, _SESSION_STRUCTURE)
    _require(out, path, session, ("messages",))
    if "id" in session:
        _non_blank(out, (*path, "id"), session["id"])
    if "title" in session:
        _optional_string(out, (*path, "title"), session["title"])
    if "created_at" in session:
        _time(out, (*path, "created_at"), session["created_at"], True)
    messages = session.get("messages")
    if "messages" in session and not isinstance(messages, list):
        _problem(out, (*path, "messages"), f"must be an array, not {_json_type(messages)}")


_EVENT_STRUCTURE = frozenset({"block"})


def check_event(event: dict[str, Any], path: Path, out: Out) -> None:
    """Append every problem of one content or turn event to ``out``.

    Only the types in ``EVENT_TYPES`` reach here; other gateway events are skipped
    by the reader before validation.
    """
    _check_own_keys(event, path, out, _EVENT_STRUCTURE)
    kind = event.get("type")
    _require(out, path, event, ("turn_id",))
    if "turn_id" in event:
        _non_blank(out, (*path, "turn_id"), event["turn_id"])
    if "seq" in event:
        _non_negative_integer(out, (*path, "seq"), event["seq"])
    if "ts" in event:
        _time(out, (*path, "ts"), event["ts"])
    if "session_id" in event:
        _non_blank(out, (*path, "session_id"), event["session_id"])
    if kind == "content.block.started":
        _require(out, path, event, ("block",))
        if "block" in event:
            check_block(event["block"], (*path, "block"), out)
    elif kind == "content.block.delta":
        _require(out, path, event, ("block_id", "field", "text"))
        if "block_id" in event:
            _non_blank(out, (*path, "block_id"), event["block_id"])
        if "field" in event:
            _enum(out, (*path, "field"), event["field"], DELTA_FIELDS)
        if "text" in event and not isinstance(event["text"], str):
            _problem(out, (*path, "text"), f"must be a string, not {_json_type(event['text'])}")
    elif kind == "content.block.completed":
        _require(out, path, event, ("block_id",))
        if "block_id" in event:
            _non_blank(out, (*path, "block_id"), event["block_id"])
    elif kind in TERMINAL_EVENTS:
        _require(out, path, event, ("status",))
        if "status" in event and event["status"] != TERMINAL_EVENTS[kind]:
            _problem(out, (*path, "status"), f"must be {_quote(TERMINAL_EVENTS[kind])} for a {kind} event")
    else:
        _problem(out, (*path, "type"), f"{_quote(str(kind))} is not a content or turn event")


# --- fast paths ----------------------------------------------------------------------------
# Valid input is by far the common case. These predicates accept only what is
# certainly valid, in as few operations as possible; anything else goes to the
# detailed checks above, which say what is wrong and where. The tests hold both
# paths to the JSON Schemas' verdicts.


def snake_keys(obj: dict[str, Any]) -> bool:
    """Whether every key of ``obj`` is snake_case: keys not seen before are judged
    (and remembered, within the bound) here, so the first session a process reads
    takes the fast paths too."""
    if _GOOD_KEYS.issuperset(obj):
        return True
    for key in obj:
        if key not in _GOOD_KEYS:
            if not _SNAKE_CASE_EXACT.fullmatch(key):
                return False
            if len(_GOOD_KEYS) < _GOOD_KEYS_LIMIT:
                _GOOD_KEYS.add(key)
    return True


def _keys_ok(value: Any, depth: int) -> bool:
    """``depth`` is the length of the path to ``value``, as in ``check_keys``."""
    if depth >= MAX_DEPTH:
        return False
    depth += 1
    if type(value) is dict:
        if not snake_keys(value):
            return False
        for item in value.values():
            if type(item) in _CONTAINERS and not _keys_ok(item, depth):
                return False
    else:
        for item in value:
            if type(item) in _CONTAINERS and not _keys_ok(item, depth):
                return False
    return True


def _text_ok(value: Any) -> bool:
    return type(value) is str and bool(value) and not value.isspace()


def _values_ok(obj: dict[str, Any], depth: int, skip: str = "") -> bool:
    depth += 1
    for key, item in obj.items():
        if type(item) in _CONTAINERS and key != skip and not _keys_ok(item, depth):
            return False
    return True


_FAST_BLOCK: dict[str, Callable[[dict[str, Any]], bool]] = for_each_type(
    {
        "prose": lambda b: type(b.get("markdown")) is str,
        "code": lambda b: type(b.get("text")) is str and type(b.get("language", "")) is str,
        "speech": lambda b: _text_ok(b.get("text")),
        "reasoning": lambda b: type(b.get("text")) is str and b.get("visibility", "private") in VISIBILITIES,
        "tool": lambda b: (
            _text_ok(b.get("tool"))
            and b.get("status") in TOOL_STATUSES
            and _tool_time_ok(b.get("started_at"))
            and _tool_time_ok(b.get("completed_at"))
        ),
        "error": lambda b: _code_ok(b) and type(b.get("retryable", False)) is bool,
        "notice": lambda b: _code_ok(b),
        "attachment": lambda b: (
            _text_ok(b.get("attachment_id")) and _text_ok(b.get("name")) and _text_ok(b.get("media_type"))
        ),
    },
    KNOWN_TYPES,
    "fast block checks",
)


# For each known type, the fields ``block_shape_ok`` has checked to be strings or
# booleans (never a container or a number) when it holds: a caller that walks a
# certain block's containers and numbers (``sources.trusted``) passes over a block
# whose keys are all here. A tool's times are not: ``_tool_time_ok`` takes any value
# but a number out of range. A test holds each to its predicate.
SCALAR_FIELDS: dict[str, frozenset[str]] = for_each_type(
    {
        name: frozenset({"id", "type", *fields})
        for name, fields in (
            ("prose", ("markdown",)),
            ("code", ("text", "language")),
            ("speech", ("text",)),
            ("reasoning", ("text", "visibility")),
            ("tool", ("tool", "status")),
            ("error", ("code", "message", "retryable")),
            ("notice", ("code", "message")),
            ("attachment", ("attachment_id", "name", "media_type")),
        )
    },
    KNOWN_TYPES,
    "fields the fast block checks vouch for",
)
# The envelope's fields ``envelope_shape_ok`` checks to be strings, integers or
# none (``content`` a list, its blocks the caller's), as ``SCALAR_FIELDS``.
ENVELOPE_FIELDS = frozenset({"id", "role", "status", "content", "created_at", "completed_at", "model", "provider"})


def _code_ok(block: dict[str, Any]) -> bool:
    code = block.get("code")
    return type(code) is str and _SNAKE_CASE_EXACT.fullmatch(code) is not None and _text_ok(block.get("message"))


def _block_ok(block: Any, depth: int) -> bool:
    return block_shape_ok(block) and _values_ok(block, depth)


def block_shape_ok(block: Any) -> bool:
    """Whether ``block`` is certainly valid, its fields' own containers aside
    (whose keys and depth ``_keys_ok`` judges, or a caller that walks them anyway)."""
    if type(block) is not dict or not (_GOOD_KEYS.issuperset(block) or snake_keys(block)):
        return False  # ``snake_keys``' own first step written out: this runs for every block
    identity, kind = block.get("id"), block.get("type")
    if type(identity) is not str or not identity or identity.isspace() or type(kind) is not str:
        return False  # ``_text_ok`` written out: this runs for every block
    fast = _FAST_BLOCK.get(kind)
    return fast is None or fast(block)


def session_shape_ok(session: dict[str, Any]) -> bool:
    """Whether a session object's own fields are certainly valid, its messages and
    its fields' own containers aside (as ``envelope_shape_ok``)."""
    if not (_GOOD_KEYS.issuperset(session) or snake_keys(session)):
        return False
    get = session.get
    identity, title, created = get("id", "-"), get("title"), get("created_at")
    return (
        type(get("messages")) is list
        and type(identity) is str
        and bool(identity)
        and not identity.isspace()
        and (title is None or type(title) is str)
        and (created is None or (type(created) is int and 0 <= created <= MAX_TIME))
    )


def _envelope_ok(message: Any, depth: int) -> bool:
    return envelope_shape_ok(message) and _values_ok(message, depth, skip="content")


def envelope_shape_ok(message: Any) -> bool:
    """Whether a message envelope is certainly valid, its blocks and its fields'
    own containers aside (as ``block_shape_ok``)."""
    if type(message) is not dict or not (_GOOD_KEYS.issuperset(message) or snake_keys(message)):
        return False
    # ``_text_ok`` and ``_time_ok`` written out, as in ``block_shape_ok``: this runs for every message.
    get = message.get
    identity, created, completed = get("id"), get("created_at"), get("completed_at")
    model, provider = get("model"), get("provider")
    return (
        type(identity) is str
        and bool(identity)
        and not identity.isspace()
        and get("role") in MESSAGE_ROLES
        and get("status") in MESSAGE_STATUSES
        and type(get("content")) is list
        and type(created) is int
        and 0 <= created <= MAX_TIME
        and (completed is None or (type(completed) is int and created <= completed <= MAX_TIME))
        and (model is None or (type(model) is str and model[:1] != ":"))
        and (provider is None or (type(provider) is str and provider[:1] != ":"))
    )
