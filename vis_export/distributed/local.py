"""A local cluster (``--dask local:N``) run by a process of its own.

Its scheduler and nannies are busy while the cluster starts and whenever a
task starts or ends. Run in the job's process, they would share that
process's interpreter lock with the work it does meanwhile (it renders the
first units itself while the workers start, see ``distributed.running``);
here they have a process, and on a small machine a core, of their own.

The job talks to it through a pipe: a line with the request (worker count,
modules to import ahead, the job's ``sys.path``), then the scheduler's address
or ``error REASON`` back. The cluster stops when the pipe closes, whether the
job ended or died.

python -m vis_export.distributed.local      (run by ``start``, not by people)
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import select
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from typing import Any

from vis_export.distributed.failures import CONNECT_TIMEOUT, DaskFailure, quiet, reason

START_TIMEOUT = 120.0  # seconds: workers that import WeasyPrint on a busy machine take a while
ERROR = "error "

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


class ClusterProcess:
    """The process of our own that runs a local Dask cluster (Dask's
    ``LocalCluster``, in that process), and its scheduler's address."""

    def __init__(self, workers: int, preload: Sequence[str]):
        try:
            self.scratch = tempfile.mkdtemp(prefix="vis-export-dask-")  # Dask's files, whatever becomes of it
        except OSError as error:
            raise _cannot_start(f"no folder for its files: {error}") from None
        request = {"workers": workers, "preload": list(preload), "path": sys.path, "scratch": self.scratch}
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", __name__],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                start_new_session=True,  # Ctrl-C reaches the job, which stops the cluster
            )
        except OSError as error:
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise _cannot_start(f"{sys.executable}: {error.strerror or error}") from None
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:  # it ended at once: ``started`` says how
            pass
        self.address: str | None = None

    def answered(self) -> bool:
        """Whether ``started`` would not wait: the cluster is up, or could not start."""
        assert self.process.stdout is not None
        return self.address is not None or bool(select.select([self.process.stdout], [], [], 0)[0])

    def started(self) -> str:
        """The scheduler's address, once the workers have started."""
        if self.address is None:
            try:
                self.address = _answer(self.process)
            except DaskFailure:
                self.close()  # its pipes and scratch folder: left to the collector, they warned in whatever ran next
                raise
        return self.address

    def close(self) -> None:
        """Stops the cluster (see ``serve``) and removes its files."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.close()
        except OSError:  # it is gone already
            pass
        try:
            self.process.wait(timeout=CONNECT_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        assert self.process.stdout is not None
        self.process.stdout.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


def _answer(process: subprocess.Popen[str]) -> str:
    """The scheduler's address, once its workers have started; a cluster that
    cannot start is one line, within ``START_TIMEOUT``."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as waiting:
        waiting.register(process.stdout, selectors.EVENT_READ)
        line = process.stdout.readline() if waiting.select(START_TIMEOUT) else None
    if line and not line.startswith(ERROR):
        return line.strip()
    if process.poll() is None:
        os.killpg(process.pid, 9)
    process.wait()
    if line is None:
        why = f"its workers did not start within {START_TIMEOUT:g} s"
    else:
        why = line[len(ERROR) :].strip() or f"its process ended (exit status {process.returncode})"
    raise _cannot_start(why)


def _cannot_start(why: str) -> DaskFailure:
    return DaskFailure(f"cannot start a local Dask cluster: {why}")


def serve() -> int:
    """The cluster's process: starts the cluster the request on standard input
    asks for, says where it is, and runs it until standard input closes.

    It then ends at once, the cluster started or not: the job has taken every
    result it wants, or has gone. Its workers, and the process they are forked
    from, each watch their parent and end with it; the job removes what files
    they still write."""
    request = json.loads(sys.stdin.readline())
    # The job reads one line, the answer; the workers (forked from a process
    # this one starts) would inherit the pipe as their standard output, and a
    # task that prints there (a plugin's format) would block once it is full.
    answer = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    with open(os.devnull, "wb") as null:
        os.dup2(null.fileno(), sys.stdout.fileno())
    # The job's ``sys.path``, for its worker processes to import what it
    # imports; and the folders it adds to a new interpreter's, for the
    # forkserver, which imports ``preload`` before it takes a path from this
    # process (Python 3.11 ignores the one it is given): a plugin's format
    # found through a ``sys.path`` of the job's own is then known there. Only
    # those: the standard library must come before site-packages.
    added = [folder for folder in request["path"] if folder not in sys.path]
    sys.path[:] = request["path"]
    if added:
        os.environ["PYTHONPATH"] = os.pathsep.join([*added, *filter(None, [os.environ.get("PYTHONPATH")])])

    def watch() -> None:
        sys.stdin.read()
        shutil.rmtree(request["scratch"], ignore_errors=True)  # the job removes it too, unless it died
        _remove_multiprocessing_folder()
        os._exit(0)

    threading.Thread(target=watch, name="vis-export job watch", daemon=True).start()
    try:
        cluster = _start(int(request["workers"]), request["preload"], request["scratch"])
    except Exception as error:  # noqa: BLE001 - said to the job, which says it in one line
        print(ERROR + reason(error), file=answer, flush=True)
        return 1
    print(cluster.scheduler_address, file=answer, flush=True)
    threading.Event().wait()  # until ``watch`` ends the process
    return 0


def _remove_multiprocessing_folder() -> None:
    """Removes the folder ``multiprocessing`` made in the temporary folder (for
    the forkserver's socket), as it does at exit, which ``os._exit`` skips.
    It is not made in the job's scratch folder: a socket's path has at most
    107 bytes, and a long ``TMPDIR`` leaves no room for more folders."""
    from multiprocessing import process

    folder = getattr(process.current_process(), "_config", {}).get("tempdir")
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


def _start(workers: int, preload: Sequence[str], scratch: str) -> Any:
    method = _start_processes(preload)  # before Dask is imported here: both imports run at once
    import dask

    library: Any = importlib.import_module("distributed")  # untyped

    quiet()
    settings = {**_LOCAL_SETTINGS, "distributed.worker.multiprocessing-method": method, "temporary-directory": scratch}
    with dask.config.set(settings):
        return library.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address="127.0.0.1:0",  # the scheduler serves HTTP anyway: a free port, not 8787
            silence_logs=logging.CRITICAL,
            host="127.0.0.1",
        )


def _start_processes(preload: Sequence[str]) -> str:
    """How the worker processes start: forked from one process that imports
    Dask and ``preload`` once (``forkserver``). Started the usual way
    (``spawn``, where the platform has no forkserver), each worker imports
    them itself, and on a small machine those imports (half a second each for
    a PDF job) compete with the job for its cores."""
    import multiprocessing
    from multiprocessing import forkserver

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return "spawn"
    multiprocessing.get_context("forkserver").set_forkserver_preload(["distributed", *_importable(preload)])
    forkserver.ensure_running()  # Dask's own preload list, set later, is for a forkserver not yet running
    return "forkserver"


def _importable(modules: Sequence[str]) -> list[str]:
    """The modules the workers' process may import. Any error but ``ImportError``
    stops that process, and every worker with it: a module of another package
    (a plugin format's ``imports`` may name one that fails) is imported here
    first, and one that fails is left to the tasks that need it, which say what
    is wrong. vis-export's own raise no other error (``pdf_preload``), and are
    not imported here in vain (a Typst job needs no WeasyPrint)."""
    found = []
    for name in modules:
        if not name.startswith("vis_export."):
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - whatever it raises, its tasks raise too
                continue
        found.append(name)
    return found


if __name__ == "__main__":
    sys.exit(serve())
