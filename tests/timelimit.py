"""A hard time limit for tests that a regression could make hang."""

from __future__ import annotations

import resource
import signal
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


def children_cpu() -> float:
    """CPU seconds (user and system) of the children this process has waited for. A bound on a child's work is
    on its CPU, the difference of two readings around it: its wall time also grows while other processes hold
    the cores, and a bound on that failed on a loaded machine with nothing at fault."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime
