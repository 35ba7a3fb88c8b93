"""``convert``: work (read a unit of the sources and render its sessions
ahead of their names) and sinks (files, or standard output), whoever runs the
work.

The job is given a ``Runner`` (``vis_export.running``: this process, or the
workers of a Dask cluster, which read their share of the sources themselves)
and is the same either way, and so is what it gives: one walk plans the
sources (``sources.plan_sources``), reading reports its problems in source
order, the file names are decided from every session that loaded before
anything is written, each file is put in place atomically (a rename from the
job's own folder, or its bytes kept in memory, written once named), and a
session that cannot be written is one line in session order. A file holding
many sessions, in a format that takes seconds a session (HTML, PDF), is read
by one task whose result asks for a task per other session.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from vis_export.errors import VisExportError
from vis_export.exporting import Reading, conversion_warnings, echoed, export, not_exported
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
from vis_export.jobs.convert_work import Converted, Keeping, Rendered, ToConvert, convert_unit, read_again, read_unit
from vis_export.jobs.jobfolder import JobFolder, sweep
from vis_export.model import Session
from vis_export.output import place, write_atomic
from vis_export.policy import DEFAULT_REASONING, Reasoning, SessionView, visible_session
from vis_export.reporting import Report, redacting, report_reading
from vis_export.running import Runner, Task
from vis_export.sources.parts import Part, read_part, unit_size, units as split

if TYPE_CHECKING:
    from vis_export.formats import Format
    from vis_export.redaction import Redaction
    from vis_export.sources import SourcePlan


@dataclass
class Outcome:
    """``failed``: a problem was reported (exit status 1); ``refused``: sources
    with a session that could not be read; ``written``: the files, in order."""

    failed: bool = False
    refused: list[str] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)


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
    return convert_with(
        sources,
        to,
        output,
        options or given,
        session_ids=session_ids,
        lenient=lenient,
        dask=dask,
        report=report,
        progress=progress,
        rendering=rendering,
    )


def convert_with(
    sources: Sequence[str | os.PathLike[str]],
    to: str,
    output: str | os.PathLike[str],
    options: ExportOptions,
    *,
    session_ids: Iterable[str] = (),
    lenient: bool = False,
    dask: str | None = None,
    report: Report | None = None,
    progress: Callable[[int], Callable[[], None]] | None = None,
    rendering: Callable[[Session], None] | None = None,
) -> Outcome:
    """``convert`` with its options made (the command line's way in)."""
    from vis_export.formats import get_format
    from vis_export.jobs.runners import runner_for

    names = [os.fspath(source) for source in sources]
    fmt = get_format(to)
    if fmt.needs is not None:
        fmt.needs(options)
    report = redacting(report, options.redaction)
    job = _Job(names, fmt.name, fmt.extension, fmt.render_many is None, os.fspath(output), options, lenient)
    with runner_for(dask, (TASKS, *fmt.imports)) as runner:
        return job.run(runner, session_ids, report, progress, rendering, Outcome())


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
    *,
    session_ids: Iterable[str] = (),
    lenient: bool = False,
    report: Report | None = None,
    outcome: Outcome | None = None,
) -> Outcome:
    """``convert`` to ``stream`` (standard output: no ``-o``, or ``-o -``): the
    sessions planned, read on a runner, reported and chosen as a job writing
    files does (its work reads only: the sink needs the sessions), then
    a missing attachment of each chosen session is a warning, and the sessions
    are written as one document (``render_many`` for several), escaped for a
    terminal when ``stream`` is one. ``NotStreamable``: they cannot be; what
    was reported is in ``outcome`` (given, it is filled in)."""
    from vis_export.formats import get_format
    from vis_export.jobs.runners import runner_for
    from vis_export.sources import plan_sources

    fmt = get_format(to)
    report = redacting(report, options.redaction)
    outcome = outcome if outcome is not None else Outcome()
    plan = plan_sources([os.fspath(source) for source in sources])  # the walk a job writing files takes
    units = split([(f.name, f.path) for f in plan.files], 1, batched=False)
    with runner_for(None) as runner:  # the stream takes every session: no cluster, which writes files
        results = [loaded for found in runner.map(Task(read_unit, {"lenient": lenient}), units) for loaded in found]
    found = chosen([Reading.of(result) for result in results], session_ids, report, outcome)
    sessions = [session for i in found if (session := results[i].session) is not None]
    for session in sessions:
        report_reading(report, session.source, True, conversion_warnings(session, to, options))
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


TASKS = convert_unit.__module__  # what a worker imports to run them


@dataclass(frozen=True)
class _Job:
    sources: list[str]
    to: str
    extension: str
    one_each: bool  # a session per task (HTML, PDF: seconds a session)
    output: str
    options: ExportOptions
    lenient: bool

    def run(
        self,
        runner: Runner,
        session_ids: Iterable[str],
        report: Report,
        progress: Callable[[int], Callable[[], None]] | None,
        rendering: Callable[[Session], None] | None,
        outcome: Outcome,
    ) -> Outcome:
        """Plans, reads, reports, names, writes: the same steps and lines whoever runs the work."""
        from vis_export.sources import plan_sources

        plan = plan_sources(self.sources)
        base, assumed = _folders(self.output, self.extension)
        ahead = replace(self.options, links_from=assumed)  # as the files will most likely be named
        folder = _Folder(base)
        try:
            units = split([(f.name, f.path) for f in plan.files], runner.workers(), batched=not self.one_each)
            found = self._read(runner, units, ahead, folder, progress, rendering)
            readings = _Readings(self.lenient, self.to, rendering)
            readings.add(units, found, self.options)
            return self._write(readings, plan, ahead, folder, session_ids, report, outcome)
        finally:
            folder.remove()

    def _read(
        self,
        runner: Runner,
        units: list[tuple[Part, ...]],
        ahead: ExportOptions,
        folder: _Folder,
        progress: Callable[[int], Callable[[], None]] | None,
        rendering: Callable[[Session], None] | None,
    ) -> dict[int, list[list[tuple[Reading, Rendered]]]]:
        """The units the runner can give out (not standard input, read here), read and rendered."""
        todo = [
            ToConvert(i, unit, 0 if self.one_each and unit[0].sessions is None else None)
            for i, unit in enumerate(units)
            if unit[0].path is not None
        ]
        advance = progress(len(todo)) if progress is not None else (lambda: None)
        task: Task[ToConvert, Converted] = Task(
            convert_unit,
            arguments={"lenient": self.lenient, "to": self.to, "options": ahead, "output_folder": folder.base},
            here={"make_folder": folder.make, "keeping": Keeping(), "announce": rendering},
            size=lambda unit: unit_size(unit.parts) / unit.share,
            more=_others,
            sending=lambda: {"folder": folder.make()},
        )
        found: dict[int, list[list[tuple[Reading, Rendered]]]] = {}
        for done in runner.map(task, todo):
            if done.unit.only:  # one more session of a file read already
                entries = found[done.unit.position][0]
                entries[done.unit.only] = (entries[done.unit.only][0], done.one)
                continue
            found[done.unit.position] = done.entries
            advance()
        return found

    def _write(
        self,
        readings: _Readings,
        plan: SourcePlan,
        ahead: ExportOptions,
        folder: _Folder,
        session_ids: Iterable[str],
        report: Report,
        outcome: Outcome,
    ) -> Outcome:
        """Names the files from every session found, and puts each in place."""
        from vis_export.output import OutputError, output_paths, source_guard
        from vis_export.sources import SESSION_SUFFIXES

        def problem(line: str) -> None:
            outcome.failed = True
            report.problem(line)

        found = chosen(readings.readings, session_ids, report, outcome)
        if not found:
            return outcome
        try:
            targets = output_paths(self.output, [readings.readings[i].session_id or "" for i in found], self.extension)
        except OutputError as error:
            problem(f"vis-export: {error}")
            return outcome
        sweep(targets[0].parent)  # what a job killed there left
        refusal = source_guard(plan, SESSION_SUFFIXES)
        options = replace(self.options, links_from=targets[0].parent)  # links go from where files go
        for i, target in zip(found, targets, strict=True):
            why = refusal(target)
            failure = f"{target}: not written: {why}" if why else readings.put(i, target, options, ahead, folder)
            if failure is None:
                outcome.written.append(target)
            else:
                problem(failure)
        return outcome


def _others(unit: ToConvert, result: Converted) -> list[ToConvert]:
    """The file's other sessions, a task each, once its first is read (``only`` 0)."""
    if unit.only != 0:
        return []
    entries = result.entries[0]
    return [
        ToConvert(unit.position, unit.parts, k, len(entries), reading.session_id)
        for k, (reading, _) in enumerate(entries)
        if k > 0 and reading.session_id is not None
    ]


class _Readings:
    """Every session found, in source order: its reading, where it is (its part,
    and its place in the part), and its file rendered ahead; and the sessions
    only this process could read (standard input), kept."""

    def __init__(self, lenient: bool, to: str, announce: Callable[[Session], None] | None):
        self.lenient, self.to, self.announce = lenient, to, announce
        self.readings: list[Reading] = []
        self.places: list[tuple[Part, int]] = []
        self.rendered: list[Rendered] = []
        self.here: dict[int, Session] = {}

    def add(
        self,
        units: list[tuple[Part, ...]],
        found: dict[int, list[list[tuple[Reading, Rendered]]]],
        options: ExportOptions,
    ) -> None:
        for i, unit in enumerate(units):
            if i not in found:  # read here: standard input, a missing source
                for k, loaded in enumerate(read_part(unit[0], self.lenient)):
                    if loaded.session is not None:
                        self.here[len(self.readings)] = loaded.session
                    self._add(Reading.of(loaded, self.to, options), unit[0], k, None)
                continue
            for part, entries in zip(unit, found[i], strict=True):
                for k, (reading, rendered) in enumerate(entries):
                    self._add(reading, part, k, rendered)

    def _add(self, reading: Reading, part: Part, k: int, rendered: Rendered) -> None:
        if echoed(reading, self.readings[-1] if self.readings else None, part, k):
            return
        self.readings.append(reading)
        self.places.append((part, k))
        self.rendered.append(rendered)

    def put(self, i: int, target: Path, options: ExportOptions, ahead: ExportOptions, folder: _Folder) -> str | None:
        """Session ``i``'s file at ``target``: ``None``, or the line saying why not.
        A file rendered ahead for another folder (links go from where it is),
        or not rendered, is rendered now."""
        rendered, reading, to = self.rendered[i], self.readings[i], self.to
        if i in self.here:
            if self.announce is not None:
                self.announce(self.here[i])
            return export(self.here[i], target, to, options)
        if rendered is None or options != ahead:
            part, k = self.places[i]
            session = read_again(part, read_part(part, self.lenient), k, reading.session_id)
            if isinstance(session, str):
                return session
            if self.announce is not None:
                self.announce(session)
            return export(session, target, to, options)
        if isinstance(rendered, bytes):
            return _placed(partial(write_atomic, target, rendered), reading, to)
        if not rendered[0]:
            return rendered[1]
        assert folder.path is not None
        return _placed(partial(place, folder.path / rendered[1], target), reading, to)


def _placed(place: Callable[[], None], reading: Reading, to: str) -> str | None:
    try:
        place()
    except OSError as error:
        return not_exported(reading.source, reading.session_id or "", to, error)
    return None


class _Folder:
    """The job's own folder (``jobs.jobfolder``) for files rendered before
    they have a name, made in ``base`` once first needed (a job whose files all
    wait in memory makes none); folders made to hold it go with it when no
    file went into them."""

    def __init__(self, base: Path):
        self.base = base
        self.job: JobFolder | None = None
        self.tried = False
        self.made: list[Path] = []  # deepest first

    @property
    def path(self) -> Path | None:
        return None if self.job is None else self.job.path

    def make(self) -> Path | None:
        if not self.tried:
            self.tried = True
            self.made = [folder for folder in (self.base, *self.base.parents) if not folder.exists()]
            self.job = JobFolder.make(self.base)
        return self.path

    def remove(self) -> None:
        if self.job is None:
            return
        self.job.remove()
        for folder in self.made:
            try:
                folder.rmdir()
            except OSError:  # a file is in it: the job wrote there
                return


def _folders(output: str, extension: str) -> tuple[Path, Path]:
    """Where the job's folder goes (the output folder if it exists, else the one
    it is made in, so that renaming never crosses file systems), and the folder
    the files will most likely be in: the one ``output`` is in when it names
    a file (it is one, or it has the format's extension), else ``output``."""
    path = Path(output)
    if output.endswith(("/", os.sep)) or path.is_dir():
        return (path if path.is_dir() else path.parent), path
    one_file = path.exists() or path.suffix.lower() == f".{extension}"
    return path.parent, (path.parent if one_file else path)


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
        outcome.failed |= report_reading(report, reading.source, reading.session_id is not None, reading.problems)
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
