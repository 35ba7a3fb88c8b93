"""Builds real Vis SQLite stores for tests: the table layout of ``sources.md``
with its column types and constraints, filled from a JSON description of rows."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE session_soul (
    id TEXT PRIMARY KEY NOT NULL,
    parent_state_id TEXT,
    claimed_at INTEGER,
    created_at INTEGER NOT NULL,
    llm_pref_provider TEXT,
    llm_pref_model TEXT,
    decision_archive BLOB
);
CREATE TABLE session_state (
    id TEXT PRIMARY KEY NOT NULL,
    session_soul_id TEXT NOT NULL REFERENCES session_soul(id),
    title TEXT,
    version INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    engine_snapshot BLOB,
    UNIQUE (session_soul_id, version)
);
CREATE TABLE session_turn_soul (
    id TEXT PRIMARY KEY NOT NULL,
    session_state_id TEXT NOT NULL REFERENCES session_state(id),
    position INTEGER NOT NULL CHECK (position >= 1),
    user_request TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (session_state_id, position)
);
CREATE TABLE session_turn_state (
    id TEXT PRIMARY KEY NOT NULL,
    session_turn_soul_id TEXT NOT NULL REFERENCES session_turn_soul(id),
    version INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'done', 'error', 'interrupted')),
    llm_root_provider TEXT,
    llm_root_model TEXT,
    duration_ms INTEGER,
    input_tokens INTEGER,
    output_tokens INTEGER,
    total_cost_usd REAL,
    content_json TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (session_turn_soul_id, version)
);
CREATE TABLE session_attachment (
    id TEXT PRIMARY KEY NOT NULL,
    session_turn_soul_id TEXT NOT NULL REFERENCES session_turn_soul(id),
    media_type TEXT NOT NULL,
    filename TEXT,
    size_bytes INTEGER,
    bytes BLOB,
    storage_uri TEXT,
    transcription TEXT,
    created_at INTEGER NOT NULL,
    CHECK ((bytes IS NULL) <> (storage_uri IS NULL))
);
"""


def insert(db: sqlite3.Connection, rows: dict[str, list[dict[str, Any]]]) -> None:
    for table, items in rows.items():
        for row in items:
            row = {k: (json.dumps(v) if k == "content_json" and not isinstance(v, str) else v) for k, v in row.items()}
            row = {k: (bytes.fromhex(v) if k == "bytes" and isinstance(v, str) else v) for k, v in row.items()}
            columns = ", ".join(row)
            marks = ", ".join("?" for _ in row)
            db.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", list(row.values()))


def build_store(path: Path, rows: dict[str, list[dict[str, Any]]], wal: bool = True) -> Path:
    """A store at ``path`` in WAL mode, fully checkpointed (no ``-wal`` file left)."""
    db = sqlite3.connect(path)
    if wal:
        db.execute("PRAGMA journal_mode=WAL")
    db.executescript(SCHEMA)
    insert(db, rows)
    db.commit()
    db.close()
    return path


def build_store_with_wal(
    path: Path, rows: dict[str, list[dict[str, Any]]], recent: dict[str, list[dict[str, Any]]]
) -> Path:
    """A store whose ``recent`` rows live only in its ``-wal`` file, as while the
    application runs: the files are copied while the writer still holds them."""
    work = path.parent / (path.name + ".work")
    work.mkdir()
    live = build_store(work / "vis.db", rows)
    db = sqlite3.connect(live)
    db.execute("PRAGMA wal_autocheckpoint=0")
    insert(db, recent)
    db.commit()
    shutil.copyfile(live, path)
    shutil.copyfile(f"{live}-wal", f"{path}-wal")
    db.close()
    shutil.rmtree(work)
    return path


# Two more messages of the golden store's main session, a turn and its answer, that only
# the WAL holds (recent work a checkpoint has not moved yet).
RECENT = {
    "session_turn_soul": [
        {
            "id": "turn_5",
            "session_state_id": "state_main_v2",
            "position": 5,
            "user_request": "Only in the WAL",
            "created_at": 1740000009000,
        }
    ],
    "session_turn_state": [
        {
            "id": "ts_5",
            "session_turn_soul_id": "turn_5",
            "version": 1,
            "status": "done",
            "content_json": [{"id": "w", "type": "prose", "markdown": "From the WAL"}],
            "created_at": 1740000009100,
        }
    ],
}
