"""How times (milliseconds since the epoch, UTC) are shown to people."""

from __future__ import annotations

from datetime import UTC, datetime


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
