"""The Vis SQLite store (``sources.md`` section 3), read without writing a byte.

SQLite writes ``-wal``/``-shm`` files beside a WAL database it opens, even
read-only, and fails in a read-only directory. So: with no ``-wal`` file the
database is opened ``immutable=1`` (nothing is created); with one, recent turns
may live only there, so a private temporary copy of the database and its WAL is
opened instead and removed afterwards. A store reached through a symbolic link
is read at its real path, where its ``-wal`` is.

The store is not trusted to hold what its columns declare (SQLite stores any
type in any column): every value used is checked, and one of the wrong type
(a BLOB title, a text time, text that is not UTF-8) is a problem located at
its session, turn and column, never a crash and never the whole store's failure.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import quote

from vis_export.contract import check_message
from vis_export.contract.check import MAX_TIME
from vis_export.contract.duplicates import recording
from vis_export.model import Message, Session, StoredAttachment, message_from_json
from vis_export.problems import Problem
from vis_export.sources.jsontext import MEMORY_BUDGET, PER_CHARACTER, estimated_memory, parse
from vis_export.sources.result import LoadResult, failed
from vis_export.sources.salvage import salvage_message

SQLITE_HEADER = b"SQLite format 3\x00"
REQUIRED_TABLES = ("session_soul", "session_state", "session_turn_soul", "session_turn_state")
STATUS_OF_TURN = {"done": "completed", "error": "failed", "interrupted": "cancelled", "running": "streaming"}


class NotUtf8(bytes):
    """A TEXT value whose bytes are not UTF-8, kept for the column checks to name."""


_SQL_TYPES = {
    type(None): "NULL",
    int: "an integer",
    float: "a real number",
    str: "text",
    bytes: "a BLOB",
    NotUtf8: "text that is not UTF-8",
}


def _sql_type(value: Any) -> str:
    return _SQL_TYPES.get(type(value), type(value).__name__)


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return None
    return "is not UTF-8 text" if isinstance(value, NotUtf8) else f"must be text, not {_sql_type(value)}"


def _id(value: Any) -> str | None:
    return _text(value) or ("must not be blank" if not value.strip() else None)


def _text_or_null(value: Any) -> str | None:
    return None if value is None else _text(value)


def _int_or_null(value: Any) -> str | None:
    return None if value is None or isinstance(value, int) else f"must be an integer, not {_sql_type(value)}"


def _blob_or_null(value: Any) -> str | None:
    return None if value is None or isinstance(value, bytes) else f"must be a BLOB, not {_sql_type(value)}"


def _time_or_null(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, (int, float)) or not float(value).is_integer():
        return f"must be an integer (milliseconds), not {_sql_type(value)}"
    return None if 0 <= value <= MAX_TIME else f"is out of range: a time is 0 to {MAX_TIME} ms (up to the year 9999)"


Columns = dict[str, Callable[[Any], "str | None"]]
SOUL_COLUMNS: Columns = {
    "id": _id,
    "created_at": _time_or_null,
    "llm_pref_provider": _text_or_null,
    "llm_pref_model": _text_or_null,
}
STATE_COLUMNS: Columns = {"title": _text_or_null}
TURN_COLUMNS: Columns = {"id": _id, "user_request": _text_or_null, "created_at": _time_or_null}
TURN_STATE_COLUMNS: Columns = {
    "id": _id,
    "status": _text,
    "llm_root_provider": _text_or_null,
    "llm_root_model": _text_or_null,
    "content_json": _text_or_null,
    "created_at": _time_or_null,
}
ATTACHMENT_COLUMNS: Columns = {
    "id": _id,
    "media_type": _text,
    "filename": _text_or_null,
    "size_bytes": _int_or_null,
    "bytes": _blob_or_null,
    "storage_uri": _text_or_null,
    "transcription": _text_or_null,
}


def _bad_columns(row: sqlite3.Row, where: str, columns: Columns) -> list[Problem]:
    """A problem for each column of ``row`` whose value is not what ``columns`` expects."""
    found = []
    for name, check in columns.items():
        message = check(row[name])
        if message is not None:
            found.append(Problem(f"{where}, {name}", message))
    return found


def _good(row: sqlite3.Row, name: str, columns: Columns) -> Any:
    """The value of a column, or ``None`` when it is not what ``columns`` expects."""
    value = row[name]
    return value if columns[name](value) is None else None


def _decoded(raw: bytes) -> str | NotUtf8:
    """TEXT as ``str``, else ``NotUtf8`` for the column checks to name (SQLite's
    own decoding would fail the whole query, and with it every session)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return NotUtf8(raw)


def copied_when_read(path: Path) -> bool:
    """Whether opening the store copies it (it has a WAL): a reader then opens it
    as few times as it can."""
    wal = Path(f"{path}-wal")
    return wal.exists() and wal.stat().st_size > 0


@contextmanager
def _read_only(path: Path) -> Iterator[sqlite3.Connection]:
    wal = Path(f"{path}-wal")
    if not copied_when_read(path):
        uri = f"file:{quote(str(path.resolve()))}?mode=ro&immutable=1"
        connection = sqlite3.connect(uri, uri=True)
        try:
            yield connection
        finally:
            connection.close()
        return
    scratch = tempfile.mkdtemp(prefix="vis-export-store-")
    try:
        copy = Path(scratch) / "vis.db"
        shutil.copyfile(path, copy)
        shutil.copyfile(wal, f"{copy}-wal")
        connection = sqlite3.connect(copy)
        try:
            yield connection
        finally:
            connection.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def read_store(path: Path, source: str, lenient: bool = False, only: slice | None = None) -> list[LoadResult]:
    """Every session of the store, or those ``only`` picks of them (in the same
    order): a worker of a distributed job reads just its share."""
    try:
        with _read_only(path.resolve()) as db, recording():
            db.row_factory = sqlite3.Row
            db.text_factory = _decoded
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            missing = [t for t in REQUIRED_TABLES if t not in tables]
            if missing:
                return [failed(source, Problem("", f"not a Vis store (no table {missing[0]})"))]
            has_attachments = "session_attachment" in tables
            souls = _souls(db)
            return [_session(db, soul, source, has_attachments, lenient) for soul in souls[only or slice(None)]]
    except sqlite3.DatabaseError as error:
        return [failed(source, Problem("", f"not a readable Vis store: {error}"))]


def store_sessions(path: Path) -> int | None:
    """How many sessions ``read_store`` gives for the store, or ``None`` when it
    cannot be told (not a readable Vis store: reading it whole says why)."""
    try:
        with _read_only(path.resolve()) as db:
            return len(_souls(db))
    except sqlite3.DatabaseError:
        return None


def _souls(db: sqlite3.Connection) -> list[sqlite3.Row]:
    return db.execute(
        "SELECT id, created_at, llm_pref_provider, llm_pref_model FROM session_soul"
        " WHERE parent_state_id IS NULL AND claimed_at IS NOT NULL ORDER BY created_at, id"
    ).fetchall()


def _newest(db: sqlite3.Connection, sql: str, *parameters: Any) -> sqlite3.Row | None:
    row: sqlite3.Row | None = db.execute(sql + " ORDER BY version DESC, created_at DESC LIMIT 1", parameters).fetchone()
    return row


# A turn's content only if it may fit in what is left of the session's memory
# budget (``jsontext``): one larger than that is never fetched, only measured.
_TURN_STATE = (
    "SELECT id, status, llm_root_provider, llm_root_model, created_at,"
    " length(CAST(content_json AS BLOB)) AS content_bytes,"
    " CASE WHEN length(CAST(content_json AS BLOB)) <= ? THEN content_json END AS content_json"
    " FROM session_turn_state WHERE session_turn_soul_id = ?"
)


def _session(
    db: sqlite3.Connection, soul: sqlite3.Row, source: str, has_attachments: bool, lenient: bool
) -> LoadResult:
    where = f"session {soul['id']}"
    problems = _bad_columns(soul, where, SOUL_COLUMNS)
    if _good(soul, "id", SOUL_COLUMNS) is None:
        return LoadResult(source, None, tuple(problems))
    state = _newest(db, "SELECT id, title FROM session_state WHERE session_soul_id = ?", soul["id"])
    if state is None:
        return failed(source, Problem(where, "has no session_state row"))
    problems += _bad_columns(state, where, STATE_COLUMNS)
    messages: list[dict[str, Any] | Message] = []
    turns = db.execute(
        "SELECT id, position, user_request, created_at FROM session_turn_soul"
        " WHERE session_state_id = ? ORDER BY position, created_at",
        (state["id"],),
    ).fetchall()
    left = MEMORY_BUDGET  # a session is read whole, as a file is; the store may be larger
    for turn in turns:
        turn_where = f"{where}, turn {turn['position']}"
        bad_turn = _bad_columns(turn, turn_where, TURN_COLUMNS)
        problems += bad_turn
        if not bad_turn:
            messages.append(_user_message(turn, soul))
        turn_state = _newest(db, _TURN_STATE, left // PER_CHARACTER, turn["id"])
        if turn_state is not None:
            cost = _cost(turn_state)
            if cost > left:
                # Refused from here on, named: what is read before it is within the budget.
                refusal = f"the session's content up to here would take more than {MEMORY_BUDGET / 1e9:g} GB of memory"
                problems.append(Problem(f"{turn_where}, content_json", refusal))
                break
            left -= cost
            message = _assistant_message(turn_state, turn, turn_where, problems, lenient)
            if message is not None:
                messages.append(message)
    metadata = {
        key: value
        for key in ("llm_pref_provider", "llm_pref_model")
        if (value := _good(soul, key, SOUL_COLUMNS)) is not None
    }
    attachments = _attachments(db, [t["id"] for t in turns], where, problems) if has_attachments else {}
    if problems and not lenient:
        return LoadResult(source, None, tuple(problems))
    session = Session(
        id=soul["id"],
        messages=tuple(m if isinstance(m, Message) else message_from_json(m) for m in messages),
        title=_good(state, "title", STATE_COLUMNS),
        created_at=_good(soul, "created_at", SOUL_COLUMNS),
        metadata=MappingProxyType(metadata),
        source=source,
        attachments=MappingProxyType(attachments),
    )
    return LoadResult(source, session, tuple(problems))


def _cost(turn_state: sqlite3.Row) -> int:
    """The memory reading a turn's content may take (``jsontext.estimated_memory``);
    for one too large to be fetched, what its size alone says."""
    content = turn_state["content_json"]
    if isinstance(content, str):
        return estimated_memory(content)
    return PER_CHARACTER * (turn_state["content_bytes"] or 0)


def _time_of(*candidates: Any) -> int:
    """The first usable time of ``candidates`` (a row's own, then its parent's), else 0."""
    return next((value for value in candidates if value is not None and _time_or_null(value) is None), 0)


def _user_message(turn: sqlite3.Row, soul: sqlite3.Row) -> dict[str, Any]:
    created = _time_of(turn["created_at"], soul["created_at"])
    return {
        "id": turn["id"],
        "role": "user",
        "status": "completed",
        "content": [{"id": f"{turn['id']}_request", "type": "prose", "markdown": turn["user_request"] or ""}],
        "created_at": created,
    }


def _assistant_message(
    state: sqlite3.Row, turn: sqlite3.Row, where: str, problems: list[Problem], lenient: bool
) -> dict[str, Any] | Message | None:
    bad = _bad_columns(state, where, TURN_STATE_COLUMNS)
    if bad:
        problems.extend(bad)
        return None
    status = STATUS_OF_TURN.get(state["status"])
    if status is None:
        problems.append(Problem(f"{where}, status", f"unknown turn status {state['status']!r}"))
        return None
    try:
        content = parse(state["content_json"]) if state["content_json"] is not None else []
    except json.JSONDecodeError as error:
        problems.append(Problem(f"{where}, content_json", f"not JSON: {error}"))
        if not lenient:
            return None
        content = []
    message: dict[str, Any] = {
        "id": state["id"],
        "role": "assistant",
        "status": status,
        "content": content,
        "created_at": _time_of(state["created_at"], turn["created_at"]),
    }
    if state["llm_root_model"] is not None:
        message["model"] = state["llm_root_model"]
    if state["llm_root_provider"] is not None:
        message["provider"] = state["llm_root_provider"]
    found: list[Problem] = []
    check_message(message, (), found)
    problems.extend(p.at(where) for p in found)
    if not found:
        return message
    return salvage_message(message, 0) if lenient else None


def _attachments(
    db: sqlite3.Connection, turn_ids: list[str], where: str, problems: list[Problem]
) -> dict[str, StoredAttachment]:
    """The attachments of the session's turns; a row with a wrong-typed column is
    left out with a problem."""
    found: dict[str, StoredAttachment] = {}
    for turn_id in turn_ids:
        for row in db.execute(
            "SELECT id, media_type, filename, size_bytes, bytes, storage_uri, transcription"
            " FROM session_attachment WHERE session_turn_soul_id = ? ORDER BY created_at, id",
            (turn_id,),
        ):
            bad = _bad_columns(row, f"{where}, attachment {row['id']}", ATTACHMENT_COLUMNS)
            if bad:
                problems.extend(bad)
                continue
            found[row["id"]] = StoredAttachment(
                id=row["id"],
                turn_id=turn_id,
                media_type=row["media_type"],
                filename=row["filename"],
                size_bytes=row["size_bytes"],
                data=row["bytes"],
                storage_uri=row["storage_uri"],
                transcription=row["transcription"],
            )
    return found


def is_store(head: bytes) -> bool:
    return head.startswith(SQLITE_HEADER)
