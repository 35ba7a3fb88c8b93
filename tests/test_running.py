"""The runner a job is given (``vis_export.running``): results in the units'
order, each yielded once its unit's work is done."""

from __future__ import annotations

from hypothesis import given, strategies as st

from vis_export.running import InProcessRunner, Runner, Task, plain


@given(st.lists(st.integers()))
def test_in_process_results_come_in_source_order(units: list[int]) -> None:
    runner: Runner = InProcessRunner()
    assert list(runner.map(plain(lambda unit: (unit, unit * 2)), units)) == [(unit, unit * 2) for unit in units]


@given(st.lists(st.integers(), min_size=1))
def test_in_process_work_runs_as_its_result_is_taken(units: list[int]) -> None:
    """A sink that takes results as they come has each unit's work done just
    before it, never all of it first (an index job commits as it goes)."""
    done: list[int] = []

    def work(unit: int) -> int:
        done.append(unit)
        return len(done)

    results = InProcessRunner().map(plain(work), units)
    assert done == []
    for taken, result in enumerate(results, start=1):
        assert result == taken == len(done)


def halves(unit: tuple[int, ...]) -> tuple[int, ...]:
    return unit


def split_in_two(unit: tuple[int, ...], result: tuple[int, ...]) -> list[tuple[int, ...]]:
    """A unit of more than one number asks for its two halves next."""
    if len(unit) < 2:
        return []
    middle = len(unit) // 2
    return [unit[:middle], unit[middle:]]


def in_source_order(unit: tuple[int, ...]) -> list[tuple[int, ...]]:
    """A unit and, right after it, each of its follow-ups' own (depth first)."""
    return [unit, *(found for half in split_in_two(unit, unit) for found in in_source_order(half))]


@given(st.lists(st.lists(st.integers(), max_size=9).map(tuple), max_size=6))
def test_follow_ups_come_right_after_the_result_that_asked_for_them(units: list[tuple[int, ...]]) -> None:
    task = Task(halves, more=split_in_two)
    assert list(InProcessRunner().map(task, units)) == [found for unit in units for found in in_source_order(unit)]
