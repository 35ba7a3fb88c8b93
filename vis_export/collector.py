"""Python's cyclic garbage collector, which is the whole process's: the one
place vis-export changes it (issue 23).

Three kinds of work make objects by the hundred thousand and would have the
collector walk them again and again for nothing: loading a session
(``paused``), WeasyPrint laying a PDF part out (``young_threshold``), and a
lexer that has overrun its budget while collections fill its time
(``Pause``, told of collections by callbacks it keeps first and last:
``bracket``). Each puts back only what it changed, so they nest in any order
(a lexer stopped within a PDF layout within a load) and leave an
application's own settings as it made them: a collector the caller turned
off stays off, a threshold set meanwhile stays set, frozen objects stay
frozen.

This module imports nothing of vis-export's, so every layer may use it
(``[tool.importlinter]``: the lowest layer).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class paused:
    """The collector off for a ``with`` block that builds many acyclic objects
    (loading: a third of load time went to walking them). At the block's end,
    what it built goes straight to the oldest generation (``gc.freeze`` then
    ``unfreeze``: two list splices), not through the young ones, whose first
    collection would walk it all once more (a sixth of load time); it is then
    walked only by full collections, as any long-lived object. Not while any
    objects are frozen: ``unfreeze`` would release an application's own. A
    collector that was off already (an outer block's, the caller's) is left
    as it is.

    A class, not a generator: a small file's reading pays for its context
    managers (each generator-made one about 0.7 µs, this 0.2)."""

    __slots__ = ("enabled",)
    enabled: bool

    def __enter__(self) -> None:
        self.enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *_: object) -> None:
        if self.enabled:
            if not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()


_raised = 0  # blocks within ``young_threshold`` in this process: the first raises it, the last puts it back
_before = 0  # the young threshold the first found, put back by the last
_set: int | None = None  # the young threshold the first set; ``None``: it found one as high and left it
_RAISING = threading.Lock()


@contextmanager
def young_threshold(objects: int) -> Iterator[None]:
    """The young generation's threshold at least ``objects`` within the block,
    for work that keeps most of what it makes to its end (each collection of
    the young generation walks it all once more). Blocks at once (threads)
    share the first one's threshold; the last puts the young threshold back,
    unless it was changed meanwhile, and leaves the older generations' alone."""
    global _raised, _before, _set
    with _RAISING:
        if not _raised:
            _before = gc.get_threshold()[0]
            _set = objects if objects > _before else None
            if _set is not None:
                gc.set_threshold(_set, *gc.get_threshold()[1:])
        _raised += 1
    try:
        yield
    finally:
        with _RAISING:
            _raised -= 1
            now = gc.get_threshold()
            if not _raised and _set is not None and now[0] == _set:
                gc.set_threshold(_before, *now[1:])


class Pause:
    """The collector paused from where no ``with`` block can be (a collection's
    callback) and resumed later by the same owner: the lexing budget pauses it
    when a timer firing that should stop a runaway lexer landed in a
    collection, where it cannot raise, so that the next firing lands in the
    lexer; it resumes it once the lexer is stopped. ``pause`` does nothing to
    a collector that is off (a load's, the caller's), and ``resume`` turns on
    only one this pause turned off."""

    __slots__ = ("held",)

    def __init__(self) -> None:
        self.held = False

    def pause(self) -> None:
        if not self.held and gc.isenabled():
            gc.disable()
            self.held = True

    def resume(self) -> None:
        if self.held:
            self.held = False
            gc.enable()


def bracket(first: Callable[[str, dict[str, int]], None], last: Callable[[str, dict[str, int]], None]) -> None:
    """``first`` the collector's first callback and ``last`` its last, where
    others' may have been added since: the lexing budget must know a
    collection is under way before any other callback runs (a timer firing
    there cannot stop the lexer), and until the last has run."""
    callbacks = gc.callbacks
    if not callbacks or callbacks[0] is not first:
        if first in callbacks:
            callbacks.remove(first)
        callbacks.insert(0, first)
    if callbacks[-1] is not last:
        if last in callbacks:
            callbacks.remove(last)
        callbacks.append(last)


def full_collections() -> int:
    """Full collections so far in this process: a pause long enough, in a
    large process, to use up a lexer's budget that was not the lexer's doing."""
    return gc.get_stats()[-1]["collections"]  # type: ignore[no-any-return]
