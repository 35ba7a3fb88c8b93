"""Jobs on a real Dask cluster give what the same job gives in one process.

One Dask ``LocalCluster`` of two worker processes serves the module. Each job runs
twice over the same sources (golden inputs and generated sessions in every
source format, a Vis store, a log of several sessions, invalid files, a
repeated session id): once in this process, once on the cluster, and the
files, names, problem lines, exit status and search hits are compared. The
``dask scheduler`` / ``dask worker`` commands, a worker killed mid-job and
workers that cannot see the job's paths are in ``test_dask_processes.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from all_on_workers import waiting
from click.testing import CliRunner
from conftest import GOLDEN, INPUT
from postgres import Server, postgres_server_fixture  # noqa: F401 - fixtures
from test_dask_processes import convert_command, timed_main
from visstore import build_store

from corpus import session
from vis_export.cli import main
from vis_export.formats.options import ExportOptions
from vis_export.jobs.conversion import Outcome, convert
from vis_export.jobs.indexing import index_sources
from vis_export.reporting import Lines
from vis_export.searchindex import search
from vis_export.sources.parts import read_part, units

distributed = pytest.importorskip("distributed")

QUERIES = ["config", "parse_config", '"def parse_config"', "toml", "pytest", "retrying"]


def generated(n: int, size: int = 6_000) -> dict[str, Any]:
    document = session(size, seed=n)
    document["id"] = f"gen_{n}"
    document["title"] = f"Generated {n}"
    return document


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Sources in every format, with problems (a broken link among them) and a session id given twice."""
    root = tmp_path_factory.mktemp("corpus")
    for name in ("session.json", "messages.jsonl", "events.jsonl", "lonis.jsonl"):
        shutil.copyfile(INPUT / name, root / name)
    build_store(root / "vis.db", json.loads((GOLDEN / "store" / "rows.json").read_text()))
    for n in range(10):
        (root / f"gen_{n}.json").write_text(json.dumps(generated(n)))
    lines = generated(20)["messages"]
    (root / "lines.jsonl").write_text("\n".join(json.dumps(m) for m in lines) + "\n")
    (root / "array.json").write_text(json.dumps([generated(n) for n in (30, 31, 32)]))
    events = (INPUT / "events.jsonl").read_text().splitlines()
    log = [line.replace('"golden_events"', f'"log_{k}"') for k in range(3) for line in events]
    (root / "log.jsonl").write_text("\n".join(log) + "\n")
    for name in ("dup_a.json", "dup_b.json"):
        (root / name).write_text(json.dumps({**generated(40), "id": "dup"}))
    (root / "bad.json").write_text('{"id": "m", "role": "User", "status": "completed", "created_at": 1, "content": []}')
    (root / "broken.json").write_text('{"messages": [')
    (root / "link.json").symlink_to(root / "gone" / "link.json")
    return root


def files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if not path.is_dir()}


def both(corpus: Path, tmp_path: Path, cluster: str, to: str, **kw: Any) -> tuple[tuple[Outcome, Lines], ...]:
    runs = []
    for name, dask in (("here", None), ("dask", cluster)):
        lines = Lines()
        outcome = convert([str(corpus)], to, tmp_path / name, report=lines, dask=dask, **kw)
        runs.append((outcome, lines))
    return tuple(runs)


@pytest.mark.parametrize("to", ["json", "text", "markdown", "html", "provider"])
def test_convert_on_dask_writes_the_same_files_and_lines(corpus: Path, tmp_path: Path, cluster: str, to: str) -> None:
    (here, here_lines), (dask, dask_lines) = both(corpus, tmp_path, cluster, to)
    assert files(tmp_path / "here") == files(tmp_path / "dask")
    assert len(files(tmp_path / "dask")) >= 25
    assert {"dup.json", "dup-2.json"} <= {p.stem + ".json" for p in (tmp_path / "dask").iterdir()}
    assert here_lines == dask_lines and any("bad.json" in line for line in dask_lines.problems)
    assert (here.failed, here.refused, [p.name for p in here.written]) == (
        dask.failed,
        dask.refused,
        [p.name for p in dask.written],
    )
    assert dask.failed


def test_convert_on_dask_lenient_and_picked_sessions(corpus: Path, tmp_path: Path, cluster: str) -> None:
    options = ExportOptions(reasoning="all", timestamps=True)
    (here, here_lines), (dask, dask_lines) = both(
        corpus, tmp_path, cluster, "markdown", options=options, lenient=True, session_ids=["gen_3", "bad", "log_1", "x"]
    )
    assert files(tmp_path / "here") == files(tmp_path / "dask") and len(files(tmp_path / "dask")) == 3
    assert here_lines == dask_lines and any("warning" in line for line in dask_lines.warnings)
    assert "vis-export: no session with id 'x' in the sources" in dask_lines.problems


@pytest.mark.slow
def test_convert_to_pdf_on_dask_is_the_same(tmp_path: Path, cluster: str) -> None:
    pytest.importorskip("weasyprint")
    sources = tmp_path / "sources"
    sources.mkdir()
    shutil.copyfile(INPUT / "session.json", sources / "session.json")
    for n in range(3):
        (sources / f"gen_{n}.json").write_text(json.dumps(generated(n)))
    here = convert([str(sources)], "pdf", tmp_path / "here")
    dask = convert([str(sources)], "pdf", tmp_path / "dask", dask=cluster)
    assert not here.failed and not dask.failed
    assert files(tmp_path / "here") == files(tmp_path / "dask") and len(files(tmp_path / "dask")) == 4


# Each format and each way of keeping files runs by default, and CI (or --slow) runs every pair: a local cluster
# costs seconds.
@pytest.mark.parametrize(
    ("to", "kept"),
    [
        ("markdown", True),
        ("html", False),
        pytest.param("markdown", False, marks=pytest.mark.slow),
        pytest.param("html", True, marks=pytest.mark.slow),
    ],
)
def test_convert_on_a_local_cluster_it_starts_is_the_same(
    corpus: Path, tmp_path: Path, to: str, kept: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``local:2``: this process renders units itself while the workers start,
    keeping the files in memory until they have names (``kept``) or, past
    ``KEPT_HERE`` bytes, in the job's folder. A name taken by a folder is the
    same line either way."""
    from vis_export.jobs import convert_work

    if not kept:
        monkeypatch.setattr(convert_work, "KEPT_HERE", 0)
    for out in ("here", "dask"):
        (tmp_path / out / f"gen_3.{'md' if to == 'markdown' else 'html'}").mkdir(parents=True)
    lines = [Lines(), Lines()]
    here = convert([str(corpus)], to, tmp_path / "here", lenient=True, report=lines[0])
    dask = convert([str(corpus)], to, tmp_path / "dask", lenient=True, dask="local:2", report=lines[1])
    assert files(tmp_path / "here") == files(tmp_path / "dask") and len(files(tmp_path / "dask")) >= 25
    assert (here.failed, here.refused) == (dask.failed, dask.refused)
    assert [p.name for p in here.written] == [p.name for p in dask.written]
    assert [line.replace("/dask/", "/here/") for line in lines[1].problems] == lines[0].problems
    assert any("gen_3" in line for line in lines[0].problems)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dask", "here"]  # the job's own folder is gone


def test_only_files_of_small_sessions_wait_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large session's file is streamed to the job's folder, not held whole in memory."""
    from vis_export.jobs import conversion, convert_work

    (tmp_path / "in").mkdir()
    for name, size in (("a", 3_000), ("b", 60_000)):
        (tmp_path / "in" / f"{name}.json").write_text(json.dumps({**session(size, seed=1), "id": name}))
    small = (tmp_path / "in" / "a.json").stat().st_size
    monkeypatch.setattr(convert_work, "KEPT_HERE", convert_work.OUTPUT_PER_BYTE * small + 1)
    kept: dict[str, bool] = {}
    render = conversion.convert_unit

    def recorded(unit: Any, *args: Any, **kwargs: Any) -> Any:
        done = render(unit, *args, **kwargs)
        kept[unit.parts[0].name] = isinstance(done.entries[0][0][1], bytes)
        return done

    monkeypatch.setattr(conversion, "convert_unit", recorded)
    done = convert([str(tmp_path / "in")], "markdown", tmp_path / "out", dask="local:1")
    assert kept == {str(tmp_path / "in" / "a.json"): True, str(tmp_path / "in" / "b.json"): False}
    assert not done.failed and sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.md", "b.md"]


@pytest.fixture
def here_units(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The units this process does itself; the job waits for its local cluster."""
    from contextlib import contextmanager

    from vis_export.distributed.cluster import Pace
    from vis_export.distributed.local import ClusterProcess

    monkeypatch.setattr(ClusterProcess, "answered", waiting)
    done: list[int] = []
    timing = Pace.timing

    @contextmanager
    def counted(pace: Pace, size: int) -> Iterator[None]:
        with timing(pace, size):
            yield
        done.append(size)

    monkeypatch.setattr(Pace, "timing", counted)
    return done


@pytest.mark.slow
@pytest.mark.parametrize("to", ["markdown", "html"])
def test_a_local_clusters_workers_render_the_same(corpus: Path, tmp_path: Path, to: str, here_units: list[int]) -> None:
    here = convert([str(corpus)], to, tmp_path / "here", lenient=True)
    dask = convert([str(corpus)], to, tmp_path / "dask", lenient=True, dask="local:2")
    assert here_units == []  # every unit rendered by a worker
    assert files(tmp_path / "here") == files(tmp_path / "dask") and len(files(tmp_path / "dask")) >= 25
    assert (here.failed, here.refused) == (dask.failed, dask.refused)
    assert [p.name for p in here.written] == [p.name for p in dask.written]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dask", "here"]


def test_a_local_clusters_workers_index_the_same(corpus: Path, tmp_path: Path, here_units: list[int]) -> None:
    lines = [Lines(), Lines()]
    counts = [
        index_sources([str(corpus)], tmp_path / name, lenient=True, report=report, dask=dask)
        for name, report, dask in (("here", lines[0], None), ("dask", lines[1], "local:2"))
    ]
    assert here_units == []
    assert str(counts[0]) == str(counts[1]) and lines[0] == lines[1]
    assert hits(tmp_path / "here") == hits(tmp_path / "dask") and any(hits(tmp_path / "dask"))


def test_a_source_gone_before_this_process_renders_it_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A source removed after the job was planned, read by this process while
    its local cluster starts: one line and the job goes on, as when a worker
    reads it (``task_result``), not a worker that cannot see the sources."""
    from vis_export.distributed.local import ClusterProcess
    from vis_export.jobs import conversion

    sources = tmp_path / "sources"
    sources.mkdir()
    for n in range(3):
        (sources / f"g{n}.json").write_text(json.dumps(generated(n)))
    planned = conversion.split

    def units(*args: Any, **kwargs: Any) -> Any:
        plan = planned(*args, **kwargs)
        (sources / "g1.json").unlink()
        return plan

    monkeypatch.setattr(conversion, "split", units)
    monkeypatch.setattr(ClusterProcess, "answered", lambda cluster: False)  # this process does every unit
    lines = Lines()
    done = convert([str(sources)], "markdown", tmp_path / "out", dask="local:2", report=lines)
    assert [p.name for p in done.written] == ["gen_0.md", "gen_2.md"]
    assert lines.problems == [f"{sources / 'g1.json'}: no such file or directory"]


def _session_of(pid: int) -> set[int]:
    """The processes in the session ``pid`` leads (a local cluster's, workers included)."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if entry.name.isdigit() and int(stat[stat.rindex(")") + 2 :].split()[3]) == pid:
            found.add(int(entry.name))
    return found


@pytest.mark.parametrize("started", [False, True])
def test_a_local_cluster_the_job_no_longer_needs_is_gone_with_its_files(started: bool) -> None:
    """A job done before its cluster is up stops it where it has got to; either
    way no process of it is left, nor the files Dask wrote."""
    import time

    from vis_export.distributed.cluster import Connecting

    cluster = Connecting("local:2", ("vis_export.formats.markdown",))
    local = cluster._local
    assert local is not None
    if started:
        assert local.started().startswith("tcp://127.0.0.1:")
        assert _session_of(local.process.pid) >= {local.process.pid}
    scratch = Path(local.scratch)
    cluster.close()
    assert local.process.returncode == 0 and not scratch.exists()
    deadline = time.monotonic() + 10
    while _session_of(local.process.pid) and time.monotonic() < deadline:  # each watches its parent
        time.sleep(0.05)
    assert _session_of(local.process.pid) == set()


def test_a_local_cluster_leaves_nothing_in_the_temp_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cluster's process ends at once (``os._exit``): what it made in the
    temporary folder (``multiprocessing``'s folder for the forkserver's socket)
    goes with the job's scratch folder, not left for each job."""
    import tempfile
    import time

    from vis_export.distributed.cluster import Connecting

    # A short folder, not under ``tmp_path``: a socket's path holds at most 107 bytes, and pytest's
    # folder's number grows with each run on a machine (``.../pytest-106/popen-gw1/test_a_local_...``).
    temporary = Path(tempfile.mkdtemp(prefix="vx-"))
    monkeypatch.setenv("TMPDIR", str(temporary))
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    try:
        cluster = Connecting("local:1", ("vis_export.formats.markdown",))
        local = cluster._local
        assert local is not None
        local.started()
        cluster.close()
        deadline = time.monotonic() + 10
        while _session_of(local.process.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(temporary.iterdir()) == []
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def test_a_local_cluster_that_cannot_start_leaves_nothing_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cluster that cannot start (here: its forkserver's socket path is too long for
    ``AF_UNIX``) closes its process's pipes and removes its scratch folder: the
    pipes, left to the collector, failed a later test with ``ResourceWarning``."""
    import tempfile

    from vis_export.distributed.cluster import Connecting, DaskFailure

    deep = tmp_path / ("d" * 100) / ("e" * 100)
    deep.mkdir(parents=True)
    monkeypatch.setenv("TMPDIR", str(deep))
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    cluster = Connecting("local:1", ("vis_export.formats.markdown",))
    local = cluster._local
    assert local is not None
    with pytest.raises(DaskFailure, match="cannot start a local Dask cluster"):
        local.started()
    assert local.process.stdin is not None and local.process.stdout is not None
    assert local.process.stdin.closed and local.process.stdout.closed
    assert not Path(local.scratch).exists()


class _Ended(subprocess.Popen[bytes]):
    """A process that has ended by the time the caller writes to it."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.wait()


@pytest.mark.parametrize(
    ("script", "line", "ended"),
    [
        ("read request; echo 'error the workers failed'", "the workers failed", False),
        ("exit 3", "its process ended (exit status 3)", False),
        ("exit 3", "its process ended (exit status 3)", True),  # gone before the request is written
    ],
)
def test_a_local_cluster_that_cannot_start_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str, line: str, ended: bool
) -> None:
    from vis_export.distributed.cluster import DaskFailure
    from vis_export.distributed.local import ClusterProcess

    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\n{script}\n")
    python.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(python))
    if ended:
        monkeypatch.setattr(subprocess, "Popen", _Ended)
    cluster = ClusterProcess(1, ())
    with pytest.raises(DaskFailure) as failure:
        cluster.started()
    assert str(failure.value) == f"cannot start a local Dask cluster: {line}"
    cluster.close()
    assert not Path(cluster.scratch).exists()


def test_a_local_cluster_without_a_python_or_a_temporary_folder_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    from vis_export.distributed.cluster import DaskFailure
    from vis_export.distributed.local import ClusterProcess

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "gone" / "python"))
    with pytest.raises(DaskFailure) as failure:
        ClusterProcess(1, ())
    assert str(failure.value) == f"cannot start a local Dask cluster: {tmp_path}/gone/python: No such file or directory"
    assert list(tmp_path.iterdir()) == []  # its folder is gone with it
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "gone"))
    with pytest.raises(DaskFailure) as failure:
        ClusterProcess(1, ())
    assert str(failure.value).startswith("cannot start a local Dask cluster: no folder for its files: ")


def test_the_job_hands_its_work_over_when_it_would_take_longer_than_connecting() -> None:
    from vis_export.distributed.cluster import HANDOVER, Pace

    pace = Pace()
    assert pace.would_take(1) == float("inf")  # nothing timed yet: the cluster takes all
    pace.size, pace.seconds = 1000, 0.1
    assert pace.would_take(1000) == pytest.approx(0.1)

    assert pace.would_take(1000 * HANDOVER * 20) == pytest.approx(HANDOVER * 2)
    pace = Pace()
    with pace.timing(1000) as share:  # one session of a file of four
        share[0] = 0.25
    assert pace.size == 250


def scaled(unit: int, factor: int, on_worker: bool = False) -> tuple[int, bool]:
    """Run by a ``DaskRunner``: ``on_worker`` when not run in the job's own process."""
    return unit * factor, on_worker


def test_a_dask_runner_runs_the_first_units_here_then_hands_over_in_source_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from vis_export.distributed.cluster import Connecting
    from vis_export.distributed.running import DaskRunner
    from vis_export.running import Task

    asked: list[float] = []

    def handing_over(cluster: Connecting, pace: Any, left: float) -> bool:
        asked.append(left)
        return len(asked) > 3

    monkeypatch.setattr(Connecting, "handing_over", handing_over)
    units = list(range(30))
    with DaskRunner("local:2") as runner:
        results = list(runner.map(Task(scaled, shared={"factor": 3}, size=lambda unit: 10), units))
    assert results == [(3 * unit, unit >= 3) for unit in units]  # three here, the rest on the workers
    assert asked == [300, 290, 280, 270]


def imported(name: str) -> bool:
    """Run on a worker: whether ``name`` was imported before any task asked for it."""
    return name in sys.modules


def test_a_local_clusters_workers_start_with_the_jobs_imports_done() -> None:
    """Workers are forked from one process that imported the job's modules
    (``forkserver``), not each left to import them."""
    from vis_export.distributed.cluster import dask_client

    with dask_client("local:1", ("vis_export.formats.markdown",)) as client:
        assert client.submit(imported, "vis_export.formats.markdown", pure=False).result()
        assert not client.submit(imported, "vis_export.formats.typst_tree", pure=False).result()


@pytest.mark.slow
def test_a_library_that_fails_to_import_for_want_of_system_libraries_stops_no_local_cluster(tmp_path: Path) -> None:
    """WeasyPrint raises OSError where Pango is missing. The process the workers
    are forked from imports it ahead of a PDF job, and must survive that: a
    Typst PDF job needs no WeasyPrint."""
    fake = tmp_path / "libraries"
    (fake / "weasyprint").mkdir(parents=True)
    (fake / "weasyprint" / "__init__.py").write_text("raise OSError('cannot load library libpango-1.0-0')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake), *sys.path])}
    args = ["--to", "pdf", "--pdf-engine", "typst", "--dask", "local:1", "-o", str(tmp_path / "out")]
    done = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).parent / "all_on_workers.py"),
            "convert",
            str(INPUT / "session.json"),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out").read_bytes().startswith(b"%PDF")


def test_cli_convert_on_dask_same_exit_status_and_stderr(corpus: Path, tmp_path: Path, cluster: str) -> None:
    args = ["convert", str(corpus), "--to", "md", "-o"]
    here = CliRunner().invoke(main, [*args, str(tmp_path / "here")])
    dask = CliRunner().invoke(main, [*args, str(tmp_path / "dask"), "--dask", cluster])
    assert (here.exit_code, here.stderr) == (dask.exit_code, dask.stderr) and dask.exit_code == 1
    assert files(tmp_path / "here") == files(tmp_path / "dask")
    good = CliRunner().invoke(
        main, ["convert", str(INPUT), "--to", "text", "-o", str(tmp_path / "g"), "--dask", cluster]
    )
    assert good.exit_code == 0, good.stderr


def hits(location: str | Path) -> list[set[tuple[str, str]]]:
    return [{(hit.session_id, hit.block_id) for hit in search(q, location, limit=1000)} for q in QUERIES]


def index_both(corpus: Path, here: str | Path, there: str | Path, cluster: str, **kw: Any) -> list[str]:
    """Indexes ``corpus`` into ``here`` in this process and into ``there`` on the
    cluster; asserts the same counts and lines; returns the counts."""
    found = []
    for location, dask in ((here, None), (there, cluster)):
        lines = Lines()
        counts = index_sources([str(corpus)], location, report=lines, dask=dask, **kw)
        found.append((str(counts), lines))
    assert found[0] == found[1]
    return [found[0][0]]


@pytest.mark.parametrize("engine", ["tantivy", "whoosh"])
def test_index_on_dask_gives_the_same_hits(corpus: Path, tmp_path: Path, cluster: str, engine: str) -> None:
    work = tmp_path / "sources"
    shutil.copytree(corpus, work, symlinks=True)
    here, there = tmp_path / "here", tmp_path / "there"
    (counts,) = index_both(work, here, there, cluster, engine=engine)
    assert counts == "24 added, 0 updated, 0 unchanged"  # every readable session, once
    assert hits(here) == hits(there) and all(hits(there)[:2])
    (again,) = index_both(work, here, there, cluster)
    assert again.startswith("0 added, 0 updated")
    changed = generated(5)
    changed["messages"][0]["content"][0]["markdown"] = "retrying parse_config"
    (work / "gen_5.json").write_text(json.dumps(changed))
    (work / "gen_6.json").unlink()
    (updated,) = index_both(work, here, there, cluster, prune=True)
    assert updated == "0 added, 1 updated, 22 unchanged, 1 removed"
    assert hits(here) == hits(there)


def test_a_rerun_on_dask_over_unchanged_files_is_a_no_op(tmp_path: Path, cluster: str) -> None:
    """Every file as the index has it: nothing goes to the workers (the job
    failed planning no unit: ``zip() argument 3 is longer``)."""
    from vis_export.sources.stamp import RACY_NS

    work = tmp_path / "sources"
    work.mkdir()
    past = time.time_ns() - 2 * RACY_NS  # files changed within a clock tick of their stamp are read again
    for n in range(3):
        (work / f"gen_{n}.json").write_text(json.dumps(generated(n)))
        os.utime(work / f"gen_{n}.json", ns=(past, past))
    (counts,) = index_both(work, tmp_path / "here", tmp_path / "there", cluster)
    assert counts == "3 added, 0 updated, 0 unchanged"
    (again,) = index_both(work, tmp_path / "here", tmp_path / "there", cluster)
    assert again == "0 added, 0 updated, 3 unchanged"


@pytest.mark.slow
def test_index_on_dask_into_postgresql_written_by_the_workers(
    corpus: Path,
    tmp_path: Path,
    cluster: str,
    postgres_server: Server,  # noqa: F811
) -> None:
    here, there = (postgres_server.uri(name) for name in ("dask_here", "dask_there"))
    for name in ("dask_here", "dask_there"):
        postgres_server.sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        postgres_server.sql(f"CREATE DATABASE {name}")
    index_both(corpus, here, there, cluster, origin="test")
    assert hits(here) == hits(there) and all(hits(there)[:2])
    (again,) = index_both(corpus, here, there, cluster, origin="test")
    assert again.startswith("0 added, 0 updated")
    digests = "SELECT session_id, digest, origin FROM vis_sessions ORDER BY 1"
    assert postgres_server.sql(digests, "dask_here") == postgres_server.sql(digests, "dask_there")
    files_known = "SELECT key, entry FROM vis_files ORDER BY 1"
    assert postgres_server.sql(files_known, "dask_here") == postgres_server.sql(files_known, "dask_there")


def _fresh_databases(server: Server, *names: str) -> list[str]:
    for name in names:
        server.sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        server.sql(f"CREATE DATABASE {name}")
    return [server.uri(name) for name in names]


def _copy(n: int, word: str) -> str:
    """A copy of the session ``dup``, found by ``word``."""
    document = {**generated(n), "id": "dup"}
    document["messages"][0]["content"] = [{"type": "prose", "id": "p", "markdown": f"{word} here"}]
    return json.dumps(document)


@pytest.mark.slow
def test_workers_writing_a_database_leave_the_first_copy_of_a_session_in_two_sources(
    tmp_path: Path,
    cluster: str,
    postgres_server: Server,  # noqa: F811
) -> None:
    """As in one process: the first copy is indexed and the later one skipped
    with a warning, although a worker that reads the later one cannot know
    that it is not the first. Here the index has the first copy already, so
    the worker, finding the later one new, writes it."""
    here, there = _fresh_databases(postgres_server, "dup_here", "dup_there")
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "a.json").write_text(_copy(1, "alphaword"))
    index_both(sources, here, there, cluster, origin="test")
    (sources / "b.json").write_text(_copy(2, "bravoword"))
    (counts,) = index_both(sources, here, there, cluster, origin="test")
    assert counts == "0 added, 0 updated, 1 unchanged"
    for location in (here, there):
        assert [hit.session_id for hit in search("alphaword", location)] == ["dup"]
        assert search("bravoword", location) == []
    digests = "SELECT session_id, digest FROM vis_sessions"
    assert postgres_server.sql(digests, "dup_here") == postgres_server.sql(digests, "dup_there")


@pytest.mark.slow
def test_workers_writing_a_database_take_turns_on_a_session_many_sources_hold(
    tmp_path: Path,
    cluster: str,
    postgres_server: Server,  # noqa: F811
) -> None:
    """Workers writing copies of one session at once wait for each other (they
    are one job), rather than fail as two jobs do (``--wait``)."""
    here, there = _fresh_databases(postgres_server, "many_here", "many_there")
    sources = tmp_path / "sources"
    sources.mkdir()
    for n in range(40):
        (sources / f"c{n:02}.json").write_text(_copy(n, f"copy{n:02}word"))
    (counts,) = index_both(sources, here, there, cluster, origin="test")
    assert counts == "1 added, 0 updated, 0 unchanged"
    assert [hit.session_id for hit in search("copy00word", there)] == ["dup"]
    assert search("copy39word", there) == []


def test_parts_read_what_read_reads(corpus: Path) -> None:
    """Split by session (a store) or batched (small files), the parts give the
    results ``read`` gives, in the same order."""
    from vis_export.sources import read, source_files

    plan = units(source_files([str(corpus)]), workers=2)
    store_parts = [part for unit in plan for part in unit if part.sessions is not None]
    assert [part.sessions for part in store_parts] == [(0, 1), (1, 2)]
    assert any(len(unit) > 1 for unit in plan)
    assert [r for unit in plan for part in unit for r in read_part(part)] == list(read([str(corpus)]))


def test_a_workers_kept_file_is_read_again_after_a_rewrite_within_a_clock_tick(tmp_path: Path) -> None:
    """A worker keeps the files it read for its next tasks, and outlives jobs on
    a running cluster: a rewrite at the same size within one tick of the file
    system's clock (size and time as they were), between two jobs, is read again."""
    from vis_export.sources.parts import Part, read_part_kept

    path = tmp_path / "kept.json"
    path.write_text(json.dumps(generated(1)))
    part = Part(str(path), str(path))
    assert [r.session.title for r in read_part_kept(part, False) if r.session] == ["Generated 1"]
    before = path.stat()
    path.write_text(path.read_text().replace("Generated 1", "Generated 9"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert [r.session.title for r in read_part_kept(part, False) if r.session] == ["Generated 9"]


def test_small_files_go_out_in_batches_that_shrink_towards_the_end(tmp_path: Path) -> None:
    """No worker is left with a large last batch while the others wait (nor the
    index job's one writer with a large last batch of documents)."""
    from vis_export.sources import source_files
    from vis_export.sources.parts import MOST_PER_BATCH

    for n in range(300):
        (tmp_path / f"s{n:03}.json").write_text("{}")
    plan = units(source_files([str(tmp_path)]), workers=2)
    sizes = [len(unit) for unit in plan]
    assert [part.name for unit in plan for part in unit] == [name for name, _ in source_files([str(tmp_path)])]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] == MOST_PER_BATCH and sizes[-1] == 1
    assert len(plan) < 40


def test_unreachable_scheduler_is_one_line_and_exit_1(tmp_path: Path) -> None:
    """Dask tries a refused connection again for 30 s; the job, for ``CONNECT_TIMEOUT``."""
    import socket

    from vis_export.distributed.cluster import CONNECT_TIMEOUT

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    done, took = timed_main(
        ["convert", str(INPUT), "--to", "md", "-o", str(tmp_path / "out"), "--dask", f"tcp://127.0.0.1:{port}"]
    )
    assert done.returncode == 1 and took["seconds"] < CONNECT_TIMEOUT + 5, (took, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"vis-export: cannot reach the Dask scheduler at tcp://127.0.0.1:{port}"
    )
    assert not (tmp_path / "out").exists()


def test_without_the_extra_the_option_names_it(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['distributed'] = None\n"
        "from vis_export.cli import main\n"
        f"main(['index', {str(INPUT)!r}, '--index', {str(tmp_path / 'idx')!r}, '--dask', 'local:1'])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "vis-export: error: --dask needs the 'dask' extra, which is not installed: pip install 'vis-export[dask]'"
    )


@pytest.mark.parametrize(
    "value",
    [
        "local:0",
        "local:x",
        "local:99999",
        "local:",
        "tcp://a b",
        "",
        "tcp://",
        "foo",
        "inproc://x",
        "h:0",
        "tcp://h:notaport",
        "tcp://h:99999",
        "local:1\n",
    ],
)
def test_bad_dask_addresses_are_usage_errors(value: str) -> None:
    result = CliRunner().invoke(main, ["convert", str(INPUT), "--to", "md", "-o", "x", "--dask", value])
    assert result.exit_code == 2 and "--dask" in result.stderr


@pytest.mark.slow
def test_progress_on_a_terminal_is_fed_by_finished_tasks(corpus: Path, tmp_path: Path, cluster: str) -> None:
    from onterminal import on_terminal

    shown = on_terminal("convert", str(corpus), "--to", "md", "-o", str(tmp_path / "o"), "--dask", cluster).decode()
    assert "Exporting" in shown and "100%" in shown
    assert shown.count("Exporting") >= 2  # redrawn as tasks finish, not once at the end
    shown = on_terminal("index", str(corpus), "--index", str(tmp_path / "i"), "--dask", cluster).decode()
    assert "Indexing" in shown and "100%" in shown and "24 added" in shown


def test_one_session_to_one_file_on_dask(tmp_path: Path, cluster: str) -> None:
    """Rendered for a folder before the names are known, then given one file:
    Markdown links to attachments go from where that file is, as in one process."""
    (tmp_path / "attachments").mkdir()
    (tmp_path / "attachments" / "att_01").write_bytes(b"\x89PNG\r\n\x1a\n")
    out = tmp_path / "out"
    out.mkdir()
    options = ExportOptions(attachments=tmp_path / "attachments")
    for name, dask in (("here", None), ("dask", cluster)):
        outcome = convert([str(INPUT / "session.json")], "markdown", out / f"{name}.md", options, dask=dask)
        assert outcome.written == [out / f"{name}.md"] and not outcome.failed
    assert (out / "here.md").read_bytes() == (out / "dask.md").read_bytes()
    assert b"](../attachments/att_01)" in (out / "dask.md").read_bytes()
    assert sorted(p.name for p in out.iterdir()) == ["dask.md", "here.md"]


def test_a_job_that_writes_nothing_leaves_no_folders_it_made(tmp_path: Path, cluster: str) -> None:
    """The job's own folder goes beside the output; folders made for it go too
    when no file ends up in them, as in one process."""
    (tmp_path / "bad.json").write_text("{not json")
    for name, dask in (("here", None), ("dask", cluster)):
        outcome = convert([str(tmp_path / "bad.json")], "markdown", tmp_path / name / "x" / "y", dask=dask)
        assert outcome.failed and not outcome.written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]


@pytest.mark.parametrize("scheme", ["tls", "ucx"])
def test_a_scheduler_address_dask_cannot_use_is_one_line_at_once(tmp_path: Path, scheme: str) -> None:
    """Not a timeout: Dask's own error, without the traceback a half-made client prints later."""
    address = f"{scheme}://127.0.0.1:1"
    done = subprocess.run(
        convert_command(INPUT, "md", tmp_path / "out", address), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"vis-export: cannot reach the Dask scheduler at {address}: ")


def test_a_source_removed_once_the_job_is_planned_is_a_line_not_a_failed_job(tmp_path: Path, cluster: str) -> None:
    """Workers that see the job's output folder share the file system: a source
    they do not find is gone, one line (as a file gone mid-job in one process)
    while the other sessions are written."""
    sources = [tmp_path / f"s{n}.json" for n in range(3)]
    for n, path in enumerate(sources):
        path.write_text(json.dumps(generated(n)))

    def planned(total: int) -> Any:
        sources[1].unlink()  # after the plan, before the workers read
        return lambda: None

    dask = Lines()
    outcome = convert(
        [str(p) for p in sources], "markdown", tmp_path / "dask", report=dask, dask=cluster, progress=planned
    )
    convert([str(p) for p in sources], "markdown", tmp_path / "here")
    assert dask.problems == [f"{sources[1]}: no such file or directory"]  # as when it goes mid-job
    assert outcome.failed and files(tmp_path / "dask") == files(tmp_path / "here") != {}


def test_a_source_removed_once_the_index_job_is_planned_is_a_line(tmp_path: Path, cluster: str) -> None:
    sources = [tmp_path / f"s{n}.json" for n in range(3)]
    for n, path in enumerate(sources):
        path.write_text(json.dumps(generated(n)))

    def planned(total: int) -> Any:
        sources[1].unlink()  # after the plan, before the workers read
        return lambda: None

    lines = Lines()
    counts = index_sources([str(p) for p in sources], tmp_path / "i", report=lines, dask=cluster, progress=planned)
    assert lines.problems == [f"{sources[1]}: no such file or directory"]
    assert str(counts) == "2 added, 0 updated, 0 unchanged"


def test_a_store_removed_once_the_job_is_planned_says_so(tmp_path: Path, cluster: str) -> None:
    """A store goes out in parts (a session each), which read it by path: gone,
    each said 'not a readable Vis store: unable to open database file', where
    one process says 'no such file or directory', once."""
    rows = json.loads((GOLDEN / "store" / "rows.json").read_text())
    for job in ("convert", "index"):
        store = build_store(tmp_path / f"{job}.db", rows)
        assert len([p for u in units([(str(store), store)], 2) for p in u]) == 2

        def planned(total: int, store: Path = store) -> Any:
            store.unlink()  # after the plan, before the workers read
            return lambda: None

        lines = Lines()
        if job == "convert":
            outcome = convert([str(store)], "markdown", tmp_path / "o", report=lines, dask=cluster, progress=planned)
            assert outcome.failed and not outcome.written
        else:
            index_sources([str(store)], tmp_path / "i", report=lines, dask=cluster, progress=planned)
        assert lines.problems == [f"{store}: no such file or directory"]


@pytest.mark.slow
@pytest.mark.parametrize(("change", "left"), [("deleted", "bravoword"), ("changed", "charlieword")])
def test_workers_writing_a_database_leave_the_first_copy_as_it_is_when_the_job_ends(
    tmp_path: Path,
    cluster: str,
    postgres_server: Server,  # noqa: F811
    change: str,
    left: str,
) -> None:
    """The first copy's file is read, then deleted or changed while the job
    runs. The job's counts and lines are those of one process; the index holds
    what the next job in one process would leave (the first copy as it is
    now, or the later copy once the first is gone), never a copy no source
    holds. (One process, having read the first copy before the change, keeps
    it until its next run.)"""
    here, there = _fresh_databases(postgres_server, f"gone_{change}_here", f"gone_{change}_there")
    sources = tmp_path / "sources"
    sources.mkdir()
    found = {}
    for location, dask in ((here, None), (there, cluster)):
        (sources / "a.json").write_text(_copy(1, "alphaword"))
        (sources / "b.json").write_text(_copy(2, "bravoword"))
        for n in range(4):
            (sources / f"c{n}.json").write_text(json.dumps(generated(n)))

        def progress(total: int) -> Any:
            def advance() -> None:  # once a.json is read (and its results taken)
                if (sources / "a.json").exists():
                    if change == "deleted":
                        (sources / "a.json").unlink()
                    else:
                        (sources / "a.json").write_text(_copy(3, "charlieword"))

            return advance

        lines = Lines()
        counts = index_sources([str(sources)], location, report=lines, dask=dask, progress=progress)
        words = [w for w in ("alphaword", "bravoword", "charlieword") if search(w, location)]
        found[dask] = (str(counts), lines.problems, lines.warnings, words)
    assert found[None][:3] == found[cluster][:3]
    assert found[None][3] == ["alphaword"] and found[cluster][3] == [left]


class Peer:
    """A server on 127.0.0.1 that is not a Dask scheduler: on each connection it
    sends ``first`` (maybe nothing) and then stays silent, the connection open
    (or closes it, ``close``)."""

    def __init__(self, first: bytes, close: bool = False) -> None:
        import socket
        import threading

        self.first, self.close = first, close
        self.listening = socket.create_server(("127.0.0.1", 0))
        self.port = self.listening.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listening.accept()
            except OSError:  # closed: the test is over
                return
            connection.sendall(self.first)
            if self.close:
                connection.close()
            else:
                self.held.append(connection)

    def stop(self) -> None:
        self.listening.close()
        for connection in self.held:
            connection.close()


GREETING = b"\x81\xa6python\x93\x03\x0b\x07"  # a msgpack greeting, as Dask begins one


def _frames(*frames: bytes) -> bytes:
    """Dask's framing of one message: its length, the count of frames, their lengths, the frames."""
    import struct

    body = struct.pack(f"{1 + len(frames)}Q", len(frames), *map(len, frames)) + b"".join(frames)
    return struct.pack("Q", len(body)) + body


@pytest.mark.parametrize(
    ("first", "close"),
    [
        (b"", False),  # accepts and never answers
        ((3 << 30).to_bytes(8, "little"), False),  # a 3 GB message
        (_frames(b"\xa5hello"), False),  # Dask's framing, not a greeting
        (b"", True),  # closes at once
        # More of those kinds (a silence, a length too long, a greeting that is none): each costs a process
        # and up to CONNECT_TIMEOUT, so CI (or --slow) runs them.
        pytest.param(_frames(GREETING)[:20], False, marks=pytest.mark.slow, id="a greeting begun, never ended"),
        pytest.param(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n", False, marks=pytest.mark.slow, id="a banner as a length"),
        pytest.param(_frames(GREETING, b"x" * 70_000), False, marks=pytest.mark.slow, id="a greeting too long"),
    ],
)
def test_a_peer_that_is_not_a_scheduler_is_one_line_in_bounded_time_and_memory(
    tmp_path: Path, first: bytes, close: bool
) -> None:
    """Dask waits for a peer's greeting without a limit, and allocates a
    message of whatever length its first bytes say: neither happens here."""
    from vis_export.distributed.cluster import CONNECT_TIMEOUT

    peer = Peer(first, close)
    address = f"tcp://127.0.0.1:{peer.port}"
    try:
        done, took = timed_main(["convert", str(INPUT), "--to", "md", "-o", str(tmp_path / "out"), "--dask", address])
    finally:
        peer.stop()
    assert done.returncode == 1 and took["seconds"] < CONNECT_TIMEOUT + 5, (took, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"vis-export: cannot reach the Dask scheduler at {address}: ")
    assert took["peak_kb"] < 500_000  # what the process ever held in memory
    assert not (tmp_path / "out").exists()


def _holding(base: Path) -> tuple[subprocess.Popen[str], Path]:
    """A process that makes a job's folder in ``base`` as a job does, renders a
    file into it, and runs on; and the folder."""
    code = (
        "import sys, time\nfrom pathlib import Path\nfrom vis_export.jobs.jobfolder import JobFolder\n"
        "made = JobFolder.make(Path(sys.argv[1]))\n(made.path / 'a.out').write_text('rendered')\n"
        "print(made.path, flush=True)\ntime.sleep(600)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code, str(base)], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def _left(base: Path, name: str, age: float, owner: dict[str, Any] | None = None) -> Path:
    """A job's folder no process holds, last changed ``age`` seconds ago; ``owner``: its lock file says so."""
    import time

    folder = base / f".vis-export-job-{name}"
    folder.mkdir()
    (folder / "b.out").write_text("rendered")
    if owner is not None:
        (folder / ".owner").write_text(json.dumps(owner))
    for path in (folder / ".owner", folder):
        if path.exists():
            os.utime(path, (time.time() - age, time.time() - age))
    return folder


@pytest.mark.parametrize("where", ["here", "dask"])
def test_a_job_sweeps_the_folders_of_jobs_that_died_and_leaves_those_running(
    tmp_path: Path, cluster: str, where: str
) -> None:
    """A job killed outright (kill -9) cannot remove its folder: the next job
    writing there does, by the lock a running job holds on it."""
    import signal
    import socket

    out = tmp_path / "out"
    out.mkdir()
    dead, killed = _holding(out)
    live, running = _holding(out)
    try:
        dead.send_signal(signal.SIGKILL)
        dead.wait()
        leftovers = [
            killed,
            _left(out, "old", 7200),  # made by a version before the lock file
            _left(out, "gone", 60, {"host": socket.gethostname(), "pid": dead.pid}),  # its lock free
            _left(out, "elsewhere-old", 2 * 86400, {"host": "elsewhere.example", "pid": 1}),
        ]
        kept = [
            running,
            _left(out, "being-made", 10),  # no lock file yet
            _left(out, "elsewhere", 3600, {"host": "elsewhere.example", "pid": 1}),  # may run there
        ]
        assert all(folder.is_dir() for folder in leftovers + kept)
        outcome = convert([str(INPUT / "session.json")], "markdown", out, dask=cluster if where == "dask" else None)
        assert not outcome.failed and [p.name for p in outcome.written] == ["golden_session.md"]
        assert [folder.name for folder in leftovers if folder.exists()] == []
        assert all((folder / ("a.out" if folder == running else "b.out")).read_text() == "rendered" for folder in kept)
        assert sorted(p.name for p in out.iterdir()) == sorted(["golden_session.md", *(f.name for f in kept)])
    finally:
        for process in (dead, live):
            process.kill()
            process.communicate()  # and closes its pipe
