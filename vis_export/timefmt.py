"""How times (milliseconds since the epoch, UTC) are shown to people."""

from __future__ import annotations

from datetime import UTC, date, datetime


def utc(ms: int | None) -> str:
    """``2025-02-19 21:20:00Z``; ``-`` when unknown."""
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def iso(ms: int) -> str:
    """``2025-02-19T21:20:00.000Z``: for machines (front matter, ``<time datetime>``)."""
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
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
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


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
        moment = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return int(moment.timestamp() * 1000)
    if isinstance(value, date):
        return int(datetime(value.year, value.month, value.day, tzinfo=UTC).timestamp() * 1000)
    raise TypeError(f"a time is milliseconds, a date as text, a datetime or a date, not a {type(value).__name__}")
