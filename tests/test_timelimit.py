"""The tests' own bounds: a bound on work counts CPU, so a loaded machine cannot fail it."""

from __future__ import annotations

import time

import pytest
from timelimit import cpu_limit


def test_a_block_over_its_cpu_fails() -> None:
    with pytest.raises(AssertionError, match="CPU-s, more than 0.05"), cpu_limit(0.05):
        end = time.thread_time() + 0.2
        while time.thread_time() < end:
            pass


def test_waiting_is_no_cpu() -> None:
    with cpu_limit(0.05):
        time.sleep(0.3)  # as a loaded machine stretches a block's wall time, not its CPU
