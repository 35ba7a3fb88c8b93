"""A cluster of ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1,
as on real machines: a worker killed (SIGKILL) mid-job, and a worker that does
not see the job's files (it runs in a mount namespace of its own, where an
empty file system hides the sources or the output folder, as on a machine
without the shared file system)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import INPUT

from corpus import session
from vis_export.jobs.conversion import convert

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.slow
DASK = str(Path(sys.executable).parent / "dask")


def _address_in(file: Path, process: subprocess.Popen[bytes], log: Path) -> str:
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        try:
            return str(json.loads(file.read_text())["address"])
        except (OSError, ValueError, KeyError):  # not written yet, or half written
            time.sleep(0.05)
    raise AssertionError(f"the dask scheduler did not start:\n{log.read_text()}")


@contextmanager
def scheduler() -> Iterator[str]:
    with scheduler_process() as (address, _):
        yield address


@contextmanager
def scheduler_process() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A scheduler that picks its own port and says which in its scheduler
    file: a port chosen here and bound later can be taken in between, and a
    client connecting meanwhile may reach whatever took it."""
    folder = Path(tempfile.mkdtemp(prefix="vis-scheduler-"))
    file, log = folder / "scheduler.json", folder / "scheduler.log"
    with log.open("wb") as written:
        process = subprocess.Popen(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(file)],
            stdout=subprocess.DEVNULL,
            stderr=written,
        )
    try:
        yield _address_in(file, process, log), process
    finally:
        process.kill()
        process.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def workers(address: str, count: int, hidden: Path | None = None) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` workers without a nanny (a killed one stays dead); ``hidden``
    is a folder the workers see empty."""
    command = [DASK, "worker", address, "--nthreads", "1", "--no-nanny", "--host", "127.0.0.1", "--no-dashboard"]
    if hidden is not None:
        script = f"mount -t tmpfs none {hidden} && exec {' '.join(command)}"
        command = ["unshare", "--mount", "sh", "-c", script]
    started = [
        subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        for _ in range(count)
    ]
    try:
        with distributed.Client(address, timeout=30) as client:
            client.wait_for_workers(count, timeout=60)
        yield started
    finally:
        for process in started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


def kill_a_busy_worker(address: str) -> None:
    """SIGKILL to a worker that has tasks of the job: it dies mid-job."""
    with distributed.Client(address, timeout=30) as client:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            busy = [worker for worker, tasks in client.processing().items() if tasks]
            if busy:
                os.kill(client.run(os.getpid, workers=busy[:1])[busy[0]], signal.SIGKILL)
                return
            time.sleep(0.01)
    raise AssertionError("no worker ever had a task")


# The command line's main in a child, its imports first: the last line it writes is what it took, after them.
TIMED_MAIN = """
import json, sys, time
import distributed, vis_export.cli
{setup}
start = time.monotonic()
try:
    vis_export.cli.main(sys.argv[1:])
finally:
    peak = [line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM')]
    print(json.dumps({{"seconds": time.monotonic() - start, "peak_kb": int(peak[0])}}))
"""


def timed_main(arguments: list[str], setup: str = "") -> tuple[subprocess.CompletedProcess[str], dict[str, float]]:
    """The command line run with ``arguments`` (after ``setup``, code), and the wall seconds its ``main`` took and
    the most memory the process held (kB). Python's start and the imports of Dask and of the command line are not
    in those seconds: a bound on how long a job waits (a connect, a cluster without workers) is then on the wait, not
    on seconds of CPU that a loaded machine stretches several times (a 20-s bound on the whole run failed so)."""
    code = TIMED_MAIN.format(setup=setup)
    done = subprocess.run([sys.executable, "-c", code, *arguments], capture_output=True, text=True, timeout=120)
    return done, json.loads(done.stdout.splitlines()[-1])


def convert_command(sources: Path, to: str, out: Path, address: str) -> list[str]:
    return [sys.executable, "-m", "vis_export", "convert", str(sources), "--to", to, "-o", str(out), "--dask", address]


def _sources(folder: Path, count: int) -> Path:
    folder.mkdir()
    for n in range(count):
        document = session(60_000, seed=n)
        document["id"] = f"s{n:02}"
        (folder / f"s{n:02}.json").write_text(json.dumps(document))
    return folder


def test_a_worker_killed_mid_job_has_its_tasks_run_again(tmp_path: Path) -> None:
    sources = _sources(tmp_path / "sources", 24)
    expected = convert([str(sources)], "html", tmp_path / "expected")
    assert not expected.failed
    out = tmp_path / "out"
    with scheduler() as address, workers(address, 2):
        job = subprocess.Popen(convert_command(sources, "html", out, address), stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120  # until the workers have rendered a few files into the job's folder
        while len(list(tmp_path.glob(".vis-export-job-*/*.out"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        kill_a_busy_worker(address)
        assert job.poll() is None, "the job ended before a worker could be killed"
        _, stderr = job.communicate(timeout=180)
    assert job.returncode == 0, stderr
    assert stderr == ""
    made = {p.name: p.read_bytes() for p in out.iterdir()}
    assert made == {p.name: p.read_bytes() for p in (tmp_path / "expected").iterdir()}  # nothing half-written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["expected", "out", "sources"]  # the job's folder is gone


@pytest.mark.parametrize("to", ["html", "index"])
def test_a_scheduler_lost_mid_job_is_one_line(tmp_path: Path, to: str) -> None:
    sources = _sources(tmp_path / "sources", 24)
    out = tmp_path / "out"
    with scheduler_process() as (address, process), workers(address, 2):
        command = convert_command(sources, to, out, address)
        if to == "index":
            command = [
                sys.executable,
                "-m",
                "vis_export",
                "index",
                str(sources),
                "--index",
                str(out),
                "--dask",
                address,
            ]
        job = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        kill_a_busy_worker(address)  # once a task runs: the job is under way
        process.kill()
        _, stderr = job.communicate(timeout=120)
    assert job.returncode == 1
    assert stderr == f"vis-export: lost the connection to the Dask scheduler at {address} mid-job\n"
    if to == "html":
        assert sorted(p.name for p in tmp_path.iterdir()) == ["sources"]  # nothing half-written, no job folder


def _blind_job(tmp_path: Path, hidden: Path, sources: Path, out: Path) -> subprocess.CompletedProcess[str]:
    if subprocess.run(["unshare", "--mount", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare --mount is not permitted here (it needs CAP_SYS_ADMIN)")
    with scheduler() as address, workers(address, 1, hidden):
        # The deadline is the wait for the job to end (a job that hangs); no bound on how long it took, which
        # the load stretches: it fails at its first task.
        return subprocess.run(convert_command(sources, "md", out, address), capture_output=True, text=True, timeout=120)


def test_a_worker_that_cannot_see_a_source_is_named(tmp_path: Path) -> None:
    sources = _sources(tmp_path / "sources", 2)
    done = _blind_job(tmp_path, sources, sources, tmp_path / "out")
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("vis-export: the Dask worker tcp://127.0.0.1:") and f"cannot read {sources}" in line
    assert "same path on every worker" in line


def test_a_worker_that_cannot_see_the_output_folder_is_named(tmp_path: Path) -> None:
    shown = tmp_path / "shown"
    shown.mkdir()
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    sources = _sources(shown / "sources", 2)
    done = _blind_job(tmp_path, hidden, sources, hidden / "out")
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("vis-export: the Dask worker tcp://127.0.0.1:")
    assert f"cannot see the output folder {hidden}:" in line
    assert list(hidden.iterdir()) == []  # the job's folder is gone, nothing half-written


def test_a_cluster_without_workers_fails_in_bounded_time(tmp_path: Path) -> None:
    with scheduler() as address:
        done, took = timed_main(
            ["convert", str(INPUT), "--to", "md", "-o", str(tmp_path / "o"), "--dask", address],
            "from vis_export.distributed import cluster; cluster.NO_WORKERS_TIMEOUT = 2",
        )
    assert done.returncode == 1 and took["seconds"] < 2 + 10, (took, done.stderr)  # its wait, and a connect
    assert done.stderr.strip() == f"vis-export: the Dask scheduler at {address} has no workers (waited 2 s)"


def test_an_index_job_whose_worker_is_killed_gives_the_same_hits(tmp_path: Path) -> None:
    from vis_export.jobs.indexing import index_sources
    from vis_export.searchindex import search

    sources = _sources(tmp_path / "sources", 30)
    index_sources([str(sources)], tmp_path / "expected")
    with scheduler() as address, workers(address, 2):
        job = subprocess.Popen(
            [sys.executable, "-m", "vis_export", "index", str(sources), "--index", str(tmp_path / "idx")]
            + ["--dask", address],
            stderr=subprocess.PIPE,
            text=True,
        )
        kill_a_busy_worker(address)
        assert job.poll() is None, "the job ended before a worker could be killed"
        _, stderr = job.communicate(timeout=180)
    assert job.returncode == 0, stderr
    assert stderr.strip() == "30 added, 0 updated, 0 unchanged"
    for query in ("config", "parse_config", '"def parse_config"', "toml"):
        found = {(hit.session_id, hit.block_id) for hit in search(query, tmp_path / "idx", limit=10_000)}
        assert found == {(hit.session_id, hit.block_id) for hit in search(query, tmp_path / "expected", limit=10_000)}
        assert found


def test_the_folder_of_a_job_killed_outright_goes_with_the_next_job(tmp_path: Path) -> None:
    """kill -9 gives the job no chance to remove its folder of rendered files:
    the next job writing to that output folder does."""
    sources = _sources(tmp_path / "sources", 24)
    out = tmp_path / "out"
    out.mkdir()
    with scheduler() as address, workers(address, 1):
        job = subprocess.Popen(convert_command(sources, "html", out, address), stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120  # until a worker has rendered files into the job's folder
        while len(list(out.glob(".vis-export-job-*/*.out"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        job.send_signal(signal.SIGKILL)
        job.wait(timeout=30)
    (left,) = out.glob(".vis-export-job-*")
    assert len(list(left.glob("*.out"))) >= 2
    outcome = convert([str(INPUT / "session.json")], "markdown", out)
    assert not outcome.failed
    assert sorted(p.name for p in out.iterdir()) == ["golden_session.md"]
