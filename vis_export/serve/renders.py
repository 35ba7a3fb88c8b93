"""Downloads rendered on request, bounded: a few at once, the rest waiting
briefly in a short queue, and what was rendered kept for the next request.

A download is rendered in a thread of the server's pool (a PDF of a large
session takes a minute and hundreds of MB), so without a bound a burst of
requests, which any web page can make to 127.0.0.1, would take the machine:
at most ``most`` renders run at once (of which ``heavy`` PDFs, which take
the most memory), at most ``waiting`` more wait for their turn (for
``patience`` seconds), and any other request is told at once that
the server is busy (``Busy``: a 503 with Retry-After). A download is kept,
up to ``budget`` bytes in all (least recently used first out), under a key
that holds the stamp of its source file, so it is served again until the
file changes; the same download asked for while it renders waits for that
render rather than starting its own.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable

MOST = 2  # renders at once (the machine's cores are the pages' too)
HEAVY = 1  # of which PDFs (a large session's takes most of a GB)
WAITING = 8  # requests waiting for a render to finish; more are told to come back
PATIENCE = 20.0  # seconds a request waits for its turn before it is told to come back
BUDGET = 64 << 20  # bytes of rendered downloads kept


class Busy(Exception):
    """Too many downloads are rendering: the request is to be made again later."""


class Renders:
    def __init__(
        self,
        most: int = MOST,
        heavy: int = HEAVY,
        waiting: int = WAITING,
        patience: float = PATIENCE,
        budget: int = BUDGET,
    ) -> None:
        self.most, self.heavy, self.waiting, self.patience, self.budget = most, heavy, waiting, patience, budget
        self.turns = threading.Condition()
        self.running: dict[Hashable, bool] = {}  # keys rendering now: whether heavy
        self.queued = 0
        self.kept: OrderedDict[Hashable, bytes] = OrderedDict()
        self.size = 0  # bytes in ``kept``

    def get(self, key: Hashable, render: Callable[[], bytes], heavy: bool = False) -> bytes:
        """The download ``key`` names: kept, or rendered now by ``render`` when
        its turn comes (``Busy`` when it does not come soon); ``heavy``: a PDF."""
        deadline = time.monotonic() + self.patience
        with self.turns:
            queued = False
            try:
                while True:
                    body = self.kept.get(key)
                    if body is not None:
                        self.kept.move_to_end(key)
                        return body
                    if key not in self.running and self._room(heavy):
                        break
                    if not queued:
                        if self.queued >= self.waiting:
                            raise Busy
                        self.queued, queued = self.queued + 1, True
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise Busy
                    self.turns.wait(left)
            finally:
                if queued:
                    self.queued -= 1
            self.running[key] = heavy
        made: bytes | None = None
        try:
            made = render()
            return made
        finally:
            with self.turns:
                del self.running[key]
                if made is not None:
                    self._keep(key, made)
                self.turns.notify_all()

    def _room(self, heavy: bool) -> bool:
        """Whether a render (``heavy`` or not) may start now."""
        return len(self.running) < self.most and (not heavy or sum(self.running.values()) < self.heavy)

    def _keep(self, key: Hashable, body: bytes) -> None:
        if len(body) > self.budget // 4:  # one huge file would push out every other
            return
        self.size += len(body) - len(self.kept.get(key, b""))
        self.kept[key] = body
        while self.size > self.budget:
            self.size -= len(self.kept.popitem(last=False)[1])
