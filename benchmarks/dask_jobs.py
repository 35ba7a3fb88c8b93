"""Jobs on a local Dask cluster (``--dask local:2``) beside the same job in one
process, each run once as users run it (``vis-export`` in a process of its
own; the cluster's start is part of the time).

python -m benchmarks.dask_jobs            # 120 PDFs, 2,000 Markdown files, 96k blocks indexed
python -m benchmarks.dask_jobs --quick    # a tenth of each
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.generate import session
from benchmarks.harness import Result, table
from benchmarks.search import index_command, write_sessions

WORKERS = "local:2"


def _sessions(folder: Path, count: int, size: int) -> Path:
    folder.mkdir()
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


def _both(label: str, goal: str, here: list[str], there: list[str]) -> Result:
    anchor = _timed(here)
    ours = _timed(there)
    return Result(label, ours, "in-process", anchor, goal)


def run(scale: float = 1.0) -> list[Result]:
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        pdfs = _sessions(root / "pdf", round(120 * scale), 8_000)
        results.append(
            _both(
                f"{round(120 * scale)} sessions to PDF, {WORKERS}",
                "<= 0.625x",
                _convert(pdfs, "pdf", root / "pdf-here"),
                _convert(pdfs, "pdf", root / "pdf-dask", "--dask", WORKERS),
            )
        )
        small = _sessions(root / "md", round(2000 * scale), 1_500)
        results.append(
            _both(
                f"{round(2000 * scale)} small sessions to Markdown, {WORKERS}",
                "<= 1.5x",
                _convert(small, "markdown", root / "md-here"),
                _convert(small, "markdown", root / "md-dask", "--dask", WORKERS),
            )
        )
        (root / "blocks").mkdir()
        blocks = len(write_sessions(root / "blocks", round(96_000 * scale)))
        here = index_command(root / "blocks", root / "index-here", "tantivy")
        results.append(
            _both(
                f"index {blocks // 1000}k blocks (tantivy), {WORKERS}",
                "< 1x",
                here,
                [*index_command(root / "blocks", root / "index-dask", "tantivy"), "--dask", WORKERS],
            )
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dask_jobs", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a tenth of each job")
    args = parser.parse_args()
    print(table(run(0.1 if args.quick else 1.0)))


if __name__ == "__main__":
    main()
