"""Each session's transaction runs on a thread of its own while the job reads
and analyses the next session.

A job alternates between work of its own (loading a session, making its
documents and words) and waiting for the server to store them (its text-search
indexes are most of the server's time). Done one after the other,
each waits for the other; here the job hands a session's finished transaction
to the writer thread and goes on. Transactions still run one at a time, in
order, each whole: what a search or a killed job sees is unchanged. A failed
transaction stops the writer: the rest are dropped (never committed) and the
failure is raised in the job at its next hand-over, or by ``wait``.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

Step = Callable[[], object]


class TransactionWriter:
    def __init__(self) -> None:
        # Two transactions ahead at most: the job never runs far past a failure.
        self._queue: queue.Queue[list[Step] | None] = queue.Queue(maxsize=2)
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="vis-export postgresql writer", daemon=True)
        self._thread.start()

    def submit(self, steps: list[Step]) -> None:
        """Queues one transaction's steps (its commit the last)."""
        self._raise()
        self._queue.put(steps)

    def wait(self) -> None:
        """Returns when every queued transaction is done; raises the first failure."""
        self._queue.join()
        self._raise()

    def close(self) -> None:
        """Stops the thread once what is queued is done (or dropped, after a failure)."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()

    def _raise(self) -> None:
        if self._failure is not None:
            raise self._failure

    def _run(self) -> None:
        while True:
            steps = self._queue.get()
            try:
                if steps is None:
                    return
                if self._failure is None:
                    for step in steps:
                        step()
            except BaseException as failure:  # noqa: BLE001 - raised again in the job's thread
                self._failure = failure
            finally:
                self._queue.task_done()
