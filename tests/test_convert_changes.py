"""A source that changes while ``convert`` reads it (a log an agent is still
writing): the job reads a file once to plan and report, and again to render
a session when it could not keep it (a follow-up task of HTML/PDF, or a file
whose links go from another folder than assumed). The second reading must
give the same session, or a line saying it changed, never another session's
content under this one's name, nor a traceback."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_events import PROSE, completed, delta, ended, started

from vis_export.jobs.conversion import convert
from vis_export.model import Session
from vis_export.reporting import Lines


def _log(ids: str, word: str) -> str:
    events = []
    for i in ids:
        block = {**PROSE, "id": f"b{i}"}
        events += [
            started(f"t{i}", block, session_id=i),
            delta(f"t{i}", f"b{i}", f"{word} words of {i}", session_id=i),
            completed(f"t{i}", f"b{i}", session_id=i),
            ended(f"t{i}", session_id=i),
        ]
    return "\n".join(json.dumps(e) for e in events) + "\n"


def _rewrite_once(source: Path, text: str) -> Callable[[Session], None]:
    """Rewrites ``source`` as the first session is rendered: between the reading and a second one."""
    done: list[bool] = []

    def rendering(session: Session) -> None:
        if not done:
            done.append(True)
            source.write_text(text, encoding="utf-8")

    return rendering


@pytest.mark.parametrize("now", [_log("bc", "later"), _log("acb", "later"), "{not json\n"])
def test_a_log_changed_between_readings_gives_no_other_session_and_no_traceback(tmp_path: Path, now: str) -> None:
    source = tmp_path / "log.jsonl"
    source.write_text(_log("abc", "first"), encoding="utf-8")
    past = time.time() - 100
    os.utime(source, (past, past))
    report = Lines()
    outcome = convert([source], "html", f"{tmp_path / 'out'}/", report=report, rendering=_rewrite_once(source, now))
    for written in outcome.written:
        name = written.stem
        text = written.read_text(encoding="utf-8")
        assert f"words of {name}" in text and not any(f"words of {x}" in text for x in "abc" if x != name), name
    missing = {"a", "b", "c"} - {written.stem for written in outcome.written}
    assert outcome.failed == bool(missing)
    assert len(report.problems) == len(missing), report.problems
    assert all("changed while it was read" in line and str(source) in line for line in report.problems)


def test_a_file_read_again_for_its_links_that_is_no_longer_valid_is_one_line(tmp_path: Path) -> None:
    """``-o name`` without the extension, one session: rendered ahead as if into
    the folder ``name``, then read again to render with links from ``name``'s folder."""
    source = tmp_path / "log.jsonl"
    source.write_text(_log("a", "first"), encoding="utf-8")
    report = Lines()
    outcome = convert([source], "markdown", tmp_path / "out", report=report, rendering=_rewrite_once(source, "{x\n"))
    assert (outcome.failed, outcome.written) == (True, [])
    assert len(report.problems) == 1 and "changed while it was read" in report.problems[0], report.problems
