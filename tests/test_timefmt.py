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


_DIGITS = st.text("0123456789", min_size=1, max_size=7)
_STAMPS = st.one_of(
    st.builds(
        lambda ms, digits: iso(ms)[:19] + ("." + iso(ms)[20:23] + "456")[: digits + 1 if digits else 0] + "Z",
        _MS,
        st.sampled_from([0, 3, 6]),
    ),
    # near misses: impossible dates and hours, second 60, other digits, other lengths and zones
    st.builds(
        lambda year, month, day, hour, minute, second, fraction, zone: (
            f"{year}-{month}-{day}T{hour}:{minute}:{second}{fraction}{zone}"
        ),
        st.sampled_from(["1969", "1970", "2025", "2024", "9999", "0001", "0000", "१९७०"]),
        st.sampled_from(["01", "02", "12", "13", "00", "1"]),
        st.sampled_from(["01", "28", "29", "30", "31", "32", "00"]),
        st.sampled_from(["00", "10", "23", "24", "٠٠"]),
        st.sampled_from(["00", "59", "60"]),
        st.sampled_from(["00", "59", "60", "5"]),
        st.one_of(st.just(""), _DIGITS.map(lambda d: "." + d), st.just(",123")),
        st.sampled_from(["Z", "", "+00:00", "+05:30", "z", "Z "]),
    ),
)


@given(_STAMPS)
@example("1969-12-31T23:59:59.999Z")
@example("2024-02-29T10:00:00.000Z")
@example("2025-02-29T10:00:00.000Z")
@example("2025-06-01T10:0٠:00.000Z")  # a digit that is no ASCII digit where a table is looked up
@example("2025-06-01T10:00:00.123٤56Z")
@example("2025-06-01T10:00:00.1234Z")
@example("2025-06-01T10:00:00,123456Z")
def test_a_stamp_read_by_its_hour_is_the_exact_millisecond(stamp: str) -> None:
    """The common form of a transcript's stamps is read from its hour, cached, plus its
    minutes, seconds and milliseconds: always what reading it whole gives, None included."""
    from vis_export.sources import foreign

    assert iso_ms(stamp) == foreign._iso_ms(stamp)
    assert iso_ms(stamp) == foreign._iso_ms(stamp)  # the hour cached


def test_a_transcripts_stamps_are_read_whole_once_an_hour() -> None:
    from unittest import mock

    from vis_export.sources import foreign

    stamps = [f"2025-06-01T{hour:02d}:{n:02d}:{n:02d}.{n:03d}Z" for hour in (7, 8) for n in range(60)]
    with mock.patch.object(foreign, "_iso_ms", wraps=foreign._iso_ms) as whole:
        foreign._HOURS.clear()
        assert [iso_ms(s) for s in stamps] == [millis(s) for s in stamps]
    assert whole.call_count == 2
