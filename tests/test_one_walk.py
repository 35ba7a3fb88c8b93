"""A job walks its sources once (issue 23): the walk that finds the files
also gives their stamps and the folders that the guards keeping outputs and
indexes out of read folders need (``sources.plan_sources``), so no guard,
count or check walks them again, in ``convert``, ``serve`` or an index of
sessions a caller hands over."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from corpus import session
from vis_export import sources as sources_module


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often each folder was walked from the top (``sources._walk``, under every walk)."""
    counted: Counter[str] = Counter()
    walk = sources_module._walk

    def counting(root: Path) -> Iterator[Any]:
        counted[str(root)] += 1
        return walk(root)

    monkeypatch.setattr(sources_module, "_walk", counting)
    return counted


def _folder(tmp_path: Path, count: int = 3) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    for n in range(count):
        (folder / f"s{n}.json").write_text(json.dumps({**session(1_000, seed=n), "id": f"s{n}"}))
    return folder


def test_convert_walks_its_sources_once(tmp_path: Path, walks: Counter[str]) -> None:
    """The output guard (no file written over a source, nor into a read folder) takes the job's plan."""
    from vis_export.jobs.conversion import convert

    folder = _folder(tmp_path)
    done = convert([str(folder)], "markdown", tmp_path / "out")
    assert not done.failed and len(done.written) == 3
    assert walks == {str(folder): 1}


def test_convert_to_a_stream_walks_its_sources_once_and_runs_its_work_on_the_runner(
    tmp_path: Path, walks: Counter[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Standard output is the job's other sink: the same plan (a unit a file),
    its work (reading, here) on the runner; the lines and sessions are the files job's."""
    import io

    from vis_export.formats.options import ExportOptions
    from vis_export.jobs.conversion import convert_to_stream
    from vis_export.reporting import Lines
    from vis_export.running import InProcessRunner

    units: list[Any] = []
    map_here = InProcessRunner.map

    def mapped(runner: InProcessRunner, work: Any, todo: Iterable[Any]) -> Iterator[Any]:
        units.extend(todo)
        return map_here(runner, work, units)

    monkeypatch.setattr(InProcessRunner, "map", mapped)
    folder = _folder(tmp_path)
    stream = io.TextIOWrapper(io.BytesIO())
    lines = Lines()
    done = convert_to_stream([str(folder)], "json", stream, ExportOptions(), report=lines)
    assert not done.failed and (lines.problems, lines.warnings) == ([], [])
    assert walks == {str(folder): 1}
    assert [[part.name for part in unit] for unit in units] == [[str(folder / f"s{n}.json")] for n in range(3)]


def test_serve_walks_its_sources_once_a_refresh(tmp_path: Path, walks: Counter[str]) -> None:
    """Its listing, its progress total and its own index's placement check share one walk."""
    from vis_export.serve.server import prepare

    folder = _folder(tmp_path)
    totals: list[int] = []

    def report(results: list[Any]) -> list[Any]:
        return [r.session for r in results if r.session is not None]

    catalogue, keeper = prepare([str(folder)], None, "visible", report, lambda line: None)
    try:
        catalogue.refresh(lambda total: totals.append(total) or (lambda: None))  # type: ignore[func-returns-value]
        assert keeper is not None and len(catalogue) == 3 and totals == [3]
        assert walks == {str(folder): 1}
    finally:
        catalogue.close()


def test_sessions_handed_over_walk_their_folder_once_a_job(tmp_path: Path, walks: Counter[str]) -> None:
    """``index(sessions)``: a session read from a folder makes that folder one
    that is read (the index may not go there), checked once, not once a session."""
    from vis_export.jobs.indexing import index
    from vis_export.sources import load

    folder = _folder(tmp_path, count=4)
    sessions = list(load([str(p) for p in sorted(folder.iterdir())]))
    counts = index(sessions, tmp_path / "index")
    assert counts.added == 4
    assert walks == {str(folder.absolute()): 1}
