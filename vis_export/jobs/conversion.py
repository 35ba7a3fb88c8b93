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
from typing import TYPE_CHECKING, Protocol, TextIO

from vis_export.errors import VisExportError
from vis_export.exporting import Reading, conversion_warnings, export
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
from vis_export.policy import DEFAULT_REASONING, Reasoning, SessionView, visible_session
from vis_export.reporting import Report, redacting
from vis_export.sources.result import report_lines

if TYPE_CHECKING:
    from vis_export.formats import Format
    from vis_export.redaction import Redaction


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


class NotStreamable(VisExportError):
    """The sessions cannot go to that stream as asked (a binary format to a
    terminal, several sessions in a format of one document each): the
    command line says it as a usage error."""

    status = 2


def convert_to_stream(
    sources: Sequence[str | os.PathLike[str]],
    to: str,
    stream: TextIO,
    options: ExportOptions,
    session_ids: Iterable[str] = (),
    lenient: bool = False,
    report: Report | None = None,
    outcome: Outcome | None = None,
) -> Outcome:
    """``convert`` to ``stream`` (standard output: no ``-o``, or ``-o -``): the
    sessions read and reported, and chosen, as a job writing files does, then
    a missing attachment of each chosen session is a warning, and the sessions
    are written as one document (``render_many`` for several), escaped for a
    terminal when ``stream`` is one. ``NotStreamable``: they cannot be; what
    was reported is in ``outcome`` (given, it is filled in)."""
    from vis_export.formats import get_format
    from vis_export.sources import read

    fmt = get_format(to)
    report = redacting(report, options.redaction)
    outcome = outcome if outcome is not None else Outcome()
    results = list(read([os.fspath(source) for source in sources], lenient))
    found = chosen([Reading.of(result) for result in results], session_ids, report, outcome)
    sessions = [session for i in found if (session := results[i].session) is not None]
    for session in sessions:
        for _, line in report_lines(session.source, True, tuple(conversion_warnings(session, to, options))):
            report.warning(line)
    if sessions:
        _write_stream(
            fmt, [visible_session(s, options.reasoning, options.redaction) for s in sessions], options, stream
        )
    return outcome


def _write_stream(fmt: Format, sessions: list[SessionView], options: ExportOptions, stream: TextIO) -> None:
    """``sessions`` (the views the format receives, R2) written to ``stream``."""
    from vis_export.output import encode
    from vis_export.terminal import for_stream

    if fmt.binary and stream.isatty():
        raise NotStreamable(f"{fmt.name} is binary: name an output file with -o, or pipe it")
    if len(sessions) > 1:
        if fmt.render_many is None:
            raise NotStreamable(
                f"{len(sessions)} sessions cannot share one {fmt.name} document: name an output directory with -o"
            )
        pieces: Iterable[str] = [fmt.render_many(sessions, options)]
    elif fmt.binary:
        stream.buffer.write(fmt.render(sessions[0], options))
        stream.flush()
        return
    else:
        pieces = fmt.pieces(sessions[0], options) if fmt.pieces else [fmt.render(sessions[0], options)]
    stream.flush()
    for piece in pieces:
        stream.buffer.write(encode(for_stream(piece, stream)))
    stream.buffer.flush()


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
        from vis_export.distributed.jobfolder import sweep
        from vis_export.output import OutputError, output_paths, source_guard
        from vis_export.sources import SESSION_SUFFIXES

        def problem(line: str) -> None:
            outcome.failed = True
            report.problem(line)

        readings = strategy.read(self.sources, self.lenient, self.to, self.options, self.output)
        found = chosen(readings, session_ids, report, outcome)
        if not found:
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


def chosen(readings: Sequence[Reading], session_ids: Iterable[str], report: Report, outcome: Outcome) -> list[int]:
    """Reports what reading found, in source order, and gives the positions of
    the sessions to convert: every one that loaded, or those ``session_ids``
    names (an id no source holds is a problem, and so is nothing to convert)."""

    def problem(line: str) -> None:
        outcome.failed = True
        report.problem(line)

    found: list[int] = []
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
    if not found and not outcome.failed:
        problem(NOTHING)
    return found


def unknown_ids(wanted: set[str], found: Iterable[str]) -> list[str]:
    """A line for each ``--session`` id that no source holds, in order."""
    return [f"vis-export: no session with id {missing!r} in the sources" for missing in sorted(wanted - set(found))]


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
