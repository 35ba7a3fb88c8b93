"""The pacing of a job on Dask, written once in ``DaskRunner.map``: whatever
the point at which this process hands its work over to the workers, and
whatever follow-ups results ask for, a job gives what it gives on the
``InProcessRunner``, in the same order.

A real Dask ``LocalCluster`` of two worker processes serves the module; the
runner is told that it is a local cluster still starting (so it works
through units itself first), and when it would hand over.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import examples
from hypothesis import HealthCheck, given, settings, strategies as st

from corpus import session
from vis_export.jobs.conversion import convert
from vis_export.reporting import Lines
from vis_export.running import InProcessRunner, Task

distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.slow


@dataclass
class Handover:
    """After how many units done here the runner hands the rest over (``done``: so far)."""

    after: int = 0
    done: int = 0


@pytest.fixture
def handover(monkeypatch: pytest.MonkeyPatch) -> Handover:
    from vis_export.distributed import running
    from vis_export.distributed.cluster import Connecting

    told = Handover()

    def handing_over(cluster: Connecting, pace: Any, left: float) -> bool:
        told.done += 1
        return told.done > told.after

    monkeypatch.setattr(running, "local_workers", lambda address: 2)  # a local cluster, still starting
    monkeypatch.setattr(Connecting, "handing_over", handing_over)
    return told


def numbered(unit: tuple[int, ...], on_worker: bool = False) -> tuple[tuple[int, ...], bool]:
    """Run by a runner: the unit, and where it ran."""
    return unit, on_worker


def halves(unit: tuple[int, ...], result: tuple[tuple[int, ...], bool]) -> list[tuple[int, ...]]:
    """A unit of several numbers asks for its two halves next."""
    middle = len(unit) // 2
    return [unit[:middle], unit[middle:]] if len(unit) > 1 else []


@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.integers(0, 9), max_size=5).map(tuple), max_size=6), st.integers(0, 8))
def test_results_and_follow_ups_come_in_source_order_wherever_the_handover_falls(
    cluster: str, handover: Handover, units: list[tuple[int, ...]], after: int
) -> None:
    from vis_export.distributed.running import DaskRunner

    handover.after, handover.done = after, 0
    task = Task(numbered, more=halves)
    with DaskRunner(cluster) as runner:
        found = list(runner.map(task, units))
    expected = list(InProcessRunner().map(task, units))
    assert [unit for unit, _ in found] == [unit for unit, _ in expected]
    here = [on_worker for _, on_worker in found]
    assert here == sorted(here)  # this process first, then only the workers
    assert here.count(False) == min(after, len(expected))  # it did as many as it was to do before handing over


def _files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if not path.is_dir()}


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.integers(1, 3), min_size=1, max_size=4),  # sessions per file (several: a JSON array)
    st.sampled_from(["markdown", "html"]),
    st.integers(0, 6),
    st.booleans(),
)
def test_convert_gives_the_same_files_and_lines_on_either_runner(
    cluster: str,
    handover: Handover,
    tmp_path_factory: pytest.TempPathFactory,
    sizes: list[int],
    to: str,
    after: int,
    kept: bool,
) -> None:
    """The files, names and lines of a conversion on the ``InProcessRunner``
    and on a ``DaskRunner`` that hands over after ``after`` units, with the
    files rendered here kept in memory or (``kept`` false) in the job's
    folder; files of several sessions, in HTML, ask for a task per session."""
    from vis_export.jobs import convert_work

    root = tmp_path_factory.mktemp("runners")
    (root / "in").mkdir()
    for n, count in enumerate(sizes):
        documents = [{**session(2_000, seed=10 * n + k), "id": f"s{n}_{k}"} for k in range(count)]
        (root / "in" / f"f{n}.json").write_text(json.dumps(documents if count > 1 else documents[0]))
    handover.after, handover.done = after, 0
    budget = convert_work.KEPT_HERE
    convert_work.KEPT_HERE = budget if kept else 0
    try:
        lines = [Lines(), Lines()]
        # No highlighting: its CPU budget makes a fresh worker's first HTML block plain under load (``lexing``).
        here = convert([str(root / "in")], to, f"{root / 'here'}/", report=lines[0], no_highlight=True)
        there = convert([str(root / "in")], to, f"{root / 'there'}/", report=lines[1], dask=cluster, no_highlight=True)
    finally:
        convert_work.KEPT_HERE = budget
    assert _files(root / "here") == _files(root / "there") and len(_files(root / "here")) == sum(sizes)
    assert [p.name for p in here.written] == [p.name for p in there.written]
    assert (here.failed, lines[0].problems, lines[0].warnings) == (there.failed, lines[1].problems, lines[1].warnings)
    assert sorted(p.name for p in root.iterdir()) == ["here", "in", "there"]  # the job's own folder is gone


@pytest.mark.parametrize("to", ["markdown", "html"])
def test_a_batch_with_bad_files_gives_the_same_files_and_lines_on_either_runner(
    cluster: str, tmp_path: Path, to: str
) -> None:
    """Invalid JSON, a folder named like a session file, a link to itself,
    the same id in two files, a file of several sessions: every good session
    written, one line per problem, in the same order and bytes whoever ran it."""
    source = tmp_path / "in"
    source.mkdir()
    for n in range(3):
        (source / f"f{n}.json").write_text(json.dumps({**session(500, seed=n), "id": f"s{n}"}))
    (source / "g.json").write_text(json.dumps([{**session(300, seed=7), "id": f"m{k}"} for k in range(3)]))
    (source / "same.json").write_text(json.dumps({**session(300, seed=8), "id": "s1"}))
    (source / "bad.json").write_text("{not json")
    (source / "folder.json").mkdir()
    (source / "loop.json").symlink_to("loop.json")
    lines = [Lines(), Lines()]
    here = convert([str(source)], to, f"{tmp_path / 'here'}/", report=lines[0], no_highlight=True)
    there = convert([str(source)], to, f"{tmp_path / 'there'}/", report=lines[1], dask=cluster, no_highlight=True)
    assert _files(tmp_path / "here") == _files(tmp_path / "there") and len(_files(tmp_path / "here")) == 7
    assert [p.name for p in here.written] == [p.name for p in there.written]
    assert (here.failed, lines[0].problems, lines[0].warnings) == (there.failed, lines[1].problems, lines[1].warnings)
    assert here.failed and len(lines[0].problems) == 2, lines[0].problems  # bad.json, loop.json
