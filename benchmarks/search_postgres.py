"""The PostgreSQL engine beside tantivy on the same blocks, in one run: our job
into a database against our job into a tantivy folder, two jobs at once on
disjoint halves against one job on all, an unchanged rerun against the full
job, and query latency with snippets (phrases included). CPU time is given of
the job's process and of the server (every process of it, ``Server.cpu``),
which the other work on a shared machine disturbs less than wall time.

The server is started the way the tests start theirs (``tests/pgserver.py``:
a temporary cluster on a free port of 127.0.0.1, ``fsync`` off), so figures
are of the engine, not of a disk. Without PostgreSQL or psycopg the benchmark
is skipped, saying why.

python -m benchmarks.search_postgres [BLOCKS]   # this benchmark alone
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks.harness import Result, table
from benchmarks.search import WORDLESS_PHRASES, index_command, query_p95, timed_job, write_sessions

if TYPE_CHECKING:
    from tests.pgserver import Server


def run(blocks: int) -> tuple[list[Result], str]:
    from tests.pgserver import running, unavailable

    reason = unavailable()
    if reason is not None:
        return [], f"search (postgresql): skipped: {reason}"

    def database(server: Server, name: str) -> str:
        server.sql(f"CREATE DATABASE {name}")
        return server.uri(name)

    with running() as server, tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "sources").mkdir()
        texts = write_sessions(root / "sources", blocks)
        halves = _halves(root / "sources", root)
        tantivy_job = timed_job(root / "sources", root / "tantivy", "tantivy")
        tantivy = tantivy_job.wall
        full_index = database(server, "bench_full")
        before = server.cpu()
        full_job = timed_job(root / "sources", full_index, None)
        full = full_job.wall
        full_server = _settled(server) - before
        rerun = timed_job(root / "sources", full_index, None)
        rerun_server = _settled(server) - before - full_server
        p95 = query_p95(full_index)
        wordless = query_p95(full_index, WORDLESS_PHRASES)
        wordless_tantivy = query_p95(root / "tantivy", WORDLESS_PHRASES)
        both = _at_once(halves, database(server, "bench_halves"))
    thousands = f"{len(texts) // 1000}k"
    label = f"{thousands} blocks"
    results = [
        Result(f"index {label} (postgresql)", full, "tantivy job", tantivy, "<= 2x"),
        Result(
            f"index {label} (postgresql), CPU of job and server",
            full_job.cpu + full_server,
            "tantivy job, CPU",
            tantivy_job.cpu,
            "<= 2x",
        ),
        Result(f"2 jobs on halves {thousands} (postgresql)", both, "one job, all", full, "<= 0.77x"),
        Result(f"no-op rerun {label} (postgresql)", rerun.wall, "full index", full, "<= 0.02x"),
        Result(f"no-op rerun {label} (postgresql), CPU", rerun.cpu, "full index, CPU", full_job.cpu, "<= 0.02x"),
    ]
    line = (
        f"search (postgresql, {label}, load average {os.getloadavg()[0]:.1f}): throughput "
        f"{len(texts) / full:,.0f} blocks/s vs the tantivy job {len(texts) / tantivy:,.0f} blocks/s "
        f"({tantivy / full:.2f}x, goal >= 0.5x); CPU: the job {full_job.cpu:.2f} s, the server {full_server:.2f} s, "
        f"the tantivy job {tantivy_job.cpu:.2f} s ({tantivy_job.cpu / (full_job.cpu + full_server):.2f}x); "
        f"unchanged rerun {rerun.cpu:.3f} CPU-s (the server {rerun_server:.3f}); two jobs on halves at once "
        f"{len(texts) / both:,.0f} blocks/s ({full / both:.2f}x one job, goal >= 1.3x); unchanged rerun "
        f"{rerun.wall / full:.1%} of the full job, {rerun.cpu / full_job.cpu:.1%} in CPU (goal <= 2%); "
        f"query p95 with snippets {p95 * 1000:.2f} ms "
        f"(goal <= 20 ms); phrases with no word ({' '.join(WORDLESS_PHRASES)}) p95 {wordless * 1000:.1f} ms "
        f"(tantivy, which checks candidates in the client: {wordless_tantivy * 1000:.1f} ms)"
    )
    return results, line


def _settled(server: Server) -> float:
    """The server's CPU time once the job's connection has ended (its process is then counted as ended)."""
    time.sleep(0.5)
    return server.cpu()


def _halves(sources: Path, root: Path) -> tuple[Path, Path]:
    """The session files split in two folders (every other file), as two machines would hold them."""
    halves = (root / "half_a", root / "half_b")
    for half in halves:
        half.mkdir()
    for n, path in enumerate(sorted(sources.iterdir())):
        (halves[n % 2] / path.name).hardlink_to(path)
    return halves


def _at_once(halves: tuple[Path, Path], index: str) -> float:
    """Wall time of one job per half, started together, until both are done."""
    start = time.perf_counter()
    jobs = [subprocess.Popen(index_command(half, index, None), stderr=subprocess.PIPE) for half in halves]
    for job in jobs:
        _, err = job.communicate()
        if job.returncode:
            raise RuntimeError(f"index job failed: {err.decode(errors='replace')}")
    return time.perf_counter() - start


if __name__ == "__main__":
    found, summary = run(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
    print(table(found))
    print(summary)
