"""Load + validate (``read_bytes``) beside ``json.loads`` of the same bytes, in CPU time.

python -m benchmarks.load            # 1 message to 16 MB
python -m benchmarks.load --quick    # up to 1 MB

Each size is read in turn by both, several times (``cpu_medians``), and the
median of each is reported with the machine's load average: on a shared
machine only the ratio, measured in the same run, compares across runs.
"""

from __future__ import annotations

import json
import os
import sys
from functools import partial

from benchmarks.harness import Result, cpu_medians, peak_mb, table
from corpus import session_bytes

SIZES = {"1 message": 1, "100 KB": 100_000, "1 MB": 1_000_000, "16 MB": 16_000_000}


def run(sizes: dict[str, int]) -> list[Result]:
    from vis_export.sources.files import read_bytes

    results = []
    for label, size in sizes.items():
        data = session_bytes(size)
        (loaded,) = read_bytes(data, "bench", "bench")
        assert loaded.ok, loaded.problems
        # About a second a size; a single message is timed a hundred reads at a time.
        batch = 100 if size < 10_000 else 1
        repeat = 9 if size > 2_000_000 else 31

        def ours(data: bytes = data, batch: int = batch) -> None:
            for _ in range(batch):
                read_bytes(data, "bench", "bench")

        def anchor(data: bytes = data, batch: int = batch) -> None:
            for _ in range(batch):
                json.loads(data)

        mine, theirs = (seconds / batch for seconds in cpu_medians([ours, anchor], repeat))
        peak = peak_mb(partial(read_bytes, data, "bench", "bench"))
        results.append(
            Result(f"load+validate {label} ({len(data) / 1e6:.1f} MB)", mine, "json.loads", theirs, _goal(size), peak)
        )
    return results


def _goal(size: int) -> str:
    """Issue 26's for a large session; smaller ones carry a fixed cost a call."""
    return "<= 1.5x" if size > 2_000_000 else "<= 3x"


def load_average() -> str:
    return "load average " + ", ".join(f"{figure:.1f}" for figure in os.getloadavg())


if __name__ == "__main__":
    sizes = {k: v for k, v in SIZES.items() if v <= 1_000_000} if "--quick" in sys.argv else SIZES
    print(table(run(sizes)))
    print(f"CPU time, median; {load_average()}")
