"""Timing and memory helpers: best-of-N wall time, peak traced memory, ratios."""

from __future__ import annotations

import gc
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass
class Result:
    path: str
    ours: float
    anchor_name: str
    anchor: float
    goal: str
    peak_mb: float | None = None
    unit: str = "ms"

    @property
    def ratio(self) -> float:
        return self.ours / self.anchor if self.anchor else float("inf")


def best_time(fn: Callable[[], object], repeat: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """The fastest of ``repeat`` runs, in seconds: the least disturbed by a noisy machine
    (``clock=time.process_time``: CPU time, which other processes on a shared machine disturb less)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        start = clock()
        fn()
        times.append(clock() - start)
    return min(times)


def cpu_medians(fns: Sequence[Callable[[], object]], repeat: int) -> list[float]:
    """The median CPU time (``time.process_time``) of each of ``fns``, in seconds,
    run in turn ``repeat`` times: a path and its anchor measured alike, in the
    same run. CPU time is far less disturbed than wall time by the other work
    on a shared machine, and the median less by an outlier than the best."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, found in zip(fns, times, strict=True):
            gc.collect()
            start = time.process_time()
            fn()
            found.append(time.process_time() - start)
    return [statistics.median(found) for found in times]


def peak_mb(fn: Callable[[], object]) -> float:
    """Peak memory Python allocated while ``fn`` ran, in MB."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def process_time(code: str, repeat: int) -> float:
    """Median wall time of a fresh interpreter running ``code``, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def table(results: list[Result]) -> str:
    header = f"{'path':<36} {'ours':>10} {'anchor':>10}  {'ratio':>6}  {'goal':<8} {'peak MB':>8}  anchor"
    lines = [header, "-" * len(header)]
    for r in results:
        peak = f"{r.peak_mb:8.1f}" if r.peak_mb is not None else f"{'-':>8}"
        lines.append(
            f"{r.path:<36} {_duration(r.ours)} {_duration(r.anchor)}  {r.ratio:5.2f}x  {r.goal:<8} "
            f"{peak}  {r.anchor_name}"
        )
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    if seconds < 0.001:
        return f"{seconds * 1e6:8.1f}µs"
    return f"{seconds * 1000:8.1f}ms"
