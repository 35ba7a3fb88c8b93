"""Highlighting keeps the code exactly (R1) and within a time bound (R6), for every Pygments lexer.

Every test that could hang runs under ``time_limit`` (SIGALRM, which Python's
regular-expression engine notices mid-match), so a regression fails instead.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from functools import cache
from multiprocessing import get_context
from pathlib import Path
from typing import Any, TypeVar

import pytest
from htmldom import code_elements, elements, fragment, parse, text_content
from hypothesis import given, strategies as st
from pygments.lexers import get_all_lexers
from pygments.token import Text
from sessions import one_message
from timelimit import time_limit

from vis_export.formats import lexing
from vis_export.formats.highlight import highlight, plain

# One alias per lexer while developing; every alias in CI.
ALIASES = sorted(
    {alias for _, aliases, _, _ in get_all_lexers() for alias in (aliases if os.environ.get("CI") else aliases[:1])}
)
ADVERSARIAL = [
    "a\rb\r",
    "\r\n\r\n x",
    "\t x\t\ty\t",
    "nul\x00x",
    "\ud800x\udfffy",
    "(" * 100,
    "[" * 100,
    "{" * 100,
    "<" * 100,
    "a" * 300,
    " " * 300 + "x",
    "\n" * 300,
    '"' + "\\" * 60,
    "'" + "\\" * 60,
    "'abc\n",
    '"abc',
    "`abc",
    "/* abc",
    "<!-- x",
    "x" + "\n" * 300,
    "'" + "\r\n" * 100,
    "#!x\n\u2028\x0c\x0b",
]
CALL_LIMIT = 2.0  # CPU seconds any one block may take


def cpu_seconds() -> float:
    """CPU used so far by this process, its lexing worker and the children it has waited for (a worker that was
    stopped). The limits are on CPU, as the budget is: wall time also grows while other processes hold the cores, and a
    test on a loaded machine failed with no lexer at fault. A lexer that went quadratic still spends the CPU."""
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent = time.process_time() + children.ru_utime + children.ru_stime
    worker = lexing._WORKERS.get(os.getpid())
    if worker is not None and worker.process is not None:
        try:
            stat = Path(f"/proc/{worker.process.pid}/stat").read_text()
        except OSError:
            return spent
        user, system = stat[stat.rindex(")") + 2 :].split()[11:13]
        spent += (int(user) + int(system)) / os.sysconf("SC_CLK_TCK")
    return spent


def dom_texts(htmls: list[str]) -> list[str]:
    """The text a browser shows of each HTML in a ``<pre><code>`` of its own, parsed as one page: an HTML parser's
    start costs more than a small block, and 600 lexers' blocks are many. A block whose HTML leaked into the next
    (an open comment, a ``</code>`` of its own) changes the texts or their number, as it would on its own."""
    return [
        text_content(code)
        for code in elements(fragment("".join(f"<pre><code>{html}</code></pre>" for html in htmls)), "code")
    ]


def dom_text(html: str) -> str:
    (text,) = dom_texts([html])
    return text


def in_thread(text: str, language: str) -> str:
    """``highlight`` from a thread other than the main one (a server's): the worker's path."""
    result: list[str] = []
    thread = threading.Thread(target=lambda: result.append(str(highlight(text, language))))
    thread.start()
    thread.join()
    return result[0]


class Endless:
    """A lexer that never ends: only a stop ends its lexing."""

    def get_tokens_unprocessed(self, text: str) -> Any:
        while True:
            yield 0, Text, text


@pytest.mark.parametrize("language", ALIASES)
def test_every_lexer_keeps_the_code_exactly_and_in_bounded_time(language: str) -> None:
    with time_limit(60):
        # First use loads the lexer and may start the worker, whose Popen reaps children that ended earlier (their
        # whole CPU then lands in this process's count: 5.4 s once, on 'a\rb\r'); not the lexer's work on a block.
        highlight("x", language)
        shown = []
        for code in ADVERSARIAL:
            start = cpu_seconds()
            shown.append(str(highlight(code, language)))
            assert cpu_seconds() - start < CALL_LIMIT, (language, code[:20])
    assert dom_texts(shown) == [code.replace("\x00", "\ufffd") for code in ADVERSARIAL], language


@pytest.mark.parametrize(
    ("language", "code"),
    [
        ("maple", '"' + "\\" * 80),  # one catastrophic match: minutes without the budget
        ("scala", '"' + "\\" * 80),
        ("c", "x" + "\n" * 8000),  # one quadratic match: five seconds
        ("python", "'" + "\r\n" * 20000),  # quadratic over many tokens: about twenty seconds
    ],
    ids=["maple", "scala", "c", "python"],
)
def test_a_runaway_lexer_is_cut_short_and_the_code_shown_plain(language: str, code: str) -> None:
    with time_limit(30):
        for highlighted in (lambda: str(highlight(code, language)), lambda: in_thread(code, language)):
            start = cpu_seconds()
            assert highlighted() == plain(code)
            assert cpu_seconds() - start < 2 * lexing.budget(code) + CALL_LIMIT


@given(st.sampled_from(ALIASES), st.text(st.sampled_from(list("\"'`\\/*#<>([{}])-=:; \t\r\nax0\x00é")), max_size=200))
def test_any_text_in_any_language_comes_back_exactly_and_in_time(language: str, code: str) -> None:
    with time_limit(30):
        start = cpu_seconds()
        html = str(highlight(code, language))
        assert cpu_seconds() - start < CALL_LIMIT
    assert dom_text(html) == code.replace("\x00", "\ufffd")


def test_a_lexers_first_block_is_coloured_like_the_next() -> None:
    """The first HTML block compiles the JavaScript and CSS lexers too: not on the budget."""
    code = (
        "from vis_export.formats.highlight import highlight\n"
        "page = '<p><script>var x = 1;</script><style>a { color: red }</style></p>\\n'\n"
        "first = highlight(page, 'html')\n"
        "print(first == highlight(page, 'html'), '<span' in first)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.split() == ["True", "True"]


def test_a_lexer_that_moves_a_cr_is_shown_plain() -> None:
    """robotframework turns a CR into LF and keeps the length: the text itself is compared."""
    assert highlight("x\r", "robotframework") == plain("x\r")
    assert dom_text(str(highlight("x\r", "robotframework"))) == "x\r"


def real_code() -> dict[str, str]:
    import argparse
    import json
    import pathlib

    source = pathlib.Path(argparse.__file__).read_text()[:20000]
    data = json.dumps(
        {"items": [{"id": i, "name": f"item {i}", "tags": ["a", "b"], "ok": i % 2 == 0} for i in range(400)]}, indent=2
    )
    return {
        "python": source,
        "json": data,
        "scala": 'object Main { def main(a: Array[String]) = println("hi") }\n' * 50,
    }


def test_real_code_keeps_its_colours_the_same_in_any_thread() -> None:
    """The budget is far above what real code needs, and the worker (any thread but
    the main one) gives the same bytes as this process does."""
    with time_limit(60):
        for language, code in real_code().items():
            here = str(highlight(code, language))
            assert '<span class="' in here, language
            assert dom_text(here) == code
            assert in_thread(code, language) == here, language


def test_a_worker_that_stops_answering_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lexing, "WORKER_GRACE", 0.5)
    code = "def f():\n    return 1\n"
    with time_limit(30):
        expected = in_thread(code, "python")
        worker = lexing._worker().process
        assert worker is not None
        os.kill(worker.pid, signal.SIGSTOP)  # alive, silent, deaf to its own CPU timer
        assert in_thread(code, "python") == plain(code)
        assert worker.poll() is not None  # killed, not left behind
        assert in_thread(code, "python") == expected  # a new worker


T = TypeVar("T")


def slow_to_start(monkeypatch: pytest.MonkeyPatch, seconds: float) -> lexing._Worker:
    """A fresh worker, this process's, whose start takes ``seconds`` more (as on a loaded machine); stop it after."""
    start = f"import time; time.sleep({seconds}); from vis_export.formats.lexing import main; main()"
    monkeypatch.setattr(lexing, "WORKER_COMMAND", (sys.executable, "-c", start))
    worker = lexing._Worker()
    monkeypatch.setattr(lexing, "_worker", lambda: worker)
    return worker


def on_a_slow_worker(monkeypatch: pytest.MonkeyPatch, work: Callable[[], T]) -> T:
    """``work``'s result, run in another thread (which lexes in the worker process) with a fresh worker
    whose start takes a second more than a small document's whole budget."""
    worker = slow_to_start(monkeypatch, lexing.DOCUMENT_BASE + 1)
    results: list[T] = []
    thread = threading.Thread(target=lambda: results.append(work()))
    try:
        with time_limit(60):
            thread.start()
            thread.join()
    finally:
        worker.stop()
    assert len(results) == 1, "the work raised"
    return results[0]


def test_a_slow_worker_start_is_not_on_the_documents_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh worker's start (seconds on a loaded machine) is not lexing: counted, it left a document's next blocks
    plain, and the bytes of an HTML page depended on the load (R7). Its start here takes longer than the whole budget
    of a small document."""
    budget = lexing.HighlightBudget()
    blocks = [("python", "def f():\n    return 1\n"), ("html", "<p>x</p>\n"), ("python", "x = 1\n")]
    shown = on_a_slow_worker(monkeypatch, lambda: [str(highlight(c, lang, budget=budget)) for lang, c in blocks])
    assert dom_texts(shown) == [code for _, code in blocks]
    assert all('<span class="' in html for html in shown), shown
    assert budget.spent < 1  # the worker's CPU for three small blocks, not its start


def test_an_html_page_is_the_same_from_a_fresh_worker_that_was_slow_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bytes Dask's threads wrote differed from this process's on a loaded machine (R7)."""
    from vis_export.formats.html import to_html

    blocks = [("python", "def f():\n    return 1\n"), ("html", "<p>x</p>\n"), ("json", '{"a": [1, 2]}\n')] * 3
    session = one_message(*({"type": "code", "language": language, "text": text} for language, text in blocks))
    here = to_html(session)
    assert on_a_slow_worker(monkeypatch, lambda: to_html(session)) == here and here.count("<pre") == len(blocks)


def test_a_worker_that_never_starts_leaves_the_code_plain_in_bounded_time(monkeypatch: pytest.MonkeyPatch) -> None:
    worker = slow_to_start(monkeypatch, 60)
    monkeypatch.setattr(lexing, "WORKER_START", 0.5)
    code = "def f():\n    return 1\n"
    try:
        with time_limit(30):
            start = time.monotonic()
            assert in_thread(code, "python") == plain(code)
            assert time.monotonic() - start < 10
            assert worker.process is None  # killed, not left behind
    finally:
        worker.stop()


def _highlight_in_child(queue: Any) -> None:
    queue.put(in_thread("def f(): pass\n", "python"))


def test_a_forked_child_has_its_own_worker() -> None:
    """PDF parts are forked: a child must never talk over its parent's worker pipes."""
    with time_limit(30):
        expected = in_thread("def f(): pass\n", "python")  # the parent's worker is running
        context = get_context("fork")
        queue = context.Queue()
        child = context.Process(target=_highlight_in_child, args=(queue,))
        child.start()
        assert queue.get(timeout=20) == expected
        child.join(20)
        assert in_thread("def f(): pass\n", "python") == expected


def test_a_firing_as_the_collection_callback_starts_does_not_raise_there() -> None:
    """Python takes a signal as a function starts: the timer may fire at the very
    start of the callback that marks a collection, before it has marked it.
    Raised there, the stop would be lost and reported as unraisable (it failed
    a CI run); the timer fires again instead."""
    started: list[Any] = []

    def watch(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code is lexing._collection_starts.__code__:
            started.append(frame)

    sys.setprofile(watch)
    try:
        lexing._collection_starts("start", {})  # a real frame of the callback, as it starts
    finally:
        sys.setprofile(None)
        lexing._collection_ends("stop", {})
    assert lexing._can_time() and len(started) == 1 and not lexing._collecting
    lexing._armed = True
    try:
        lexing._on_timer(signal.SIGVTALRM, started[0])  # no Overrun here
        with pytest.raises(lexing.Overrun), time_limit(10):  # it fires again, and stops the lexer
            while True:
                pass
        with pytest.raises(lexing.Overrun):
            lexing._on_timer(signal.SIGVTALRM, sys._getframe())  # anywhere else, it stops the lexer
    finally:
        lexing._disarm()


def test_the_budget_stops_a_lexer_even_when_collections_run_code_of_their_own() -> None:
    """A collector callback that takes CPU time (as hypothesis registers one) is
    where the timer often fires: raised there, the stop would be lost (and
    reported as unraisable); it fires again until it stops the lexer."""
    import gc

    class Hoarder:
        """A lexer that never ends and keeps a while what it makes: the collector runs often."""

        def get_tokens_unprocessed(self, text: str) -> Any:
            kept = []
            while True:
                kept.append([text])
                if len(kept) > 2000:
                    kept.clear()
                yield 0, Text, text

    def busy(phase: str, info: dict[str, int]) -> None:  # about as long as the lexing between two collections
        if phase == "stop":
            for _ in range(20):
                sum(range(1000))

    assert lexing._can_time()  # the timer's handler, installed
    gc.callbacks.append(busy)
    try:
        with time_limit(30):  # a stop lost in a callback: this lexer would never end
            for _ in range(10):
                start = cpu_seconds()
                with pytest.raises(lexing.Overrun):
                    lexing._timed(Hoarder(), "x", 0.05)
                assert cpu_seconds() - start < 5
    finally:
        gc.callbacks.remove(busy)


def test_the_budget_is_the_lexers_own_cpu_and_stops_it_behind_a_thread_busy_in_c() -> None:
    """A thread at work in C without the interpreter lock (hashing here; a search
    engine's Rust threads) ran when the process's CPU timer ran out, so the kernel
    sent it the signal, and the main thread noticed only when that thread next took
    the lock: the lexer ran on for as long as the thread's call (once, in the whole
    suite, 30 s). The budget is the lexer's own CPU, and its signal goes to it."""
    import hashlib

    done = threading.Event()

    def hashing() -> None:  # about a second in C at a time, without the interpreter lock
        while not done.is_set():
            hashlib.pbkdf2_hmac("sha256", b"x", b"salt", 3_000_000)

    assert lexing._can_time()
    busy = threading.Thread(target=hashing)
    busy.start()
    spent = []
    try:
        with time_limit(120):
            for _ in range(10):
                start = time.thread_time()
                with pytest.raises(lexing.Overrun):
                    lexing._timed(Endless(), "x", 0.05)
                spent.append(time.thread_time() - start)
    finally:
        done.set()
        busy.join()
    assert all(0.045 < seconds < 0.5 for seconds in spent), spent


def test_the_budget_stops_a_lexer_when_collections_fill_nearly_all_of_its_time() -> None:
    """A collection after every object, each with a callback that takes its time (a large
    process, or callbacks of others'): nearly every firing lands in a collection, where
    it cannot raise. The collection's end pauses the collector, so the next one stops the
    lexer; the collector runs again once the lexer is stopped."""
    import gc

    class Endless:
        def get_tokens_unprocessed(self, text: str) -> Any:
            while True:
                yield 0, Text, [text]  # a container: the collector counts it

    def busy(phase: str, info: dict[str, int]) -> None:  # Python all along: where a firing is taken
        if phase == "stop":
            for _ in range(300_000):
                pass

    assert lexing._can_time() and gc.isenabled()
    thresholds = gc.get_threshold()
    gc.callbacks.append(busy)
    gc.set_threshold(1)
    try:
        with time_limit(60):
            start = cpu_seconds()
            with pytest.raises(lexing.Overrun):
                lexing._timed(Endless(), "x", 0.05)
            assert cpu_seconds() - start < 1
        assert gc.isenabled()
    finally:
        gc.set_threshold(*thresholds)
        gc.callbacks.remove(busy)


# --- the document's budget (R6) -----------------------------------------------------------

RUNAWAY = '"' + "\\" * 40 + "\n" * 100  # maple backtracks for minutes on it; 141 characters


def small_blocks_session(count: int, language: str, text: str) -> Any:
    return one_message(*({"type": "code", "language": language, "text": text} for _ in range(count)))


@pytest.mark.parametrize("projection", ["html", "typst", "terminal"])
def test_many_small_runaway_blocks_cost_one_budget_and_are_all_shown(projection: str) -> None:
    """1,000 small ``maple`` blocks that each overran their own budget took about
    20 ms apiece, tried again block after block (5,000 of them: over 100 s). A
    lexer that overran is not tried again in the document: every block plain, all there."""
    from vis_export.formats.html import to_html
    from vis_export.formats.pdf_typst import TypstProjector
    from vis_export.formats.terminal_projector import to_terminal

    session = small_blocks_session(1000, "maple", RUNAWAY)
    with time_limit(120):
        start = time.process_time()
        if projection == "html":
            codes = code_elements(parse(to_html(session)))
            shown = [text_content(code) for code in codes]
            assert not any(list(elements(code, "span")) for code in codes)
        elif projection == "terminal":
            drawn = to_terminal(session)
            shown = [RUNAWAY] * drawn.count(RUNAWAY)
        else:
            document = TypstProjector().document(session)
            chunks = [b["code"]["chunks"] for m in document["messages"] for b in m["blocks"]]
            shown = ["\n".join("".join(run[1] for run in chunk) for chunk in code) + "\n" for code in chunks]
            assert all(run[0] == "" for code in chunks for chunk in code for run in chunk)
        spent = time.process_time() - start
    assert shown == [RUNAWAY] * 1000
    assert spent < 10


def test_a_lexer_that_overran_is_not_tried_again_in_that_document_only() -> None:
    budget = lexing.HighlightBudget()
    with time_limit(30):
        assert budget.runs("maple", RUNAWAY) is None
        assert budget.runs("maple", "x := 1;") is None  # harmless, but its lexer overran here
        assert budget.runs("python", "x = 1\n") is not None  # another lexer is still tried
        assert lexing.HighlightBudget().runs("maple", "x := 1;") is not None  # a new document tries again


def test_a_documents_lexing_in_all_stays_within_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lexers that each overrun once (every one a first use, with its compile time)
    cannot add up past the document's budget: then every block is plain."""
    monkeypatch.setattr(lexing, "DOCUMENT_BASE", 0.3)
    monkeypatch.setattr(lexing, "_WARM", set())  # first uses here, whatever other tests lexed in this process
    budget = lexing.HighlightBudget()
    runaway = '"' + "\\" * 80
    with time_limit(60):
        for language in ["maple", "scala", "cddl", "chapel", "rego", "smithy"] * 3:
            assert budget.runs(language, runaway) is None
    assert budget.spent < budget.allowed + 0.2  # the last block stops within a firing or two
    assert budget.runs("python", "x = 1\n") is None  # nothing left: plain, without lexing


def test_a_budget_of_under_a_nanosecond_still_stops_the_lexer() -> None:
    """What a document has left may be a sliver of a second; ``timer_settime``
    takes whole nanoseconds, and a time of zero turns the timer off: a budget
    of 5e-10 s let the lexer run unbounded (setitimer rounds up)."""
    assert lexing._can_time()
    for seconds in (5e-10, 1e-12):
        with time_limit(10), pytest.raises(lexing.Overrun):
            lexing._timed(Endless(), "x", seconds)


def test_a_firing_as_the_timer_is_armed_leaves_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """A short budget (what a document has left) may run out as the call that arms
    the timer returns, where Python takes the signal: the stop must still turn the
    timer off, or its next firing raises ``Overrun`` in whatever runs next."""
    from vis_export.formats import cputimer

    arm = cputimer.arm
    fired: list[float] = []

    def fires_at_once(seconds: float) -> None:
        arm(seconds)
        if seconds and not fired:
            fired.append(seconds)
            lexing._on_timer(signal.SIGVTALRM, sys._getframe())

    assert lexing._can_time()
    monkeypatch.setattr(cputimer, "arm", fires_at_once)
    with pytest.raises(lexing.Overrun):
        lexing._timed(lexing.lexer_for("python"), "x = 1\n", 1.0)
    monkeypatch.undo()
    assert not lexing._armed
    started = time.thread_time()
    while time.thread_time() - started < 0.05:  # ten times AGAIN: no stray Overrun
        pass


def _a_runaway_block_in_a_fresh_worker_is_stopped() -> None:
    """A runaway ``maple`` block, lexed by a worker started in the signal's state
    the caller set, comes back plain within its budget."""
    code = '"' + "\\" * 80
    lexing._worker().stop()
    with time_limit(60):
        start = cpu_seconds()
        assert str(highlight(code, "maple")) == plain(code)
        assert cpu_seconds() - start < 2 * lexing.budget(code) + CALL_LIMIT


def test_a_runaway_lexer_is_stopped_where_the_application_blocks_the_timers_signal() -> None:
    """An application may block signals in its main thread and wait for them in
    another: the timer's signal goes to the main thread alone, and the lexer ran
    unbounded. Such a block goes to the worker, which unblocks the signal its
    start inherited."""
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGVTALRM])
    try:
        _a_runaway_block_in_a_fresh_worker_is_stopped()
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGVTALRM])
    assert lexing._can_time()


def test_a_timer_the_c_library_could_not_make_leaves_the_virtual_timer_in_charge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``timer_create`` may fail (``EAGAIN``: the signal queue full) and the budget
    takes the process's virtual timer; a timer made at the next try turned off only
    itself, and the virtual timer's late signal would stop a later block early."""
    from vis_export.formats import cputimer

    real = cputimer._library()
    assert real is not None
    create = real.timer_create
    tries: list[int] = []

    class FailsOnce:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def timer_create(self, *args: Any) -> int:
            tries.append(1)
            return -1 if len(tries) == 1 else int(create(*args))

    monkeypatch.setattr(cputimer, "_library", FailsOnce)
    monkeypatch.setattr(cputimer, "_timer", cache(cputimer._timer.__wrapped__))  # not tried yet
    try:
        cputimer.arm(10.0)
        cputimer.arm(0)
        assert signal.getitimer(signal.ITIMER_VIRTUAL)[0] == 0
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)


def _stop_in_child(queue: Any, parent: int) -> None:
    """A runaway block's stop in this forked child whose process id is the ``parent``'s, as a grandchild's may be
    (ids are given again once free): what stopped it, or why nothing did."""
    real = os.getpid
    os.getpid = lambda: parent
    try:
        with time_limit(10):
            lexing._timed(Endless(), "x", 0.05)
        stopped = "nothing"
    except BaseException as stop:  # noqa: BLE001 - reported to the parent, which judges it
        stopped = f"{type(stop).__name__}: {stop}"
    finally:
        os.getpid = real  # before the queue's thread starts, which notes the process's id
    queue.put(stopped)


def test_a_forked_child_times_a_block_with_a_timer_of_its_own() -> None:
    """A child inherits its parent's timer's id but not its timer; told apart by the process id, a child given
    its grandparent's id (the parent here) armed that id, which names no timer in the child: ``EINVAL``."""
    from vis_export.formats import cputimer

    assert lexing._can_time()
    cputimer.arm(0)  # this process's timer is made
    context = get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_stop_in_child, args=(queue, os.getpid()))
    child.start()
    try:
        assert queue.get(timeout=60) == "Overrun: "
    finally:
        child.join(20)


def test_a_runaway_lexer_is_stopped_where_the_application_ignores_the_timers_signal() -> None:
    """An application that ignores ``SIGVTALRM`` lexes in the worker, which its start
    left ignoring it too (exec keeps an ignored signal): each runaway block ran there
    until the worker was killed, 12 CPU-s."""
    previous = signal.signal(signal.SIGVTALRM, signal.SIG_IGN)
    try:
        _a_runaway_block_in_a_fresh_worker_is_stopped()
    finally:
        signal.signal(signal.SIGVTALRM, previous)
