"""One session's file, and what reading found of a session: what a
conversion does the same way wherever it runs, in this process
(``jobs.conversion``) or on a Dask worker (``distributed``), so it lives
below both."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vis_export.formats.options import ExportOptions
from vis_export.model import Session
from vis_export.policy import visible_session
from vis_export.problems import Problem
from vis_export.sources.result import LoadResult

if TYPE_CHECKING:
    from vis_export.sources.parts import Part


@dataclass(frozen=True, slots=True)
class Reading:
    """What reading found of one session (or of a source that gave none):
    enough to report it and to name its file, without the session itself."""

    source: str
    session_id: str | None  # None: nothing loaded
    problems: tuple[Problem, ...]

    @staticmethod
    def of(result: LoadResult, to: str | None = None, options: ExportOptions | None = None) -> Reading:
        """With the format and options of a conversion, the session's attachments
        that the format would show but cannot find are problems too (warnings)."""
        problems = result.problems
        if result.session is not None and to is not None and options is not None:
            problems += tuple(conversion_warnings(result.session, to, options))
        return Reading(result.source, result.session.id if result.session else None, problems)


def echoed(reading: Reading, before: Reading | None, part: Part, k: int) -> bool:
    """Whether ``reading``, the first of a store's later part, only repeats the
    failure the part before it ended with: a store split into parts for the
    workers, gone since the job was planned (or unreadable), fails in each
    part, where read whole, as in one process, it fails once."""
    later = k == 0 and part.sessions is not None and part.sessions[0] > 0
    return later and reading.session_id is None and reading == before


def conversion_warnings(session: Session, to: str, options: ExportOptions) -> list[Problem]:
    """What the format ``to`` cannot do for ``session``: attachments it cannot find, a
    provider request no API takes (``formats.provider.unreplayable``)."""
    from vis_export.formats import ALIASES

    found = missing_attachments(session, to, options)
    if ALIASES.get(to, to) == "provider":
        from vis_export.formats.provider import unreplayable

        found += unreplayable(session, options)
    return found


def missing_attachments(session: Session, to: str, options: ExportOptions) -> list[Problem]:
    """The attachments of ``session`` not found in ``options.attachments``, when
    format ``to`` uses that folder (a plugin's format is taken to)."""
    from vis_export.formats import ALIASES, SPECIFIC_OPTIONS, TAKES

    if options.attachments is None or "attachments" not in TAKES.get(ALIASES.get(to, to), SPECIFIC_OPTIONS):
        return []
    from vis_export.attachments import missing

    return missing(session, options.attachments)


def export(session: Session, target: Path, to: str, options: ExportOptions, make_folder: bool = True) -> str | None:
    """Writes one session's file: ``None``, or the line that says why it was not
    (one session that cannot be written never stops the others)."""
    from vis_export.output import write_atomic

    try:
        write_atomic(target, _output(session, to, options), make_folder)
    except Exception as error:  # noqa: BLE001 - reported, and the batch goes on
        return not_exported(session.source, session.id, to, error)
    return None


def rendered(session: Session, to: str, options: ExportOptions) -> bytes | str:
    """One session's file made in memory: its bytes, or the line that says why not."""
    from vis_export.output import as_bytes

    try:
        return as_bytes(_output(session, to, options))
    except Exception as error:  # noqa: BLE001 - reported, and the batch goes on
        return not_exported(session.source, session.id, to, error)


def _output(session: Session, to: str, options: ExportOptions) -> str | bytes | Iterable[str]:
    from vis_export.formats import get_format

    fmt = get_format(to)
    view = visible_session(session, options.reasoning, options.redaction)  # R2: all the format receives
    return fmt.pieces(view, options) if fmt.pieces else fmt.render(view, options)


def not_exported(source: str, session_id: str, to: str, error: Exception) -> str:
    from vis_export.formats import get_format

    reason = getattr(error, "strerror", None) or error
    return f"{source}: session {session_id}: not exported to {get_format(to).name}: {reason}"
