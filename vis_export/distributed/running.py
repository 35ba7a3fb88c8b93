"""The ``Runner`` (``vis_export.running``) on a Dask cluster, local first.

A local cluster takes a second or so to start (processes that import Dask):
while it does, this process runs the first units itself, timing its pace at
them (``Pace``), and hands the rest to the workers once they are up, unless
it would finish them sooner than it can connect. A job done that way never
imports Dask. The results come back in the units' order, whoever ran them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from functools import partial
from types import TracebackType
from typing import Any, TypeVar

from vis_export.distributed.cluster import Connecting, Pace, local_workers, worker_count
from vis_export.distributed.tasks import task_result

U = TypeVar("U")
R = TypeVar("R")


class DaskRunner:
    """Runs a job's work on the cluster at ``address`` (a scheduler's, or
    ``local[:N]``) within a ``with`` block, which stops a local cluster at its
    end. ``imports``: what the work imports, for local workers to import once;
    ``size``: a unit's weight (bytes of sources) for this process's pace.

    The work is a task of ``distributed.tasks``: run here, it is called with
    ``checked=False`` (a source this process cannot read is a line, not a
    worker that cannot see it)."""

    def __init__(self, address: str, imports: Sequence[str] = (), size: Callable[[Any], int] = lambda unit: 1):
        self.address, self.imports, self.size = address, tuple(imports), size
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

    def map(
        self, work: Callable[..., R], units: Iterable[U], shared: Mapping[str, Any] | None = None
    ) -> Generator[R, None, None]:
        """``work(unit, **shared)`` for each unit, in order; ``shared`` goes to
        each worker once, not with each unit. The pace here is timed up to the
        next result asked for, so it counts what the job does with a result."""
        units = list(units)
        shared = dict(shared or {})
        sizes = [self.size(unit) for unit in units]
        first, left, pace = 0, sum(sizes), Pace()
        local = local_workers(self.address) is not None  # only a local cluster takes a while to start
        while local and first < len(units) and not self.cluster.handing_over(pace, left):
            with pace.timing(sizes[first]):
                yield work(units[first], **shared, checked=False)
            left -= sizes[first]
            first += 1
        if first == len(units):
            return
        client = self.cluster.client()
        sent = {key: client.scatter([value], broadcast=True)[0] for key, value in shared.items()}
        rest = units[first:]
        futures = deque(client.map(work, rest, **sent, pure=False))
        here = partial(work, **shared)  # a task run here (``task_result``)
        for unit in rest:
            yield task_result(client, futures.popleft(), self.address, (here, unit))  # let each go once taken
