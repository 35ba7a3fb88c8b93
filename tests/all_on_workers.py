"""A ``--dask local:N`` job whose every unit goes to the workers.

Such a job works through its units in this process while its local cluster
starts, and a small one (every test's) is done before the cluster is up.
Here the job waits for the cluster instead, so that what only workers do is
tested whatever the job's size: ``ClusterProcess.answered`` replaced with
``waiting`` in a test, or ``python tests/all_on_workers.py ARGS...`` for the
command line.
"""

from __future__ import annotations

import sys

from vis_export.distributed.local import ClusterProcess


def waiting(cluster: ClusterProcess) -> bool:
    """``answered``, once the cluster has: it is up, or failed to start."""
    return bool(cluster.started())


if __name__ == "__main__":
    ClusterProcess.answered = waiting  # type: ignore[method-assign]
    from vis_export.cli import main

    main(sys.argv[1:])
