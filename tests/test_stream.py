"""``convert`` to standard output is the job's, not the command line's own
pipeline: the same reading, lines and choice of sessions as a job writing
files, and the same bytes for a session."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from conftest import INPUT

from vis_export.formats.options import ExportOptions
from vis_export.jobs.conversion import NotStreamable, convert_to_stream, convert_with
from vis_export.reporting import Lines

SOURCES = [str(INPUT / name) for name in ("session.json", "events.jsonl", "messages.jsonl")]


def _streamed(sources: list[str], to: str, session_ids: tuple[str, ...] = ()) -> tuple[bytes, Lines, bool]:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8")
    lines = Lines()
    outcome = convert_to_stream(sources, to, stream, ExportOptions(), session_ids=session_ids, report=lines)
    stream.flush()
    return raw.getvalue(), lines, outcome.failed


@pytest.mark.parametrize("to", ["text", "markdown", "json", "html", "provider"])
@pytest.mark.parametrize("source", SOURCES, ids=lambda s: Path(s).name)
def test_a_session_streamed_is_the_file_a_job_writes(source: str, to: str, tmp_path: Path) -> None:
    streamed, lines, failed = _streamed([source], to)
    written = Lines()
    outcome = convert_with([source], to, tmp_path / "out", ExportOptions(), report=written)
    (path,) = outcome.written
    assert streamed == path.read_bytes()
    assert (lines, failed) == (written, outcome.failed)


def test_sessions_picked_and_lines_are_the_job_s(tmp_path: Path) -> None:
    """An id no source holds is the same problem line, and nothing to convert is too."""
    missing = ("no-such-session",)
    _, lines, failed = _streamed(SOURCES, "json", missing)
    written = Lines()
    outcome = convert_with(SOURCES, "json", tmp_path / "out", ExportOptions(), session_ids=missing, report=written)
    assert (lines, failed) == (written, outcome.failed) and failed and outcome.written == []


def test_several_sessions_need_a_format_of_many(tmp_path: Path) -> None:
    with pytest.raises(NotStreamable, match="cannot share one"):
        _streamed(SOURCES, "html")


def test_the_command_line_says_a_stream_it_cannot_write_in_one_line_as_a_usage_error() -> None:
    """Exit status 2, one line, no traceback: the one handler of ``VisExportError``
    gives the failure's own status (the command line catches no module's failure by name)."""
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-m", "vis_export", "convert", *SOURCES, "--to", "html"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2 and run.stdout == ""
    assert "cannot share one" in run.stderr and "Traceback" not in run.stderr
