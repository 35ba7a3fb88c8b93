"""How times (milliseconds since the epoch, UTC) are shown to people."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def epoch_ms(moment: datetime) -> int:
    """``moment`` (aware) in whole milliseconds since the epoch, exactly: through
    ``timestamp()``, a float, one time in 160 up to the year 9999 came out a
    millisecond early (``4175-10-05T19:48:06.831Z`` as 830)."""
    return (moment - EPOCH) // _MS


def aware(moment: datetime) -> datetime:
    """``moment``, in UTC if it names no zone: never the machine's own, so the
    same file gives the same times everywhere (R7)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _moment(ms: int) -> datetime:
    return EPOCH + ms * _MS


def utc(ms: int | None) -> str:
    """``2025-02-19 21:20:00Z``; ``-`` when unknown."""
    if ms is None:
        return "-"
    return _moment(ms).strftime("%Y-%m-%d %H:%M:%SZ")


def iso(ms: int) -> str:
    """``2025-02-19T21:20:00.000Z``: for machines (front matter, ``<time datetime>``)."""
    moment = _moment(ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def millis(value: str) -> int:
    """A time people write: ``2025-02-19``, ``2025-02-19T21:20:00`` (UTC unless it
    says otherwise) or milliseconds; ``ValueError`` for anything else."""
    if value.isdigit():
        return int(value)
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{value!r} is not a date, a date and time, or milliseconds") from None
    return epoch_ms(aware(moment))


Moment = int | str | date | datetime


def as_millis(value: Moment) -> int:
    """A time as the API takes it, in milliseconds: milliseconds, what ``millis``
    reads (the command line's ``--since``/``--until``), or a ``datetime`` (UTC
    unless it says otherwise) or ``date`` (its midnight, UTC)."""
    if isinstance(value, bool):
        raise TypeError("a time is milliseconds, a date as text, a datetime or a date, not a bool")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return millis(value)
    if isinstance(value, datetime):
        return epoch_ms(aware(value))
    if isinstance(value, date):
        return epoch_ms(datetime(value.year, value.month, value.day, tzinfo=UTC))
    raise TypeError(f"a time is milliseconds, a date as text, a datetime or a date, not a {type(value).__name__}")
