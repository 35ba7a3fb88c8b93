"""Pygments tokens under a CPU-time budget, so that no code block can stall an export (R6).

Measured with Pygments 2.21: some lexers backtrack catastrophically inside a
single regular-expression match (``maple``, ``scala``, ``cddl``, ``chapel``,
``rego``, ``smithy`` and more on ``"`` followed by 40 backslashes: minutes),
even ``c`` spends seconds in one match on a line followed by a few thousand
newlines, and others go quadratic over many tokens (``python`` on ``'``
followed by CRLFs). An allow-list of "safe" lexers cannot hold when C fails
it, so every block gets a budget instead: ``BASE + PER_CHAR × len(text)``
seconds of CPU, far above what a lexer needs on real code (at most 3 µs a
character measured over every lexer); past it the code is shown plain. A
lexer's first block in a process also gets ``FIRST_USE``: Pygments compiles a
lexer's regular expressions, and those of the lexers it delegates to, when
first used (40 ms for HTML with its JavaScript and CSS), and that must not
decide whether a block is coloured.

Python's regular-expression engine checks for signals while it matches, so a
CPU timer (``cputimer``: the main thread's own CPU, whose ``SIGVTALRM`` raises
``Overrun`` here) stops even one runaway match, and counting CPU rather than wall time keeps the
verdict independent of the machine's load. A signal reaches only the main
thread: in any other thread (a server's), and for a block that overran while
the garbage collector made a full pass (a long pause in a large process, not
the lexer's doing), the block goes to a worker process that lexes it the same
way in its own main thread, under a memory limit, and is killed if it ever
stops answering.

The budget of a block is not enough on its own: 5,000 small ``maple`` blocks
that each overran their 23 ms took over 100 s. So a document lexes under a
``HighlightBudget``: a lexer that overran once is not tried again in that
document (its later blocks are plain at once), and the document's lexing in
all, the worker's time included, stays within ``DOCUMENT_BASE`` plus
``DOCUMENT_PER_CHAR`` for every character offered to be highlighted, after
which every block is plain. Plain code is still all there (R1).

What the worker's blocks cost is the CPU it reports spending on them, never
the start of the worker: a Python process takes seconds to start on a loaded
machine, and counting that made a fresh worker's first blocks plain, so that
the bytes of an HTML page depended on the load (R7). A worker has
``WORKER_START`` wall seconds to start; one that cannot is killed, and only
then is the time it took counted, so that a document whose worker never starts
still ends in bounded time.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any

from vis_export.collector import Pause, bracket, full_collections
from vis_export.formats import cputimer

Runs = Sequence[Sequence[str]]  # (css class, text) pairs whose texts add up to the code

BASE = 0.02
PER_CHAR = 20e-6
FIRST_USE = 0.25
# A document's lexing in all: far above real code at 3 µs a character, and
# bounded for hostile code at about a second per 200 KB.
DOCUMENT_BASE = 2.0
DOCUMENT_PER_CHAR = 5e-6
WORKER_MEMORY = 512 * 1024 * 1024  # address space of the worker
WORKER_GRACE = 10.0  # wall seconds beyond 10 budgets before a silent worker is killed
WORKER_START = 30.0  # wall seconds a new worker has to say that it is ready
WORKER_COMMAND = (sys.executable, "-m", __name__)
READY = b'"ready"\n'  # the worker's first line

# Coarse classes, from the most specific token type to the least: far fewer
# inline boxes for a browser or WeasyPrint to lay out than Pygments' own.
_CLASSES = (
    ("Comment", "c"),
    ("Literal.String", "s"),
    ("Literal.Number", "m"),
    ("Keyword", "k"),
    ("Name.Builtin", "nb"),
    ("Name.Function", "nf"),
    ("Name.Class", "nc"),
    ("Name.Decorator", "nd"),
    ("Name.Tag", "nt"),
    ("Name.Attribute", "na"),
    ("Operator.Word", "k"),
    ("Generic.Deleted", "gd"),
    ("Generic.Inserted", "gi"),
    ("Generic.Heading", "gh"),
    ("Generic.Subheading", "gh"),
    ("Error", ""),
)


def budget(text: str) -> float:
    """CPU seconds a block may take once its lexer is warm."""
    return BASE + PER_CHAR * len(text)


_WARM: set[type] = set()  # lexers that have had their first block in this process


def _allowance(lexer: Any, text: str) -> float:
    first = type(lexer) not in _WARM
    _WARM.add(type(lexer))
    return budget(text) + (FIRST_USE if first else 0.0)


@cache
def _class_of(ttype: Any) -> str:
    name = str(ttype)[len("Token.") :]
    for prefix, css in _CLASSES:
        if name == prefix or name.startswith(prefix + "."):
            return css
    return ""


@lru_cache(maxsize=64)
def lexer_for(language: str) -> Any:
    """The lexer with every text rewrite off. Markdown and reStructuredText do not
    lex fenced code with the lexer its info string names: compiling that lexer on
    first use would spend the block's budget differently from one run to the next."""
    from pygments.lexers import get_lexer_by_name

    try:
        return get_lexer_by_name(language.lower(), stripnl=False, ensurenl=False, tabsize=0, handlecodeblocks=False)
    except Exception:  # ClassNotFound, or a lexer that fails to build: no colours
        return None


def token_runs(lexer: Any, text: str) -> Runs | None:
    """Adjacent tokens of one class merged; ``None`` unless they add up to ``text``
    exactly (a lexer that turns CR into LF keeps the length, not the text)."""
    runs: list[tuple[str, str]] = []
    current, run = "", list[str]()  # the class and the texts of the run being merged
    try:
        for _, ttype, value in lexer.get_tokens_unprocessed(text):
            css = _class_of(ttype)
            if css != current and run:
                runs.append((current, "".join(run)))
                run = []
            current = css
            run.append(value)
    except Exception:  # a lexer's own bug on odd input: the code is shown plain
        return None
    if run:
        runs.append((current, "".join(run)))
    return runs if "".join(value for _, value in runs) == text else None


class HighlightBudget:
    """The lexing one document may still do (see the module's note). Held by one
    render and passed wherever it highlights, code blocks and fenced code alike."""

    def __init__(self) -> None:
        self.allowed = DOCUMENT_BASE
        self.spent = 0.0
        self.overran: set[type] = set()  # lexers that overran in this document

    def runs(self, language: str, text: str) -> Runs | None:
        """Coloured runs of ``text``, or ``None`` when it is to be shown plain."""
        lexer = lexer_for(language)
        if lexer is None or type(lexer) in self.overran:
            return None
        self.allowed += DOCUMENT_PER_CHAR * len(text)
        left = self.allowed - self.spent
        if left <= 0:
            return None
        answer, overran, spent = _lexed(lexer, language, text, left)
        self.spent += spent
        if overran:
            self.overran.add(type(lexer))
        return answer


def _within(lexer: Any, text: str, cap: float) -> tuple[Runs | None, bool]:
    """``token_runs`` in this thread within the block's allowance or ``cap`` seconds,
    whichever is less, and whether the lexer ran out of its own allowance (not just
    the cap). ``Overrun`` when the time ran out during a full collection: a long
    pause of a large process, not the lexer's doing."""
    allowance = _allowance(lexer, text)
    full_passes = full_collections()
    try:
        return _timed(lexer, text, min(allowance, cap)), False
    except Overrun:
        if full_collections() != full_passes:
            raise
        return None, allowance <= cap


def _lexed(lexer: Any, language: str, text: str, cap: float) -> tuple[Runs | None, bool, float]:
    """``_within``, here or in the worker, and the seconds it took: CPU in this
    thread, or the CPU the worker spent on the block (not its start, nor the
    wait for its turn while another thread's block is lexed)."""
    spent = 0.0
    if _can_time():
        started = time.thread_time()
        try:
            return (*_within(lexer, text, cap), time.thread_time() - started)
        except Overrun:
            spent = time.thread_time() - started
    answer, overran, seconds = _worker().ask(language, text, cap)
    return answer, overran, spent + seconds


def runs(language: str, text: str, budget: HighlightBudget | None = None) -> Runs | None:
    """Coloured runs of ``text``, or ``None`` when it is to be shown plain; ``budget``:
    the document's (a block on its own gets a budget of its own)."""
    return (budget or HighlightBudget()).runs(language, text)


# --- the budget in this thread ----------------------------------------------------------


class Overrun(BaseException):
    """Raised by the CPU timer; not an ``Exception``, so no lexer's ``except`` swallows it."""


_armed = False
_collecting = False  # whether the garbage collector is running its callbacks
_stop_waits = False  # a firing could not raise: the lexer is to stop at the next that can
_pause = Pause()  # the collector, paused by the lexer's budget until it is disarmed
AGAIN = 0.005  # seconds of CPU after a firing that could not stop the lexer


def _on_timer(signum: int, frame: Any) -> None:
    """Stops the lexer, where an exception can: one raised in a callback of the
    garbage collector or a finalizer is reported as unraisable and lost. So the
    timer is set again each time, and fires until the lexer stops; during a
    collection it does not raise at all, and the collection's end pauses the
    collector: in a large process (or under callbacks that take their time)
    collections may fill nearly all of the CPU, and a firing would land in one
    again and again (a test in the whole suite ran 30 s)."""
    global _stop_waits
    if _armed:  # a late signal after the block finished is ignored
        cputimer.arm(AGAIN)
        # A signal is taken as a function starts: at the start of the callback
        # that marks a collection, before it has marked it.
        if not _collecting and frame.f_code is not _collection_starts.__code__:
            raise Overrun
        _stop_waits = True


def _collection_starts(phase: str, info: dict[str, int]) -> None:
    global _collecting
    if phase == "start":
        _collecting = True


def _collection_ends(phase: str, info: dict[str, int]) -> None:
    global _collecting
    if phase == "stop":
        _collecting = False
        if _stop_waits and _armed:
            _pause.pause()  # the next firing lands in the lexer, not in another collection


def _can_time() -> bool:
    """Main thread, and nobody else's CPU timer: take ``SIGVTALRM`` (once). Not
    where the application blocks it (signals left to a thread of its own): the
    timer's signal is this thread's alone, and would never stop the lexer."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.SIGVTALRM in signal.pthread_sigmask(signal.SIG_BLOCK, ()):
        return False
    if signal.getsignal(signal.SIGVTALRM) is _on_timer:
        return True
    if signal.getsignal(signal.SIGVTALRM) != signal.SIG_DFL or signal.getitimer(signal.ITIMER_VIRTUAL)[0]:
        return False
    signal.signal(signal.SIGVTALRM, _on_timer)
    return True


def _timed(lexer: Any, text: str, seconds: float) -> Runs | None:
    """``token_runs`` within ``seconds`` of CPU, or ``Overrun`` with the timer off.
    A firing may land as the timer is being turned off, and raise there; the
    next is ``AGAIN`` of CPU away, time enough to turn it off once more."""
    global _armed
    bracket(_collection_starts, _collection_ends)
    _armed = True
    try:
        try:
            cputimer.arm(seconds)  # a short time may run out before the call returns
            return token_runs(lexer, text)
        finally:
            _disarm()
    except Overrun:
        _disarm()
        raise


def _disarm() -> None:
    global _armed, _stop_waits
    _armed = _stop_waits = False
    cputimer.arm(0)
    _pause.resume()


# --- the worker process -----------------------------------------------------------------


class _Worker:
    """One lexing process, with JSON lines both ways (``ensure_ascii`` carries lone surrogates)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.process: subprocess.Popen[bytes] | None = None

    def ask(self, language: str, text: str, cap: float) -> tuple[Runs | None, bool, float]:
        """``_within`` in the worker (a worker that dies or stops answering overran),
        and the seconds it took: the worker's CPU for the block; wall seconds only
        when no answer came (since the request was sent, or since a start that failed)."""
        request = json.dumps([language, text, cap]).encode("ascii") + b"\n"
        with self.lock:
            started = time.monotonic()
            try:
                process = self._ready()
                assert process.stdin is not None
                started = time.monotonic()  # a start that succeeded is not the lexing's
                process.stdin.write(request)
                process.stdin.flush()
                line = _line(process, WORKER_GRACE + 10 * min(cap, budget(text) + FIRST_USE))
                answer, overran, seconds = json.loads(line)
                return answer, bool(overran), float(seconds)
            except (OSError, ValueError):  # no worker, a dead or silent one: plain, and a new one next time
                self.stop()
                return None, True, time.monotonic() - started

    def _ready(self) -> subprocess.Popen[bytes]:
        """The worker, started if need be and waited for until it says it is ready."""
        if self.process is None:
            self.process = subprocess.Popen(
                WORKER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
            if _line(self.process, WORKER_START) != READY:
                raise ValueError("the lexing worker did not start")
        return self.process

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            for pipe in (self.process.stdin, self.process.stdout):
                if pipe is not None:
                    pipe.close()
            self.process = None


def _line(process: subprocess.Popen[bytes], seconds: float) -> bytes:
    """The worker's next line within ``seconds`` of wall time; ``OSError`` if none comes."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], seconds)
    line = process.stdout.readline() if ready else b""
    if not line:
        raise OSError("the lexing worker stopped answering")
    return line


_WORKERS: dict[int, _Worker] = {}  # by process: a forked child never talks to its parent's worker


def _worker() -> _Worker:
    if not _WORKERS:
        atexit.register(_stop_worker)
    return _WORKERS.setdefault(os.getpid(), _Worker())


def _stop_worker() -> None:
    """At exit, this process's worker only (a child inherits the parent's handlers)."""
    worker = _WORKERS.get(os.getpid())
    if worker is not None:
        worker.stop()


def main() -> None:
    """The worker: ``READY`` once started; then one request per line, ``[language,
    text, cap]``, and one answer per line, ``[runs or null, overran, CPU seconds]``."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY, WORKER_MEMORY))
    # Its own main thread takes the timer, whatever its start inherited: a mask the
    # parent's thread blocked the signal in, an application's SIG_IGN (kept by exec).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGVTALRM])
    signal.signal(signal.SIGVTALRM, signal.SIG_DFL)
    _can_time()
    sys.stdout.buffer.write(READY)
    sys.stdout.flush()
    for line in sys.stdin.buffer:
        language, text, cap = json.loads(line)
        lexer = lexer_for(language)
        answer, overran = None, False
        started = time.process_time()
        try:
            answer, overran = _within(lexer, text, cap) if lexer is not None else (None, False)
        except (Overrun, MemoryError):
            overran = True
        sys.stdout.write(json.dumps([answer, overran, time.process_time() - started]) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
