"""The ``Runner`` (``vis_export.running``) on a Dask cluster, local first.

A local cluster takes a second or so to start (processes that import Dask):
while it does, this process runs the first units itself, timing its pace at
them (``Pace``), and hands the rest to the workers once they are up, unless
it would finish them sooner than it can connect. A job done that way never
imports Dask. The results come back in the units' order, whoever ran them;
a unit's follow-ups (``Task.more``) are sent out as soon as its result is
in, and their results come right after it. This is the one place that paces
a job: ``convert`` and ``index`` are both tasks run here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from types import TracebackType
from typing import Any, Generic, TypeVar

from vis_export.distributed.cluster import Connecting, Pace, completed, local_workers, worker_count
from vis_export.distributed.tasks import task_result
from vis_export.running import Task

U = TypeVar("U")
R = TypeVar("R")


class DaskRunner:
    """Runs a job's tasks on the cluster at ``address`` (a scheduler's, or
    ``local[:N]``) within a ``with`` block, which stops a local cluster at its
    end. ``imports``: what the work imports, for local workers to import once."""

    def __init__(self, address: str, imports: Sequence[str] = ()):
        self.address, self.imports = address, tuple(imports)
        self._cluster: Connecting | None = None

    def __enter__(self) -> DaskRunner:
        self._cluster = Connecting(self.address, self.imports)  # a local cluster starts now
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        assert self._cluster is not None
        self._cluster.close()

    @property
    def cluster(self) -> Connecting:
        assert self._cluster is not None, "a DaskRunner runs within its with block"
        return self._cluster

    def workers(self) -> int:
        """How many workers the units are planned for (a scheduler's: asked, so connected)."""
        return local_workers(self.address) or worker_count(self.cluster.client())

    def map(self, work: Task[U, R], units: Iterable[U]) -> Iterator[R]:
        """The pace here is timed up to the next result asked for, so it counts
        what the job does with a result."""
        todo = deque(units)
        left, pace = sum(work.size(unit) for unit in todo), Pace()
        local = local_workers(self.address) is not None  # only a local cluster takes a while to start
        while local and todo and not self.cluster.handing_over(pace, left):
            unit = todo.popleft()
            size = work.size(unit)
            with pace.timing(size) as share:
                result = work(unit)
                more = work.follow_ups(unit, result)
                later = sum(work.size(next_unit) for next_unit in more)
                share[0] = 1 - later / size if size else 1  # the follow-ups' share is timed as they run
                todo.extendleft(reversed(more))
                left += later - size
                yield result
        if todo:
            yield from _Elsewhere(self.cluster.client(), self.address, work).run(todo)


@dataclass
class _Node(Generic[U, R]):
    """A unit sent out: its result once in, and the follow-ups that result asked for."""

    unit: U
    done: bool = False
    result: Any = None
    more: list[_Node[U, R]] = field(default_factory=list)


class _Elsewhere(Generic[U, R]):
    """The units left, on the workers."""

    def __init__(self, client: Any, address: str, work: Task[U, R]):
        self.client, self.address, self.work = client, address, work
        # Futures of what is shared: Dask gives each task their values only as its own arguments, not in a partial.
        self.sent = {key: client.scatter([value], broadcast=True)[0] for key, value in work.shared.items()}
        self.function = partial(work.function, **work.arguments, **work.sending(), on_worker=True)

    def _result(self, future: Any, unit: U) -> R:
        return task_result(self.client, future, self.address, partial(self.work, unit))

    def run(self, units: deque[U]) -> Iterator[R]:
        if self.work.more is None:  # results taken in order: each stays on its worker until then
            futures = deque(self.client.map(self.function, units, **self.sent, pure=False))
            for unit in units:
                yield self._result(futures.popleft(), unit)
            return
        # A task each, as its follow-ups will be: Dask schedules a map's tasks as a group.
        futures = deque(self.client.submit(self.function, unit, **self.sent, pure=False) for unit in units)
        order: deque[_Node[U, R]] = deque(_Node(unit) for unit in units)
        asked = {future.key: (future, node) for future, node in zip(futures, order, strict=True)}
        pending = set(futures)
        for future in completed(self.client, pending, self.address):
            node = asked.pop(future.key)[1]
            node.result, node.done = self._result(future, node.unit), True
            node.more = [_Node(unit) for unit in self.work.follow_ups(node.unit, node.result)]
            for follow_up in node.more:
                sent = self.client.submit(self.function, follow_up.unit, **self.sent, pure=False)
                asked[sent.key] = (sent, follow_up)
                pending.add(sent)
            while order and order[0].done:  # each result once those before it are in
                first = order.popleft()
                order.extendleft(reversed(first.more))
                yield first.result


__all__ = ["DaskRunner"]
