"""The runner a job is given: this process, or a Dask cluster's workers.

The one place that turns ``--dask`` (an address, or none) into a ``Runner``;
a job takes the runner and never asks which it is.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from vis_export.running import InProcessRunner, Runner


@contextmanager
def runner_for(dask: str | None, imports: Sequence[str] = ()) -> Iterator[Runner]:
    """``InProcessRunner`` without ``dask``, else a ``DaskRunner`` on that
    cluster (a scheduler's address or ``local[:N]``; ``imports``: what the
    job's work imports, for local workers to import once as they start)."""
    if dask is None:
        yield InProcessRunner()
        return
    from vis_export.distributed.running import DaskRunner

    with DaskRunner(dask, imports) as runner:
        yield runner
