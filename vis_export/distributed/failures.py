"""What both ends of a Dask job share, below them: how a failure reads
(``DaskFailure``, one line), how long a connection may take, and Dask's own
log lines silenced. ``cluster`` (which starts a ``local`` cluster) and
``local`` (a local cluster's own process) both import it; neither imports
the other at run time."""

from __future__ import annotations

import logging

from vis_export.errors import VisExportError

CONNECT_TIMEOUT = 5.0  # seconds to reach a scheduler and hear its greeting


class DaskFailure(VisExportError):
    """The cluster cannot run the job: one line for a person."""


def quiet() -> None:
    """No log lines from Dask on stderr (a lost worker, a task run again): what
    the job must say, it says in its own lines. Dask's configuration gives its
    loggers levels of their own, so each is set."""
    for name in ["distributed", "tornado", *logging.root.manager.loggerDict]:
        if name.split(".")[0] in ("distributed", "tornado"):
            logging.getLogger(name).setLevel(logging.CRITICAL)


def reason(error: BaseException) -> str:
    return str(error).split("\n", 1)[0] or type(error).__name__
