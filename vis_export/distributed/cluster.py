"""A Dask cluster to run a job on: a running scheduler, or local worker processes.

Everything here is bounded in time: a scheduler that cannot be reached, a
cluster without workers, or one that loses all of them mid-job is one line
(``DaskFailure``) within seconds, never a job that waits forever.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

LOCAL = "local"
CONNECT_TIMEOUT = 5.0  # seconds to reach a scheduler
NO_WORKERS_TIMEOUT = 30.0  # seconds a job waits with no worker at all
MOST_LOCAL_WORKERS = 512


class DaskFailure(Exception):
    """The cluster cannot run the job: one line for a person."""


_SCHEDULER = re.compile(r"(?:(?:tcp|tls|ws|wss|ucx)://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):\d{1,5}")


def check_address(value: str) -> str:
    """``local``, ``local:N`` or a scheduler's ``[tcp://]HOST:PORT``; ``ValueError``
    says what is wrong (checked before Dask is loaded, which takes a while)."""
    if value == LOCAL or value.startswith(LOCAL + ":"):
        count = value[len(LOCAL) + 1 :]
        if value != LOCAL and not (count.isdigit() and 1 <= int(count) <= MOST_LOCAL_WORKERS):
            raise ValueError(f"{value!r}: local:N takes a number of worker processes from 1 to {MOST_LOCAL_WORKERS}")
        return value
    if not _SCHEDULER.fullmatch(value) or not 0 < int(value.rsplit(":", 1)[1]) < 65536:
        raise ValueError(f"{value!r} is not a scheduler address (tcp://HOST:PORT) nor local[:N]")
    return value


def local_workers(address: str) -> int | None:
    """How many local worker processes ``address`` asks for (``None``: a scheduler's address)."""
    if address != LOCAL and not address.startswith(LOCAL + ":"):
        return None
    return int(address[len(LOCAL) + 1 :] or os.cpu_count() or 1)


@contextmanager
def dask_client(address: str, preload: Sequence[str] = ()) -> Iterator[Any]:
    """A client of the cluster ``address`` names (see ``check_address``), with at
    least one worker; a local cluster is stopped when the job ends. Its workers
    have the modules of ``preload`` imported already (see ``_local_cluster``)."""
    from vis_export.extras import require

    library: Any = require("distributed", "--dask")  # untyped

    check_address(address)
    _quiet()
    count = local_workers(address)
    cluster = None if count is None else _local_cluster(library, count, preload)
    try:
        try:
            if cluster is None:
                _probe(library, address)
            client = library.Client(cluster or address, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except Exception as error:  # noqa: BLE001 - OSError, TimeoutError, and what an odd address raises
            raise DaskFailure(f"cannot reach the Dask scheduler at {address}: {_reason(error)}") from None
        try:
            try:
                client.wait_for_workers(1, timeout=NO_WORKERS_TIMEOUT)
            except TimeoutError:
                raise DaskFailure(
                    f"the Dask scheduler at {address} has no workers (waited {NO_WORKERS_TIMEOUT:g} s)"
                ) from None
            yield client
        finally:
            client.close(timeout=CONNECT_TIMEOUT)
    finally:
        if cluster is not None:
            cluster.close(timeout=CONNECT_TIMEOUT)


# A local cluster runs one job: the worker's statistical profiler (it samples
# the task's stack every 10 ms: a deep one, WeasyPrint's, costs 5% of the
# job), work stealing (the scheduler queues tasks and hands each to the first
# free worker) and frequent monitoring are overhead there, on the same cores.
_LOCAL_SETTINGS = {
    "distributed.worker.profile.enabled": False,
    "distributed.scheduler.work-stealing": False,
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
}


def _local_cluster(library: Any, count: int, preload: Sequence[str]) -> Any:
    """Local worker processes forked from one process that imported Dask and
    ``preload`` once (``forkserver``), where the platform has it: started
    the usual way (``spawn``), each worker imports them itself, and on a
    small machine those imports (half a second each for a PDF job) compete
    with the job for its cores."""
    import multiprocessing

    import dask

    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    with dask.config.set({**_LOCAL_SETTINGS, "distributed.worker.multiprocessing-method": method}):
        if method == "forkserver":
            context = library.utils.get_mp_context()  # Dask sets its own preload list once
            context.set_forkserver_preload(["distributed", *_importable(preload)])
        return library.LocalCluster(
            n_workers=count,
            threads_per_worker=1,
            processes=True,
            dashboard_address="127.0.0.1:0",  # the scheduler serves HTTP anyway: a free port, not 8787
            silence_logs=logging.CRITICAL,
            host="127.0.0.1",
        )


def _importable(modules: Sequence[str]) -> list[str]:
    """The modules the workers' process may import. Any error but ``ImportError``
    stops that process, and every worker with it: a module of another package
    (a plugin format's ``imports`` may name one that fails) is imported here
    first, and one that fails is left to the tasks that need it, which say what
    is wrong. vis-export's own raise no other error (``pdf_preload``), and are
    not imported here in vain (a Typst job needs no WeasyPrint)."""
    import importlib

    found = []
    for name in modules:
        if not name.startswith("vis_export."):
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - whatever it raises, its tasks raise too
                continue
        found.append(name)
    return found


class Connecting:
    """``dask_client`` entered on a thread of its own: a local cluster takes a
    second or two to start (processes that import Dask), which the job need
    not spend waiting (see ``distributed.conversion``)."""

    def __init__(self, address: str, preload: Sequence[str] = ()):
        from vis_export.extras import require_installed

        require_installed("distributed", "--dask")  # said at once, not after work
        self.address = address
        self._context = dask_client(address, preload)
        self._client: Any = None
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._enter, name="vis-export dask connect", daemon=True)
        self._thread.start()

    def _enter(self) -> None:
        try:
            self._client = self._context.__enter__()
        except BaseException as failure:  # noqa: BLE001 - raised again by ``client``
            self._failure = failure

    @property
    def ready(self) -> bool:
        return not self._thread.is_alive()

    def client(self) -> Any:
        """The client, once connected; the connection's failure if it failed."""
        self._thread.join()
        if self._failure is not None:
            raise self._failure
        return self._client

    def close(self) -> None:
        self._thread.join()
        if self._client is not None:
            self._context.__exit__(None, None, None)


def _probe(library: Any, address: str) -> None:
    """Connects once and hangs up: a failure other than a timeout (``tls://``
    without Dask's TLS settings, ``ucx://`` without its library) raised by
    ``Client`` leaves a half-made client that prints a traceback ten seconds
    later, when it is collected; raised here, it is just the error."""
    import asyncio

    connect: Any = library.comm.connect  # untyped

    async def probe() -> None:
        arguments = library.Security().get_connection_args("client")
        comm = await connect(address, timeout=CONNECT_TIMEOUT, **arguments)
        await comm.close()

    asyncio.run(probe())


def _quiet() -> None:
    """No log lines from Dask on stderr (a lost worker, a task run again): what
    the job must say, it says in its own lines. Dask's configuration gives its
    loggers levels of their own, so each is set."""
    for name in ["distributed", "tornado", *logging.root.manager.loggerDict]:
        if name.split(".")[0] in ("distributed", "tornado"):
            logging.getLogger(name).setLevel(logging.CRITICAL)


def worker_count(client: Any) -> int:
    return max(1, len(client.scheduler_info(n_workers=-1)["workers"]))


def completed(client: Any, pending: set[Any], address: str) -> Iterator[Any]:
    """Each future of ``pending`` as it finishes (its result or failure is the
    caller's to take); the caller may add futures to ``pending`` meanwhile.

    A cluster left without any worker for ``NO_WORKERS_TIMEOUT`` fails the job
    instead of waiting for workers that may never come back; a task that
    killed every worker it ran on (``allowed-failures``) fails it too."""
    import time

    from vis_export.extras import require

    wait: Any = require("distributed", "--dask").wait  # untyped

    alone_since: float | None = None
    while pending:
        try:
            with client.as_current():
                done, _ = wait(list(pending), timeout=1.0, return_when="FIRST_COMPLETED")
        except TimeoutError:
            if client.scheduler_info(n_workers=-1)["workers"]:
                alone_since = None
            elif alone_since is None:
                alone_since = time.monotonic()
            elif time.monotonic() - alone_since > NO_WORKERS_TIMEOUT:
                raise DaskFailure(
                    f"the Dask scheduler at {address} has had no workers for {NO_WORKERS_TIMEOUT:g} s"
                ) from None
            continue
        pending.difference_update(done)
        yield from done


def result(client: Any, future: Any, address: str) -> Any:
    """The future's result, waited for as ``completed`` waits; a task that kept
    killing workers is one line."""
    from distributed import KilledWorker

    for _ in completed(client, {future}, address):
        pass
    try:
        return future.result()
    except KilledWorker:
        raise DaskFailure(
            f"a task of this job was running on each Dask worker that died ({address}); "
            "the job stops rather than kill more (see the workers' logs)"
        ) from None


def _reason(error: BaseException) -> str:
    return str(error).split("\n", 1)[0] or type(error).__name__
