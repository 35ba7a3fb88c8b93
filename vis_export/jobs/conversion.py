"""``convert`` to files: one job, run in this process or on a Dask cluster.

The job is the same either way, and so is what it gives: reading reports its
problems in source order, the file names are decided from every session that
loaded before anything is written, each file is written atomically, and a
session that cannot be written is one line in session order. Only *where*
sessions are read and rendered differs, behind ``Strategy``: here, or by the
workers of a cluster (``vis_export.distributed``), which read their share of
the sources themselves.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from vis_export.formats.options import (
    ExportOptions,
    Folder,
    Paper,
    PdfEngine,
    ProviderFormat,
    Theme,
    ToolOutputLimit,
    options_given,
)
from vis_export.model import Session
from vis_export.policy import DEFAULT_REASONING, Reasoning, visible_session
from vis_export.problems import Problem
from vis_export.sources.result import LoadResult, report_lines

if TYPE_CHECKING:
    from vis_export.redaction import Redaction


class Report(Protocol):
    """Where a job's lines go: problems fail the job, warnings do not."""

    def problem(self, line: str) -> None: ...
    def warning(self, line: str) -> None: ...


@dataclass
class Lines:
    """A ``Report`` that keeps the lines (the API's default)."""

    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def problem(self, line: str) -> None:
        self.problems.append(line)

    def warning(self, line: str) -> None:
        self.warnings.append(line)


@dataclass(frozen=True)
class Redacting:
    """A ``Report`` whose lines quote no secret (R8): a problem's location may name a
    source's key, its message a value."""

    report: Report
    redaction: Redaction

    def problem(self, line: str) -> None:
        self.report.problem(self._shown(line))

    def warning(self, line: str) -> None:
        self.report.warning(self._shown(line))

    def _shown(self, line: str) -> str:
        from vis_export.redaction.view import redacted_line  # only a redacting caller needs its dependencies

        return redacted_line(line, self.redaction)


def redacting(report: Report | None, redaction: Redaction | None) -> Report:
    """``report`` (by default a new ``Lines``), redacting its lines when ``redaction`` is given."""
    report = report if report is not None else Lines()
    return report if redaction is None else Redacting(report, redaction)


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


@dataclass
class Outcome:
    """``failed``: a problem was reported (exit status 1); ``refused``: sources
    with a session that could not be read; ``written``: the files, in order."""

    failed: bool = False
    refused: list[str] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)


class Strategy(Protocol):
    """Where sessions are read and rendered. ``read`` gives every reading in
    source order (a strategy may render them then, for ``output`` with
    ``options``, ahead of knowing their names); ``write``
    takes (position among the readings, target) in session order and gives,
    in the same order, ``None`` for a file written or the line saying why it
    was not."""

    def read(
        self, sources: Sequence[str], lenient: bool, to: str, options: ExportOptions, output: str
    ) -> list[Reading]: ...
    def write(
        self, jobs: list[tuple[int, Path]], to: str, options: ExportOptions, advance: Callable[[], None]
    ) -> Iterator[str | None]: ...


def convert(
    sources: Sequence[str | os.PathLike[str]],
    to: str,
    output: str | os.PathLike[str],
    options: ExportOptions | None = None,
    *,
    reasoning: Reasoning = DEFAULT_REASONING,
    timestamps: bool = False,
    no_tools: bool = False,
    tool_output_limit: ToolOutputLimit = None,
    attachments: Folder = None,
    front_matter: bool = False,
    template_dir: Folder = None,
    theme: Theme | None = None,
    no_highlight: bool = False,
    paper: Paper = "A4",
    pdf_engine: PdfEngine = "weasyprint",
    provider_format: ProviderFormat = "openai",
    redact: Redaction | bool | None = None,
    session_ids: Iterable[str] = (),
    lenient: bool = False,
    dask: str | None = None,
    report: Report | None = None,
    progress: Callable[[int], Callable[[], None]] | None = None,
    rendering: Callable[[Session], None] | None = None,
) -> Outcome:
    """Write each session of ``sources`` to ``output`` in format ``to`` (a file
    for one session, else a folder of ``<session_id>.<ext>``), as ``vis-export
    convert -o`` does; problems and warnings go to ``report`` (by default kept
    in a ``Lines``).

    The options are the command's, as keywords (``reasoning="none"``,
    ``no_tools=True``; see ``ExportOptions``), or all of them at once as
    ``options``, not both. ``session_ids``: only these sessions (``--session``).
    ``dask`` runs the job on a Dask cluster: a scheduler's address
    (``tcp://HOST:8786``) or ``local[:N]`` worker processes; the files, names
    and lines are the same as without it. ``progress(total)`` returns what is
    called once per session done; ``rendering`` is called before each session
    is rendered in this process."""
    given = options_given(locals())
    if options is not None and given != ExportOptions():
        raise TypeError("convert() takes its options as keywords or as options=ExportOptions(...), not both")
    return convert_with(sources, to, output, options or given, session_ids, lenient, dask, report, progress, rendering)


def convert_with(
    sources: Sequence[str | os.PathLike[str]],
    to: str,
    output: str | os.PathLike[str],
    options: ExportOptions,
    session_ids: Iterable[str] = (),
    lenient: bool = False,
    dask: str | None = None,
    report: Report | None = None,
    progress: Callable[[int], Callable[[], None]] | None = None,
    rendering: Callable[[Session], None] | None = None,
) -> Outcome:
    """``convert`` with its options made (the command line's way in)."""
    from vis_export.formats import get_format

    names = [os.fspath(source) for source in sources]
    fmt = get_format(to)
    if fmt.needs is not None:
        fmt.needs(options)
    report = redacting(report, options.redaction)
    outcome = Outcome()
    job = _Job(names, fmt.name, fmt.extension, os.fspath(output), options, lenient)
    if dask is None:
        return job.run(InProcess(rendering), session_ids, report, progress, outcome)
    from vis_export.distributed.conversion import OnDask

    with OnDask.connected(dask, fmt.imports, progress) as strategy:
        return job.run(strategy, session_ids, report, None, outcome)


@dataclass(frozen=True)
class _Job:
    sources: list[str]
    to: str
    extension: str
    output: str
    options: ExportOptions
    lenient: bool

    def run(
        self,
        strategy: Strategy,
        session_ids: Iterable[str],
        report: Report,
        progress: Callable[[int], Callable[[], None]] | None,
        outcome: Outcome,
    ) -> Outcome:
        """Reads, reports, names, writes: the same steps and lines whatever the strategy."""
        from vis_export.jobs.jobfolder import sweep
        from vis_export.output import OutputError, output_paths, source_guard
        from vis_export.sources import SESSION_SUFFIXES

        def problem(line: str) -> None:
            outcome.failed = True
            report.problem(line)

        found: list[int] = []
        readings = strategy.read(self.sources, self.lenient, self.to, self.options, self.output)
        for position, reading in enumerate(readings):
            if reading.session_id is None:
                outcome.refused.append(reading.source)
            for fails, line in report_lines(reading.source, reading.session_id is not None, reading.problems):
                (problem if fails else report.warning)(line)
            if reading.session_id is not None:
                found.append(position)
        wanted = set(session_ids)
        if wanted:
            for line in unknown_ids(wanted, [readings[i].session_id or "" for i in found]):
                problem(line)
            found = [i for i in found if readings[i].session_id in wanted]
        if not found:
            if not outcome.failed:
                problem(NOTHING)
            return outcome
        try:
            targets = output_paths(self.output, [readings[i].session_id or "" for i in found], self.extension)
        except OutputError as error:
            problem(f"vis-export: {error}")
            return outcome
        sweep(targets[0].parent)  # what a job on Dask killed there left
        refusal = source_guard(self.sources, SESSION_SUFFIXES)
        options = replace(self.options, links_from=targets[0].parent)  # links go from where files go
        refused = {i: why for i, target in zip(found, targets, strict=True) if (why := refusal(target))}
        jobs = [(i, target) for i, target in zip(found, targets, strict=True) if i not in refused]
        advance = progress(len(found)) if progress is not None else (lambda: None)
        written = strategy.write(jobs, self.to, options, advance)
        for i, target in zip(found, targets, strict=True):
            if i in refused:
                problem(f"{target}: not written: {refused[i]}")
                advance()
                continue
            failure = next(written)
            if failure is None:
                outcome.written.append(target)
            else:
                problem(failure)
        return outcome


NOTHING = "vis-export: no sessions to convert"


def unknown_ids(wanted: set[str], found: Iterable[str]) -> list[str]:
    """A line for each ``--session`` id that no source holds, in order."""
    return [f"vis-export: no session with id {missing!r} in the sources" for missing in sorted(wanted - set(found))]


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


class InProcess:
    """Reads every source here, keeping the sessions, and writes them one by one."""

    def __init__(self, rendering: Callable[[Session], None] | None = None):
        self.rendering = rendering
        self.sessions: list[Session | None] = []

    def read(
        self, sources: Sequence[str], lenient: bool, to: str, options: ExportOptions, output: str
    ) -> list[Reading]:
        from vis_export.sources import read

        results = list(read(sources, lenient))
        self.sessions = [result.session for result in results]
        return [Reading.of(result, to, options) for result in results]

    def write(
        self, jobs: list[tuple[int, Path]], to: str, options: ExportOptions, advance: Callable[[], None]
    ) -> Iterator[str | None]:
        for position, target in jobs:
            session = self.sessions[position]
            assert session is not None
            if self.rendering is not None:
                self.rendering(session)
            line = export(session, target, to, options)
            advance()  # before the yield: after the last one, the generator is not resumed
            yield line
