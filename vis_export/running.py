"""Who runs a job's work: the ``Runner`` a job is given (issue 23).

A job is work (a ``Task``: a function of one unit, such as a source file or a
part of a store) and sinks that take the results (files, standard output, an
index); the runner decides where the work runs and hands the results back in
the units' own order, so the sinks, and with them every count and line, are
the same whoever ran the work. The job is given its runner (``InProcessRunner``,
or ``distributed.running.DaskRunner`` for ``--dask``) and never asks which.

A unit's result may ask for more units (``Task.more``: a file read, then one
task per session to render): they run after it, and their results come right
after its own, so "source order" holds for them too. This module sits below
``jobs/``, ``distributed/`` and ``searchindex/`` so that each can name the
protocol without importing another.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

U = TypeVar("U")
R = TypeVar("R")


@dataclass(frozen=True)
class Task(Generic[U, R]):
    """Work on units: ``function(unit, **arguments, **shared)``. ``function`` is
    a module's own (a runner elsewhere sends it by name), and is told
    ``on_worker=True`` when it runs in another process (it checks there that
    it sees what the job needs, and keeps nothing for this process).

    ``shared``: arguments that go to each worker once, not with each unit;
    ``here``: arguments only this process passes (what cannot leave it: a
    budget of memory, a callback); ``size``: a unit's weight (bytes of
    sources) for a runner's pace; ``more``: the units a result asks for next
    (their weights count in the unit's own: what is left of it is the
    unit's share); ``sending``: arguments known once the work first leaves
    this process (a folder made only then), added to ``arguments`` there."""

    function: Callable[..., R]
    arguments: Mapping[str, Any] = field(default_factory=dict)
    shared: Mapping[str, Any] = field(default_factory=dict)
    here: Mapping[str, Any] = field(default_factory=dict)
    size: Callable[[U], float] = lambda unit: 1
    more: Callable[[U, R], Sequence[U]] | None = None
    sending: Callable[[], Mapping[str, Any]] = dict

    def __call__(self, unit: U) -> R:
        """The work on ``unit`` in this process."""
        return self.function(unit, **self.arguments, **self.shared, **self.here)

    def follow_ups(self, unit: U, result: R) -> Sequence[U]:
        return () if self.more is None else self.more(unit, result)


class Runner(Protocol):
    """Runs a task on each unit, yielding the results in the units' order (each
    unit's follow-ups, ``Task.more``, right after it), wherever and in
    whatever order the work itself ran. A result is yielded once its unit's
    work is done, so a sink that takes results as they come keeps no more
    than one in hand."""

    def workers(self) -> int:
        """How many units run at once: what a job splits its sources for."""

    def map(self, work: Task[U, R], units: Iterable[U]) -> Iterator[R]: ...


class InProcessRunner:
    """This process, one unit after another: what a job runs without ``--dask``."""

    def workers(self) -> int:
        return 1

    def map(self, work: Task[U, R], units: Iterable[U]) -> Iterator[R]:
        todo = deque(units)
        while todo:
            unit = todo.popleft()
            result = work(unit)
            todo.extendleft(reversed(work.follow_ups(unit, result)))
            yield result


def plain(function: Callable[[U], R]) -> Task[U, R]:
    """``function`` as a task with nothing else to say (one unit at a time, no follow-ups)."""
    return Task(function)


__all__ = ["InProcessRunner", "Runner", "Task", "plain"]
