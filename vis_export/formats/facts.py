"""What every format shows of a session as a whole, decided once."""

from __future__ import annotations

from dataclasses import dataclass

from vis_export.model import Session
from vis_export.strings import data_label


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """``title``: the stored title as a label (``strings.data_label``), or ``Session <id>`` when it has
    none or only whitespace; ``created``: the stored time, else the first
    message's (ms, or ``None`` for an empty session without one); ``models``:
    every model that answered, sorted."""

    title: str
    created: int | None
    models: tuple[str, ...]

    @classmethod
    def of(cls, session: Session) -> SessionFacts:
        return cls(
            title=data_label(session.title or "") or f"Session {data_label(session.id)}",
            created=session.created_at if session.created_at is not None else session.first_time,
            models=tuple(sorted({data_label(m.model) for m in session.messages if m.model})),
        )
