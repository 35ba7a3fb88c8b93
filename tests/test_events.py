"""Gateway event logs: seq order, replays applied once, invalid deltas named by
line, interrupted turns kept with what the user saw."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

from vis_export.sources import read
from vis_export.sources.events import INTERRUPTED_NOTICE


def started(turn: str, block: dict[str, Any], **envelope: Any) -> dict[str, Any]:
    return {"type": "content.block.started", "turn_id": turn, "block": block, **envelope}


def delta(turn: str, block_id: str, text: str, field: str = "markdown", **envelope: Any) -> dict[str, Any]:
    return {
        "type": "content.block.delta",
        "turn_id": turn,
        "block_id": block_id,
        "field": field,
        "text": text,
        **envelope,
    }


def completed(turn: str, block_id: str, **envelope: Any) -> dict[str, Any]:
    return {"type": "content.block.completed", "turn_id": turn, "block_id": block_id, **envelope}


def ended(turn: str, status: str = "completed", **envelope: Any) -> dict[str, Any]:
    return {"type": f"turn.{status}", "turn_id": turn, "status": status, **envelope}


PROSE = {"id": "b1", "type": "prose", "markdown": ""}


def fold(tmp_path: Path, events: list[dict[str, Any]], name: str = "log.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    return list(read(path))


def test_protocol_example_folds_to_one_message(tmp_path: Path) -> None:
    (result,) = fold(
        tmp_path,
        [
            started("t1", PROSE),
            delta("t1", "b1", "Implemented "),
            delta("t1", "b1", "it."),
            completed("t1", "b1"),
            ended("t1"),
        ],
    )
    (message,) = result.session.messages
    assert (message.id, message.role, message.status) == ("t1", "assistant", "completed")
    assert message.blocks[0].markdown == "Implemented it."
    assert result.session.id == "log"


def test_seq_order_and_replayed_seq_applied_once(tmp_path: Path) -> None:
    events = [
        started("t1", PROSE, seq=1, ts=100, session_id="s9"),
        delta("t1", "b1", "B", seq=3, ts=300, session_id="s9"),
        delta("t1", "b1", "A", seq=2, ts=200, session_id="s9"),
        delta("t1", "b1", "A", seq=2, ts=200, session_id="s9"),  # replay after a reconnect
        {"type": "queue.paused", "seq": 4, "session_id": "s9"},
        {"type": "turn.progress", "turn_id": "t1", "seq": 5},
        ended("t1", seq=6, ts=600, session_id="s9"),
    ]
    (result,) = fold(tmp_path, events)
    assert result.session.id == "s9"
    (message,) = result.session.messages
    assert message.blocks[0].markdown == "AB"
    assert (message.created_at, message.completed_at) == (100, 600)


@pytest.mark.parametrize("status", ["failed", "cancelled"])
def test_terminal_status(tmp_path: Path, status: str) -> None:
    (result,) = fold(tmp_path, [started("t1", PROSE), ended("t1", status)])
    assert result.session.messages[0].status == status


def test_unterminated_turn_is_kept_as_interrupted(tmp_path: Path) -> None:
    events = [
        started("t1", PROSE),
        delta("t1", "b1", "done"),
        completed("t1", "b1"),
        ended("t1"),
        started("t2", {"id": "r", "type": "reasoning", "text": "", "visibility": "visible"}),
        delta("t2", "r", "think", field="text"),
        completed("t2", "r"),
        started("t2", {"id": "p", "type": "prose", "markdown": "Par"}),
        delta("t2", "p", "tial"),
    ]
    (result,) = fold(tmp_path, events)
    first, second = result.session.messages
    assert first.status == "completed"
    assert second.status == "cancelled"
    assert [b.type for b in second.blocks] == ["reasoning", "prose", "notice"]
    assert second.blocks[1].markdown == "Partial"
    assert second.blocks[2].code == "turn_interrupted" and second.blocks[2].message == INTERRUPTED_NOTICE
    assert "turn_interrupted" not in (tmp_path / "log.jsonl").read_text()  # never written to the source


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        ([started("t1", PROSE), delta("t1", "nope", "x")], "line 2: delta for unknown block 'nope'"),
        (
            [started("t1", PROSE), completed("t1", "b1"), delta("t1", "b1", "x")],
            "line 3: delta for completed block 'b1'",
        ),
        (
            [started("t1", PROSE), delta("t1", "b1", "x", field="text")],
            "line 2: delta field 'text' is not the streaming",
        ),
        (
            [started("t1", {"id": "c", "type": "code", "text": ""}), delta("t1", "c", "x", field="text")],
            "line 2: delta for a code block, which does not stream",
        ),
        ([started("t1", PROSE), delta("t2", "b1", "x")], "line 2: delta for unknown block 'b1' in turn 't2'"),
        ([started("t1", PROSE), completed("t1", "zz")], "line 2: completion for unknown block 'zz'"),
        ([started("t1", PROSE), started("t1", PROSE)], "line 2: block 'b1' started twice"),
        (
            [started("t1", PROSE), ended("t1"), delta("t1", "b1", "late")],
            "line 3: content.block.delta after turn 't1' ended",
        ),
        ([started("t1", {"id": "b", "type": "prose"})], 'line 1, block: missing required field "markdown"'),
        (
            [started("t1", PROSE), {"type": "content.block.delta", "turn_id": "t1", "block_id": "b1", "text": "x"}],
            'line 2: missing required field "field"',
        ),
        ([ended("t1", "completed") | {"status": "failed"}], 'line 1, status: must be "completed"'),
        ([started("t1", PROSE), {"id": "m", "role": "user"}], "line 2: not an event"),
        ([started("t1", {**PROSE, "extraKey": 1})], "line 1, block.extraKey: key is not snake_case"),
    ],
)
def test_invalid_events_name_the_line(tmp_path: Path, events: list[dict[str, Any]], expected: str) -> None:
    results = fold(tmp_path, events)
    lines = [p.line(r.source) for r in results for p in r.problems]
    assert any(expected in line for line in lines), lines
    assert all(r.session is None for r in results)


def test_events_of_several_sessions_in_one_log(tmp_path: Path) -> None:
    events = [
        started("t1", PROSE, session_id="a"),
        started("t2", PROSE, session_id="b"),
        ended("t1", session_id="a"),
        ended("t2", session_id="b"),
    ]
    assert [r.session.id for r in fold(tmp_path, events)] == ["a", "b"]


def test_log_with_only_other_events(tmp_path: Path) -> None:
    (result,) = fold(tmp_path, [{"type": "queue.paused"}, {"type": "view.changed"}])
    assert result.problems[0].message == "no content or turn events"


def test_each_session_of_a_log_has_its_own_seq(tmp_path: Path) -> None:
    """``seq`` increases per session: two sessions both counting 1, 2, 3 are both read whole."""
    events = [
        started("t1", PROSE, seq=1, session_id="a"),
        started("t2", PROSE, seq=1, session_id="b"),
        delta("t1", "b1", "from a", seq=2, session_id="a"),
        delta("t2", "b1", "from b", seq=2, session_id="b"),
        delta("t1", "b1", "from a", seq=2, session_id="a"),  # a replay in session a only
        ended("t1", seq=3, session_id="a"),
        ended("t2", seq=3, session_id="b"),
    ]
    results = fold(tmp_path, events)
    assert [
        (r.session.id, r.session.messages[0].blocks[0].markdown, r.session.messages[0].status) for r in results
    ] == [("a", "from a", "completed"), ("b", "from b", "completed")]
    assert all(r.ok for r in results)


def test_a_bad_session_in_a_log_does_not_stop_the_others(tmp_path: Path) -> None:
    events = [
        started("t1", PROSE, session_id="a"),
        started("t2", {"id": "x", "type": "prose"}, session_id="b"),
        ended("t1", session_id="a"),
        delta("t3", "nope", "x", session_id="c"),
    ]
    good, bad_event, bad_fold = fold(tmp_path, events)
    assert good.ok and good.session.id == "a"
    assert bad_event.session is None and bad_event.problems[0].location == "line 2, block"
    assert bad_fold.session is None and "unknown block 'nope'" in bad_fold.problems[0].message


@given(
    st.lists(st.lists(st.text("ab\n", min_size=1, max_size=3), min_size=1, max_size=4), min_size=1, max_size=4),
    st.randoms(use_true_random=False),
    st.booleans(),
)
def test_interleaved_sessions_are_each_folded_by_their_own_seq(
    texts: list[list[str]], random: Any, replay: bool
) -> None:
    """Sessions of one log, each counting seq from 1, shuffled together (and a replay
    of one event): every session comes back whole."""
    events = []
    for n, chunks in enumerate(texts):
        session = {"session_id": f"s{n}"}
        events += [
            started("t", PROSE, seq=1, **session),
            *(delta("t", "b1", chunk, seq=i, **session) for i, chunk in enumerate(chunks, 2)),
            ended("t", seq=len(chunks) + 2, **session),
        ]
    if replay:
        events.append(random.choice(events))
    random.shuffle(events)
    with tempfile.TemporaryDirectory() as folder:
        results = fold(Path(folder), events)
    assert all(r.ok for r in results)
    assert sorted((r.session.id, r.session.messages[0].blocks[0].markdown) for r in results) == [
        (f"s{n}", "".join(chunks)) for n, chunks in enumerate(texts)
    ]
