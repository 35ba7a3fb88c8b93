"""Times read from text and written back are the same millisecond (R7)."""

from __future__ import annotations

from hypothesis import example, given, strategies as st

from vis_export.contract.check import MAX_TIME
from vis_export.sources.foreign import iso_ms
from vis_export.timefmt import iso, millis

_MS = st.integers(0, MAX_TIME)


@given(_MS)
@example(69_607_108_086_831)
def test_a_time_written_and_read_again_is_the_same_millisecond(ms: int) -> None:
    """Through ``timestamp()``, a float, one time in 160 up to the year 9999 read a
    millisecond early: ``4175-10-05T19:48:06.831Z`` came back as ``…:06.830``."""
    written = iso(ms)
    assert millis(written) == ms
    assert iso_ms(written) == ms
    assert iso(millis(written)) == written


def test_a_time_that_names_no_zone_is_utc_whatever_the_machines_zone() -> None:
    assert millis("1970-01-01T00:00:01") == 1000
    assert iso_ms("1970-01-01T00:00:01.500") == 1500
