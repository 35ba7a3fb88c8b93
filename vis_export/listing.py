"""What ``sessions`` lists of a session: one summary, the same for the command
line (``sessions --json``) and the reading room (``/`` and ``/api/sessions``),
small enough to keep for 100,000 sessions without their messages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vis_export.formats.facts import SessionFacts
from vis_export.model import Session


@dataclass(frozen=True, slots=True)
class SessionSummary:
    id: str
    title: str | None  # as stored (``heading`` is the line a person reads)
    heading: str
    messages: int
    first_at: int | None
    last_at: int | None
    models: tuple[str, ...]
    source: str
    where: str | None = None  # an imported transcript's working directory or project folder

    @classmethod
    def of(cls, session: Session) -> SessionSummary:
        facts = SessionFacts.of(session)
        return cls(
            session.id,
            session.title,
            facts.title,
            len(session.messages),
            session.first_time,
            session.last_time,
            facts.models,
            session.source,
            _where(session),
        )

    def row(self) -> dict[str, Any]:
        """The object ``sessions --json`` prints (times in ms)."""
        return {
            "id": self.id,
            "title": self.title,
            "messages": self.messages,
            "first_at": self.first_at,
            "last_at": self.last_at,
            "source": self.source,
        } | ({"where": self.where} if self.where is not None else {})


def _where(session: Session) -> str | None:
    """Where an imported session was worked on (its facts, ``docs/sources.md``), if it says."""
    for key in ("cwd", "project"):
        value = session.metadata.get(key)
        if isinstance(value, str) and value:
            return value
    return None
