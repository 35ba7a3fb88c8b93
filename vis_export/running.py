"""Who runs a job's work: the ``Runner`` a job is given (issue 23).

A job is work (a function of one unit: a source file, a part of a store)
and a sink that takes the results; the runner decides where the work runs
and hands the results back in the units' own order, so the sink, and with
it every count and line, is the same whoever ran the work. This module sits
below ``jobs/``, ``distributed/`` and ``searchindex/`` so that each can name
the protocol without importing another.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Protocol, TypeVar

U = TypeVar("U")
R = TypeVar("R")


class Runner(Protocol):
    """Runs ``work`` on each unit, yielding the results in the units' order
    (wherever and in whatever order the work itself ran). A result is yielded
    once its unit's work is done, so a sink that takes results as they come
    keeps no more than one in hand."""

    def map(self, work: Callable[[U], R], units: Iterable[U]) -> Iterator[R]: ...


class InProcessRunner:
    """This process, one unit after another: what a job runs without ``--dask``."""

    def map(self, work: Callable[[U], R], units: Iterable[U]) -> Iterator[R]:
        return (work(unit) for unit in units)
