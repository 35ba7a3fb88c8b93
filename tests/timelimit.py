"""A hard time limit for tests that a regression could make hang."""

from __future__ import annotations

import resource
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Raise ``TimeoutError`` in the block after ``seconds`` (SIGALRM: main thread, POSIX),
    even inside a blocking ``open`` or ``read``, so the test fails instead of hanging."""

    def expire(*_: Any) -> None:
        raise TimeoutError(f"took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@contextmanager
def cpu_limit(seconds: float) -> Iterator[None]:
    """Fail the test when the block takes more than ``seconds`` of this thread's CPU. A bound on work is on its CPU:
    a wall-clock bound of 20 s around 4-6 CPU-s of work ran out on a loaded machine with nothing at fault. A hang
    (a loop that never ends, a blocking read) is still stopped, by a wall-clock limit ten times as long (two minutes
    at least), since the CPU check runs only at the block's end."""
    start = time.thread_time()
    with time_limit(max(120, int(seconds * 10))):
        yield
    took = time.thread_time() - start
    assert took < seconds, f"took {took:.2f} CPU-s, more than {seconds}"


def run_counting_cpu(
    command: list[str], timeout: float, **options: Any
) -> tuple[subprocess.CompletedProcess[Any], float]:
    """``command`` run to its end (its output captured), and the CPU seconds (user and system) it and the children
    it waited for took. A bound on a child's work is on its CPU: its wall time also grows while other processes hold
    the cores, and a bound on that failed on a loaded machine with nothing at fault. The count starts once ``Popen``
    has reaped the children that earlier tests left running (it does so first), whose CPU is not this command's."""
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **options) as process:
        start = _children_cpu()
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    return subprocess.CompletedProcess(command, process.returncode, out, err), _children_cpu() - start


def _children_cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime
