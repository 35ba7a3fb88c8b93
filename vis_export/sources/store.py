"""The Vis SQLite store (``sources.md`` section 3), read without writing a byte.

SQLite writes ``-wal``/``-shm`` files beside a WAL database it opens, even
read-only, and fails in a read-only directory. So: with no ``-wal`` file the
database is opened ``immutable=1`` (nothing is created); with one, recent turns
may live only there, so a private temporary copy of the database and its WAL is
opened instead and removed afterwards.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from contextlib import contextmanager
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterator
from urllib.parse import quote

from vis_export.contract import check_message
from vis_export.model import Message, Session, StoredAttachment, message_from_json
from vis_export.problems import Problem
from vis_export.sources.result import LoadResult, failed
from vis_export.sources.salvage import salvage_message

SQLITE_HEADER = b"SQLite format 3\x00"
REQUIRED_TABLES = ("session_soul", "session_state", "session_turn_soul", "session_turn_state")
STATUS_OF_TURN = {"done": "completed", "error": "failed", "interrupted": "cancelled", "running": "streaming"}


@contextmanager
def _read_only(path: Path) -> Iterator[sqlite3.Connection]:
    wal = Path(f"{path}-wal")
    if not wal.exists() or wal.stat().st_size == 0:
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


def read_store(path: Path, source: str, lenient: bool = False) -> list[LoadResult]:
    try:
        with _read_only(path) as db:
            db.row_factory = sqlite3.Row
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            missing = [t for t in REQUIRED_TABLES if t not in tables]
            if missing:
                return [failed(source, Problem("", f"not a Vis store (no table {missing[0]})"))]
            has_attachments = "session_attachment" in tables
            return [_session(db, soul, source, has_attachments, lenient) for soul in _souls(db)]
    except sqlite3.DatabaseError as error:
        return [failed(source, Problem("", f"not a readable Vis store: {error}"))]


def _souls(db: sqlite3.Connection) -> list[sqlite3.Row]:
    return db.execute(
        "SELECT id, created_at, llm_pref_provider, llm_pref_model FROM session_soul"
        " WHERE parent_state_id IS NULL AND claimed_at IS NOT NULL ORDER BY created_at, id"
    ).fetchall()


def _newest(db: sqlite3.Connection, sql: str, key: str) -> sqlite3.Row | None:
    return db.execute(sql + " ORDER BY version DESC, created_at DESC LIMIT 1", (key,)).fetchone()


def _session(
    db: sqlite3.Connection, soul: sqlite3.Row, source: str, has_attachments: bool, lenient: bool
) -> LoadResult:
    where = f"session {soul['id']}"
    state = _newest(db, "SELECT id, title FROM session_state WHERE session_soul_id = ?", soul["id"])
    if state is None:
        return failed(source, Problem(where, "has no session_state row"))
    problems: list[Problem] = []
    messages: list[dict[str, Any] | Message] = []
    turns = db.execute(
        "SELECT id, position, user_request, created_at FROM session_turn_soul"
        " WHERE session_state_id = ? ORDER BY position, created_at", (state["id"],)
    ).fetchall()
    for turn in turns:
        messages.append(_user_message(turn, soul))
        turn_state = _newest(
            db,
            "SELECT id, status, llm_root_provider, llm_root_model, content_json, created_at"
            " FROM session_turn_state WHERE session_turn_soul_id = ?",
            turn["id"],
        )
        if turn_state is not None:
            message = _assistant_message(turn_state, turn, f"{where}, turn {turn['position']}", problems, lenient)
            if message is not None:
                messages.append(message)
    if problems and not lenient:
        return LoadResult(source, None, tuple(problems))
    metadata = {key: soul[key] for key in ("llm_pref_provider", "llm_pref_model") if soul[key] is not None}
    attachments = _attachments(db, [t["id"] for t in turns]) if has_attachments else {}
    session = Session(
        id=soul["id"],
        messages=tuple(m if isinstance(m, Message) else message_from_json(m) for m in messages),
        title=state["title"],
        created_at=soul["created_at"],
        metadata=MappingProxyType(metadata),
        source=source,
        attachments=MappingProxyType(attachments),
    )
    return LoadResult(source, session, tuple(problems))


def _user_message(turn: sqlite3.Row, soul: sqlite3.Row) -> dict[str, Any]:
    created = turn["created_at"] if turn["created_at"] is not None else soul["created_at"] or 0
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
    status = STATUS_OF_TURN.get(state["status"])
    if status is None:
        problems.append(Problem(f"{where}, status", f"unknown turn status {state['status']!r}"))
        return None
    try:
        content = json.loads(state["content_json"]) if state["content_json"] is not None else []
    except (json.JSONDecodeError, TypeError) as error:
        problems.append(Problem(f"{where}, content_json", f"not JSON: {error}"))
        if not lenient:
            return None
        content = []
    message: dict[str, Any] = {
        "id": state["id"],
        "role": "assistant",
        "status": status,
        "content": content,
        "created_at": state["created_at"] if state["created_at"] is not None else turn["created_at"] or 0,
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


def _attachments(db: sqlite3.Connection, turn_ids: list[str]) -> dict[str, StoredAttachment]:
    found: dict[str, StoredAttachment] = {}
    for turn_id in turn_ids:
        for row in db.execute(
            "SELECT id, media_type, filename, size_bytes, bytes, storage_uri, transcription"
            " FROM session_attachment WHERE session_turn_soul_id = ? ORDER BY created_at, id", (turn_id,)
        ):
            found[row["id"]] = StoredAttachment(
                id=row["id"], turn_id=turn_id, media_type=row["media_type"], filename=row["filename"],
                size_bytes=row["size_bytes"], data=row["bytes"], storage_uri=row["storage_uri"],
                transcription=row["transcription"],
            )
    return found


def is_store(head: bytes) -> bool:
    return head.startswith(SQLITE_HEADER)

