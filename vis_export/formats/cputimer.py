"""The lexing budget's CPU timer: the main thread's own CPU, signalled to the main thread.

``setitimer(ITIMER_VIRTUAL)`` counts the CPU of every thread of the process, and
the kernel sends its ``SIGVTALRM`` to whichever thread was running when it ran
out. CPython on POSIX notices a signal that another thread took only when the
main thread next trades the interpreter lock; behind a thread busy in C without
it (hashing, compressing, a search engine's Rust threads), a runaway lexer's
stop waited as long as that thread's call: a second in a test that hashes in a
thread, 30 s once in the whole test suite, where an earlier test's thread was
still at work. The process's clock also charged that thread's CPU to the lexer.

So on Linux the budget is a POSIX timer on the main thread's CPU clock
(``CLOCK_THREAD_CPUTIME_ID``) that signals that thread alone
(``SIGEV_THREAD_ID``). The standard library has no ``timer_create``; ctypes
calls the C library's. Where there is none (not Linux), it is the process's
virtual timer as before, with the delay above.

A timer belongs to the process that made it (a child does not inherit it), so
each process makes its own on first use.
"""

from __future__ import annotations

import ctypes
import math
import os
import signal
import sys
import threading
from functools import cache

_CLOCK_THREAD_CPUTIME_ID = 3
_SIGEV_THREAD_ID = 4


class _SigEvent(ctypes.Structure):
    """Linux's ``struct sigevent`` (64 bytes): the thread's id opens its union."""

    _fields_ = [
        ("value", ctypes.c_void_p),
        ("signo", ctypes.c_int),
        ("notify", ctypes.c_int),
        ("thread_id", ctypes.c_int),
        ("rest", ctypes.c_int * 11),
    ]


class _TimeSpec(ctypes.Structure):
    _fields_ = [("seconds", ctypes.c_long), ("nanoseconds", ctypes.c_long)]


class _ITimerSpec(ctypes.Structure):
    _fields_ = [("interval", _TimeSpec), ("value", _TimeSpec)]


@cache
def _library() -> ctypes.CDLL | None:
    """The C library with ``timer_create``: glibc from 2.34 on, ``librt`` before."""
    if not sys.platform.startswith("linux"):  # no thread-directed timers elsewhere
        return None
    for name in (None, "librt.so.1"):
        try:
            library = ctypes.CDLL(name, use_errno=True)
            library.timer_create  # noqa: B018 -- an AttributeError where it is missing
            library.timer_settime  # noqa: B018
        except (OSError, AttributeError):
            continue
        library.timer_create.argtypes = [ctypes.c_int, ctypes.POINTER(_SigEvent), ctypes.POINTER(ctypes.c_void_p)]
        library.timer_settime.argtypes = [
            ctypes.c_void_p,
            ctypes.c_int,
            ctypes.POINTER(_ITimerSpec),
            ctypes.POINTER(_ITimerSpec),
        ]
        return library
    return None


@cache
def _timer() -> tuple[ctypes.CDLL, ctypes.c_void_p] | None:
    """This process's timer on the main thread's clock, made on first use; ``None``
    where the C library cannot make one. Tried once a process: a timer made after a
    failed try (``EAGAIN``) would turn off only itself, not the virtual timer armed
    meanwhile, whose late signal then stops a later block."""
    library = _library()
    if library is None:
        return None
    event = _SigEvent(signo=signal.SIGVTALRM, notify=_SIGEV_THREAD_ID, thread_id=threading.get_native_id())
    made = ctypes.c_void_p()
    if library.timer_create(_CLOCK_THREAD_CPUTIME_ID, ctypes.byref(event), ctypes.byref(made)) != 0:
        return None
    return library, made


# A forked child inherits the parent's timer's id, not its timer: it makes its own. Told apart by their process ids,
# a child whose id was its grandparent's (ids are used again) armed the grandparent's id, which names no timer there,
# or another one.
os.register_at_fork(after_in_child=_timer.cache_clear)


def arm(seconds: float) -> None:
    """``SIGVTALRM`` to the main thread after ``seconds`` of its CPU; 0 turns it off.
    Only ever called in the main thread (``lexing._can_time``)."""
    made = _timer()
    if made is None:
        signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
        return
    library, timer = made
    # Rounded up, as setitimer rounds: a time of zero turns the timer off, so a
    # budget left of under a nanosecond would have let the lexer run unbounded.
    nanoseconds = math.ceil(seconds * 1e9)
    spec = _ITimerSpec(value=_TimeSpec(*divmod(nanoseconds, 1_000_000_000)))
    if library.timer_settime(timer, 0, ctypes.byref(spec), None) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
