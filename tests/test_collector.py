"""The garbage collector's one home (``vis_export.collector``): loading's pause,
a PDF layout's young threshold and the lexing budget's pause nest in any
order, each putting back only what it changed."""

from __future__ import annotations

import ast
import gc
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from itertools import permutations
from pathlib import Path

import pytest

from vis_export.collector import Pause, paused, young_threshold

YOUNG = 20_000


@contextmanager
def lexing_pause() -> Iterator[None]:
    """As the lexing budget pauses: from a collection's end, until it disarms."""
    pause = Pause()
    pause.pause()
    try:
        yield
    finally:
        pause.resume()


def load() -> AbstractContextManager[None]:
    return paused()


def layout() -> AbstractContextManager[None]:
    return young_threshold(YOUNG)


def inside(kind: Callable[[], AbstractContextManager[None]], before: tuple[bool, tuple[int, int, int]]) -> None:
    """What ``kind`` sets within its block, given the state it was entered in."""
    enabled, thresholds = before
    if kind is layout:
        assert gc.get_threshold() == (max(YOUNG, thresholds[0]), *thresholds[1:])
        assert gc.isenabled() == enabled
    else:
        assert not gc.isenabled()
        assert gc.get_threshold() == thresholds


def state() -> tuple[bool, tuple[int, int, int]]:
    return gc.isenabled(), gc.get_threshold()


@contextmanager
def callers(enabled: bool, thresholds: tuple[int, int, int]) -> Iterator[None]:
    """The caller's own collector settings, and Python's own put back after."""
    was_enabled, was_thresholds = state()
    gc.set_threshold(*thresholds)
    (gc.enable if enabled else gc.disable)()
    try:
        yield
    finally:
        gc.set_threshold(*was_thresholds)
        (gc.enable if was_enabled else gc.disable)()


ORDERS = list(permutations([load, layout, lexing_pause]))


@pytest.mark.parametrize("order", ORDERS, ids=["-".join(kind.__name__ for kind in order) for order in ORDERS])
@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("thresholds", [(700, 10, 10), (500, 3, 7), (50_000, 10, 10)])
def test_the_three_nest_in_any_order_and_each_puts_back_what_it_found(
    order: tuple[Callable[[], AbstractContextManager[None]], ...], enabled: bool, thresholds: tuple[int, int, int]
) -> None:
    """The lexing pause within a PDF layout within a load, and every other order,
    with the collector on or off and any threshold of the caller's: at each
    level's end the collector is as that level found it."""
    with callers(enabled, thresholds):
        outer, middle, inner = order
        first = state()
        with outer():
            inside(outer, first)
            second = state()
            with middle():
                inside(middle, second)
                third = state()
                with inner():
                    inside(inner, third)
                assert state() == third
            assert state() == second
        assert state() == first


def test_a_threshold_set_within_a_layout_is_left_as_it_was_set() -> None:
    """The young threshold is put back only as the layout raised it: the older
    generations' and a young one set meanwhile (by the caller's own code, a
    callback) are the caller's (all three were put back to what the layout found)."""
    with callers(True, (700, 10, 10)):
        with young_threshold(YOUNG):
            gc.set_threshold(YOUNG, 20, 30)
        assert gc.get_threshold() == (700, 20, 30)
        with young_threshold(YOUNG):
            gc.set_threshold(1_000, 20, 30)
        assert gc.get_threshold() == (1_000, 20, 30)


def test_a_pause_turns_on_only_a_collector_it_turned_off() -> None:
    with callers(False, (700, 10, 10)):
        pause = Pause()
        pause.pause()
        pause.resume()
        assert not gc.isenabled()
    with callers(True, (700, 10, 10)):
        pause.pause()
        pause.pause()  # a second firing in a collection while paused
        assert not gc.isenabled()
        pause.resume()
        assert gc.isenabled()


def test_no_other_module_reaches_the_collector() -> None:
    """Its settings are the whole process's: one module changes them, so that
    each change is made knowing of the others. Reading the heap (``gc.get_referents``,
    the redaction prefilter's way to a read-only map's dict) changes nothing."""
    package = Path(__file__).resolve().parent.parent / "vis_export"
    reaching = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "gc":
                reaching += [f"{path.relative_to(package).as_posix()}: {alias.name}" for alias in node.names]
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "gc":
                if node.attr not in _READING_THE_HEAP:
                    reaching.append(f"{path.relative_to(package).as_posix()}: {node.attr}")
    assert {place.partition(":")[0] for place in reaching} == {"collector.py"}, reaching


_READING_THE_HEAP = frozenset({"get_referents", "get_referrers", "get_objects", "is_tracked"})
