"""A Dask cluster to run a job on: a running scheduler, or local worker processes.

Everything here is bounded in time: a scheduler that cannot be reached, a
peer that is not one (silent, or saying something else), a cluster without
workers, or one that loses all of them mid-job is one line (``DaskFailure``)
within seconds, never a job that waits forever.
"""

from __future__ import annotations

import math
import os
import re
import socket
import struct
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from vis_export.distributed.failures import CONNECT_TIMEOUT, DaskFailure, quiet, reason

if TYPE_CHECKING:
    from vis_export.distributed.local import ClusterProcess

LOCAL = "local"
GREETING_MOST = 64 << 10  # bytes a scheduler's first message may take (its handshake: some 60)
NO_WORKERS_TIMEOUT = 30.0  # seconds a job waits with no worker at all
MOST_LOCAL_WORKERS = 512


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
def dask_client(address: str, preload: Sequence[str] = (), local: ClusterProcess | None = None) -> Iterator[Any]:
    """A client of the cluster ``address`` names (see ``check_address``), with at
    least one worker; a local cluster is stopped when the job ends. Its workers
    have the modules of ``preload`` imported already (see ``local``). ``local``:
    the local cluster ``address`` asks for, started already."""
    from vis_export.extras import require, require_installed

    check_address(address)
    require_installed("distributed", "--dask")
    count = local_workers(address)
    if count is not None and local is None:
        from vis_export.distributed.local import ClusterProcess

        local = ClusterProcess(count, preload)
    try:
        scheduler = address if local is None else local.started()  # Dask is imported once it has
        library: Any = require("distributed", "--dask")  # untyped
        quiet()
        try:
            if local is None:
                _greeted(address)
                _probe(library, address)
            client = library.Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except Exception as error:  # noqa: BLE001 - OSError, TimeoutError, and what an odd address raises
            raise DaskFailure(f"cannot reach the Dask scheduler at {address}: {reason(error)}") from None
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
        if local is not None:
            local.close()


class Connecting:
    """A cluster to connect to once the job needs it. A local cluster takes a
    second or so to start (processes that import Dask), which the job need not
    spend waiting (see ``Pace``): it starts at once, and this process connects
    only for a job not done before the cluster is up. A job done sooner never
    imports Dask, and stops the cluster wherever it has got to."""

    def __init__(self, address: str, preload: Sequence[str] = ()):
        from vis_export.extras import require_installed

        require_installed("distributed", "--dask")  # said at once, not after work
        check_address(address)
        self.address = address
        count = local_workers(address)
        if count is not None:
            from vis_export.distributed.local import ClusterProcess
        self._local = None if count is None else ClusterProcess(count, preload)
        self._context = dask_client(address, preload, self._local)
        self._client: Any = None

    def handing_over(self, pace: Pace, left: float) -> bool:
        """Whether the work ``left`` (bytes of sources) goes to the cluster now.
        A job that will need it imports Dask at once, while the cluster starts:
        on a thread of its own, the import would take several times as long,
        each of its file reads waiting for the job's work to give way."""
        if self._local is None:
            return True
        if pace.size and pace.would_take(left) > CONNECT_AHEAD:
            from vis_export.extras import require

            require("distributed", "--dask")
        return self._local.answered() and pace.would_take(left) > HANDOVER

    def client(self) -> Any:
        """The client, once connected (``DaskFailure`` if it cannot be)."""
        if self._client is None:
            self._client = self._context.__enter__()
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._context.__exit__(None, None, None)
        elif self._local is not None:
            self._local.close()


HANDOVER = 0.5  # seconds of work left that this process does itself rather than connect (importing Dask: 0.3 s)
CONNECT_AHEAD = 2.0  # seconds of work left that are worth importing Dask for while the cluster starts


class Pace:
    """This process's pace at a job's work while a local cluster starts, in
    seconds per byte of sources: once the cluster is up, the work left goes
    to it, unless this process would finish it sooner than it can connect."""

    def __init__(self) -> None:
        self.size = 0.0
        self.seconds = 0.0

    @contextmanager
    def timing(self, size: float) -> Iterator[list[float]]:
        """Times work on ``size`` bytes; the work may set the share of them it
        did (one session of a file of many)."""
        share = [1.0]
        start = time.perf_counter()
        yield share
        self.size += max(size * share[0], 1)
        self.seconds += time.perf_counter() - start

    def would_take(self, left: float) -> float:
        """Seconds this process would take for ``left`` bytes (infinite before it knows)."""
        return left * self.seconds / self.size if self.size else math.inf


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

    try:
        asyncio.run(asyncio.wait_for(probe(), 2 * CONNECT_TIMEOUT))  # Dask bounds the connect, not the handshake
    except TimeoutError:
        raise OSError(f"no answer within {2 * CONNECT_TIMEOUT:g} s") from None


def _greeted(address: str) -> None:
    """Hears a ``tcp://`` scheduler's greeting with a plain socket (``OSError`` if
    it is not one) before Dask connects: Dask waits for the greeting without a
    time limit, and reads a message of whatever length a peer's first 8 bytes
    say, allocating it first (any server on that port that is not Dask: its
    first bytes, read as a length, are gigabytes). A scheduler speaks first,
    with one small message (its handshake: a MessagePack map of its Python
    version and compression); nothing is sent to it, and it notes a connection
    closed before the handshake."""
    scheme, _, location = address.rpartition("://")
    if scheme not in ("", "tcp"):
        return  # tls, ws, ucx: Dask's own layers first; ``_probe`` bounds them in time
    host, _, port = location.rpartition(":")
    deadline = time.monotonic() + CONNECT_TIMEOUT
    with _connected(host.strip("[]"), int(port), deadline) as peer:
        (size,) = struct.unpack("Q", _received(peer, 8, deadline))  # the byte order Dask uses: the machine's
        if not 8 <= size <= GREETING_MOST:
            raise OSError("what answered there is not a Dask scheduler")
        _greeting(_received(peer, size, deadline))


def _connected(host: str, port: int, deadline: float) -> socket.socket:
    """A connection, tried again until ``deadline`` while it is refused (a scheduler still starting), as Dask does."""
    while True:
        try:
            return socket.create_connection((host, port), timeout=max(0.01, deadline - time.monotonic()))
        except (TimeoutError, ConnectionRefusedError):
            if time.monotonic() >= deadline:
                raise OSError(f"nothing answers there (tried for {CONNECT_TIMEOUT:g} s)") from None
            time.sleep(0.1)


def _received(peer: socket.socket, size: int, deadline: float) -> bytes:
    """``size`` bytes from ``peer``, all by ``deadline``."""
    data = bytearray()
    while len(data) < size:
        left = deadline - time.monotonic()
        if left <= 0:
            raise OSError(f"no Dask scheduler greeting within {CONNECT_TIMEOUT:g} s")
        peer.settimeout(left)
        try:
            chunk = peer.recv(size - len(data))
        except TimeoutError:
            continue
        if not chunk:
            raise OSError("it closed the connection without answering as a Dask scheduler")
        data += chunk
    return bytes(data)


def _greeting(message: bytes) -> None:
    """Checks that ``message`` is a scheduler's handshake: Dask's frames (a count, the
    lengths, the frames) whose first is a MessagePack map with the Python version."""
    import msgpack

    try:
        (count,) = struct.unpack_from("Q", message)
        if not 1 <= count <= 16:
            raise ValueError(count)
        lengths = struct.unpack_from(f"{count}Q", message, 8)
        start = 8 * (1 + count)
        handshake = msgpack.unpackb(message[start : start + lengths[0]])
    except (ValueError, TypeError, struct.error, msgpack.UnpackException):
        handshake = None
    if not isinstance(handshake, dict) or "python" not in handshake:
        raise OSError("what answered there is not a Dask scheduler")


def worker_count(client: Any) -> int:
    return max(1, len(client.scheduler_info(n_workers=-1)["workers"]))


def completed(client: Any, pending: set[Any], address: str) -> Iterator[Any]:
    """Each future of ``pending`` as it finishes (its result or failure is the
    caller's to take); the caller may add futures to ``pending`` meanwhile.

    A cluster left without any worker for ``NO_WORKERS_TIMEOUT`` fails the job
    instead of waiting for workers that may never come back; a task that
    killed every worker it ran on (``allowed-failures``) fails it too, as does
    a scheduler lost mid-job (which cancels every task)."""
    from concurrent.futures import CancelledError

    from vis_export.extras import require

    wait: Any = require("distributed", "--dask").wait  # untyped

    alone_since: float | None = None
    while pending:
        try:
            with client.as_current():
                done, _ = wait(list(pending), timeout=1.0, return_when="FIRST_COMPLETED")
        except CancelledError:
            raise _lost(address) from None
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
    killing workers, or a result lost with the scheduler, is one line."""
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
    except Exception:
        if future.status == "error":  # the task's own
            raise
        raise _lost(address) from None


def _lost(address: str) -> DaskFailure:
    return DaskFailure(f"lost the connection to the Dask scheduler at {address} mid-job")
