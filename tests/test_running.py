"""The runner a job is given (``vis_export.running``): results in the units'
order, each yielded once its unit's work is done."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

from corpus import session
from vis_export.running import InProcessRunner, Runner, Task, plain


@given(st.lists(st.integers()))
def test_in_process_results_come_in_source_order(units: list[int]) -> None:
    runner: Runner = InProcessRunner()
    assert list(runner.map(plain(lambda unit: (unit, unit * 2)), units)) == [(unit, unit * 2) for unit in units]


@given(st.lists(st.integers(), min_size=1))
def test_in_process_work_runs_as_its_result_is_taken(units: list[int]) -> None:
    """A sink that takes results as they come has each unit's work done just
    before it, never all of it first (an index job commits as it goes)."""
    done: list[int] = []

    def work(unit: int) -> int:
        done.append(unit)
        return len(done)

    results = InProcessRunner().map(plain(work), units)
    assert done == []
    for taken, result in enumerate(results, start=1):
        assert result == taken == len(done)


def halves(unit: tuple[int, ...]) -> tuple[int, ...]:
    return unit


def split_in_two(unit: tuple[int, ...], result: tuple[int, ...]) -> list[tuple[int, ...]]:
    """A unit of more than one number asks for its two halves next."""
    if len(unit) < 2:
        return []
    middle = len(unit) // 2
    return [unit[:middle], unit[middle:]]


def in_source_order(unit: tuple[int, ...]) -> list[tuple[int, ...]]:
    """A unit and, right after it, each of its follow-ups' own (depth first)."""
    return [unit, *(found for half in split_in_two(unit, unit) for found in in_source_order(half))]


@given(st.lists(st.lists(st.integers(), max_size=9).map(tuple), max_size=6))
def test_follow_ups_come_right_after_the_result_that_asked_for_them(units: list[tuple[int, ...]]) -> None:
    task = Task(halves, more=split_in_two)
    assert list(InProcessRunner().map(task, units)) == [found for unit in units for found in in_source_order(unit)]


def test_an_index_job_here_adds_a_files_documents_before_it_reads_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``vis-export index`` without ``--dask`` runs its work on the
    ``InProcessRunner``, as ``--dask`` runs it on the cluster: each file is a
    unit, read only once the documents of the one before are in the index,
    and a session's documents are made as they are added (one in memory at a
    time, however many sessions a file holds)."""
    from vis_export.jobs import index_work, indexing
    from vis_export.searchindex.engines.tantivy_engine import TantivyEngine
    from vis_export.sources import parts

    sources = tmp_path / "sources"
    sources.mkdir()
    for n in range(6):  # small files: units of work on a cluster batch them
        (sources / f"s{n}.json").write_text(json.dumps({**session(2_000, seed=n), "id": f"s{n}"}))
    events: list[str] = []
    handed: list[Any] = []

    def noted(event: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def called(*args: Any) -> Any:
            events.append(event)
            return function(*args)

        return called

    monkeypatch.setattr(index_work, "read_part", noted("read", parts.read_part))
    monkeypatch.setattr(index_work, "_documents", noted("made", index_work._documents))
    monkeypatch.setattr(TantivyEngine, "add", noted("added", TantivyEngine.add))
    map_here = InProcessRunner.map

    def mapped(runner: InProcessRunner, work: Task[Any, Any], todo: Iterable[Any]) -> Iterator[Any]:
        todo = list(todo)
        handed.extend(todo)
        return map_here(runner, work, todo)

    monkeypatch.setattr(InProcessRunner, "map", mapped)
    counts = indexing.index_sources([sources], tmp_path / "index")
    assert str(counts) == "6 added, 0 updated, 0 unchanged"
    assert [len(unit) for unit in handed] == [1] * 6  # a unit is a file (of parts.Part)
    assert events == ["read", "made", "added"] * 6


COMMANDS = {
    "index": ["index", "src", "--index", "idx"],
    "convert to files": ["convert", "src", "--to", "html", "-o", "out"],
    "convert to stdout": ["convert", "src", "--to", "md"],
}


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_job_in_this_process_imports_nothing_of_dask(tmp_path: Path, command: list[str]) -> None:
    """Without ``--dask`` a job's work runs here (``InProcessRunner``): what it
    shares with a worker (the files read last, ``sources.parts``; a conversion's
    folder, ``jobs.jobfolder``) lives outside ``distributed/``, so the command
    loads none of it, nor Dask, nor the cluster's sockets and logging (a
    conversion loaded ``distributed.jobfolder`` and ``distributed.tasks``)."""
    import subprocess
    import sys

    (tmp_path / "src").mkdir()
    for n in range(3):
        (tmp_path / "src" / f"s{n}.json").write_text(json.dumps({**session(2_000, seed=n), "id": f"s{n}"}))
    script = (
        "import sys\nfrom vis_export.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('distributed', 'dask')"
        " or m.startswith('vis_export.distributed')), file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, *command], capture_output=True, text=True, timeout=120, check=True, cwd=tmp_path
    )
    assert result.stderr.splitlines()[-1] == "[]"
    if command[0] == "index":
        assert result.stderr.splitlines()[-2] == "3 added, 0 updated, 0 unchanged"
    elif "-o" in command:
        assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["s0.html", "s1.html", "s2.html"]
    else:
        assert sum(line.startswith("# ") for line in result.stdout.splitlines()) == 3  # a title each
