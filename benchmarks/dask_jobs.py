"""Jobs on a local Dask cluster (``--dask local:2``) beside the same job in one
process, run as users run them (``vis-export`` in a process of its own; the
cluster's start is part of the time): the PDF job once, the shorter ones
several times, alternating, for the median of each.

A second anchor shows what the machine gives two processes at that moment:
two ``vis-export convert`` jobs at once, each on half of the sessions (no
Dask). On a machine shared with other work this is far from half the
in-process time, and no split of the work can beat it.

python -m benchmarks.dask_jobs            # 120 PDFs, 2,000 Markdown files, 96k blocks indexed
python -m benchmarks.dask_jobs --quick    # a tenth of each
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.harness import Result, table
from benchmarks.search import index_command, write_sessions
from corpus import session

WORKERS = "local:2"


def _sessions(folder: Path, count: int, size: int) -> Path:
    folder.mkdir(parents=True)
    for n in range(count):
        document = session(size, seed=n)
        document["id"] = f"s{n:05}"
        (folder / f"s{n:05}.json").write_text(json.dumps(document))
    return folder


def _timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def _convert(sources: Path, to: str, out: Path, *dask: str) -> list[str]:
    return [sys.executable, "-m", "vis_export", "convert", str(sources), "--to", to, "-o", str(out), *dask]


def _both(
    label: str, goal: str, here: list[str], there: list[str], outputs: tuple[Path, Path], runs: int = 1
) -> Result:
    """Each job ``runs`` times, alternating, each into an ``outputs`` folder made
    anew, and the median of each: a job of a second on a shared machine
    varies by a third from run to run."""
    anchor, ours = [], []
    for _ in range(runs):
        for output in outputs:
            shutil.rmtree(output, ignore_errors=True)
        anchor.append(_timed(here))
        ours.append(_timed(there))
    return Result(label, statistics.median(ours), "in-process", statistics.median(anchor), goal)


def _halves(sources: Path, command: Callable[[Path, int], list[str]]) -> float:
    """Two jobs at once, each on half of the files (``command(half, n)``): the
    parallelism the machine offers now, with no work shared between them."""
    files = sorted(sources.iterdir())
    for n, half in enumerate((files[::2], files[1::2])):
        (sources.parent / f"half{n}").mkdir()
        for file in half:
            (sources.parent / f"half{n}" / file.name).symlink_to(file)
    start = time.perf_counter()
    jobs = [
        subprocess.Popen(command(sources.parent / f"half{n}", n), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for n in range(2)
    ]
    for job in jobs:
        assert job.wait() == 0
    return time.perf_counter() - start


def run(scale: float = 1.0) -> list[Result]:
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for name, to, count, size, goal, runs in (
            ("sessions to PDF", "pdf", round(120 * scale), 8_000, "<= 0.625x", 1),
            ("small sessions to Markdown", "markdown", round(2000 * scale), 1_500, "<= 1.5x", 5),
        ):
            sources = _sessions(root / to / "all", count, size)
            label = f"{count} {name}, {WORKERS}" + (f", median of {runs}" if runs > 1 else "")
            found = _both(
                label,
                goal,
                _convert(sources, to, root / f"{to}-here"),
                _convert(sources, to, root / f"{to}-dask", "--dask", WORKERS),
                (root / f"{to}-here", root / f"{to}-dask"),
                runs,
            )
            halves = _halves(sources, lambda half, n, to=to: _convert(half, to, root / f"{to}-halves" / str(n)))
            results += [found, Result(label, found.ours, "2 processes on halves", halves, "report")]
        (root / "blocks").mkdir()
        blocks = len(write_sessions(root / "blocks", round(96_000 * scale)))
        label = f"index {blocks // 1000}k blocks (tantivy), {WORKERS}, median of 3"
        found = _both(
            label,
            "< 1x",
            index_command(root / "blocks", root / "index-here", "tantivy"),
            [*index_command(root / "blocks", root / "index-dask", "tantivy"), "--dask", WORKERS],
            (root / "index-here", root / "index-dask"),
            3,
        )
        halves = _halves(root / "blocks", lambda half, n: index_command(half, root / f"index-half{n}", "tantivy"))
        results += [found, Result(label, found.ours, "2 processes on halves", halves, "report")]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dask_jobs", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a tenth of each job")
    args = parser.parse_args()
    print(table(run(0.1 if args.quick else 1.0)))


if __name__ == "__main__":
    main()
