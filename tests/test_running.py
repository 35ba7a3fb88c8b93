"""The runner a job is given (``vis_export.running``): results in the units'
order, each yielded once its unit's work is done."""

from __future__ import annotations

from hypothesis import given, strategies as st

from vis_export.running import InProcessRunner, Runner


@given(st.lists(st.integers()))
def test_in_process_results_come_in_source_order(units: list[int]) -> None:
    runner: Runner = InProcessRunner()
    assert list(runner.map(lambda unit: (unit, unit * 2), units)) == [(unit, unit * 2) for unit in units]


@given(st.lists(st.integers(), min_size=1))
def test_in_process_work_runs_as_its_result_is_taken(units: list[int]) -> None:
    """A sink that takes results as they come has each unit's work done just
    before it, never all of it first (an index job commits as it goes)."""
    done: list[int] = []

    def work(unit: int) -> int:
        done.append(unit)
        return len(done)

    results = InProcessRunner().map(work, units)
    assert done == []
    for taken, result in enumerate(results, start=1):
        assert result == taken == len(done)
