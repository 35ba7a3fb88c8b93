"""The Vis SQLite store: newest versions, skipped placeholders and sub-sessions,
status mapping, the WAL, and never a byte written."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path

import pytest
from conftest import GOLDEN
from visstore import RECENT, build_store, build_store_with_wal

from vis_export import to_html, to_json, to_markdown
from vis_export.sources import LoadResult, read

ROWS = json.loads((GOLDEN / "store" / "rows.json").read_text())


def snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_sessions_and_messages(golden_store: Path) -> None:
    results = list(read(golden_store))
    assert all(r.ok for r in results)
    main, second = (r.session for r in results)
    assert [main.id, second.id] == ["soul_main", "soul_second"]  # unclaimed and sub-sessions skipped
    assert main.title == "Fix the <parser> & ship"  # newest session_state
    ids = [(m.id, m.role, m.status) for m in main.messages]
    assert ids == [
        ("turn_1", "user", "completed"),
        ("ts_1_v2", "assistant", "completed"),
        ("turn_2", "user", "completed"),
        ("ts_2", "assistant", "failed"),
        ("turn_3", "user", "completed"),
        ("ts_3", "assistant", "cancelled"),
        ("turn_4", "user", "completed"),
        ("ts_4", "assistant", "streaming"),
    ]
    user, assistant = main.messages[:2]
    assert user.blocks[0].markdown == "Fix the parser, please.\n\n```\nkeep this literal\n```"
    assert user.created_at == ROWS["session_turn_soul"][1]["created_at"]
    assert [b.to_json() for b in assistant.blocks] == ROWS["session_turn_state"][1]["content_json"]
    assert (assistant.model, assistant.provider) == ("gpt-5.6", "openai-codex")
    assert main.metadata["llm_pref_model"] == "gpt-5.6"
    assert main.attachments["att_1"].data == bytes.fromhex("89504e47")


def test_leaves_no_file_and_changes_no_byte(golden_store: Path) -> None:
    before = snapshot(golden_store.parent)
    list(read(golden_store))
    assert snapshot(golden_store.parent) == before


def test_recent_turns_in_the_wal_are_read(tmp_path: Path) -> None:
    store = build_store_with_wal(tmp_path / "vis.db", ROWS, RECENT)
    assert Path(f"{store}-wal").stat().st_size > 0
    before = snapshot(tmp_path)
    main = next(r.session for r in read(store))
    assert main.messages[-1].blocks[0].markdown == "From the WAL"
    assert snapshot(tmp_path) == before  # the WAL was read from a private copy


def test_not_a_vis_store(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE notes (id INTEGER)")
    db.commit()
    db.close()
    (result,) = read(other)
    assert result.problems[0].line(result.source) == f"{other}: not a Vis store (no table session_soul)"


def test_corrupt_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "vis.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\x00garbage" * 100)
    (result,) = read(path)
    assert "not a readable Vis store" in result.problems[0].message


def test_bad_content_json_is_located_and_other_sessions_load(tmp_path: Path) -> None:
    rows = json.loads(json.dumps(ROWS))
    rows["session_turn_state"][2]["content_json"] = [{"id": "x", "type": "tool", "tool": "t", "status": "Failed"}]
    rows["session_turn_state"][3]["content_json"] = "{not json"
    store = build_store(tmp_path / "vis.db", rows)
    bad, good = read(store)
    assert [p.line(bad.source) for p in bad.problems] == [
        f'{store}: session soul_main, turn 2, content[0].status: "Failed" must be lowercase (failed)',
        f"{store}: session soul_main, turn 3, content_json: not JSON: Expecting property name enclosed in double "
        "quotes: line 1 column 2 (char 1)",
    ]
    assert good.session.id == "soul_second"


def test_a_store_reached_through_a_link_is_read_with_its_wal(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "links").mkdir()
    store = build_store_with_wal(tmp_path / "real" / "vis.db", ROWS, RECENT)
    link = tmp_path / "links" / "vis.db"
    link.symlink_to(store)
    before = snapshot(tmp_path / "real")
    main = next(r.session for r in read(link))
    assert main.messages[-1].blocks[0].markdown == "From the WAL"
    assert snapshot(tmp_path / "real") == before and sorted(p.name for p in link.parent.iterdir()) == ["vis.db"]


def split(results: Iterable[LoadResult]) -> tuple[list[LoadResult], list[LoadResult]]:
    """(results with problems, results without), each in read order."""
    results = list(results)
    return [r for r in results if not r.ok], [r for r in results if r.ok]


def damage(store: Path, sql: str, *values: object) -> None:
    """Put a wrong-typed value where the application never would (SQLite lets any column hold any type)."""
    db = sqlite3.connect(store)
    db.execute(sql, values)
    db.commit()
    db.close()


@pytest.mark.parametrize(
    ("sql", "values", "expected"),
    [
        (
            "UPDATE session_state SET title = ? WHERE id = 'state_main_v2'",
            (b"\x00\x01",),
            "session soul_main, title: must be text, not a BLOB",
        ),
        (
            "UPDATE session_soul SET created_at = ? WHERE id = 'soul_main'",
            ("yesterday",),
            "session soul_main, created_at: must be an integer (milliseconds), not text",
        ),
        (
            "UPDATE session_soul SET created_at = ? WHERE id = 'soul_main'",
            (2**62,),
            "session soul_main, created_at: is out of range",
        ),
        (
            "UPDATE session_soul SET llm_pref_model = ? WHERE id = 'soul_main'",
            (b"model",),
            "session soul_main, llm_pref_model: must be text, not a BLOB",
        ),
        (
            "UPDATE session_turn_soul SET user_request = CAST(? AS TEXT) WHERE id = 'turn_1'",
            (b"caf\xe9",),
            "session soul_main, turn 1, user_request: is not UTF-8 text",
        ),
        (
            "UPDATE session_turn_soul SET created_at = ? WHERE id = 'turn_2'",
            (1e300,),
            "session soul_main, turn 2, created_at: is out of range",
        ),
        (
            "UPDATE session_turn_state SET llm_root_model = ? WHERE id = 'ts_1_v2'",
            (b"gpt",),
            "session soul_main, turn 1, llm_root_model: must be text, not a BLOB",
        ),
        (
            "UPDATE session_turn_state SET created_at = ? WHERE id = 'ts_2'",
            ("later",),
            "session soul_main, turn 2, created_at: must be an integer (milliseconds), not text",
        ),
        (
            "UPDATE session_turn_state SET content_json = ? WHERE id = 'ts_2'",
            ('[{"id": "b", "type": "x", "n": NaN}]',),
            "session soul_main, turn 2, content_json: not JSON: NaN is not a JSON number: line 1 column 32",
        ),
        (
            "UPDATE session_turn_state SET content_json = ? WHERE id = 'ts_2'",
            ("[" * 3000 + "]" * 3000,),
            "session soul_main, turn 2, content_json: not JSON: nested deeper than 100 levels",
        ),
        (
            "UPDATE session_turn_state SET content_json = ? WHERE id = 'ts_2'",
            (json.dumps([{"id": "b", "type": "x", "deep": json.loads("[" * 200 + "]" * 200)}]),),
            "session soul_main, turn 2, content[0].deep[0]",
        ),
        (
            "UPDATE session_attachment SET size_bytes = ? WHERE id = 'att_1'",
            ("big",),
            "session soul_main, attachment att_1, size_bytes: must be an integer, not text",
        ),
    ],
)
def test_wrong_typed_columns_are_located_per_row(tmp_path: Path, sql: str, values: tuple, expected: str) -> None:
    store = build_store(tmp_path / "vis.db", ROWS)
    damage(store, sql, *values)
    (bad,), (good,) = split(read(store))
    lines = [p.line(bad.source) for p in bad.problems]
    assert bad.session is None and any(line.startswith(f"{store}: {expected}") for line in lines), lines
    assert good.session.id == "soul_second"
    (lenient,), _ = split(read(store, lenient=True))
    assert lenient.session is not None and lenient.problems == bad.problems
    to_json(lenient.session), to_markdown(lenient.session), to_html(lenient.session)  # and nothing crashes


def test_a_session_whose_id_is_unusable_is_refused_even_leniently(tmp_path: Path) -> None:
    store = build_store(tmp_path / "vis.db", ROWS)
    damage(store, "UPDATE session_soul SET id = ? WHERE id = 'soul_second'", b"soul")
    main, bad = read(store, lenient=True)
    assert main.ok and bad.session is None
    assert bad.problems[0].line(bad.source) == f"{store}: session b'soul', id: must be text, not a BLOB"


def test_a_session_larger_than_the_limit_is_refused_at_its_turn(
    golden_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store is read a session at a time, so it may be larger than any file; each
    session's content is bounded by the memory it may take, as a file is, and the
    turn past the budget is named, never fetched (the other sessions still load)."""
    from vis_export.sources import store
    from vis_export.sources.jsontext import estimated_memory

    first = estimated_memory(json.dumps(ROWS["session_turn_state"][1]["content_json"]))
    monkeypatch.setattr(store, "MEMORY_BUDGET", first + 100)  # turn 1 of the main session fits, turn 2 does not
    main, second = read(golden_store)
    limit = f"the session's content up to here would take more than {(first + 100) / 1e9:g} GB of memory"
    assert main.session is None
    assert [p.line(main.source) for p in main.problems] == [
        f"{golden_store}: session soul_main, turn 2, content_json: {limit}"
    ]
    assert second.ok
    lenient, _ = read(golden_store, lenient=True)
    assert lenient.session is not None and [m.id for m in lenient.session.messages] == ["turn_1", "ts_1_v2", "turn_2"]
